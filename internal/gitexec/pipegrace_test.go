//go:build unix

package gitexec

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// shortGrace shortens the pipe grace for one test.
func shortGrace(t *testing.T, d time.Duration) {
	old := pipeGrace
	pipeGrace = d
	t.Cleanup(func() { pipeGrace = old })
}

// TestHeldPipeEndsTheCall: a process git starts that keeps git's stdout
// open (here an alias's background sleep; in the reference's case N20 a
// wrapper's child) ends the call one grace after git exits, with an error
// that says so, and the process is killed with git's group.
func TestHeldPipeEndsTheCall(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	shortGrace(t, 300*time.Millisecond)
	repo := newRepo(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	// The sleep inherits stdout: nothing redirects it.
	gitT(t, repo, "config", "alias.held", "!sleep 30 & echo $! > '"+pidFile+"'")
	start := time.Now()
	_, err := Run(context.Background(), repo, "held")
	took := time.Since(start)
	var ge *Error
	if !errors.As(err, &ge) || !errors.Is(err, ErrExit) || !strings.Contains(ge.Details, "held its output open") {
		t.Fatalf("err = %v, want the held-pipe error", err)
	}
	if !strings.Contains(ge.Details, EnvGitPath) {
		t.Errorf("details do not name %s: %s", EnvGitPath, ge.Details)
	}
	if took > 5*time.Second {
		t.Fatalf("took %s with a %s grace", took, pipeGrace)
	}
	waitGone(t, readPid(t, pidFile))
}

// TestVersionHeldPipe: the start-up `git --version` has the same bound; a
// plain exec.Cmd.Output would wait for the child (30 s here).
func TestVersionHeldPipe(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	git := ""
	for _, c := range []string{"/usr/bin/git", "/usr/local/bin/git"} {
		if _, err := os.Stat(c); err == nil {
			git = c
			break
		}
	}
	if git == "" {
		t.Skip("no system git")
	}
	shortGrace(t, 300*time.Millisecond)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	held := write("held", "sleep 30 &\necho $! > '"+pidFile+"'\nexec '"+git+"' \"$@\"\n")
	plain := write("plain", "exec '"+git+"' \"$@\"\n")

	out, err := Version(context.Background(), plain)
	if err != nil || !strings.HasPrefix(out, "git version ") {
		t.Fatalf("plain wrapper: %q, %v", out, err)
	}
	start := time.Now()
	_, err = Version(context.Background(), held)
	if err == nil || !strings.Contains(err.Error(), "held its output open") {
		t.Fatalf("err = %v, want the held-pipe error", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("took %s", took)
	}
	waitGone(t, readPid(t, pidFile))
}
