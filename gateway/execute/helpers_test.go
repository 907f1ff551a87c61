package execute

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain gives the package its own HOME, so no configuration of the
// person running the tests (signing, hooks, identity) reaches the write
// runner, which reads the user's global configuration on purpose.
func TestMain(m *testing.M) {
	home, err := os.MkdirTemp("", "execute-home-")
	if err != nil {
		panic(err)
	}
	os.Setenv("HOME", home)
	os.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

// isolate returns an empty run directory.
func isolate(t *testing.T) (runDir string) {
	t.Helper()
	return tmp(t)
}

func tmp(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func gitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	return append(env, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=Set Up", "GIT_AUTHOR_EMAIL=setup@example.com",
		"GIT_COMMITTER_NAME=Set Up", "GIT_COMMITTER_EMAIL=setup@example.com")
}

// git runs test setup with the real git CLI and returns trimmed stdout.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := gitErr(dir, args...)
	if err != nil {
		t.Fatalf("git %q in %s: %v\n%s", args, dir, err, out)
	}
	return out
}

func gitErr(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = gitEnv()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return stderr.String(), err
	}
	return strings.TrimSpace(string(out)), nil
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return "<missing>"
	}
	return string(b)
}

func commit(t *testing.T, dir, name, content, msg string) string {
	t.Helper()
	write(t, dir, name, content)
	git(t, dir, "add", "--", name)
	git(t, dir, "commit", "-q", "-m", msg)
	return git(t, dir, "rev-parse", "HEAD")
}

// newRepo is a repository on main with a.txt committed; user.name and
// user.email are set in the repository (the write runner strips
// GIT_AUTHOR_* and the test HOME has no global identity).
func newRepo(t *testing.T) string {
	t.Helper()
	dir := tmp(t)
	git(t, dir, "init", "-q", "-b", "main")
	git(t, dir, "config", "user.name", "Repo User")
	git(t, dir, "config", "user.email", "repo@example.com")
	commit(t, dir, "a.txt", "alpha\n", "first")
	return dir
}

// snapshot is everything a failed operation must leave as it was: refs,
// HEAD, index, work tree (tracked and untracked), stash.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	for _, args := range [][]string{
		{"symbolic-ref", "-q", "HEAD"}, {"rev-parse", "HEAD"},
		{"for-each-ref", "--format=%(refname) %(objectname)"},
		{"status", "--porcelain=v2", "--untracked-files=all"},
		{"diff"}, {"diff", "--cached"}, {"stash", "list"},
	} {
		out, _ := gitErr(dir, args...)
		b.WriteString(strings.Join(args, " ") + ":\n" + out + "\n")
	}
	for _, f := range []string{"MERGE_HEAD", "rebase-merge", "rebase-apply", "SQUASH_MSG"} {
		if _, err := os.Stat(filepath.Join(dir, ".git", f)); err == nil {
			b.WriteString("leftover " + f + "\n")
		}
	}
	return b.String()
}

// body builds a preview body: repoPath plus the per-operation fields.
func body(repo string, fields map[string]any) json.RawMessage {
	m := map[string]any{"repoPath": repo, "reason": "test", "operationType": "x"}
	for k, v := range fields {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	return b
}

// run binds and executes op; a bind error fails the test.
func run(t *testing.T, e *Executor, op string, b json.RawMessage) (map[string]any, Outcome) {
	t.Helper()
	ctx := context.Background()
	bd, err := e.Bind(ctx, op, b)
	if err != nil {
		t.Fatalf("Bind %s: %v", op, err)
	}
	if _, err := e.Review(ctx, op, b, bd); err != nil {
		t.Fatalf("Review %s: %v", op, err)
	}
	out := e.Execute(ctx, Job{ID: "job-1", OperationType: op, Body: b, Binding: bd})
	var res map[string]any
	if err := json.Unmarshal(out.Result, &res); err != nil {
		t.Fatalf("result is not JSON: %s", out.Result)
	}
	if res["status"] != out.Status || res["message"] == nil {
		t.Fatalf("result without status/message: %s", out.Result)
	}
	return res, out
}

// feature makes branch feature off main with b.txt, then a c.txt commit on
// main, and returns to main.
func feature(t *testing.T, repo string) {
	t.Helper()
	git(t, repo, "checkout", "-q", "-b", "feature")
	commit(t, repo, "b.txt", "bravo\n", "feature work")
	git(t, repo, "checkout", "-q", "main")
	commit(t, repo, "c.txt", "charlie\n", "main work")
}

// conflicting makes branch feature and main change a.txt differently.
func conflicting(t *testing.T, repo string) {
	t.Helper()
	git(t, repo, "checkout", "-q", "-b", "feature")
	commit(t, repo, "a.txt", "feature\n", "feature a")
	git(t, repo, "checkout", "-q", "main")
	commit(t, repo, "a.txt", "main\n", "main a")
}

func head(t *testing.T, repo string) string { return git(t, repo, "rev-parse", "HEAD") }

func restorePoint(t *testing.T, res map[string]any) map[string]any {
	t.Helper()
	rp, ok := res["restorePoint"].(map[string]any)
	if !ok {
		t.Fatalf("no restorePoint in %v", res)
	}
	return rp
}
