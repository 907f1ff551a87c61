package tests

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// addToolStep is one marked block of docs/adding-a-tool.md: the HTML
// comment `<!-- addtool: ACTION -->` and the fenced block after it.
type addToolStep struct {
	action string // "write PATH", `insert PATH after "LINE"` or "run"
	body   string
}

// addToolStepRE finds a marker and the fenced block that follows it.
var addToolStepRE = regexp.MustCompile("(?s)<!-- addtool: (.*?) -->\\s*```[a-z]*\\n(.*?)```")

// addToolSteps reads the walk-through's steps in order.
func addToolSteps(t *testing.T, doc string) []addToolStep {
	t.Helper()
	var steps []addToolStep
	for _, m := range addToolStepRE.FindAllStringSubmatch(doc, -1) {
		steps = append(steps, addToolStep{action: m[1], body: m[2]})
	}
	return steps
}

// insertAfterRE parses the insert action.
var insertAfterRE = regexp.MustCompile(`^insert (\S+) after "(.*)"$`)

// TestAddToolWalkthrough follows docs/adding-a-tool.md literally in a copy
// of this repository (its tracked and untracked, not ignored files, made a
// git repository of its own): it writes the files the page shows, inserts
// its registration line, runs its commands — go generate, build, spec lint,
// the snapshot with -update — and checks the new tool answers over stdio
// with a commit id. A step of the page that no longer works fails it.
func TestAddToolWalkthrough(t *testing.T) {
	if testing.Short() {
		t.Skip("builds fluxgit and runs go test in a copy of the repository (over 30 s)")
	}
	raw, err := os.ReadFile(filepath.Join("..", "docs", "adding-a-tool.md"))
	if err != nil {
		t.Fatal(err)
	}
	steps := addToolSteps(t, string(raw))
	if len(steps) < 6 {
		t.Fatalf("docs/adding-a-tool.md has %d marked steps, want at least 6 (spec, generate, handler, registration, checks, call)", len(steps))
	}
	dir := copyRepo(t)
	env := append(baseEnv(t), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	var last string
	for i, s := range steps {
		switch {
		case strings.HasPrefix(s.action, "write "):
			path := filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(s.action, "write ")))
			if err := os.WriteFile(path, []byte(s.body), 0o644); err != nil {
				t.Fatalf("step %d (%s): %v", i+1, s.action, err)
			}
		case insertAfterRE.MatchString(s.action):
			m := insertAfterRE.FindStringSubmatch(s.action)
			path := filepath.Join(dir, filepath.FromSlash(m[1]))
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("step %d (%s): %v", i+1, s.action, err)
			}
			at := bytes.Index(b, []byte(m[2]))
			if at < 0 {
				t.Fatalf("step %d: %s has no line %q to insert after", i+1, m[1], m[2])
			}
			at += bytes.IndexByte(b[at:], '\n') + 1
			out := append(append(append([]byte{}, b[:at]...), s.body...), b[at:]...)
			if err := os.WriteFile(path, out, 0o644); err != nil {
				t.Fatal(err)
			}
		case s.action == "run":
			cmd := exec.Command("sh", "-e", "-c", s.body)
			cmd.Dir, cmd.Env = dir, env
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("step %d failed: %v\n$ %s\n%s", i+1, err, s.body, out)
			}
			last = string(out)
		default:
			t.Fatalf("step %d: unknown action %q in docs/adding-a-tool.md", i+1, s.action)
		}
	}
	// The last step calls the tool; its stdout line is the JSON-RPC reply,
	// whose text is the result envelope with the commit id.
	if !regexp.MustCompile(`\\"tool\\":\\"repo.head\\".*\\"head\\":\\"[0-9a-f]{40}([0-9a-f]{24})?\\"`).MatchString(last) {
		t.Fatalf("the walk-through's call did not answer with a head commit:\n%s", last)
	}
	if _, err := os.Stat(filepath.Join(dir, "tests", "testdata", "tools", "repo.head.json")); err != nil {
		t.Fatalf("the snapshot step wrote no snapshot: %v", err)
	}
}

// copyRepo copies the repository's files (tracked and untracked, not
// ignored: the state under test, not the last commit) into a temporary
// directory and commits them there, so the copy is a work tree like a
// fresh clone.
func copyRepo(t *testing.T) string {
	t.Helper()
	top := ".."
	out, err := exec.Command("git", "-C", top, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	dir := t.TempDir()
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		src := filepath.Join(top, filepath.FromSlash(name))
		fi, err := os.Lstat(src)
		if err != nil {
			if os.IsNotExist(err) {
				continue // deleted in the work tree, not yet committed
			}
			t.Fatal(err)
		}
		dst := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(src)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, dst); err != nil {
				t.Fatal(err)
			}
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dst, b, fi.Mode().Perm()); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "copy"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(gitTestEnv(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s in the copy: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return dir
}

// gitTestEnv is the environment without GIT_* variables (a test run from
// a git hook would otherwise aim git at the outer repository) and with no
// user or system configuration.
func gitTestEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	return append(env, "GIT_CONFIG_NOSYSTEM=1", fmt.Sprintf("GIT_CONFIG_GLOBAL=%s", os.DevNull))
}
