//go:build unix

package tests

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Finding 6 of issue 22: SIGTERM to the whole process group (systemd's
// default KillMode=control-group, `kill -TERM -PGID`) reaches the
// providers as well as the host. The providers must leave their stopping
// to the host, so a call in flight gets its real result, not -32603, and
// the host still exits cleanly with no provider left behind.
func TestSIGTERMProcessGroupFinishesInFlight(t *testing.T) {
	s := startHTTPWith(t, echoEnv(t), func(cmd *exec.Cmd) {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	})
	got, marker := startSleepCall(t, s)
	// Without /proc (macOS) the providers are not listed; the rest holds.
	providers, _ := childPids(s.cmd.Process.Pid)
	// Without the fix the host restarts the killed provider and runs the
	// call again (or fails it with -32603): a second start would recreate
	// this file.
	if err := os.Remove(marker + ".started"); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM); err != nil {
		t.Fatalf("kill -TERM -%d: %v", s.cmd.Process.Pid, err)
	}
	var r sleepResult
	select {
	case r = <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("no reply to the call in flight")
	}
	if r.status != 200 || !bytes.Contains(r.body, []byte(`\"slept\":1500`)) {
		t.Fatalf("call in flight after SIGTERM to the group: %d %s\n%s", r.status, r.body, s.stderr)
	}
	if b, _ := os.ReadFile(marker); string(b) != "finished" {
		t.Fatalf("the provider call ended %q, want finished", b)
	}
	if _, err := os.Stat(marker + ".started"); err == nil {
		t.Fatalf("the call ran a second time: the provider died of the group's SIGTERM and was restarted:\n%s", s.stderr)
	}
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("no exit after SIGTERM:\n%s", s.stderr)
	}
	if !s.cmd.ProcessState.Success() {
		t.Fatalf("host exit %v:\n%s", s.cmd.ProcessState, s.stderr)
	}
	if strings.Contains(s.stderr.String(), "signal: terminated") {
		t.Fatalf("a provider died of the group's SIGTERM:\n%s", s.stderr)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		left := 0
		for _, pid := range providers {
			if alive(pid) {
				left++
			}
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d provider(s) outlived the host", left)
		}
	}
}

// Finding 6 over stdio: SIGTERM to the process group lets the call in
// flight finish with its real result (the signal ends the input as EOF
// does), where it used to be cancelled with the providers killed under it.
func TestSIGTERMProcessGroupStdio(t *testing.T) {
	s := startServerWith(t, echoEnv(t), func(cmd *exec.Cmd) {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	}, "serve")
	initialize(t, s)
	marker := filepath.Join(t.TempDir(), "sleep")
	s.sendJSON(map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": map[string]any{
		"name": "echo.sleep", "arguments": map[string]any{"ms": 1500, "marker": marker}}})
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(marker + ".started"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the call never started:\n%s", s.stderr)
		}
	}
	if err := os.Remove(marker + ".started"); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM); err != nil {
		t.Fatalf("kill -TERM -%d: %v", s.cmd.Process.Pid, err)
	}
	line := s.next(30 * time.Second)
	if !strings.Contains(line, `\"slept\":1500`) {
		t.Fatalf("call in flight after SIGTERM to the group: %s\n%s", line, s.stderr)
	}
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("no exit after SIGTERM:\n%s", s.stderr)
	}
	if _, err := os.Stat(marker + ".started"); err == nil {
		t.Fatalf("the call ran a second time:\n%s", s.stderr)
	}
	if strings.Contains(s.stderr.String(), "signal: terminated") {
		t.Fatalf("a provider died of the group's SIGTERM:\n%s", s.stderr)
	}
}
