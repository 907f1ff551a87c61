package repo

// The person's protected files (internal/credpaths): the gateway's session
// secret and state, the audit signing key, JWT key files, the agent policy
// and the host configuration. No tool of this provider returns their
// content, whatever path leads there — a file in the work tree, a symlink
// to one, a committed copy at a protected path, or a run directory.
//
// The host refuses absolute path arguments that lead there before
// dispatch (host/repopath); these checks are the second layer, for the
// paths this provider computes itself: a repository-relative path joined
// to the work tree, a record below a run directory, a registry entry. The
// list comes from this process's environment, which the host fills in for
// its providers (credpaths.EnvList), so both layers refuse the same files.

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/fluxgit/fluxgit/internal/credpaths"
	"github.com/fluxgit/fluxgit/internal/pathwithin"
)

// protectedList is read per call: the environment is the host's, and a
// test (or a person) changing it between calls is honoured at once.
func protectedList() []credpaths.Path { return credpaths.Protected() }

// refuseProtected is the refusal of field leading to e. It is an argument
// error (-32602, delivered as a tool error the model reads), like every
// other path refusal of this provider; it names what the file holds,
// never where it is.
func refuseProtected(field string, e credpaths.Path) error {
	return invalid(credpaths.Refusal(field, e))
}

// repoTops is the work tree's top level as git named it and as it
// resolves; a protected path may be spelled through either.
func repoTops(r *Repo) []string {
	tops := []string{filepath.Clean(r.dir)}
	if c := canonicalDir(r.dir); c != tops[0] {
		tops = append(tops, c)
	}
	return tops
}

// protectedRel reports the protected location the repository-relative
// path rel (slash-separated) maps onto: rel joined to the work tree's top
// level, as named and as resolved. It is asked for committed content as
// well: a copy of the session secret committed at .fluxgit-run/gateway/
// is still the secret.
func protectedRel(list []credpaths.Path, r *Repo, rel string) (credpaths.Path, bool) {
	for _, top := range repoTops(r) {
		if e, ok := credpaths.Lookup(list, filepath.Join(top, filepath.FromSlash(rel))); ok {
			return e, true
		}
	}
	return credpaths.Path{}, false
}

// checkRelPath refuses field's repository-relative path rel when it maps
// onto a protected location.
func checkRelPath(field string, r *Repo, rel string) error {
	if e, ok := protectedRel(protectedList(), r, rel); ok {
		return refuseProtected(field, e)
	}
	return nil
}

// openedProtected reports whether the opened file f is a protected one by
// identity (a hard link, or a rename swapped in after the path checks).
func openedProtected(list []credpaths.Path, f *os.File) (credpaths.Path, bool) {
	fi, err := f.Stat()
	if err != nil {
		return credpaths.Path{}, false // the caller's own Stat reports it
	}
	return credpaths.Opened(list, fi)
}

// protectedFilter reports whether a repository-relative path, as git
// prints it, lies in a protected location inside the work tree; it is nil
// when none lies there (the usual case: nothing to filter). Listing and
// searching tools use it on git's output, since the hardened git runs with
// GIT_LITERAL_PATHSPECS=1 and so takes no :(exclude) pathspec. It compares
// names only (case-insensitively), which is enough for what git tracks: git
// never records a path below a symlink. A work tree that itself lies in a
// protected location is refused as a whole.
func protectedFilter(field string, r *Repo) (func(rel string) bool, error) {
	var rels []string
	for _, top := range repoTops(r) {
		for _, e := range protectedList() {
			if pathwithin.WithinAnyCase(e.Path, top) {
				return nil, refuseProtected(field, e)
			}
			if rel, ok := pathwithin.RelAnyCase(top, e.Path); ok && rel != "." {
				rels = append(rels, strings.ToLower(rel))
			}
		}
	}
	if len(rels) == 0 {
		return nil, nil
	}
	return func(rel string) bool {
		l := strings.ToLower(rel)
		for _, pr := range rels {
			if l == pr || strings.HasPrefix(l, pr+"/") {
				return true
			}
		}
		return false
	}, nil
}

// protectedSkip is the note a listing tool leaves in place of a protected
// file's content.
func protectedSkip(e credpaths.Path) string {
	return "not read: a protected file of the person's (" + e.Label + "); fluxgit never reads it"
}
