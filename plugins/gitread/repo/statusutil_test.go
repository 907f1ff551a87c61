package repo

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Fixtures and cross-tool checks for the issue-3 tools.

// gitOK runs a setup git command that is expected to fail (a conflict).
func gitMayFail(t *testing.T, dir string, args ...string) {
	t.Helper()
	_ = execGit(dir, args...).Run()
}

// conflictRepo stops a merge, rebase or cherry-pick on conflicts:
// a both-modified text file, a delete/modify pair and a binary file.
func conflictRepo(t *testing.T, op string) string {
	t.Helper()
	repo := newRepo(t)
	write(t, repo, "text.txt", "one\ntwo\nthree\n")
	write(t, repo, "gone.txt", "base\n")
	write(t, repo, "bin.dat", "\x00base\x00")
	commitAll(t, repo, "base")
	git(t, repo, "checkout", "-q", "-b", "side")
	write(t, repo, "text.txt", "one\nSIDE\nthree\n")
	write(t, repo, "gone.txt", "side edit\n")
	write(t, repo, "bin.dat", "\x00side\x00")
	commitAll(t, repo, "side change")
	git(t, repo, "checkout", "-q", "main")
	write(t, repo, "text.txt", "one\nMAIN\nthree\n")
	git(t, repo, "rm", "-q", "gone.txt")
	write(t, repo, "bin.dat", "\x00main\x00")
	commitAll(t, repo, "main change")
	switch op {
	case "merge":
		gitMayFail(t, repo, "merge", "-q", "side")
	case "rebase":
		gitMayFail(t, repo, "rebase", "side")
	case "cherry-pick":
		gitMayFail(t, repo, "cherry-pick", "side")
	}
	return repo
}

// decodeData calls a tool and decodes the data into a generic map too.
func briefOf(t *testing.T, repo string) (briefData, string) {
	referenceShape(t) // asserts the reference shape
	t.Helper()
	var d briefData
	raw := mustOK(t, "repo.brief", map[string]any{"repoPath": repo}, &d)
	return d, raw
}

var issue3Tools = []string{"repo.brief", "repo.scope", "repo.branchStack", "repo.reflog", "conflict.read",
	"worktree.changes", "worktree.list", "submodule.status"}

func issue3Args(tool, repo string) map[string]any {
	args := map[string]any{"repoPath": repo}
	if tool == "repo.scope" {
		args["path"] = "."
	}
	return args
}

// TestIssue3ToolsOnOptionLikeRefs: refs literally named like options exist;
// every tool that lists or takes refs must leave no file behind.
func TestIssue3ToolsOnOptionLikeRefs(t *testing.T) {
	repo := newRepo(t)
	git(t, repo, "update-ref", "refs/heads/--output=pwned", "HEAD")
	git(t, repo, "update-ref", "refs/remotes/origin/--output=pwned-remote", "HEAD")
	git(t, repo, "update-ref", "refs/tags/--output=pwned-tag", "HEAD")
	git(t, repo, "branch", "--set-upstream-to=--output=pwned", "main")
	cwd, _ := os.Getwd()
	for _, tool := range issue3Tools {
		var anyData map[string]any
		mustOK(t, tool, issue3Args(tool, repo), &anyData)
	}
	var d reflogData
	mustOK(t, "repo.reflog", map[string]any{"repoPath": repo, "refName": "refs/heads/--output=pwned"}, &d)
	for _, bad := range []string{"--output=pwned", "-h", "--all"} {
		mustArgError(t, "repo.reflog", map[string]any{"repoPath": repo, "refName": bad}, "arguments.refName must not start with '-'")
		mustArgError(t, "repo.branchStack", map[string]any{"repoPath": repo, "baseCandidates": []string{"main", bad}}, "arguments.baseCandidates[1] must not start with '-'")
	}
	var bs branchStackData
	mustOK(t, "repo.branchStack", map[string]any{"repoPath": repo, "baseCandidates": []string{"--output=pwned"[2:]}}, &bs)
	assertNoPwned(t, repo, cwd, filepath.Dir(repo))
}

