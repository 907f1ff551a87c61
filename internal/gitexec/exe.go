package gitexec

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/fluxgit/fluxgit/internal/pathwithin"
)

// EnvGitPath names the variable that pins the git executable. When it is
// set it is the only candidate: a wrong pin is an error, not a silent
// fallback to some other git.
const EnvGitPath = "FLUXGIT_MCP_GIT_PATH"

// trustedLocations are where package managers install git; they are tried
// before PATH so a PATH entry planted by a project (./node_modules/.bin,
// a repo's bin/) cannot shadow the system git.
var trustedLocations = []string{
	"/usr/bin/git",
	"/usr/local/bin/git",
	"/opt/homebrew/bin/git",
	"/opt/local/bin/git",
}

var (
	resolveOnce sync.Once
	resolved    []string
	resolveErr  error
	// resolvedPinned: the candidate came from EnvGitPath, so there is no
	// other git to fall back to and a refusal must name the variable.
	resolvedPinned bool
)

// ResolveExecutable returns the canonical path of the git executable to run
// for repo. Candidates are found once per process (the filesystem checks
// are not repeated per call); the per-call part only skips a candidate that
// lies inside repo, because a repository must never supply its own git.
func ResolveExecutable(repo string) (string, error) {
	resolveOnce.Do(func() {
		cwd, _ := os.Getwd()
		resolved, resolveErr = findCandidates(os.LookupEnv, cwd)
		_, resolvedPinned = os.LookupEnv(EnvGitPath)
	})
	if resolveErr != nil {
		return "", resolveErr
	}
	c, err := pickCandidate(resolved, repo)
	if err != nil && resolvedPinned && len(resolved) == 1 {
		return "", fmt.Errorf("%s=%q lies inside the repository being read (%s): a repository must never supply the git that reads it; "+
			"fix: set %s to a git outside every repository agents read (for example /usr/bin/git), or unset it", EnvGitPath, resolved[0], canonical(repo), EnvGitPath)
	}
	return c, err
}

// findCandidates lists usable git executables in priority order.
func findCandidates(lookup func(string) (string, bool), cwd string) ([]string, error) {
	cwd = canonical(cwd)
	if v, ok := lookup(EnvGitPath); ok {
		if v == "" {
			return nil, fmt.Errorf("%s is set but empty", EnvGitPath)
		}
		c, err := checkCandidate(v)
		if err != nil {
			return nil, fmt.Errorf("%s=%q is not usable: %w", EnvGitPath, v, err)
		}
		if isInside(c, cwd) {
			return nil, fmt.Errorf("%s=%q lies inside the current directory", EnvGitPath, v)
		}
		return []string{c}, nil
	}
	var out []string
	add := func(c string) {
		if isInside(c, cwd) {
			return
		}
		for _, have := range out {
			if have == c {
				return
			}
		}
		out = append(out, c)
	}
	for _, loc := range trustedLocations {
		if c, err := checkCandidate(loc); err == nil {
			add(c)
		}
	}
	if path, ok := lookup("PATH"); ok {
		for _, dir := range filepath.SplitList(path) {
			if !filepath.IsAbs(dir) || sharedWritable(dir) {
				continue
			}
			c, err := checkCandidate(filepath.Join(dir, "git"))
			if err != nil || sharedWritable(filepath.Dir(c)) {
				continue
			}
			add(c)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no usable git executable found in %s or PATH; set %s to an absolute path",
			strings.Join(trustedLocations, ", "), EnvGitPath)
	}
	return out, nil
}

// checkCandidate validates one path and returns its canonical form.
func checkCandidate(p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", errors.New("not an absolute path")
	}
	c, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(c)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", errors.New("not a regular file")
	}
	if fi.Mode().Perm()&0o111 == 0 {
		return "", errors.New("not executable")
	}
	return c, nil
}

// sharedWritable reports whether other users could replace files in dir.
// An unreadable directory counts as unsafe.
func sharedWritable(dir string) bool {
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return true
	}
	return fi.Mode().Perm()&0o022 != 0
}

// pickCandidate returns the first candidate that is not inside the
// repository repo names. repo may be any directory of a work tree (a
// subdirectory, the .git directory): a candidate inside repo, or inside
// the work tree that contains it (the nearest directory at or above repo
// holding a .git entry), is skipped, so `repoPath: <repo>/sub` cannot
// make a git at <repo>/tools/git acceptable. An enclosing repository
// further up (a dotfiles repository at $HOME) is another repository and
// does not count.
func pickCandidate(cands []string, repo string) (string, error) {
	root := canonical(repo)
	for _, c := range cands {
		if !insideRepository(c, root) {
			return c, nil
		}
	}
	return "", errors.New("every git executable found lies inside the repository")
}

// insideRepository reports whether c lies in root or in the work tree
// containing root. A candidate that shares no directory but / with root
// costs no file system call.
func insideRepository(c, root string) bool {
	if isInside(c, root) {
		return true
	}
	shared := false
	for d := filepath.Dir(root); d != filepath.Dir(d); d = filepath.Dir(d) {
		if isInside(c, d) {
			shared = true
			break
		}
	}
	if !shared {
		return false
	}
	for d := root; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return isInside(c, d)
		}
		parent := filepath.Dir(d)
		if parent == d || d == "" {
			return false
		}
		d = parent
	}
}

// canonical resolves symlinks when possible so containment checks compare
// real locations; a path that cannot be resolved is compared as cleaned.
func canonical(p string) string {
	if p == "" {
		return ""
	}
	if c, err := filepath.EvalSymlinks(p); err == nil {
		return c
	}
	return filepath.Clean(p)
}

// isInside reports whether p is dir or below it. The filesystem root
// contains everything, so a process started in "/" (a service manager's
// default) would otherwise reject every git; it is exempt.
func isInside(p, dir string) bool {
	if dir == "" || dir == string(filepath.Separator) || !filepath.IsAbs(dir) {
		return false
	}
	return pathwithin.Within(dir, p)
}
