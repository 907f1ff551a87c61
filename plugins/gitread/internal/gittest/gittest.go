// Package gittest holds the test helpers every git-read family shares:
// real repositories made with the git CLI at fixed dates, snapshots that
// prove a read left a repository untouched, and tool calls through a
// provider with the checks every test makes on their answers.
package gittest

import (
	"bytes"
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

// ReferenceShape selects the reference's full result shapes
// (FLUXGIT_MCP_RESULT_SHAPE=reference) for the rest of this test.
func ReferenceShape(t testing.TB) { t.Setenv(resultshape.Env, "reference") }

// AuthorTime is the fixed author date of every test commit.
const AuthorTime = 1700000000

// GitEnv is the environment of every test git command: no GIT_* from
// outside, fixed names and dates, no system or global configuration.
func GitEnv() []string {
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

// Git runs the git CLI for test setup and returns trimmed stdout.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = GitEnv()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %q: %v\n%s", args, err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// TempDir is t.TempDir with symlinks resolved, the form git reports.
func TempDir(t testing.TB) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// EmptyRepo is a fresh repository on branch main with no commits.
func EmptyRepo(t testing.TB) string {
	t.Helper()
	dir := TempDir(t)
	Git(t, dir, "init", "-q", "-b", "main")
	return dir
}

// NewRepo is a repository whose main branch has one commit with a.txt.
func NewRepo(t testing.TB) string {
	t.Helper()
	dir := EmptyRepo(t)
	Write(t, dir, "a.txt", "alpha\n")
	Git(t, dir, "add", "a.txt")
	Git(t, dir, "commit", "-q", "-m", "first")
	return dir
}

// Write writes content to dir/name, making the directories it needs.
func Write(t testing.TB, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// CommitAll stages everything and commits it with msg; it returns the
// new HEAD.
func CommitAll(t testing.TB, dir, msg string) string {
	t.Helper()
	Git(t, dir, "add", "-A")
	Git(t, dir, "commit", "-q", "-m", msg)
	return Git(t, dir, "rev-parse", "HEAD")
}

// Caller serves one tool call (a provider's CallTool).
type Caller func(ctx context.Context, call *sdk.Call) (*sdk.Result, error)

// Source is the Result.Source of a local-git answer.
const Source = "local-git"

// FailData is the 10010 payload (the reference's command and details,
// plus kind and hint).
type FailData struct {
	Command []string `json:"command"`
	Details string   `json:"details"`
	Kind    string   `json:"kind,omitempty"`
	Hint    string   `json:"hint,omitempty"`
}

// Call invokes tool with args through c, confined to roots.
func Call(t testing.TB, c Caller, tool string, args map[string]any, roots ...string) (*sdk.Result, error) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return c(context.Background(), &sdk.Call{Tool: tool, Arguments: raw, Meta: sdk.Meta{AllowedRoots: roots}})
}

// MustOK calls a tool, requires success and decodes data into out. It
// returns the raw data for shape checks.
func MustOK(t testing.TB, c Caller, tool string, args map[string]any, out any) string {
	t.Helper()
	res, err := Call(t, c, tool, args)
	if err != nil {
		t.Fatalf("%s: unexpected Go error %v", tool, err)
	}
	if res.Error != nil {
		t.Fatalf("%s: unexpected tool error %d %s %s", tool, res.Error.Code, res.Error.Message, res.Error.Data)
	}
	if res.Source != Source {
		t.Fatalf("source = %q", res.Source)
	}
	if err := json.Unmarshal(res.Data, out); err != nil {
		t.Fatalf("decode %s: %v", res.Data, err)
	}
	return string(res.Data)
}

// MustFail requires a 10010 tool error and returns its data.
func MustFail(t testing.TB, c Caller, tool string, args map[string]any, roots ...string) FailData {
	t.Helper()
	res, err := Call(t, c, tool, args, roots...)
	if err != nil {
		t.Fatalf("%s: want tool error, got Go error %v", tool, err)
	}
	if res.Error == nil {
		t.Fatalf("%s: want tool error, got data %s", tool, res.Data)
	}
	if res.Error.Code != 10010 || res.Error.Message != "Local git fallback failed" {
		t.Fatalf("%s: error %d %q", tool, res.Error.Code, res.Error.Message)
	}
	var fd FailData
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

// MustArgError requires a *sdk.ArgumentError whose details contain want.
func MustArgError(t testing.TB, c Caller, tool string, args map[string]any, want string) {
	t.Helper()
	res, err := Call(t, c, tool, args)
	var ae *sdk.ArgumentError
	if !errors.As(err, &ae) {
		t.Fatalf("%s: want *sdk.ArgumentError, got result %+v err %v", tool, res, err)
	}
	if ae.Message != "Invalid params" || !strings.Contains(ae.Details, want) {
		t.Fatalf("%s: got %q / %q, want details containing %q", tool, ae.Message, ae.Details, want)
	}
}

// Snapshot fingerprints everything under .git plus the work tree: path,
// mode, size, mtime and content hash. Reading tools must leave it equal.
func Snapshot(t testing.TB, dir string) map[string]string {
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

// DiffSnapshots lists the paths changed, removed or added between two
// Snapshots, sorted.
func DiffSnapshots(before, after map[string]string) []string {
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

// Ptr returns a pointer to s.
func Ptr(s string) *string { return &s }

// ExecGit prepares a git command for setup steps that are allowed to fail.
func ExecGit(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = GitEnv()
	return cmd
}

// Envelope wraps a provider result in the host's envelope (tool, readOnly,
// tier, source, repoPath, data or error) and decodes it back with numbers
// as json.Number, the form outputSchema validation reads; raw is the JSON.
func Envelope(t testing.TB, tool, tier string, res *sdk.Result, repoPath string) (decoded any, raw []byte) {
	t.Helper()
	env := map[string]any{"tool": tool, "readOnly": true, "tier": tier}
	if res.Source != "" {
		env["source"] = res.Source
	}
	if res.Error != nil {
		var d any
		_ = json.Unmarshal(res.Error.Data, &d)
		env["error"] = map[string]any{"code": res.Error.Code, "message": res.Error.Message, "data": d}
		if res.Source != "" && repoPath != "" {
			env["repoPath"] = repoPath
		}
	} else {
		var d any
		if err := json.Unmarshal(res.Data, &d); err != nil {
			t.Fatal(err)
		}
		env["data"] = d
		if repoPath != "" {
			env["repoPath"] = repoPath
		}
	}
	b, _ := json.Marshal(env)
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	if err := dec.Decode(&decoded); err != nil {
		t.Fatal(err)
	}
	return decoded, b
}

// NoGateway unsets every approval-gateway address variable for the rest
// of the test, so the FluxGit-required tools answer 10001.
func NoGateway(t testing.TB) {
	for _, v := range []string{"FLUXGIT_MCP_HANDSHAKE_ADDR", "FLUXGIT_GATEWAY_ADDR", "FLUXGIT_GATEWAY_URL"} {
		t.Setenv(v, "")
	}
}

// StrictDecode decodes s into v, refusing fields v does not have, and
// checks that v encodes back to exactly s: the reference payload is
// precisely the reference struct, no field added, dropped or reordered.
func StrictDecode(t testing.TB, s string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // the wire form is not HTML-escaped either
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	if b := bytes.TrimSuffix(buf.Bytes(), []byte("\n")); !bytes.Equal(b, []byte(s)) {
		t.Fatalf("reference payload is not the reference struct:\n got %s\nwant %s", s, buf.Bytes())
	}
}
