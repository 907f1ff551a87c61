package tests

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// childPids lists the processes whose parent is pid, from /proc; ok is
// false where there is no /proc.
func childPids(parent int) (pids []int, ok bool) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, false
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// Fields after the parenthesised command: state ppid ...
		rest := stat[bytes.LastIndexByte(stat, ')')+1:]
		fields := strings.Fields(string(rest))
		if len(fields) >= 2 && fields[1] == strconv.Itoa(parent) {
			pids = append(pids, pid)
		}
	}
	return pids, true
}

// providerPids lists the processes whose parent is pid and whose command
// line is a fluxgit provider.
func providerPids(t testing.TB, parent int) []int {
	t.Helper()
	kids, ok := childPids(parent)
	if !ok {
		t.Skip("no /proc on this system")
	}
	var pids []int
	for _, pid := range kids {
		cmdline, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		if bytes.Contains(cmdline, []byte("provider")) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func alive(pid int) bool {
	// A zombie still has a stat file, so look at its state too.
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	rest := stat[bytes.LastIndexByte(stat, ')')+1:]
	f := strings.Fields(string(rest))
	return len(f) > 0 && f[0] != "Z"
}

func initialize(t testing.TB, s *server) {
	t.Helper()
	r := s.call(0, "initialize", map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "lifecycle", "version": "1"},
	})
	if r.Error != nil {
		t.Fatalf("initialize: %s", r.raw)
	}
}

func statusCall(t testing.TB, s *server, id int, repo string) map[string]any {
	t.Helper()
	r := s.call(id, "tools/call", map[string]any{"name": "repo.status", "arguments": map[string]any{"repoPath": repo}})
	return toolPayload(t, r)
}

// Providers start lazily: initialize and tools/list start nothing.
func TestProvidersStartLazily(t *testing.T) {
	s := startServer(t, baseEnv(t))
	initialize(t, s)
	if r := s.call(1, "tools/list", nil); r.Error != nil {
		t.Fatal(r.raw)
	}
	if pids := providerPids(t, s.cmd.Process.Pid); len(pids) != 0 {
		t.Fatalf("providers running before any tool call: %v", pids)
	}
	repo := fixtureRepo(t)
	statusCall(t, s, 2, repo)
	if pids := providerPids(t, s.cmd.Process.Pid); len(pids) != 1 {
		t.Fatalf("want one git-read provider after a call, got %v", pids)
	}
	// Warm: a second call reuses the same process.
	before := providerPids(t, s.cmd.Process.Pid)
	statusCall(t, s, 3, repo)
	if after := providerPids(t, s.cmd.Process.Pid); len(after) != 1 || after[0] != before[0] {
		t.Fatalf("provider not kept warm: before %v after %v", before, after)
	}
}

