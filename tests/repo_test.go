package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitEnv makes commits deterministic, so hashes in golden files are stable.
func gitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	return append(env,
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Ada Lovelace", "GIT_AUTHOR_EMAIL=ada@example.com",
		"GIT_COMMITTER_NAME=Ada Lovelace", "GIT_COMMITTER_EMAIL=ada@example.com",
		"GIT_AUTHOR_DATE=2026-01-02T03:04:05Z", "GIT_COMMITTER_DATE=2026-01-02T03:04:05Z",
	)
}

func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = gitEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// canonicalTempDir is t.TempDir with symlinks resolved, as fluxgit reports
// repository paths canonically.
func canonicalTempDir(t testing.TB) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// fixtureRepo builds the standard small repository: three commits on main,
// a tag, a feature branch, then a staged rename, an unstaged edit and an
// untracked file in the work tree.
func fixtureRepo(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(canonicalTempDir(t), "repo")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "init", "-q", "-b", "main")
	writeFile(t, filepath.Join(dir, "README.md"), "# demo\n")
	writeFile(t, filepath.Join(dir, "src", "app.go"), "package app\n\nfunc Answer() int { return 41 }\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "feat: initial import")
	writeFile(t, filepath.Join(dir, "src", "app.go"), "package app\n\nfunc Answer() int { return 42 }\n")
	git(t, dir, "commit", "-q", "-am", "fix(app): correct the answer")
	git(t, dir, "tag", "v1.0.0")
	git(t, dir, "branch", "feature/cart")
	writeFile(t, filepath.Join(dir, "notes.txt"), "remember the milk\n")
	git(t, dir, "add", "notes.txt")
	git(t, dir, "commit", "-q", "-m", "docs: add notes")
	git(t, dir, "mv", "notes.txt", "NOTES.txt")
	writeFile(t, filepath.Join(dir, "README.md"), "# demo\n\nMore words.\n")
	writeFile(t, filepath.Join(dir, "scratch file.txt"), "untracked\n")
	return dir
}

// mergeConflict leaves repo (on branch main) stopped in a merge of branch
// side that conflicts in file: base, then each branch rewrites it.
func mergeConflict(t testing.TB, repo, file string) {
	t.Helper()
	writeFile(t, filepath.Join(repo, file), "base\n")
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "-q", "-m", "base")
	git(t, repo, "checkout", "-q", "-b", "side")
	writeFile(t, filepath.Join(repo, file), "side\n")
	git(t, repo, "commit", "-q", "-am", "side")
	git(t, repo, "checkout", "-q", "main")
	writeFile(t, filepath.Join(repo, file), "main\n")
	git(t, repo, "commit", "-q", "-am", "main")
	if err := gitCmd(repo, "merge", "-q", "side").Run(); err == nil {
		t.Fatal("merge did not conflict")
	}
}

// gitCmd is an unhardened git command in dir, for control experiments.
func gitCmd(dir string, args ...string) *exec.Cmd {
	return exec.Command("git", append([]string{"-C", dir}, args...)...)
}
