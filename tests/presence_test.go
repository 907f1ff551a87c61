package tests

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fluxgit/fluxgit/tests/gatewaytest"
)

// detectEnv is the environment of a fluxgit whose agent detection sees
// only what a test puts there: a private run directory (shared by the
// processes of one test), a private roster, and an empty home, so the
// agent stores of whoever runs the tests are never read.
func detectEnv(t testing.TB, runDir, stateDir string, extra ...string) []string {
	t.Helper()
	home := canonicalTempDir(t)
	var env []string
	for _, kv := range baseEnv(t) {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "HOME" || strings.HasPrefix(k, "XDG_") || k == "CODEX_HOME" || k == "CODEX_SQLITE_HOME" ||
			k == "CLAUDE_CONFIG_DIR" || k == "GEMINI_CLI_HOME" || k == "COPILOT_HOME" || k == "CLINE_DIR":
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "HOME="+home, "FLUXGIT_RUN_DIR="+runDir, "SHIFT_STATE_DIR="+stateDir)
	return append(env, extra...)
}

// startAs starts fluxgit and initializes it as the MCP client name/version.
func startAs(t testing.TB, env []string, name, version string) *server {
	t.Helper()
	s := startServer(t, env)
	r := s.call(0, "initialize", map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": name, "version": version},
	})
	if r.Error != nil {
		t.Fatalf("initialize: %s", r.raw)
	}
	s.sendJSON(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	return s
}

func toolCall(t testing.TB, s *server, id any, tool string, args map[string]any) map[string]any {
	t.Helper()
	return toolPayload(t, s.call(id, "tools/call", map[string]any{"name": tool, "arguments": args}))
}

type presenceRecord struct {
	SchemaVersion int `json:"schemaVersion"`
	PID           int `json:"pid"`
	Client        struct {
		Name    *string `json:"name"`
		Version *string `json:"version"`
	} `json:"client"`
	Repos []struct {
		RepoPath   string `json:"repoPath"`
		LastCallMs int64  `json:"lastCallMs"`
		LastTool   string `json:"lastTool"`
	} `json:"repos"`
}

func presencePath(runDir string, pid int) string {
	return filepath.Join(runDir, "presence", "mcp", fmt.Sprintf("%d.json", pid))
}

func readPresence(t testing.TB, path string) presenceRecord {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("presence record: %v", err)
	}
	var rec presenceRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatalf("presence record %s is not JSON: %v\n%s", path, err, b)
	}
	return rec
}

