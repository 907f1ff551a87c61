//go:build unix

package gitexec

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestSubmoduleFlagsInArgv: the commands that can make git start a
// process inside a submodule carry the command-line flags that stop it
// (they override .gitmodules and config), and every call carries the
// configuration defaults.
func TestSubmoduleFlagsInArgv(t *testing.T) {
	for _, tc := range []struct {
		sub  string
		want []string
	}{
		{"status", []string{"--ignore-submodules=dirty"}},
		{"diff", []string{"--ignore-submodules=dirty", "--submodule=short"}},
		{"diff-index", []string{"--ignore-submodules=dirty", "--submodule=short"}},
		{"diff-files", []string{"--ignore-submodules=dirty", "--submodule=short"}},
		{"diff-tree", []string{"--submodule=short"}},
		{"log", []string{"--submodule=short"}},
		{"show", []string{"--submodule=short"}},
		{"ls-files", nil},
	} {
		argv := hardenedArgs("/r", []string{tc.sub, "x"})
		at := slices.Index(argv, tc.sub)
		for _, f := range tc.want {
			if i := slices.Index(argv, f); i <= at || i > at+len(subcommandFlags[tc.sub]) {
				t.Errorf("%s: %q missing right after the subcommand: %q", tc.sub, f, argv)
			}
		}
		for _, kv := range []string{"submodule.recurse=false", "diff.submodule=short", "status.submoduleSummary=false", "diff.ignoreSubmodules=dirty"} {
			if i := slices.Index(argv, kv); i < 1 || argv[i-1] != "-c" || i > at {
				t.Errorf("%s: -c %s missing before the subcommand: %q", tc.sub, kv, argv)
			}
		}
	}
}

// TestSubmoduleConfigNeverRuns: a submodule's own config defines a clean
// filter and a diff driver its .gitattributes selects, the superproject
// asks for diff.submodule=diff and its .gitmodules for ignore=none, and a
// file in the submodule is stat-dirty. Plain git status runs the filter
// (control); no runner call may.
func TestSubmoduleConfigNeverRuns(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "marker")
	script := markerScript(t, marker)
	lib := newRepo(t)
	super := newRepo(t)
	gitT(t, super, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "lib")
	gitT(t, super, "commit", "-q", "-m", "add lib")
	sub := filepath.Join(super, "lib")
	writeFile(t, filepath.Join(sub, "a.txt"), "two\n")
	gitT(t, sub, "commit", "-q", "-am", "lib two")
	gitT(t, super, "commit", "-q", "-am", "bump lib")
	subGitDir := filepath.Join(super, ".git", "modules", "lib")
	f, err := os.OpenFile(filepath.Join(subGitDir, "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("[filter \"evil\"]\n\tclean = " + script + "\n[diff \"evil\"]\n\tcommand = " + script + "\n\ttextconv = " + script + "\n")
	f.Close()
	writeFile(t, filepath.Join(sub, ".gitattributes"), "* filter=evil diff=evil\n")
	gitT(t, super, "config", "diff.submodule", "diff")
	gitT(t, super, "config", "submodule.recurse", "true")
	gitT(t, super, "config", "-f", ".gitmodules", "submodule.lib.ignore", "none")
	staleFile(t, sub, "a.txt", "TWO\n")

	r := &Runner{}
	for _, args := range [][]string{
		{"status", "--porcelain=v2", "-z"},
		{"diff"},
		{"diff", "HEAD"},
		{"diff", "HEAD~1", "HEAD"},
		{"diff-index", "HEAD"},
		{"diff-files"},
		{"diff-tree", "-p", "HEAD~1", "HEAD"},
		{"log", "-p", "-2"},
		{"show", "HEAD"},
		{"ls-files", "--stage"},
	} {
		if _, err := r.Run(context.Background(), super, args...); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		assertNoMarker(t, marker)
	}
	// Control: plain git status does run the submodule's filter.
	proveFilterWouldRun(t, super, marker)
}
