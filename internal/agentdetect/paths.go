package agentdetect

import (
	"path/filepath"
	"strings"

	"github.com/fluxgit/fluxgit/internal/pathwithin"
)

// roots returns the canonical top levels a location may be inside: the
// worktrees, or the repository alone when none are given.
func (q Query) roots() []string {
	if len(q.Worktrees) == 0 {
		if q.Repo == "" {
			return nil
		}
		return []string{q.Repo}
	}
	out := q.Worktrees
	for _, w := range q.Worktrees {
		if w == q.Repo {
			return out
		}
	}
	if q.Repo != "" {
		out = append([]string{q.Repo}, out...)
	}
	return out
}

// canonical resolves symbolic links so two spellings of one directory
// compare equal; a path that cannot be resolved (gone, unreadable) is
// compared as cleaned, which can only miss a match, never invent one.
func canonical(p string) string {
	if p == "" {
		return ""
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// containingRoot returns the most specific root holding the canonical
// path p (a worktree may live inside the main work tree).
func (q Query) containingRoot(p string) (string, bool) {
	best := ""
	for _, r := range q.roots() {
		r = filepath.Clean(r)
		if pathwithin.Within(r, p) && len(r) > len(best) {
			best = r
		}
	}
	return best, best != ""
}

// canonRoots returns the resolved roots: the ones prepared for this
// detection, or freshly resolved for a direct call.
func (q Query) canonRoots() []string {
	if q.canon != nil {
		return q.canon
	}
	var out []string
	for _, r := range q.roots() {
		out = append(out, canonical(r))
	}
	return out
}

// prepared returns q with its roots resolved once.
func (q Query) prepared() Query {
	q.canon = nil
	q.canon = q.canonRoots()
	if q.canon == nil {
		q.canon = []string{}
	}
	return q
}

// InRepo reports whether the absolute path is inside the repository or
// one of its worktrees. Symbolic links are resolved on both sides, so a
// cwd reached through a link still matches; prefixes match only at path
// separators (/repo-old is not inside /repo). A path that is spelled
// inside is inside without resolving it: resolution, a system call per
// path component, is spent only on paths that might reach the repository
// through a link.
func InRepo(path string, q Query) bool {
	if path == "" || !filepath.IsAbs(path) {
		return false
	}
	canon := q.canonRoots()
	p := filepath.Clean(path)
	for _, r := range canon {
		if pathwithin.Within(r, p) {
			return true
		}
	}
	for _, r := range q.roots() {
		if pathwithin.Within(filepath.Clean(r), p) {
			return true
		}
	}
	p = canonical(p)
	for _, r := range canon {
		if pathwithin.Within(r, p) {
			return true
		}
	}
	return false
}

// RepoRelative turns a path an agent recorded into the repository-relative,
// '/'-separated form findings report. Absolute paths must be inside the
// repository or one of its worktrees (relative to the one holding them);
// relative paths are taken as relative to the top level. It returns false
// for paths outside, for ones that climb out with "..", and for the
// repository itself, which names no file.
func RepoRelative(path string, q Query) (string, bool) {
	if path == "" {
		return "", false
	}
	if filepath.IsAbs(path) {
		p := canonical(path)
		root, ok := q.containingRoot(p)
		if !ok {
			// The link may be on the repository side only.
			for _, cr := range q.canonRoots() {
				if pathwithin.Within(cr, p) {
					root, ok = cr, true
					break
				}
			}
			if !ok {
				return "", false
			}
		}
		rel, ok := pathwithin.Rel(root, p)
		if !ok {
			return "", false
		}
		path = rel
	}
	rel := filepath.ToSlash(filepath.Clean(strings.ReplaceAll(path, `\`, "/")))
	if rel == "." || rel == ".." || strings.HasPrefix(rel, "../") || strings.HasPrefix(rel, "/") {
		return "", false
	}
	return rel, true
}