// The record lists what the client worked on, only for calls that count:
// reads naming a repository (tool-level errors included) and proposals
// FluxGit accepted; it is private, and gone after a clean exit.
func TestPresenceRecord(t *testing.T) {
	runDir, base := canonicalTempDir(t), canonicalTempDir(t)
	repo := fixtureRepo(t)
	dirs := map[string]string{}
	for _, n := range []string{"plain", "refusedargs", "accepted", "x-refused", "x-down"} {
		dirs[n] = filepath.Join(base, n)
		if err := os.Mkdir(dirs[n], 0o700); err != nil {
			t.Fatal(err)
		}
	}
	gw := gatewaytest.New(t)
	env := detectEnv(t, runDir, canonicalTempDir(t), "FLUXGIT_MCP_HANDSHAKE_ADDR="+gw.Addr())
	s := startAs(t, env, " codex-mcp-client\x01", "0.9.1")
	discard := func(repo string) map[string]any {
		return map[string]any{"repoPath": repo, "reason": "drop the experiment", "paths": []string{"src/app.go"}}
	}
	calls := []struct {
		name   string
		tool   string
		args   map[string]any
		repo   string
		fault  *gatewaytest.Fault
		record bool
	}{
		{"a read", "repo.status", map[string]any{"repoPath": repo}, repo, nil, true},
		{"a read failing at tool level (10010)", "repo.status", map[string]any{"repoPath": dirs["plain"]}, dirs["plain"], nil, true},
		{"refused arguments", "repo.history", map[string]any{"repoPath": dirs["refusedargs"], "limit": "ten"}, dirs["refusedargs"], nil, false},
		{"an accepted proposal", "operation.preview.discard", discard(dirs["accepted"]), dirs["accepted"], nil, true},
		{"a refused proposal (10006)", "operation.preview.discard", discard(dirs["x-refused"]), dirs["x-refused"],
			&gatewaytest.Fault{Status: http.StatusForbidden, JSONError: "policy forbids discards here"}, false},
		{"a gateway failing without a refusal (10003)", "operation.preview.discard", discard(dirs["x-down"]), dirs["x-down"],
			&gatewaytest.Fault{Status: http.StatusServiceUnavailable, Body: []byte("maintenance")}, false},
	}
	for i, c := range calls {
		if c.fault != nil {
			gw.FaultNext(gatewaytest.Preview, *c.fault)
		}
		p := toolCall(t, s, i+1, c.tool, c.args)
		if c.tool == "operation.preview.discard" {
			want := map[string]float64{"accepted": 0, "x-refused": 10006, "x-down": 10003}[filepath.Base(c.repo)]
			code := 0.0
			if e, ok := p["error"].(map[string]any); ok {
				code, _ = e["code"].(float64)
			}
			if code != want {
				t.Fatalf("%s: payload %v, want error code %v", c.name, p, want)
			}
		}
	}
	if v := gw.Violations(); len(v) != 0 {
		t.Fatalf("gateway protocol violations: %v", v)
	}
	path := presencePath(runDir, s.cmd.Process.Pid)
	rec := readPresence(t, path)
	var got []string
	for _, r := range rec.Repos {
		got = append(got, r.RepoPath)
	}
	for _, c := range calls {
		if slices.Contains(got, c.repo) != c.record {
			t.Errorf("%s: recorded=%v, want %v (record lists %v)", c.name, !c.record, c.record, got)
		}
	}
	if rec.SchemaVersion != 1 || rec.PID != s.cmd.Process.Pid || rec.Client.Name == nil || *rec.Client.Name != "codex-mcp-client" ||
		rec.Client.Version == nil || *rec.Client.Version != "0.9.1" {
		t.Fatalf("record header %+v", rec)
	}
	if rec.Repos[0].RepoPath != dirs["accepted"] || rec.Repos[0].LastTool != "operation.preview.discard" || rec.Repos[len(rec.Repos)-1].RepoPath != repo {
		t.Fatalf("record %+v is not newest first", rec.Repos)
	}
	if runtime.GOOS != "windows" {
		for p, want := range map[string]os.FileMode{filepath.Dir(path): 0o700, path: 0o600} {
			fi, err := os.Lstat(p)
			if err != nil || fi.Mode().Perm() != want {
				t.Fatalf("%s: mode %v (%v), want %04o", p, fi.Mode(), err, want)
			}
		}
	}
	s.stop()
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Fatalf("the record survived a clean exit (EOF): %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 0 {
		t.Fatalf("presence directory keeps %v after exit", entries)
	}
}

