package repo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/fluxgit/fluxgit/internal/gitexec"
	"github.com/fluxgit/fluxgit/internal/resultshape"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// maxRefs caps each list of repo.refs.
const maxRefs = 1000

type refsArgs struct {
	RepoPath string   `json:"repoPath"`
	RepoID   string   `json:"repoId"`
	Sort     *string  `json:"sort"`
	Pattern  *string  `json:"pattern"`
	Kinds    []string `json:"kinds"`
	// Limit caps each list; without it the shape's defaults apply.
	Limit *json.Number `json:"limit"`
}

// Ref kinds of repo.refs' kinds argument.
const (
	kindBranches       = "branches"
	kindRemoteBranches = "remoteBranches"
	kindTags           = "tags"
	kindRemotes        = "remotes"
	kindStashes        = "stashes"
)

// refsQuery is repo.refs' validated selection.
type refsQuery struct {
	kinds map[string]bool
	// recency holds the ref kinds listed newest first; the others are in
	// name order. Tags default to newest first, so the cap at maxRefs
	// drops the oldest tags rather than the latest releases.
	recency map[string]bool
	pattern *glob
}

func parseRefsQuery(a *refsArgs) (refsQuery, error) {
	q := refsQuery{kinds: map[string]bool{}, recency: map[string]bool{kindTags: true}}
	if a.Kinds == nil {
		for _, k := range []string{kindBranches, kindRemoteBranches, kindTags, kindRemotes, kindStashes} {
			q.kinds[k] = true
		}
	} else if len(a.Kinds) == 0 {
		return q, invalid("arguments.kinds is empty; list at least one of branches, remoteBranches, tags, remotes, stashes, or omit it for all")
	}
	for i, k := range a.Kinds {
		switch k {
		case kindBranches, kindRemoteBranches, kindTags, kindRemotes, kindStashes:
			q.kinds[k] = true
		default:
			return q, invalid(fmt.Sprintf("arguments.kinds[%d] must be one of branches, remoteBranches, tags, remotes, stashes (got %q)", i, k))
		}
	}
	if a.Sort != nil {
		switch *a.Sort {
		case "recency":
			q.recency = map[string]bool{kindBranches: true, kindRemoteBranches: true, kindTags: true}
		case "name":
			q.recency = map[string]bool{}
		default:
			return q, invalid(fmt.Sprintf("arguments.sort must be recency or name (got %q); omit it for tags newest first and branches by name", *a.Sort))
		}
	}
	if a.Pattern != nil {
		g, err := compileGlob(*a.Pattern)
		if err != nil {
			return q, invalid("arguments.pattern " + err.Error())
		}
		q.pattern = g
	}
	return q, nil
}

// refPrefixes maps the listed ref kinds to the namespaces for-each-ref reads.
var refPrefixes = map[string]string{kindBranches: "refs/heads", kindRemoteBranches: "refs/remotes", kindTags: "refs/tags"}

// refsData is the repo.refs payload. Remote URLs are never included: they
// can embed credentials.
type refsData struct {
	// Head is the current branch's short name, or "HEAD" when detached.
	Head     string `json:"head"`
	Detached bool   `json:"detached"`
	// Branches lists local branches first, then remote-tracking branches
	// ("origin/main"), each group in refname order (newest commit first
	// with sort "recency"). Tags are newest first unless sort is "name".
	Branches  []string `json:"branches"`
	Tags      []string `json:"tags"`
	Remotes   []string `json:"remotes"`
	Stashes   []string `json:"stashes"`
	Truncated bool     `json:"truncated"`
}

// capped collects up to max strings and counts all that came.
type capped struct {
	max   int
	items []string
	n     int
	cut   bool
}

func (c *capped) add(s string) {
	c.n++
	if len(c.items) < c.max {
		c.items = append(c.items, s)
	} else {
		c.cut = true
	}
}

// omitted is how many entries came past the cap.
func (c *capped) omitted() int { return c.n - len(c.items) }

func (c *capped) list() []string {
	if c.items == nil {
		return []string{}
	}
	return c.items
}

// refsArgv lists the refs under prefixes: each ref's full name and, for
// symbolic refs such as refs/remotes/origin/HEAD, its target after a NUL.
// Ref names cannot contain NUL or newline, so the split is unambiguous.
// Newest first means by creator date (the tagger date of an annotated tag,
// else the commit date), ties by name.
func refsArgv(recency bool, prefixes []string) []string {
	args := []string{"for-each-ref", "--format=%(refname)%00%(symref)"}
	if recency {
		args = append(args, "--sort=refname", "--sort=-creatordate")
	}
	return append(args, prefixes...)
}

