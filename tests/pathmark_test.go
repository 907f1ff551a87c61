package tests

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fluxgit/fluxgit/internal/audit"
)

// rawRefusal returns the code and the whole raw reply of a refused call, whether
// the host answered with a JSON-RPC error or a tool result flagged isError
// (code 0 when the call was not refused).
func rawRefusal(t *testing.T, r response) (int, string) {
	t.Helper()
	if r.Error != nil {
		return r.Error.Code, r.raw
	}
	var res struct {
		IsError           bool `json:"isError"`
		StructuredContent struct {
			Error *struct {
				Code int `json:"code"`
			} `json:"error"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil {
		t.Fatal(err)
	}
	if !res.IsError {
		return 0, r.raw
	}
	if res.StructuredContent.Error == nil {
		return -1, r.raw
	}
	return res.StructuredContent.Error.Code, r.raw
}

// TestRunDirConfined drives every tool that takes runDir through the real
// binary. A runDir outside the allowed roots (directly, through a symlink
// inside the roots, or with ..) is refused with -32011 before any provider
// runs: the marker in the outside rebase/<id>.json never appears, and
// neither does the outside path. The configured run directory (even though
// it lies outside the roots) and a directory inside the roots are read —
// the controls proving the same record would be served if it were
// accepted.
func TestRunDirConfined(t *testing.T) {
	base := canonicalTempDir(t)
	root := filepath.Join(base, "root")
	run := filepath.Join(base, "run")
	outside := filepath.Join(base, "outside-secret")
	repo := filepath.Join(root, "repo")
	for _, d := range []string{repo, run, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	git(t, repo, "init", "-q", "-b", "main")
	writeFile(t, filepath.Join(repo, "a.txt"), "a\n")
	git(t, repo, "add", "a.txt")
	git(t, repo, "commit", "-q", "-m", "one")

	const outsideMarker, runMarker, rootMarker = "OUTSIDE-MARKER-b81c", "RUNDIR-MARKER-55e2", "INROOT-MARKER-9d0f"
	record := func(op string) string {
		b, _ := json.Marshal(map[string]any{"operation": op, "created_at": 1700000100})
		return string(b)
	}
	writeFile(t, filepath.Join(outside, "rebase", "web.json"), record(outsideMarker))
	writeFile(t, filepath.Join(outside, "repos", "web.path"), repo+"\n")
	writeFile(t, filepath.Join(run, "rebase", "web.json"), record(runMarker))
	inRoot := filepath.Join(root, "state")
	writeFile(t, filepath.Join(inRoot, "rebase", "web.json"), record(rootMarker))
	escape := filepath.Join(root, "escape")
	if err := os.Symlink(outside, escape); err != nil {
		t.Fatal(err)
	}
	// A record inside the run directory that is a symlink to the outside one.
	if err := os.Symlink(filepath.Join(outside, "rebase", "web.json"), filepath.Join(run, "rebase", "evil.json")); err != nil {
		t.Fatal(err)
	}

	env := append(baseEnv(t), "FLUXGIT_MCP_ALLOWED_ROOTS="+root, "FLUXGIT_RUN_DIR="+run,
		"FLUXGIT_GATEWAY_ADDR=127.0.0.1:9", "FLUXGIT_MCP_AUDIT_DISABLED=1")
	s := startServer(t, env)
	initialize(t, s)
	unconfined := startServer(t, append(baseEnv(t), "FLUXGIT_RUN_DIR="+run, "FLUXGIT_GATEWAY_ADDR=127.0.0.1:9", "FLUXGIT_MCP_AUDIT_DISABLED=1"))
	initialize(t, unconfined)

	tools := []string{"flux.latestRestorePoint", "flux.restorePoints", "flux.restorePointDetails", "safety.timeline", "safety.eventDetails"}
	id := 100
	for _, tc := range []struct {
		name     string
		srv      *server
		runDir   any // nil: omitted
		repoID   string
		wantCode int    // 0: success
		want     string // success: marker the result must show
	}{
		{"outside the roots", s, outside, "web", -32011, ""},
		{"symlink inside the roots leading out", s, escape, "web", -32011, ""},
		{"dotdot out of the roots", s, filepath.Join(root, "..", "outside-secret"), "web", -32011, ""},
		{"missing outside the roots", s, filepath.Join(outside, "nope"), "web", -32011, ""},
		{"unconfined server: only the run dir", unconfined, outside, "web", -32011, ""},
		{"relative", s, "run", "web", -32602, ""},
		{"control: omitted uses the configured run dir", s, nil, "web", 0, runMarker},
		{"control: the configured run dir, outside the roots", s, run, "web", 0, runMarker},
		{"control: a directory inside the roots", s, inRoot, "web", 0, rootMarker},
		{"symlinked record inside the run dir", s, run, "evil", 10010, ""},
	} {
		for _, tool := range tools {
			t.Run(tc.name+"/"+tool, func(t *testing.T) {
				args := map[string]any{"repoPath": repo, "repoId": tc.repoID}
				if tc.runDir != nil {
					args["runDir"] = tc.runDir
				}
				if tool == "safety.eventDetails" {
					args["eventId"] = "restore:" + tc.repoID + ":1700000100" // not the newest event
				}
				id++
				r := tc.srv.call(id, "tools/call", map[string]any{"name": tool, "arguments": args})
				code, text := rawRefusal(t, r)
				if strings.Contains(text, outsideMarker) || strings.Contains(text, outside) {
					t.Fatalf("outside content or path leaked: %s", text)
				}
				if code != tc.wantCode {
					t.Fatalf("code %d, want %d: %s", code, tc.wantCode, text)
				}
				if code == -32011 && (!strings.Contains(text, "FLUXGIT_RUN_DIR") || !strings.Contains(text, "FLUXGIT_MCP_ALLOWED_ROOTS")) {
					t.Fatalf("refusal does not say what runDir may be: %s", text)
				}
				if code == 0 && !strings.Contains(text, tc.want) {
					t.Fatalf("control: %s not served: %s", tc.want, text)
				}
			})
		}
	}
}

// TestPathMarkConfinesUnusualNames: a third-party tool (tests/echoprovider,
// spec tests/testdata/echo-spec/tools/echo.where.yaml) whose path arguments
// are called spot, also[] and deep[].place is confined by their
// x-fluxgit-path marks alone: outside values are refused with -32011 naming
// the argument but not the path, and accepted values reach the provider in
// canonical form (symlinks resolved), which proves the host rewrote them.
func TestPathMarkConfinesUnusualNames(t *testing.T) {
	base := canonicalTempDir(t)
	root := filepath.Join(base, "root")
	inside := filepath.Join(root, "in")
	outside := filepath.Join(base, "outside-secret")
	for _, d := range []string{inside, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(inside, "f.txt")
	writeFile(t, file, "f\n")
	writeFile(t, filepath.Join(outside, "o.txt"), "o\n")
	alias := filepath.Join(root, "alias") // inside the roots, leads to inside
	if err := os.Symlink(inside, alias); err != nil {
		t.Fatal(err)
	}
	escape := filepath.Join(root, "escape") // inside the roots, leads out
	if err := os.Symlink(outside, escape); err != nil {
		t.Fatal(err)
	}
	env := echoEnv(t)
	s := startServer(t, append(env, "FLUXGIT_MCP_ALLOWED_ROOTS="+root))
	initialize(t, s)
	for i, tc := range []struct {
		name     string
		args     map[string]any
		wantCode int
		argument string // the argument a refusal must name
		want     map[string]any
	}{
		{"canonicalised", map[string]any{
			"spot": alias, "also": []any{alias + "/../in"}, "deep": []any{map[string]any{"place": filepath.Join(alias, "f.txt"), "note": "/not/a/path"}},
		}, 0, "", map[string]any{
			"spot": inside, "also": []any{inside}, "deep": []any{map[string]any{"place": file, "note": "/not/a/path"}},
		}},
		{"top-level outside", map[string]any{"spot": outside}, -32011, "arguments.spot", nil},
		{"symlink out", map[string]any{"spot": escape}, -32011, "arguments.spot", nil},
		{"array item outside", map[string]any{"spot": inside, "also": []any{inside, outside}}, -32011, "arguments.also[1]", nil},
		{"nested field outside", map[string]any{"spot": inside, "deep": []any{map[string]any{"place": file}, map[string]any{"place": filepath.Join(escape, "o.txt")}}}, -32011, "arguments.deep[1].place", nil},
		{"kind checked: file where a directory is wanted", map[string]any{"spot": file}, -32602, "", nil},
		{"repository argument with another name", map[string]any{"spot": inside, "home": alias}, 0, "", map[string]any{"spot": inside, "home": inside}},
		{"repository argument outside", map[string]any{"spot": inside, "home": escape}, -32011, "arguments.home", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := s.call(10+i, "tools/call", map[string]any{"name": "echo.where", "arguments": tc.args})
			code, text := rawRefusal(t, r)
			if strings.Contains(text, outside) {
				t.Fatalf("refusal discloses the outside path: %s", text)
			}
			if code != tc.wantCode {
				t.Fatalf("code %d, want %d: %s", code, tc.wantCode, text)
			}
			if tc.argument != "" && !strings.Contains(text, tc.argument) {
				t.Fatalf("refusal does not name %s: %s", tc.argument, text)
			}
			if tc.want == nil {
				return
			}
			p := toolPayload(t, r)
			got, _ := json.Marshal(p["data"].(map[string]any)["args"])
			want, _ := json.Marshal(tc.want)
			if string(got) != string(want) {
				t.Fatalf("provider received %s, want %s", got, want)
			}
		})
	}
}

// TestRepoScopeFollowsMark: the ledger's repo_scope hashes the argument
// marked x-fluxgit-path: repository (here echo.where's "home"), in the
// format it always had, and holds no path in clear.
func TestRepoScopeFollowsMark(t *testing.T) {
	root := canonicalTempDir(t)
	env := echoEnv(t)
	s := startServer(t, env)
	initialize(t, s)
	toolPayload(t, s.call(1, "tools/call", map[string]any{"name": "echo.where", "arguments": map[string]any{"spot": root, "home": root}}))
	toolPayload(t, s.call(2, "tools/call", map[string]any{"name": "echo.where", "arguments": map[string]any{"spot": root}}))
	s.stop()
	ledger := filepath.Join(envValue(env, audit.EnvRunDir), "audit", "mcp.jsonl")
	raw, err := os.ReadFile(ledger)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), root) {
		t.Fatalf("ledger holds a path in clear")
	}
	entries := ledgerEntries(t, ledger)
	if len(entries) != 2 {
		t.Fatalf("%d entries, want 2", len(entries))
	}
	value, _ := json.Marshal(root)
	sum := sha256.Sum256(value)
	if want := "repoPath:sha256:" + hex.EncodeToString(sum[:]); entries[0]["repo_scope"] != want {
		t.Errorf("repo_scope %v, want %s", entries[0]["repo_scope"], want)
	}
	// spot is a directory, not a repository: no scope.
	if entries[1]["repo_scope"] != "unknown" {
		t.Errorf("repo_scope without a repository argument: %v", entries[1]["repo_scope"])
	}
}

// TestUnmarkedThirdPartyPathRefused: a third-party spec whose tool has a
// path-like argument without x-fluxgit-path stops start-up (exit 1) with a
// message naming the argument and the fix — it would otherwise reach the
// provider unconfined. The echo spec as shipped (control) starts.
func TestUnmarkedThirdPartyPathRefused(t *testing.T) {
	spec := t.TempDir()
	b, err := os.ReadFile("testdata/echo-spec/tools/echo.where.yaml")
	if err != nil {
		t.Fatal(err)
	}
	unmarked := strings.Replace(string(b), "      x-fluxgit-path: directory\n", "", 1)
	if unmarked == string(b) {
		t.Fatal("fixture: mark not found")
	}
	writeFile(t, filepath.Join(spec, "tools", "echo.where.yaml"), unmarked)
	cfg := filepath.Join(t.TempDir(), "c.yaml")
	writeFile(t, cfg, "providers:\n  - name: echo\n    command: "+echoBin+"\n    spec: "+spec+"\n")
	_, errOut, code := runCLI(t, append(baseEnv(t), "FLUXGIT_CONFIG="+cfg), "providers")
	if code != 1 || !strings.Contains(errOut, "arguments.spot looks like a filesystem path") || !strings.Contains(errOut, "x-fluxgit-path") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if _, errOut, code := runCLI(t, echoEnv(t), "providers"); code != 0 {
		t.Fatalf("control: exit %d: %s", code, errOut)
	}
}
