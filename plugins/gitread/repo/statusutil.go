package repo

// Helpers shared by the tools added for issue 3 (repo.brief, repo.scope,
// repo.branchStack, repo.reflog, conflict.read, worktree.changes,
// worktree.list, submodule.status). They reuse repo.status's porcelain v2
// parser instead of parsing status a second way.

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/fluxgit/fluxgit/internal/gitexec"
	"github.com/fluxgit/fluxgit/internal/pathwithin"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// statusHead is the branch part of a porcelain v2 status.
type statusHead struct {
	Branch   *string
	Detached bool
	OID      *string
	Upstream *string
	Ahead    int64
	Behind   int64
	Stashes  int64
}

// scanStatus runs `git status --porcelain=v2 -z --branch` (optionally
// limited to one literal pathspec) and hands every entry to fn as it is
// parsed, so a tree with a million changes never sits in memory. It
// returns the branch headers. With stash set it also asks for the stash
// count header (one process fewer than `git stash list`).
func (p *Provider) scanStatus(ctx context.Context, call *sdk.Call, r *Repo, stash bool, pathspec string, fn func(statusEntry)) (*statusHead, error) {
	return p.scanStatusArgs(ctx, call, r, statusArgv, gitexec.Tuning{}, stash, pathspec, fn)
}

// briefStatusArgv is statusArgv without the untracked-file walk, which
// repo.brief gets from `ls-files` in parallel (see listIndexAndOthers).
var briefStatusArgv = []string{"status", "--porcelain=v2", "-z", "--branch", "--untracked-files=no"}

// scanStatusArgs is scanStatus with the base status argv and performance
// settings given. Dirty submodules, which git is not allowed to find out
// about itself, are probed first and folded into the entries
// (subdirty.go). The probes run before status, not beside it: a status
// whose output waited for them would hold a runner slot the probes may
// need.
func (p *Provider) scanStatusArgs(ctx context.Context, call *sdk.Call, r *Repo, base []string, t gitexec.Tuning, stash bool, pathspec string, fn func(statusEntry)) (*statusHead, error) {
	// Untracked content counts even for repo.brief's -uno status: brief
	// stands for a full -uall status whose untracked walk it runs apart.
	dirty, err := p.dirtySubmodules(ctx, call, r, true, pathspec)
	if err != nil {
		return nil, err
	}
	if len(dirty) == 0 {
		return p.scanStatusEntries(ctx, r, base, t, stash, pathspec, fn)
	}
	m := &dirtMerge{pending: dirty, fn: fn}
	h, err := p.scanStatusEntries(ctx, r, base, t, stash, pathspec, m.emit)
	if err != nil {
		return nil, err
	}
	m.flush()
	return h, nil
}

// scanStatusEntries runs status and parses it, with nothing added.
func (p *Provider) scanStatusEntries(ctx context.Context, r *Repo, base []string, t gitexec.Tuning, stash bool, pathspec string, fn func(statusEntry)) (*statusHead, error) {
	args := append([]string(nil), base...)
	if stash {
		args = append(args, "--show-stash")
	}
	if pathspec != "" {
		args = append(args, "--", pathspec)
	}
	ps := &statusParser{max: 1, data: statusData{Entries: make([]statusEntry, 0, 1)}}
	h := &statusHead{}
	field := func(f []byte) error {
		if len(f) > 8 && string(f[:8]) == "# stash " {
			n, err := atoi64(string(f[8:]))
			if err != nil {
				return errStatusFormat
			}
			h.Stashes = n
			return nil
		}
		if err := ps.field(f); err != nil {
			return err
		}
		// An entry is complete once its rename origin (if any) arrived.
		if !ps.wantOrig && len(ps.data.Entries) > 0 {
			fn(ps.data.Entries[0])
			ps.data.Entries = ps.data.Entries[:0]
		}
		return nil
	}
	if err := p.streamTuned(ctx, r, t, 0, field, args...); err != nil {
		return nil, err
	}
	h.Branch, h.Detached, h.OID = ps.data.Branch, ps.data.Detached, ps.data.OID
	h.Upstream, h.Ahead, h.Behind = ps.data.Upstream, ps.data.Ahead, ps.data.Behind
	return h, nil
}

