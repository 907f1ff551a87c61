package gitread

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/fluxgit/fluxgit/internal/resultshape"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// referenceShape selects the reference's full result shapes
// (FLUXGIT_MCP_RESULT_SHAPE=reference) for the rest of this test.
func referenceShape(t testing.TB) { t.Setenv(resultshape.Env, "reference") }

// authorTime is the fixed author date of every test commit.
const authorTime = 1700000000

func gitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	return append(env,
		"GIT_AUTHOR_NAME=Ada Author", "GIT_AUTHOR_EMAIL=ada@example.com",
		"GIT_COMMITTER_NAME=Cy Committer", "GIT_COMMITTER_EMAIL=cy@example.com",
		"GIT_AUTHOR_DATE=1700000000 +0000", "GIT_COMMITTER_DATE=1700000000 +0000",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
	)
}

// git runs the git CLI for test setup and returns trimmed stdout.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = gitEnv()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %q: %v\n%s", args, err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

func tempDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// emptyRepo is a fresh repository on branch main with no commits.
func emptyRepo(t *testing.T) string {
	t.Helper()
	dir := tempDir(t)
	git(t, dir, "init", "-q", "-b", "main")
	return dir
}

// newRepo is a repository whose main branch has one commit with a.txt.
func newRepo(t *testing.T) string {
	t.Helper()
	dir := emptyRepo(t)
	write(t, dir, "a.txt", "alpha\n")
	git(t, dir, "add", "a.txt")
	git(t, dir, "commit", "-q", "-m", "first")
	return dir
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

func commitAll(t *testing.T, dir, msg string) string {
	t.Helper()
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", msg)
	return git(t, dir, "rev-parse", "HEAD")
}

// call invokes a tool directly on a fresh provider.
func call(t *testing.T, tool string, args map[string]any, roots ...string) (*sdk.Result, error) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return New().CallTool(context.Background(), &sdk.Call{Tool: tool, Arguments: raw, Meta: sdk.Meta{AllowedRoots: roots}})
}

// mustOK calls a tool, requires success and decodes data into out. It
// returns the raw data for shape checks.
func mustOK(t *testing.T, tool string, args map[string]any, out any) string {
	t.Helper()
	res, err := call(t, tool, args)
	if err != nil {
		t.Fatalf("%s: unexpected Go error %v", tool, err)
	}
	if res.Error != nil {
		t.Fatalf("%s: unexpected tool error %d %s %s", tool, res.Error.Code, res.Error.Message, res.Error.Data)
	}
	if res.Source != source {
		t.Fatalf("source = %q", res.Source)
	}
	if err := json.Unmarshal(res.Data, out); err != nil {
		t.Fatalf("decode %s: %v", res.Data, err)
	}
	return string(res.Data)
}

// mustFail requires a 10010 tool error and returns its data.
func mustFail(t *testing.T, tool string, args map[string]any, roots ...string) failData {
	t.Helper()
	res, err := call(t, tool, args, roots...)
	if err != nil {
		t.Fatalf("%s: want tool error, got Go error %v", tool, err)
	}
	if res.Error == nil {
		t.Fatalf("%s: want tool error, got data %s", tool, res.Data)
	}
	if res.Error.Code != codeGitFailed || res.Error.Message != messageGitFailed {
		t.Fatalf("%s: error %d %q", tool, res.Error.Code, res.Error.Message)
	}
	var fd failData
	if err := json.Unmarshal(res.Error.Data, &fd); err != nil {
		t.Fatal(err)
	}
	if len(fd.Command) < 3 || fd.Command[0] != "git" || fd.Command[1] != "-C" {
		t.Fatalf("command %q", fd.Command)
	}
	for _, c := range fd.Command {
		if strings.HasPrefix(c, "core.") || c == "--no-optional-locks" {
			t.Fatalf("hardening flags leaked into the reported command: %q", fd.Command)
		}
	}
	return fd
}

// mustArgError requires a *sdk.ArgumentError whose details contain want.
func mustArgError(t *testing.T, tool string, args map[string]any, want string) {
	t.Helper()
	res, err := call(t, tool, args)
	var ae *sdk.ArgumentError
	if !errors.As(err, &ae) {
		t.Fatalf("%s: want *sdk.ArgumentError, got result %+v err %v", tool, res, err)
	}
	if ae.Message != "Invalid params" || !strings.Contains(ae.Details, want) {
		t.Fatalf("%s: got %q / %q, want details containing %q", tool, ae.Message, ae.Details, want)
	}
}

// snapshot fingerprints everything under .git plus the work tree: path,
// mode, size, mtime and content hash. Reading tools must leave it equal.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	snap := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		entry := info.Mode().String() + " " + info.ModTime().String()
		if info.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			entry += " " + hex.EncodeToString(sum[:])
		}
		snap[p] = entry
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func diffSnapshots(before, after map[string]string) []string {
	var out []string
	for k, v := range before {
		if after[k] != v {
			out = append(out, "changed or removed: "+k)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			out = append(out, "added: "+k)
		}
	}
	sort.Strings(out)
	return out
}

func ptr(s string) *string { return &s }

// execGit prepares a git command for setup steps that are allowed to fail.
func execGit(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = gitEnv()
	return cmd
}