// FLUXGIT_MCP_PRESENCE_DISABLED writes nothing; a run directory whose
// presence directory is a link costs one warning and no call.
func TestPresenceDisabledAndRefused(t *testing.T) {
	repo := fixtureRepo(t)
	linkTarget := canonicalTempDir(t)
	tests := []struct {
		name  string
		extra []string
		setup func(t *testing.T, runDir string)
		warn  bool
	}{
		{"disabled", []string{"FLUXGIT_MCP_PRESENCE_DISABLED=1"}, nil, false},
		{"presence directory is a symlink", nil, func(t *testing.T, runDir string) {
			if err := os.MkdirAll(filepath.Join(runDir, "presence"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(linkTarget, filepath.Join(runDir, "presence", "mcp")); err != nil {
				t.Skip(err)
			}
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runDir := canonicalTempDir(t)
			if tt.setup != nil {
				tt.setup(t, runDir)
			}
			s := startAs(t, detectEnv(t, runDir, canonicalTempDir(t), tt.extra...), "c", "1")
			for i := range 3 {
				if p := toolCall(t, s, i+1, "repo.status", map[string]any{"repoPath": repo}); p["error"] != nil {
					t.Fatalf("the call was affected: %v", p)
				}
			}
			s.stop()
			if n := strings.Count(s.stderr.String(), "presence record not written"); n != map[bool]int{true: 1, false: 0}[tt.warn] {
				t.Fatalf("%d warnings, stderr:\n%s", n, s.stderr.String())
			}
			var files []string
			for _, root := range []string{filepath.Join(runDir, "presence"), linkTarget} {
				_ = filepath.WalkDir(root, func(p string, d os.DirEntry, _ error) error {
					if d != nil && d.Type().IsRegular() {
						files = append(files, p)
					}
					return nil
				})
			}
			if len(files) != 0 {
				t.Fatalf("presence files written: %v", files)
			}
		})
	}
}

// Two fluxgit processes share one run directory and record at once: each
// keeps its own file, a reader never sees a partial document, and no
// temporary file is left behind.
func TestPresenceConcurrentWriters(t *testing.T) {
	runDir, state := canonicalTempDir(t), canonicalTempDir(t)
	repos := []string{fixtureRepo(t), fixtureRepo(t)}
	servers := []*server{
		startAs(t, detectEnv(t, runDir, state), "codex-mcp-client", "1"),
		startAs(t, detectEnv(t, runDir, state), "gemini", "2"),
	}
	// Write each record once so the reader has something to read.
	for i, s := range servers {
		toolCall(t, s, 1, "repo.status", map[string]any{"repoPath": repos[i]})
	}
	stop := make(chan struct{})
	var readErr error
	var reads int
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			for _, s := range servers {
				b, err := os.ReadFile(presencePath(runDir, s.cmd.Process.Pid))
				var rec presenceRecord
				if err == nil {
					err = json.Unmarshal(b, &rec)
				}
				if err != nil || rec.PID != s.cmd.Process.Pid {
					readErr = fmt.Errorf("read %d: %v (%q)", s.cmd.Process.Pid, err, b)
					return
				}
				reads++
			}
		}
	})
	const n = 60
	var callers sync.WaitGroup
	for i, s := range servers {
		callers.Go(func() {
			for k := range n {
				s.sendJSON(map[string]any{"jsonrpc": "2.0", "id": 100 + k, "method": "tools/call",
					"params": map[string]any{"name": "repo.refs", "arguments": map[string]any{"repoPath": repos[(i+k)%2]}}})
			}
			for range n {
				decodeResponse(t, s.next(60*time.Second))
			}
		})
	}
	callers.Wait()
	close(stop)
	wg.Wait()
	if readErr != nil {
		t.Fatal(readErr)
	}
	if reads == 0 {
		t.Fatal("the reader never read a record")
	}
	for _, s := range servers {
		rec := readPresence(t, presencePath(runDir, s.cmd.Process.Pid))
		if len(rec.Repos) != 2 {
			t.Fatalf("record of %d: %+v, want both repositories", s.cmd.Process.Pid, rec.Repos)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(runDir, "presence", "mcp"))
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Fatalf("temporary file left behind: %s", e.Name())
		}
	}
}

// The first write removes records and temporary files a day old, and
// keeps younger ones.
func TestPresenceSweep(t *testing.T) {
	runDir := canonicalTempDir(t)
	dir := filepath.Join(runDir, "presence", "mcp")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	old, young := time.Now().Add(-25*time.Hour), time.Now().Add(-23*time.Hour)
	files := map[string]struct {
		mod  time.Time
		gone bool
	}{
		"4000001.json": {old, true}, ".4000001.0b1c.tmp": {old, true},
		"4000002.json": {young, false}, ".4000002.0b1c.tmp": {young, false},
		"README": {old, false},
	}
	for name, f := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(`{"schemaVersion":1}`), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, f.mod, f.mod); err != nil {
			t.Fatal(err)
		}
	}
	s := startAs(t, detectEnv(t, runDir, canonicalTempDir(t)), "c", "1")
	toolCall(t, s, 1, "repo.status", map[string]any{"repoPath": fixtureRepo(t)})
	for name, f := range files {
		_, err := os.Lstat(filepath.Join(dir, name))
		if os.IsNotExist(err) != f.gone {
			t.Errorf("%s: removed=%v, want %v", name, os.IsNotExist(err), f.gone)
		}
	}
}

// presenceAgents runs agents.presence and returns its data.
func presenceAgents(t testing.TB, s *server, id any, repo string) map[string]any {
	t.Helper()
	p := toolCall(t, s, id, "agents.presence", map[string]any{"repoPath": repo})
	if p["error"] != nil {
		t.Fatalf("agents.presence failed: %v", p)
	}
	if _, tier := p["tier"]; p["source"] != "local-agent-detector" || tier {
		t.Fatalf("envelope %v", p)
	}
	return p["data"].(map[string]any)
}

