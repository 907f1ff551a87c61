package gitread

import (
	"bytes"
	"context"
	"errors"
	"strings"

	"github.com/fluxgit/fluxgit/plugins/gitexec"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// maxRefs caps each list of repo.refs.
const maxRefs = 1000

type refsArgs struct {
	RepoPath string `json:"repoPath"`
	RepoID   string `json:"repoId"`
}

// RefsData is the repo.refs payload. Remote URLs are never included: they
// can embed credentials.
type RefsData struct {
	// Head is the current branch's short name, or "HEAD" when detached.
	Head     string `json:"head"`
	Detached bool   `json:"detached"`
	// Branches lists local branches first, then remote-tracking branches
	// ("origin/main"), each group in refname order.
	Branches  []string `json:"branches"`
	Tags      []string `json:"tags"`
	Remotes   []string `json:"remotes"`
	Stashes   []string `json:"stashes"`
	Truncated bool     `json:"truncated"`
}

// capped collects up to maxRefs strings and remembers whether more came.
type capped struct {
	items []string
	cut   bool
}

func (c *capped) add(s string) {
	if len(c.items) < maxRefs {
		c.items = append(c.items, s)
	} else {
		c.cut = true
	}
}

func (c *capped) list() []string {
	if c.items == nil {
		return []string{}
	}
	return c.items
}

// refsFormat prints each ref's full name and, for symbolic refs such as
// refs/remotes/origin/HEAD, its target after a NUL. Ref names cannot
// contain NUL or newline, so the split is unambiguous.
var refsArgv = []string{"for-each-ref", "--format=%(refname)%00%(symref)",
	"refs/heads", "refs/remotes", "refs/tags", "refs/stash"}

func (p *Provider) repoRefs(ctx context.Context, call *sdk.Call) (any, error) {
	var a refsArgs
	if err := decode(call, &a); err != nil {
		return nil, err
	}
	r, err := p.open(ctx, call, a.RepoPath)
	if err != nil {
		return nil, err
	}

	d := &RefsData{}
	var local, remote, tags, remotes, stashes capped
	hasStash := false

	err = parallel(
		func() error {
			out, err := p.runner.Run(ctx, r.dir, "symbolic-ref", "-q", "--short", "HEAD")
			var ge *gitexec.Error
			if errors.As(err, &ge) && ge.ExitCode == 1 && errors.Is(err, gitexec.ErrExit) {
				d.Head, d.Detached = "HEAD", true // exit 1: HEAD is not symbolic
				return nil
			}
			if err != nil {
				return err
			}
			d.Head = strings.TrimSpace(string(out))
			return nil
		},
		func() error {
			return p.stream(ctx, r, '\n', func(line []byte) error {
				name, symref, _ := bytes.Cut(line, []byte{0})
				switch n := string(name); {
				case strings.HasPrefix(n, "refs/heads/"):
					local.add(strings.TrimPrefix(n, "refs/heads/"))
				case strings.HasPrefix(n, "refs/remotes/"):
					if len(symref) == 0 { // skip origin/HEAD and the like
						remote.add(strings.TrimPrefix(n, "refs/remotes/"))
					}
				case strings.HasPrefix(n, "refs/tags/"):
					tags.add(strings.TrimPrefix(n, "refs/tags/"))
				case n == "refs/stash":
					hasStash = true
				}
				return nil
			}, refsArgv...)
		},
		func() error {
			return p.stream(ctx, r, '\n', func(line []byte) error {
				if s := strings.TrimSpace(string(line)); s != "" {
					remotes.add(s)
				}
				return nil
			}, "remote")
		},
	)
	if err != nil {
		return nil, err
	}
	if hasStash {
		// -n asks for one entry more than the cap, only to learn whether
		// the list was cut.
		err := p.stream(ctx, r, '\n', func(line []byte) error {
			if s := strings.TrimRight(string(line), "\r"); s != "" {
				stashes.add(s)
			}
			return nil
		}, "reflog", "show", "--format=%gd:%x20%gs", "-n1001", "refs/stash")
		if err != nil {
			return nil, err
		}
	}

	d.Branches = append(local.list(), remote.items...)
	if len(d.Branches) > maxRefs {
		d.Branches = d.Branches[:maxRefs]
		remote.cut = true
	}
	d.Tags, d.Remotes, d.Stashes = tags.list(), remotes.list(), stashes.list()
	d.Truncated = local.cut || remote.cut || tags.cut || remotes.cut || stashes.cut
	return d, nil
}