func (p *Provider) repoRefs(ctx context.Context, call *sdk.Call) (any, error) {
	var a refsArgs
	if err := decode(call, &a); err != nil {
		return nil, err
	}
	q, err := parseRefsQuery(&a)
	if err != nil {
		return nil, err
	}
	lean := resultshape.Lean()
	// Caps: the reference lists up to maxRefs of each kind; the lean shape
	// lists the newest leanTagLimit tags and up to leanRefLimit of each
	// other list, and says how many it left out. limit sets every cap.
	tagMax, otherMax := maxRefs, maxRefs
	if lean {
		tagMax, otherMax = leanTagLimit, leanRefLimit
	}
	if a.Limit != nil {
		n, err := intArg("limit", a.Limit, 0, 1, maxRefs)
		if err != nil {
			return nil, err
		}
		tagMax, otherMax = int(n), int(n)
	}
	r, err := p.open(ctx, call, a.RepoPath)
	if err != nil {
		return nil, err
	}

	d := &refsData{}
	local, remote, remotes, stashes := capped{max: otherMax}, capped{max: otherMax}, capped{max: otherMax}, capped{max: otherMax}
	tags := capped{max: tagMax}
	hasStash := false

	err = parallel(
		func() error { return p.refsHead(ctx, r, d, lean) },
		func() error { return p.listRefs(ctx, r, q, &local, &remote, &tags, &hasStash) },
		func() error {
			if !q.kinds[kindRemotes] {
				return nil
			}
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
		if err := p.readStashes(ctx, r, &stashes, lean); err != nil {
			return nil, err
		}
	}
	if lean {
		return leanRefs(d, q, map[string]*capped{kindBranches: &local, kindRemoteBranches: &remote, kindTags: &tags, kindRemotes: &remotes, kindStashes: &stashes}), nil
	}

	d.Branches = append(local.list(), remote.items...)
	if len(d.Branches) > otherMax {
		d.Branches = d.Branches[:otherMax]
		remote.cut = true
	}
	d.Tags, d.Remotes, d.Stashes = tags.list(), remotes.list(), stashes.list()
	d.Truncated = local.cut || remote.cut || tags.cut || remotes.cut || stashes.cut
	return d, nil
}

// refsHead fills the current branch, or, when HEAD is detached, "HEAD"
// (the lean shape: the short commit id) and detached.
func (p *Provider) refsHead(ctx context.Context, r *Repo, d *refsData, lean bool) error {
	out, err := p.runner.Run(ctx, r.dir, "symbolic-ref", "-q", "--short", "HEAD")
	var ge *gitexec.Error
	if errors.As(err, &ge) && ge.ExitCode == 1 && errors.Is(err, gitexec.ErrExit) {
		d.Head, d.Detached = "HEAD", true // exit 1: HEAD is not symbolic
		if lean {
			// The lean shape names the commit instead of the
			// literal HEAD, which told nothing.
			out, err := p.runner.Run(ctx, r.dir, "rev-parse", "--short", "--verify", "--quiet", "HEAD")
			if err != nil {
				return err
			}
			d.Head = strings.TrimSpace(string(out))
		}
		return nil
	}
	if err != nil {
		return err
	}
	d.Head = strings.TrimSpace(string(out))
	return nil
}

// listRefs lists the branches, remote-tracking branches and tags the query
// asks for into local, remote and tags (git for-each-ref, one listing per
// sort order), and notes whether refs/stash exists.
func (p *Provider) listRefs(ctx context.Context, r *Repo, q refsQuery, local, remote, tags *capped, hasStash *bool) error {
	// Two listings at most, one per order; each kind is in one.
	var byName, byDate []string
	for _, k := range []string{kindBranches, kindRemoteBranches, kindTags} {
		switch {
		case !q.kinds[k]:
		case q.recency[k]:
			byDate = append(byDate, refPrefixes[k])
		default:
			byName = append(byName, refPrefixes[k])
		}
	}
	if q.kinds[kindStashes] {
		byName = append(byName, "refs/stash")
	}
	var fns []func() error
	for _, l := range []struct {
		recency  bool
		prefixes []string
	}{{false, byName}, {true, byDate}} {
		if len(l.prefixes) > 0 {
			fns = append(fns, func() error {
				return p.stream(ctx, r, '\n', func(line []byte) error {
					name, symref, _ := bytes.Cut(line, []byte{0})
					n := string(name)
					if n == "refs/stash" {
						*hasStash = true
						return nil
					}
					var short string
					var list *capped
					switch {
					case strings.HasPrefix(n, "refs/heads/"):
						short, list = n[len("refs/heads/"):], local
					case strings.HasPrefix(n, "refs/remotes/"):
						if len(symref) > 0 {
							return nil // skip origin/HEAD and the like
						}
						short, list = n[len("refs/remotes/"):], remote
					case strings.HasPrefix(n, "refs/tags/"):
						short, list = n[len("refs/tags/"):], tags
					default:
						return nil
					}
					if q.pattern == nil || q.pattern.match(short) {
						list.add(short)
					}
					return nil
				}, refsArgv(l.recency, l.prefixes)...)
			})
		}
	}
	return parallel(fns...)
}

// readStashes lists the stash entries into stashes.
func (p *Provider) readStashes(ctx context.Context, r *Repo, stashes *capped, lean bool) error {
	// The reference's -n asks for one entry more than the cap, only to
	// learn whether the list was cut; the lean shape counts them all
	// (a stash reflog is short) and leaves out the stash@{N} label,
	// which is the entry's position.
	args := []string{"reflog", "show", "--format=%gd:%x20%gs", "-n" + strconv.Itoa(stashes.max+1), "refs/stash"}
	if lean {
		args = []string{"reflog", "show", "--format=%gs", "refs/stash"}
	}
	err := p.stream(ctx, r, '\n', func(line []byte) error {
		if s := strings.TrimRight(string(line), "\r"); s != "" {
			stashes.add(s)
		}
		return nil
	}, args...)
	return err
}
