//go:build unix

package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// pipeGrace is the runner's grace (gitexec.PipeGrace, the reference's 2 s)
// for a process git left behind holding its output.
const pipeGrace = 2 * time.Second

// realGitPath is a system git to wrap, or "" when there is none.
func realGitPath() string {
	for _, c := range []string{"/usr/bin/git", "/usr/local/bin/git"} {
		if _, err := os.Stat(c); err == nil {
			return c
		}
	}
	return ""
}

// writeGitWrapper writes an executable shell script named git in a fresh
// directory (outside the repository and the current directory, as
// FLUXGIT_MCP_GIT_PATH requires) and returns its path.
func writeGitWrapper(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "git")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestGitChildHoldingStdout is the reference's case N20: a git wrapper
// whose background child inherits git's stdout and sleeps. Before the fix
// the start-up `git --version` check waited for that pipe (the server read
// no request for as long as the child lived, and so never saw stdin's
// EOF either), and every tool call would have waited the same way. Now
// each git run gets the pipe grace, the child's process group is killed,
// and the call answers with a 10010 that says what happened.
func TestGitChildHoldingStdout(t *testing.T) {
	git := realGitPath()
	if git == "" {
		t.Skip("no git in /usr/bin or /usr/local/bin")
	}
	repo := fixtureRepo(t)
	pids := filepath.Join(t.TempDir(), "children")
	wrapper := writeGitWrapper(t, "sleep 60 &\necho $! >> '"+pids+"'\nexec '"+git+"' \"$@\"\n")

	s := startServer(t, append(baseEnv(t), "FLUXGIT_MCP_GIT_PATH="+wrapper))
	start := time.Now()
	s.sendJSON(map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "n20", "version": "1"},
	}})
	// The start-up check runs one git (--version) before the first request
	// is read: one grace, plus slack for a loaded machine.
	if r := decodeResponse(t, s.next(pipeGrace+8*time.Second)); r.Error != nil {
		t.Fatalf("initialize: %s", r.raw)
	}
	t.Logf("initialize answered after %s", time.Since(start).Round(time.Millisecond))

	start = time.Now()
	s.sendJSON(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": "repo.status", "arguments": map[string]any{"repoPath": repo}}})
	r := decodeResponse(t, s.next(pipeGrace+8*time.Second))
	took := time.Since(start)
	p := toolPayload(t, r)
	e, _ := p["error"].(map[string]any)
	if e == nil || e["code"] != float64(10010) {
		t.Fatalf("want a 10010 tool error, got %s", r.raw)
	}
	data, _ := json.Marshal(e["data"])
	for _, want := range []string{"held its output open", "FLUXGIT_MCP_GIT_PATH"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("error data does not say %q: %s", want, data)
		}
	}
	if took < pipeGrace {
		t.Errorf("answered after %s, before the %s grace: the held pipe was not what ended the call", took, pipeGrace)
	}
	t.Logf("repo.status answered after %s", took.Round(time.Millisecond))

	// Every child the wrapper left behind was killed with git's group.
	b, err := os.ReadFile(pids)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range strings.Fields(string(b)) {
		pid, _ := strconv.Atoi(f)
		if pid > 0 && alive(pid) {
			t.Errorf("the wrapper's child %d still runs after the call answered", pid)
		}
	}

	_ = s.stdin.Close()
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		t.Fatalf("fluxgit did not exit within 5s of stdin's EOF; stderr:\n%s", s.stderr.String())
	}
}

// TestStdinEOFWithCallStuckInGit: a call whose git is still running when
// stdin ends (a wrapper that sleeps before git status) does not keep the
// server alive past its drain of in-flight requests.
func TestStdinEOFWithCallStuckInGit(t *testing.T) {
	git := realGitPath()
	if git == "" {
		t.Skip("no git in /usr/bin or /usr/local/bin")
	}
	repo := fixtureRepo(t)
	started := filepath.Join(t.TempDir(), "started")
	wrapper := writeGitWrapper(t, "case \"$*\" in *' status '*) : > '"+started+"'; sleep 60;; esac\nexec '"+git+"' \"$@\"\n")

	s := startServer(t, append(baseEnv(t), "FLUXGIT_MCP_GIT_PATH="+wrapper))
	initialize(t, s)
	s.sendJSON(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": "repo.status", "arguments": map[string]any{"repoPath": repo}}})
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(started); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("git status never started; stderr:\n%s", s.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = s.stdin.Close()
	eof := time.Now()
	// The host drains in-flight requests for a bounded time (10 s) and
	// then exits; git's own timeout (30 s) must not be what ends it.
	select {
	case <-s.done:
		t.Logf("exited %s after stdin's EOF", time.Since(eof).Round(time.Millisecond))
	case <-time.After(20 * time.Second):
		t.Fatalf("fluxgit did not exit within 20s of stdin's EOF with a call stuck in git; stderr:\n%s", s.stderr.String())
	}
}

// TestGitPathInsideRepository (F§9): FLUXGIT_MCP_GIT_PATH naming a file in
// the repository being read is refused, from the top level, a
// subdirectory or the git directory alike (before the fix a subdirectory
// as repoPath let the repository's own "git" run), and the refusal names
// the variable and the fix.
func TestGitPathInsideRepository(t *testing.T) {
	git := realGitPath()
	if git == "" {
		t.Skip("no git in /usr/bin or /usr/local/bin")
	}
	repo := fixtureRepo(t)
	marker := filepath.Join(t.TempDir(), "ran")
	for _, d := range []string{"tools", "sub"} {
		if err := os.MkdirAll(filepath.Join(repo, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	inside := filepath.Join(repo, "tools", "git")
	if err := os.WriteFile(inside, []byte("#!/bin/sh\nprintf '%s\\n' \"$*\" >> '"+marker+"'\nexec '"+git+"' \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, append(baseEnv(t), "FLUXGIT_MCP_GIT_PATH="+inside))
	initialize(t, s)
	for i, rp := range []string{repo, filepath.Join(repo, "sub"), filepath.Join(repo, ".git")} {
		p := statusCall(t, s, i+1, rp)
		e, _ := p["error"].(map[string]any)
		if e == nil || e["code"] != float64(10010) {
			t.Fatalf("repoPath %s: want a 10010 refusal, got %v", rp, p)
		}
		data, _ := json.Marshal(e["data"])
		for _, want := range []string{"FLUXGIT_MCP_GIT_PATH", "inside the repository", "fix: "} {
			if !strings.Contains(string(data), want) {
				t.Errorf("repoPath %s: refusal does not say %q: %s", rp, want, data)
			}
		}
	}
	// The start-up check runs the configured git once, as `--version`,
	// before any repository is known; nothing else may have run it.
	b, _ := os.ReadFile(marker)
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l != "" && l != "--version" {
			t.Fatalf("the repository's own git ran: %q", l)
		}
	}
}
