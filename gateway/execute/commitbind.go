package execute

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fluxgit/fluxgit/internal/gitexec"
	"github.com/fluxgit/fluxgit/internal/operation"
)

// stagedIndex is a private index holding the tree a commit proposal
// records: HEAD plus the listed paths as the work tree has them, the
// person's index plus every change (stageAll), or the person's index as it
// is. It is built the same way at proposal time (to bind and show the
// tree) and at execution (to commit exactly that tree), and it never
// touches the person's index. Close removes it.
type stagedIndex struct {
	dir, file string
	tree      string
}

func (s *stagedIndex) Close() {
	if s != nil && s.dir != "" {
		_ = os.RemoveAll(s.dir)
	}
}

// buildIndex builds the private index of a commit request on b's
// repository. Failures that the agent can fix (a path git cannot add,
// unresolved conflicts) are BindErrors.
func (e *Executor) buildIndex(ctx context.Context, b Binding, r *operation.Commit) (*stagedIndex, error) {
	dir, err := os.MkdirTemp("", "fluxgit-index-")
	if err != nil {
		return nil, fmt.Errorf("private index: %w", err)
	}
	s := &stagedIndex{dir: dir, file: filepath.Join(dir, "index")}
	w := &gitexec.Writer{IndexFile: s.file}
	run := func(args ...string) (string, error) {
		out, err := w.Run(ctx, b.RepoPath, args...)
		return strings.TrimSpace(string(out)), err
	}
	fail := func(err error) (*stagedIndex, error) {
		s.Close()
		if errors.Is(err, gitexec.ErrRepoProgram) {
			// What the agent (and the person) must know: which key, and how to fix it.
			return nil, bindErr("%s", details(err))
		}
		return nil, err
	}
	paths := listed(r.Paths)
	if len(paths) > 0 {
		base := []string{"read-tree", "--empty"}
		if b.Head != "" {
			base = []string{"read-tree", b.Head}
		}
		if _, err := run(base...); err != nil {
			return fail(fmt.Errorf("private index: %w", err))
		}
		if _, err := run(append([]string{"add", "-A", "--"}, paths...)...); err != nil {
			if errors.Is(err, gitexec.ErrRepoProgram) {
				return fail(err)
			}
			return fail(bindErr("git cannot stage the paths %s: %s", strings.Join(limit(paths, 10), ", "), details(err)))
		}
	} else {
		real, err := e.run(ctx, b.RepoPath, "rev-parse", "--path-format=absolute", "--git-path", "index")
		if err != nil {
			return fail(fmt.Errorf("locate the index: %w", err))
		}
		if err := copyFile(real, s.file); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fail(fmt.Errorf("copy the index: %w", err))
		}
		if r.Paths == nil && r.StageAll {
			if _, err := run("add", "-A"); err != nil && errors.Is(err, gitexec.ErrRepoProgram) {
				return fail(err)
			} else if err != nil {
				return fail(bindErr("git cannot stage every change (git add -A): %s", details(err)))
			}
		}
	}
	if s.tree, err = run("write-tree"); err != nil {
		return fail(bindErr("the index cannot be written as a tree (unresolved conflicts?); resolve them first: %s", details(err)))
	}
	return s, nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// commitTree binds the tree a commit proposal records.
func (e *Executor) commitTree(ctx context.Context, b Binding, r *operation.Commit) (string, error) {
	s, err := e.buildIndex(ctx, b, r)
	if err != nil {
		return "", err
	}
	defer s.Close()
	return s.tree, nil
}

// commitReview is what the card shows of a bound commit: its tree and its
// difference from HEAD (from the empty tree when HEAD is unborn).
func (e *Executor) commitReview(ctx context.Context, b Binding) *CommitReview {
	c := &CommitReview{Tree: b.CommitTree, Files: []string{}}
	if b.CommitTree == "" {
		return c
	}
	base := b.Head
	if base == "" {
		// stdin is /dev/null: the id of the empty tree.
		base, _ = e.run(ctx, b.RepoPath, "hash-object", "-t", "tree", "--stdin")
	}
	if out, err := e.run(ctx, b.RepoPath, "diff-tree", "-r", "--no-renames", "--name-status", "-z", base, b.CommitTree); err == nil && out != "" {
		f := strings.Split(strings.TrimRight(out, "\x00"), "\x00")
		for i := 0; i+1 < len(f); i += 2 {
			c.FilesChanged++
			if len(c.Files) < 50 {
				c.Files = append(c.Files, f[i]+"\t"+f[i+1])
			}
		}
	}
	if out, err := e.run(ctx, b.RepoPath, "diff-tree", "-r", "--no-renames", "--numstat", "-z", base, b.CommitTree); err == nil {
		for _, rec := range strings.Split(out, "\x00") {
			f := strings.SplitN(rec, "\t", 3)
			if len(f) < 3 {
				continue
			}
			a, _ := strconv.Atoi(f[0])
			d, _ := strconv.Atoi(f[1])
			c.Insertions += a
			c.Deletions += d
		}
	}
	return c
}

// moves lists the refs op moves that its body need not name, in the short
// form the policy's refs globs use ("main" for refs/heads/main, HEAD for
// a detached HEAD). Named refs (a merge's target, a new branch) are
// already in the policy request; naming them again does no harm.
func moves(op string, body operation.Body, b Binding) []string {
	cur := func(branch string) string {
		if branch == "" {
			return "HEAD"
		}
		return shortBranch(branch)
	}
	var out []string
	add := func(s string) {
		for _, o := range out {
			if o == s {
				return
			}
		}
		out = append(out, s)
	}
	current := b.Branch
	// step handles one body: a whole operation's, or a plan step's.
	var step func(body any)
	step = func(body any) {
		switch r := body.(type) {
		case *operation.Commit, *operation.Reset, *operation.ResetStep:
			add(cur(current))
		case *operation.Merge:
			step(r.Step())
		case *operation.MergeStep:
			if full, ok := localBranch(r.TargetRef); ok {
				current = full
			}
			add(cur(current))
		case *operation.Rebase:
			step(r.Step())
		case *operation.RebaseStep:
			if c := r.CurrentRef; c != "" && c != "HEAD" {
				if full, ok := localBranch(c); ok {
					current = full
				}
			}
			add(cur(current))
		case *operation.Push:
			br := r.Branch
			if br == "" {
				br = current
			}
			if br != "" {
				add(shortBranch(br))
			}
		case *operation.Plan:
			for i := range r.Steps {
				step(r.Steps[i].Body)
			}
		case *operation.SubmodulePointer:
			if s := b.Submodule; s != nil {
				if r.Direction == "record" {
					add(cur(s.ParentBranch))
				} else {
					add("HEAD") // the submodule's HEAD, detached
				}
			}
		}
	}
	step(body)
	return out
}
