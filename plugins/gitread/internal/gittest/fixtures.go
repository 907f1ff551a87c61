package gittest

import (
	"os"
	"path/filepath"
	"testing"
)

// Repository fixtures of the conflict-prediction and fleet tests.

// Clone makes a bare "remote" from repo's main and a clone tracking it.
func Clone(t testing.TB, origin string) (clone, bare string) {
	t.Helper()
	bare = filepath.Join(TempDir(t), "remote.git")
	Git(t, origin, "clone", "-q", "--bare", origin, bare)
	clone = filepath.Join(TempDir(t), "clone")
	Git(t, origin, "clone", "-q", bare, clone)
	return clone, bare
}

// Diverged builds a clone whose main is one commit ahead of and one behind
// origin/main (as last fetched). mine/theirs are file→content maps.
func Diverged(t testing.TB, base map[string]string, theirs, mine func(dir string)) string {
	t.Helper()
	origin := EmptyRepo(t)
	for k, v := range base {
		Write(t, origin, k, v)
	}
	CommitAll(t, origin, "base")
	clone, bare := Clone(t, origin)
	// theirs: pushed to the remote from another clone, then fetched once.
	other := filepath.Join(TempDir(t), "other")
	Git(t, origin, "clone", "-q", bare, other)
	theirs(other)
	CommitAll(t, other, "theirs")
	Git(t, other, "push", "-q", "origin", "main")
	Git(t, clone, "fetch", "-q")
	mine(clone)
	CommitAll(t, clone, "mine")
	return clone
}

// Writer returns a change that writes files (path → content; "" removes
// the path) into a work tree, for Diverged.
func Writer(files map[string]string) func(string) {
	return func(dir string) {
		for k, v := range files {
			p := filepath.Join(dir, k)
			if v == "" {
				_ = os.Remove(p)
				continue
			}
			_ = os.MkdirAll(filepath.Dir(p), 0o755)
			_ = os.WriteFile(p, []byte(v), 0o644)
		}
	}
}

// Mv returns a change that renames from to to in a work tree, for
// Diverged.
func Mv(from, to string) func(string) {
	return func(dir string) { _ = os.Rename(filepath.Join(dir, from), filepath.Join(dir, to)) }
}

// Lines is a ten-line file whose lines merge independently.
var Lines = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n"
