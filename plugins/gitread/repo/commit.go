package repo

import (
	"context"
	"strings"

	"github.com/fluxgit/fluxgit/internal/gitexec"
	"github.com/fluxgit/fluxgit/internal/resultshape"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// maxCommitFiles caps commit.details files.
const maxCommitFiles = 5000

type commitArgs struct {
	RepoPath string `json:"repoPath"`
	RepoID   string `json:"repoId"`
	Commit   string `json:"commit"`
}

// commitInfo is the commit part of commit.details.
type commitInfo struct {
	Hash        string   `json:"hash"`
	ShortHash   string   `json:"shortHash"`
	AuthorName  string   `json:"authorName"`
	AuthorEmail string   `json:"authorEmail"`
	AuthorTime  int64    `json:"authorTime"`
	Parents     []string `json:"parents"`
	// Message is the raw message with trailing whitespace trimmed.
	Message string `json:"message"`
}

// commitFile is one changed path of commit.details.
type commitFile struct {
	// Status is the one-letter change kind: A, M, D, T, ...
	Status     string `json:"status"`
	Path       string `json:"path"`
	PathBase64 string `json:"pathBase64,omitempty"`
}

// commitData is the commit.details payload.
type commitData struct {
	Commit    commitInfo   `json:"commit"`
	Files     []commitFile `json:"files"`
	Truncated bool         `json:"truncated"`
}

const showFormat = "--pretty=format:%H%x1f%h%x1f%an%x1f%ae%x1f%at%x1f%P%x1f%B"

func (p *Provider) commitDetails(ctx context.Context, call *sdk.Call) (any, error) {
	var a commitArgs
	if err := decode(call, &a); err != nil {
		return nil, err
	}
	if a.Commit == "" {
		return nil, invalid("arguments.commit is required")
	}
	if err := checkRev("commit", a.Commit); err != nil {
		return nil, err
	}
	r, err := p.open(ctx, call, a.RepoPath)
	if err != nil {
		return nil, err
	}
	oid, err := p.resolveCommit(ctx, r, "commit", a.Commit)
	if err != nil {
		return nil, err
	}

	if resultshape.Lean() {
		return p.leanCommitDetails(ctx, r, oid)
	}
	d := &commitData{}
	files := fileList{max: maxCommitFiles}
	showArgs := []string{"show", "-s", "-z", showFormat, oid}
	// --root shows a root commit's files as added. For a merge this plain
	// form prints nothing (it would need a combined diff), so the merge is
	// diffed against its first parent below once the parents are known.
	treeArgs := []string{"diff-tree", "--no-commit-id", "--name-status", "-r", "-z", "--root", oid}
	err = parallel(
		func() error {
			out, err := p.runner.Run(ctx, r.dir, showArgs...)
			if err != nil {
				return err
			}
			f := strings.SplitN(strings.TrimSuffix(string(out), "\x00"), "\x1f", 7)
			if len(f) != 7 {
				return &failure{gitexec.Command(r.dir, showArgs...), "unexpected git show output"}
			}
			t, err := atoi64(f[4])
			if err != nil {
				return &failure{gitexec.Command(r.dir, showArgs...), "unexpected author time in git show output"}
			}
			d.Commit = commitInfo{
				Hash: f[0], ShortHash: f[1], AuthorName: f[2], AuthorEmail: f[3], AuthorTime: t,
				Parents: strings.Fields(f[5]),
				Message: strings.TrimRight(f[6], " \t\r\n\x00"),
			}
			return nil
		},
		func() error { return p.diffTree(ctx, r, &files, treeArgs) },
	)
	if err != nil {
		return nil, err
	}
	if d.Commit.Parents == nil {
		d.Commit.Parents = []string{}
	}
	if len(d.Commit.Parents) > 1 {
		files = fileList{max: maxCommitFiles}
		args := []string{"diff-tree", "--no-commit-id", "--name-status", "-r", "-z", d.Commit.Parents[0], oid}
		if err := p.diffTree(ctx, r, &files, args); err != nil {
			return nil, err
		}
	}
	d.Files = files.items
	if d.Files == nil {
		d.Files = []commitFile{}
	}
	d.Truncated = files.count > len(d.Files)
	return d, nil
}

// fileList collects diff-tree -z --name-status records: a status field,
// then one path, or two (source, destination) for renames and copies.
type fileList struct {
	// max caps the records kept.
	max   int
	items []commitFile
	// lean keeps records as name-status lines instead of items, the
	// source of a rename or copy included, and counts every record past
	// max instead of stopping git there.
	lean    bool
	lines   []string
	count   int
	status  string
	src     []byte
	pending int // paths still expected for the current record
}

func (p *Provider) diffTree(ctx context.Context, r *Repo, l *fileList, args []string) error {
	return p.stream(ctx, r, 0, func(f []byte) error {
		if l.pending == 0 {
			if len(f) == 0 {
				return nil
			}
			l.status = string(f[:1])
			if l.lean {
				l.status = string(f) // with the similarity score: R087
			}
			l.pending = 1
			if f[0] == 'R' || f[0] == 'C' {
				l.pending = 2
			}
			return nil
		}
		l.pending--
		if l.pending > 0 {
			// rename/copy source; the reference reports the destination only
			if l.lean {
				l.src = append(l.src[:0], f...)
			}
			return nil
		}
		l.count++
		if l.lean {
			if len(l.lines) < l.max {
				line := l.status + " "
				if len(l.src) > 0 {
					line += quotePath(l.src) + " -> "
					l.src = l.src[:0]
				}
				l.lines = append(l.lines, line+quotePath(f))
			}
			return nil
		}
		if len(l.items) < l.max {
			cf := commitFile{Status: l.status}
			cf.Path, cf.PathBase64 = pathText(f)
			l.items = append(l.items, cf)
			return nil
		}
		// One record past the cap proves the list is truncated, which is
		// all the payload says about the rest: stop git here instead of
		// listing every path of a huge commit.
		return gitexec.ErrStop
	}, args...)
}
