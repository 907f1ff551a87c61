package repo

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/fluxgit/fluxgit/internal/gitexec"
)

// A three-way merge of two commits in a scratch repository
// (repo.conflictPreflight, fleet.radar's potential conflicts).

// MergeResult is the outcome of a merge-tree --write-tree run.
type MergeResult struct {
	Clean bool
	Paths []string // conflicted paths, sorted and unique
}

// MergeTree performs a real three-way merge of two commits (renames
// included) without touching the repository: merge-tree --write-tree
// writes the merged blobs and trees as objects, so it runs in a throwaway
// bare repository that borrows the real object store through alternates
// and receives those writes instead. Only object ids reach its command
// line; the scratch repository has no configuration of its own, so no
// merge driver or attribute of the real repository can run either.
func (p *Provider) MergeTree(ctx context.Context, r *Repo, ours, theirs string) (*MergeResult, error) {
	_, commonDir, err := p.gitDirs(ctx, r)
	if err != nil {
		return nil, err
	}
	return p.mergeTreeIn(ctx, r, commonDir, ours, theirs)
}

func (p *Provider) mergeTreeIn(ctx context.Context, r *Repo, commonDir, ours, theirs string) (*MergeResult, error) {
	args := []string{"merge-tree", "--write-tree", "--name-only", "-z", "--no-messages", ours, theirs}
	cmd := gitexec.Command(r.dir, args...)
	if !isOID(ours) || !isOID(theirs) {
		return nil, &failure{cmd, "merge-tree needs full object ids"}
	}
	objects := filepath.Join(commonDir, "objects")
	if strings.ContainsAny(objects, "\n\r") || strings.HasPrefix(objects, "\"") {
		return nil, &failure{cmd, "object directory path cannot be used as an alternate"}
	}
	scratch, err := os.MkdirTemp("", "fluxgit-merge-")
	if err != nil {
		return nil, &failure{cmd, "cannot create scratch repository: " + err.Error()}
	}
	defer os.RemoveAll(scratch)
	config := "[core]\n\trepositoryformatversion = 0\n\tbare = true\n"
	if len(ours) == 64 {
		config = "[core]\n\trepositoryformatversion = 1\n\tbare = true\n[extensions]\n\tobjectformat = sha256\n"
	}
	for _, d := range []string{"objects/info", "refs/heads", "refs/tags"} {
		if err := os.MkdirAll(filepath.Join(scratch, d), 0o700); err != nil {
			return nil, &failure{cmd, "cannot create scratch repository: " + err.Error()}
		}
	}
	for name, content := range map[string]string{
		"HEAD":                    "ref: refs/heads/main\n",
		"config":                  config,
		"objects/info/alternates": objects + "\n",
	} {
		if err := os.WriteFile(filepath.Join(scratch, name), []byte(content), 0o600); err != nil {
			return nil, &failure{cmd, "cannot create scratch repository: " + err.Error()}
		}
	}
	var out bytes.Buffer
	_, err = p.runner.Stream(ctx, scratch, &limitWriter{w: &out, n: 8 << 20}, args...)
	res := &MergeResult{Clean: err == nil}
	if err != nil {
		var ge *gitexec.Error
		if !errors.As(err, &ge) || ge.ExitCode != 1 || !errors.Is(err, gitexec.ErrExit) {
			if errors.As(err, &ge) {
				return nil, &failure{cmd, ge.Details}
			}
			return nil, err
		}
	}
	// Output: <tree oid> NUL, then one NUL-terminated path per conflicted
	// stage entry (a path may repeat).
	fields := strings.Split(out.String(), "\x00")
	if len(fields) == 0 || !isOID(fields[0]) {
		return nil, &failure{cmd, "unexpected merge-tree output"}
	}
	seen := map[string]bool{}
	for _, f := range fields[1:] {
		if f != "" && !seen[f] {
			seen[f] = true
			res.Paths = append(res.Paths, f)
		}
	}
	sort.Strings(res.Paths)
	if !res.Clean && len(res.Paths) == 0 {
		// Conflicts without a conflicted path (e.g. a rename/rename of the
		// same file to one name): report the merge as conflicting anyway.
		res.Paths = []string{}
	}
	return res, nil
}

// limitWriter keeps the first n bytes and fails beyond, stopping git.
type limitWriter struct {
	w io.Writer
	n int
}

// Write keeps b while the budget lasts.
func (l *limitWriter) Write(b []byte) (int, error) {
	if len(b) > l.n {
		return 0, errors.New("merge-tree output exceeds its budget")
	}
	l.n -= len(b)
	return l.w.Write(b)
}

// TextPath renders a git path for JSON (lossy when not UTF-8).
func TextPath(s string) string { t, _ := pathText([]byte(s)); return t }