// A provider killed with SIGKILL mid-session: the next call succeeds on a
// new process.
func TestProviderRestartAfterSIGKILL(t *testing.T) {
	s := startServer(t, baseEnv(t))
	initialize(t, s)
	repo := fixtureRepo(t)
	if p := statusCall(t, s, 1, repo); p["data"] == nil {
		t.Fatalf("first call: %v", p)
	}
	pids := providerPids(t, s.cmd.Process.Pid)
	if len(pids) != 1 {
		t.Fatalf("want 1 provider, got %v", pids)
	}
	// os.Process.Kill is SIGKILL on Unix and compiles everywhere (the
	// tests/ package is vetted for every OS in .ci/run).
	proc, err := os.FindProcess(pids[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := proc.Kill(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		p := statusCall(t, s, 10+i, repo)
		if p["data"] == nil {
			t.Fatalf("call %d after SIGKILL failed: %v", i, p)
		}
	}
	now := providerPids(t, s.cmd.Process.Pid)
	if len(now) != 1 || now[0] == pids[0] {
		t.Fatalf("want one new provider, got %v (old %d)", now, pids[0])
	}
}

// The host killed with SIGKILL: no provider survives it.
func TestNoOrphansWhenHostKilled(t *testing.T) {
	s := startServer(t, baseEnv(t))
	initialize(t, s)
	statusCall(t, s, 1, fixtureRepo(t))
	pids := providerPids(t, s.cmd.Process.Pid)
	if len(pids) != 1 {
		t.Fatalf("want 1 provider, got %v", pids)
	}
	killHost(t, s, pids[0])
}

// killHost SIGKILLs the host and waits (bounded) until its provider is
// gone too, failing if the provider outlives it.
func killHost(t *testing.T, s *server, provider int) {
	t.Helper()
	if err := s.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-s.done
	deadline := time.Now().Add(10 * time.Second)
	for alive(provider) {
		if time.Now().After(deadline) {
			t.Fatalf("provider %d outlived the SIGKILLed host", provider)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Closing stdin ends the host and its providers.
func TestCleanExitOnEOF(t *testing.T) {
	s := startServer(t, baseEnv(t))
	initialize(t, s)
	statusCall(t, s, 1, fixtureRepo(t))
	pids := providerPids(t, s.cmd.Process.Pid)
	s.stop()
	if code := s.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("exit code %d after EOF; stderr:\n%s", code, s.stderr.String())
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("provider %d still running after host exit", pid)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// An oversize frame is refused without ending the session.
func TestOversizeFrame(t *testing.T) {
	s := startServer(t, baseEnv(t))
	big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 9<<20) + `"}}` + "\n"
	s.send(big)
	r := decodeResponse(t, s.next(30*time.Second))
	if r.Error == nil || string(r.ID) != "null" {
		t.Fatalf("oversize frame: want an error with id null, got %s", r.raw)
	}
	if r2 := s.call(2, "ping", nil); r2.Error != nil || string(r2.Result) != "{}" {
		t.Fatalf("ping after oversize frame: %s", r2.raw)
	}
}

// waitFile waits until path exists (the echo provider's progress marks).
func waitFile(t testing.TB, path string) []byte {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b, err := os.ReadFile(path); err == nil {
			return b
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// notifications/cancelled for an in-flight call: the MCP specification
// says the receiver should not answer a cancelled request, so exactly no
// reply carries its id, the provider's call is cancelled, and a request
// sent after it is answered exactly once. A cancellation that names a
// request already answered changes nothing. The echo provider reports
// when it is inside the call, so the cancellation is known to land while
// the call runs.
func TestCancelInFlight(t *testing.T) {
	for _, tc := range []struct {
		name   string
		id     any
		modern bool
	}{
		{"legacy integer id", 41, false},
		{"legacy string id", "slow", false},
		{"modern", "slow-modern", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startServer(t, echoEnv(t))
			if !tc.modern {
				initialize(t, s)
			}
			params := func(name string, args map[string]any) map[string]any {
				p := map[string]any{"name": name, "arguments": args}
				if tc.modern {
					p["_meta"] = modernMeta()
				}
				return p
			}
			marker := filepath.Join(t.TempDir(), "marker")
			s.sendJSON(map[string]any{"jsonrpc": "2.0", "id": tc.id, "method": "tools/call",
				"params": params("echo.sleep", map[string]any{"ms": 120000, "marker": marker})})
			waitFile(t, marker+".started")
			s.sendJSON(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled",
				"params": map[string]any{"requestId": tc.id, "reason": "test"}})
			if got := string(waitFile(t, marker)); got != "cancelled" {
				t.Fatalf("provider call ended %q, want cancelled", got)
			}
			// A request after the cancellation is answered, exactly once.
			r := s.call("after", "tools/call", params("echo.say", map[string]any{"text": "still here"}))
			if p := toolPayload(t, r); p["data"].(map[string]any)["text"] != "still here" {
				t.Fatalf("call after cancel: %s", r.raw)
			}
			// A cancellation of a request already answered is ignored.
			s.sendJSON(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled",
				"params": map[string]any{"requestId": "after"}})
			if r := s.call("ping-after", "tools/call", params("echo.noop", map[string]any{})); r.Error != nil {
				t.Fatalf("noop after cancel: %s", r.raw)
			}
			s.quiet(500 * time.Millisecond)
			if len(s.stray) != 0 {
				t.Fatalf("lines other than the replies asked for (the cancelled request answered, or a reply sent twice): %v", s.stray)
			}
		})
	}
}

// A client that writes its requests and closes stdin at once still gets
// every reply, then the server exits cleanly.
func TestRepliesAfterEOF(t *testing.T) {
	repo := fixtureRepo(t)
	cmd := exec.Command(fluxgitBin)
	cmd.Env = baseEnv(t)
	cmd.Stdin = strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}` + "\n" +
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"repo.status","arguments":{"repoPath":"` + repo + `"}}}` + "\n" +
			`{"jsonrpc":"2.0","id":3,"method":"ping"}` + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("exit: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	ids := map[string]bool{}
	for _, l := range lines {
		r := decodeResponse(t, l)
		if r.Error != nil {
			t.Fatalf("error reply: %s", l)
		}
		ids[string(r.ID)] = true
	}
	if len(lines) != 3 || !ids["1"] || !ids["2"] || !ids["3"] {
		t.Fatalf("want replies to 1, 2 and 3, got %d lines: %v", len(lines), ids)
	}
}

// socketsIn lists the unix sockets directly in dir.
func socketsIn(t testing.TB, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.Type()&os.ModeSocket != 0 {
			out = append(out, e.Name())
		}
	}
	return out
}

// Each SIGKILLed host leaves its provider's go-plugin socket behind (the
// provider dies by SIGKILL too and cannot unlink it). They live in a
// private per-user directory, and the next host removes the stale ones:
// however often the host is killed, only live providers' sockets remain,
// and nothing lands in the temp directory itself.
func TestNoSocketsAccumulateWhenHostKilled(t *testing.T) {
	tmp := canonicalTempDir(t)
	env := append(baseEnv(t), "TMPDIR="+tmp)
	sockDir := filepath.Join(tmp, "fluxgit-"+strconv.Itoa(os.Getuid()))
	repo := fixtureRepo(t)
	for round := 0; round < 4; round++ {
		s := startServer(t, env)
		initialize(t, s)
		statusCall(t, s, 1, repo)
		pids := providerPids(t, s.cmd.Process.Pid)
		if len(pids) != 1 {
			t.Fatalf("round %d: want 1 provider, got %v", round, pids)
		}
		if got := socketsIn(t, sockDir); len(got) != 1 {
			t.Fatalf("round %d: want exactly the live provider's socket in %s, got %v", round, sockDir, got)
		}
		killHost(t, s, pids[0])
		// Control: the kill really leaves a socket, so the count above
		// would grow by one per round without the clean-up at start.
		if got := socketsIn(t, sockDir); len(got) != 1 {
			t.Fatalf("round %d: after SIGKILL want the one stale socket, got %v", round, got)
		}
	}
	entries, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != filepath.Base(sockDir) {
			t.Errorf("left in the temp directory: %s", e.Name())
		}
	}
	if fi, err := os.Lstat(sockDir); err != nil || fi.Mode().Perm() != 0o700 || !fi.IsDir() {
		t.Fatalf("socket directory: %v %v", fi, err)
	}
}

// Request ids: one reused as soon as its reply arrived is served like a
// new one (the host frees it before replying, so the new request can
// never find, and then lose, the old one's entry); one still in flight is
// refused with -32600 naming it, and the request that holds it runs on.
func TestRequestIDReuse(t *testing.T) {
	s := startServer(t, echoEnv(t))
	initialize(t, s)
	for i := 0; i < 400; i++ {
		s.sendJSON(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "ping"})
		if r := decodeResponse(t, s.next(20*time.Second)); string(r.ID) != "1" || r.Error != nil {
			t.Fatalf("ping %d with reused id 1: %s", i, r.raw)
		}
	}

	marker := filepath.Join(t.TempDir(), "marker")
	s.sendJSON(map[string]any{"jsonrpc": "2.0", "id": "held", "method": "tools/call",
		"params": map[string]any{"name": "echo.sleep", "arguments": map[string]any{"ms": 120000, "marker": marker}}})
	waitFile(t, marker+".started")
	r := s.call("held", "ping", nil)
	if r.Error == nil || r.Error.Code != -32600 || !strings.Contains(r.Error.Message, `"held" is already in flight`) {
		t.Fatalf("a second request under an id in flight: want -32600 naming it, got %s", r.raw)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("refusing the duplicate ended the request that holds the id")
	}
	s.sendJSON(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": map[string]any{"requestId": "held"}})
	if got := string(waitFile(t, marker)); got != "cancelled" {
		t.Fatalf("the holder's cancellation: provider call ended %q", got)
	}
	if r := s.call("after", "ping", nil); r.Error != nil {
		t.Fatalf("ping after: %s", r.raw)
	}
	if len(s.stray) != 0 {
		t.Fatalf("unexpected lines: %v", s.stray)
	}
}