func agentsOf(d map[string]any) []map[string]any {
	var out []map[string]any
	for _, a := range d["agents"].([]any) {
		out = append(out, a.(map[string]any))
	}
	return out
}

func hasString(v any, s string) bool {
	l, _ := v.([]any)
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// pidOf reads a finding's pid (0 when null).
func pidOf(a map[string]any) int {
	f, _ := a["pid"].(float64)
	return int(f)
}

// A second fluxgit process sees the first (its presence record) in
// agents.presence, never itself; a real process named like an agent with
// its working directory in the repository is found; and a shift roster
// check-in appears with its declared files.
func TestAgentsPresenceSources(t *testing.T) {
	runDir, state := canonicalTempDir(t), canonicalTempDir(t)
	repo := fixtureRepo(t)

	first := startAs(t, detectEnv(t, runDir, state), "codex-mcp-client", "0.9")
	toolCall(t, first, 1, "repo.status", map[string]any{"repoPath": repo})
	checkIn, _ := rosterCall(t, first, 2, "shift_check_in", map[string]any{"workspace": repo, "gist": "tidy the app package", "files": []string{"src/app.go"},
		"claims": map[string]string{"src/app.go": "exclusive"}})
	worker, _ := checkIn["workerId"].(string)

	// A helper process whose executable is called codex, working in src/.
	bin := filepath.Join(canonicalTempDir(t), "codex")
	copyFile(t, "/bin/sleep", bin)
	helper := exec.Command(bin, "300")
	helper.Dir = filepath.Join(repo, "src")
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = helper.Process.Kill(); _ = helper.Wait() })

	second := startAs(t, detectEnv(t, runDir, state), "claude-code", "2.1")
	toolCall(t, second, 1, "repo.status", map[string]any{"repoPath": repo}) // its own record exists now
	d := presenceAgents(t, second, 2, repo)
	agents := agentsOf(d)
	caller := d["caller"].(map[string]any)
	if caller["clientName"] != "claude-code" || caller["agent"] != "claude-code" || caller["ownMcpPresenceExcluded"] != true || d["repoPath"] != repo {
		t.Fatalf("data %v", d)
	}
	checks := []struct {
		name string
		ok   func(a map[string]any) bool
	}{
		{"the first fluxgit's presence record (mcp)", func(a map[string]any) bool {
			c, _ := a["mcpClient"].(map[string]any)
			return hasString(a["sources"], "mcp") && pidOf(a) == first.cmd.Process.Pid && a["agent"] == "codex" &&
				c != nil && c["name"] == "codex-mcp-client" && a["likelyCaller"] == false && a["state"] == "working"
		}},
		{"the codex helper process", func(a map[string]any) bool {
			return hasString(a["sources"], "process") && pidOf(a) == helper.Process.Pid && a["agent"] == "codex"
		}},
		{"the roster check-in", func(a map[string]any) bool {
			return hasString(a["sources"], "roster") && a["confidence"] == "declared" && hasString(a["files"], "src/app.go") &&
				regexp.MustCompile(`^src/app\.go exclusive 1[45]m$`).MatchString(fmt.Sprint(a["leases"]))
		}},
	}
	for _, c := range checks {
		if !slices.ContainsFunc(agents, c.ok) {
			t.Errorf("%s not found in %v", c.name, agents)
		}
	}
	for _, a := range agents {
		if pidOf(a) == second.cmd.Process.Pid {
			t.Errorf("the caller's own presence record was reported: %v", a)
		}
		for _, k := range []string{"agent", "state", "sources", "pid", "lastActivityMs", "branch", "lastTool", "files", "mcpClient", "sameAgentAsCaller", "likelyCaller", "confidence"} {
			if _, ok := a[k]; !ok {
				t.Errorf("agent %v lacks %s", a, k)
			}
		}
	}
	if worker == "" {
		t.Fatalf("check-in returned no workerId: %v", checkIn)
	}
}