func TestIssue3RepoRelativePathsRefused(t *testing.T) {
	repo := newRepo(t)
	for _, tool := range []string{"repo.scope", "submodule.status"} {
		for _, p := range []string{"..", "../x", "a/../../b", "/etc", filepath.Join(repo, "a.txt")} {
			mustArgError(t, tool, map[string]any{"repoPath": repo, "path": p}, "arguments.path must be repository-relative without '..'")
		}
	}
}

// TestIssue3ReadsLeaveRepositoryUntouched runs every new tool on busy
// repositories and compares .git and the work tree byte for byte.
func TestIssue3ReadsLeaveRepositoryUntouched(t *testing.T) {
	fixtures := map[string]func(t *testing.T) string{
		"stat-dirty": func(t *testing.T) string {
			repo := newRepo(t)
			write(t, repo, "b.txt", "b\n")
			commitAll(t, repo, "second")
			write(t, repo, "a.txt", "alpha\n") // same content, new mtime
			write(t, repo, "b.txt", "changed\n")
			write(t, repo, "untracked.txt", "u\n")
			write(t, repo, "CODEOWNERS", "* @all\n")
			return repo
		},
		"merge conflict": func(t *testing.T) string { return conflictRepo(t, "merge") },
		"submodules":     func(t *testing.T) string { return submoduleRepo(t).top },
	}
	for name, setup := range fixtures {
		t.Run(name, func(t *testing.T) {
			repo := setup(t)
			before := snapshot(t, repo)
			for _, tool := range issue3Tools {
				var anyData map[string]any
				mustOK(t, tool, issue3Args(tool, repo), &anyData)
			}
			if d := diffSnapshots(before, snapshot(t, repo)); len(d) > 0 {
				t.Fatalf("repository modified:\n%s", strings.Join(d, "\n"))
			}
		})
	}
}

func TestIssue3EmptyRepository(t *testing.T) {
	repo := emptyRepo(t)
	for _, tool := range issue3Tools {
		t.Run(tool, func(t *testing.T) {
			var anyData map[string]any
			raw := mustOK(t, tool, issue3Args(tool, repo), &anyData)
			if len(raw) > 4000 {
				t.Fatalf("%s", raw)
			}
		})
	}
}

func TestIssue3NotARepository(t *testing.T) {
	dir := tempDir(t)
	for _, tool := range issue3Tools {
		fd := mustFail(t, tool, issue3Args(tool, dir))
		if fd.Command[3] != "rev-parse" {
			t.Fatalf("%s: %+v", tool, fd)
		}
	}
}

func TestStatusScanOddNames(t *testing.T) {
	referenceShape(t) // asserts the reference shape
	repo := newRepo(t)
	for _, n := range oddNames {
		write(t, repo, n, "x\n")
	}
	var d worktreeChangesData
	mustOK(t, "worktree.changes", map[string]any{"repoPath": repo}, &d)
	got := map[string]bool{}
	for _, e := range d.Untracked {
		p := e.Path
		if e.PathBase64 != "" {
			p = "b64:" + e.PathBase64
		}
		got[p] = true
	}
	if len(d.Untracked) != len(oddNames) {
		t.Fatalf("%+v", d.Untracked)
	}
	for _, n := range oddNames {
		if !got[n] && !got["b64:"+b64(n)] {
			t.Fatalf("missing %q in %+v", n, d.Untracked)
		}
	}
}

func TestClip(t *testing.T) {
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{{"abc", 3, "abc"}, {"abcd", 3, "ab…"}, {"ééé", 2, "é…"}, {"x", 0, "x"}, {"xy", 1, "…"}} {
		if got, _ := clip(tt.in, tt.n); got != tt.want && !(tt.n == 0 && got == "…") {
			t.Fatalf("clip(%q,%d)=%q", tt.in, tt.n, got)
		}
	}
	if n := jsonLen(map[string]string{"a": strconv.Itoa(1)}); n != len(`{"a":"1"}`) {
		t.Fatal(n)
	}
	_ = json.Valid
}
