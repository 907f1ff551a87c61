//go:build linux

package tests

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// gitChildren lists the git processes whose parent is pid, whose command
// line names dir and which sleep opening a FIFO (the kernel's wait channel
// for that is wait_for_partner, fifo_open on older kernels).
func gitChildren(pid int, dir string) []int {
	kids, _ := childPids(pid)
	var out []int
	for _, child := range kids {
		proc := filepath.Join("/proc", strconv.Itoa(child))
		// git runs on the pinned directory (-C /proc/self/fd/N), so the
		// repository shows as its working directory, not in its argv.
		cwd, _ := os.Readlink(filepath.Join(proc, "cwd"))
		wchan, _ := os.ReadFile(filepath.Join(proc, "wchan"))
		if cwd == dir && (string(wchan) == "wait_for_partner" || string(wchan) == "fifo_open") {
			out = append(out, child)
		}
	}
	return out
}

// A git-read provider killed with SIGKILL cannot clean up after itself;
// the git it was running must die with it anyway, not run on for the rest
// of its timeout. The repository's index is a FIFO, so the git that reads
// it blocks until the test lets it go.
func TestGitDiesWithAKilledProvider(t *testing.T) {
	if _, err := os.ReadFile("/proc/self/wchan"); err != nil {
		t.Skip("needs /proc/<pid>/wchan to see a process blocked opening a FIFO")
	}
	repo := fixtureRepo(t)
	index := filepath.Join(repo, ".git", "index")
	if err := os.Remove(index); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(index, 0o600); err != nil {
		t.Fatal(err)
	}
	// Let every git blocked on the FIFO go (it reads a short, invalid
	// index and fails), so the server can finish the call and stop.
	unblock := func() {
		if f, err := os.OpenFile(index, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.WriteString("not an index")
			f.Close()
		}
	}
	s := startServer(t, append(baseEnv(t), "FLUXGIT_MCP_AUDIT_DISABLED=1"))
	initialize(t, s)
	s.sendJSON(map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/call",
		"params": map[string]any{"name": "repo.status", "arguments": map[string]any{"repoPath": repo}}})

	var provider, gitPid int
	deadline := time.Now().Add(30 * time.Second)
	for gitPid == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no provider git process blocked on the repository")
		}
		time.Sleep(20 * time.Millisecond)
		for _, p := range providerPids(t, s.cmd.Process.Pid) {
			if kids := gitChildren(p, repo); len(kids) > 0 {
				provider, gitPid = p, kids[0]
			}
		}
	}
	if err := syscall.Kill(provider, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(10 * time.Second)
	for alive(gitPid) {
		if time.Now().After(deadline) {
			unblock()
			t.Fatalf("git (pid %d) still running after its provider (pid %d) was killed", gitPid, provider)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The call still gets an answer (the host restarts the provider);
	// release whatever git it started.
	for {
		unblock()
		select {
		case l, ok := <-s.lines:
			if !ok {
				t.Fatalf("fluxgit closed stdout; stderr:\n%s", s.stderr.String())
			}
			if strings.Contains(l, `"id":7`) {
				return
			}
		case <-time.After(50 * time.Millisecond):
		}
	}
}