// isConflict reports whether a porcelain XY code is an unmerged path.
func isConflict(xy string) bool {
	return strings.ContainsRune(xy, 'U') || xy == "AA" || xy == "DD"
}

// clip shortens s to at most n runes, marking a cut with an ellipsis.
func clip(s string, n int) (string, bool) {
	if utf8.RuneCountInString(s) <= n {
		return s, false
	}
	if n <= 1 {
		return "…", true
	}
	i, k := 0, 0
	for idx := range s {
		if k == n-1 {
			i = idx
			break
		}
		k++
	}
	return s[:i] + "…", true
}

// gitDirs returns the absolute per-worktree git directory and the common
// directory of r: the ones open() found, or from one cheap rev-parse.
func (p *Provider) gitDirs(ctx context.Context, r *Repo) (gitDir, commonDir string, err error) {
	if r.gitDir != "" && r.commonDir != "" {
		return r.gitDir, r.commonDir, nil // open() already asked
	}
	args := []string{"rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir"}
	out, err := p.runner.Run(ctx, r.dir, args...)
	if err != nil {
		return "", "", err
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != 2 || !filepath.IsAbs(lines[0]) || !filepath.IsAbs(lines[1]) {
		return "", "", &failure{gitexec.Command(r.dir, args...), "unexpected rev-parse output"}
	}
	return lines[0], lines[1], nil
}

// operationIn names the operation in progress in a git directory, or "".
func operationIn(gitDir string) string {
	exists := func(name string) bool {
		_, err := os.Lstat(filepath.Join(gitDir, name))
		return err == nil
	}
	switch {
	case exists("rebase-merge"), exists("rebase-apply"), exists("REBASE_HEAD"):
		return "rebase"
	case exists("MERGE_HEAD"):
		return "merge"
	case exists("CHERRY_PICK_HEAD"):
		return "cherry-pick"
	case exists("REVERT_HEAD"):
		return "revert"
	case exists("BISECT_LOG"):
		return "bisect"
	}
	return ""
}

// isExit1 reports a git call that ran and exited with status 1 (the
// "not found" answer of symbolic-ref -q, rev-parse --verify -q and friends).
func isExit(err error, codes ...int) bool {
	var ge *gitexec.Error
	if !errors.As(err, &ge) || !errors.Is(err, gitexec.ErrExit) {
		return false
	}
	for _, c := range codes {
		if ge.ExitCode == c {
			return true
		}
	}
	return false
}

// forEach runs fn(i) for i in [0,n) with at most limit running at once and
// returns the first error by index.
func forEach(n, limit int, fn func(i int) error) error {
	errs := make([]error, n)
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			errs[i] = fn(i)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// jsonLen is the serialized size of v in characters (runes), the unit the
// output budgets are stated in.
func jsonLen(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 1 << 30
	}
	return utf8.RuneCount(b)
}

// checkRepoRelative validates a caller path that must stay inside the
// repository: not absolute, no '..' segment, no NUL. It returns the cleaned
// slash-separated path ("." for the top level).
func checkRepoRelative(field, p string) (string, error) {
	bad := invalid("arguments." + field + " must be repository-relative without '..'")
	if strings.IndexByte(p, 0) >= 0 || filepath.IsAbs(p) || strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) {
		return "", bad
	}
	for _, seg := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' }) {
		if seg == ".." {
			return "", bad
		}
	}
	return filepath.ToSlash(filepath.Clean(p)), nil
}

// insideDir reports whether the real (symlink-free) form of p lies in one
// of dirs. A path that cannot be resolved is not inside.
func insideDir(p string, dirs ...string) bool {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return false
	}
	for _, d := range dirs {
		if d != "" && pathwithin.Within(d, real) {
			return true
		}
	}
	return false
}