func copyFile(t testing.TB, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Skip("no ", from, ": ", err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// 10011 when detection is disabled; 10010 first when the path is no git
// work tree.
func TestAgentsPresenceErrors(t *testing.T) {
	repo := fixtureRepo(t)
	notRepo := canonicalTempDir(t)
	tests := []struct {
		name     string
		disabled bool
		repo     string
		code     float64
	}{
		{"disabled", true, repo, 10011},
		{"not a repository, disabled", true, notRepo, 10010},
		{"not a repository", false, notRepo, 10010},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var extra []string
			if tt.disabled {
				extra = append(extra, "FLUXGIT_MCP_AGENT_DETECTION_DISABLED=1")
			}
			s := startAs(t, detectEnv(t, canonicalTempDir(t), canonicalTempDir(t), extra...), "c", "1")
			p := toolCall(t, s, 1, "agents.presence", map[string]any{"repoPath": tt.repo})
			e, _ := p["error"].(map[string]any)
			if e == nil || e["code"] != tt.code {
				t.Fatalf("payload %v, want error %v", p, tt.code)
			}
			if data, _ := e["data"].(map[string]any); tt.code == 10011 && (data["environmentVariable"] != "FLUXGIT_MCP_AGENT_DETECTION_DISABLED" || data["agentRecommendation"] == nil) {
				t.Fatalf("10011 data %v", data)
			}
		})
	}
}

// A discard proposal touching a file the roster declares carries the
// otherAgents hint with the overlap; with detection disabled it carries
// none.
func TestOtherAgentsHintOnDiscard(t *testing.T) {
	repo := fixtureRepo(t)
	gw := gatewaytest.New(t)
	tests := []struct {
		name     string
		disabled bool
		paths    []string
		overlap  []string
	}{
		{"the declared file", false, []string{"src/app.go"}, []string{"src/app.go"}},
		{"a directory holding it", false, []string{"src"}, []string{"src/app.go"}},
		{"another file", false, []string{"README.md"}, []string{}},
		{"detection disabled", true, []string{"src/app.go"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state := canonicalTempDir(t)
			extra := []string{"FLUXGIT_MCP_HANDSHAKE_ADDR=" + gw.Addr()}
			if tt.disabled {
				extra = append(extra, "FLUXGIT_MCP_AGENT_DETECTION_DISABLED=1")
			}
			s := startAs(t, detectEnv(t, canonicalTempDir(t), state, extra...), "claude-code", "2.1")
			rosterCall(t, s, 1, "shift_check_in", map[string]any{"workspace": repo, "gist": "codex: rewrite the app", "files": []string{"src/app.go"},
				"claims": map[string]string{"src/app.go": "shared"}, "leaseMinutes": 30})
			p := toolCall(t, s, 2, "operation.preview.discard", map[string]any{"repoPath": repo, "reason": "start over", "paths": tt.paths})
			if p["status"] != "pending" || p["error"] != nil {
				t.Fatalf("proposal %v", p)
			}
			if v := gw.Violations(); len(v) != 0 {
				t.Fatalf("gateway protocol violations: %v", v)
			}
			hint, ok := p["otherAgents"].(map[string]any)
			if tt.disabled {
				if ok {
					t.Fatalf("hint %v while detection is disabled", hint)
				}
				return
			}
			if !ok || hint["informational"] != true || hint["proposalPathsKnown"] != true || hint["note"] == nil {
				t.Fatalf("hint %v", p["otherAgents"])
			}
			var roster map[string]any
			for _, a := range hint["agents"].([]any) {
				if m := a.(map[string]any); hasString(m["sources"], "roster") {
					roster = m
				}
			}
			if roster == nil {
				t.Fatalf("no roster agent in %v", hint)
			}
			if l, _ := roster["leases"].(string); !regexp.MustCompile(`^src/app\.go shared (29|30)m$`).MatchString(l) {
				t.Fatalf("the hint's roster agent shows leases %q, want src/app.go shared 30m", l)
			}
			got, _ := json.Marshal(roster["overlappingPaths"])
			want, _ := json.Marshal(tt.overlap)
			if string(got) != string(want) {
				t.Fatalf("overlappingPaths %s, want %s", got, want)
			}
			wantCount := 0.0
			if len(tt.overlap) > 0 {
				wantCount = 1
			}
			if hint["overlappingAgentCount"] != wantCount {
				t.Fatalf("overlappingAgentCount %v, want %v", hint["overlappingAgentCount"], wantCount)
			}
		})
	}
}
