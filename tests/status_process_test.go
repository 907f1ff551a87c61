//go:build unix

package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRepoStatusOneGitProcess counts the git processes behind repo.status
// with a logging wrapper as the git executable: once repository discovery
// and the driver scan are cached, each call is a single `git status`.
func TestRepoStatusOneGitProcess(t *testing.T) {
	realGit := ""
	for _, c := range []string{"/usr/bin/git", "/usr/local/bin/git"} {
		if _, err := os.Stat(c); err == nil {
			realGit = c
			break
		}
	}
	if realGit == "" {
		t.Skip("no git in /usr/bin or /usr/local/bin")
	}
	repo := fixtureRepo(t)
	bin := t.TempDir()
	log := filepath.Join(bin, "calls.log")
	wrapper := filepath.Join(bin, "git")
	script := "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '" + log + "'\nexec '" + realGit + "' \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	// Cached answers are only trusted for files that changed more than
	// the timestamp granularity window ago (1 s) before they were read.
	time.Sleep(1200 * time.Millisecond)

	for _, mode := range []struct {
		name string
		env  []string
	}{
		{"unconfined", nil},
		{"confined", []string{"FLUXGIT_MCP_ALLOWED_ROOTS=" + filepath.Dir(repo)}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			s := startServer(t, append(append(baseEnv(t), "FLUXGIT_MCP_GIT_PATH="+wrapper), mode.env...))
			initialize(t, s)
			if p := statusCall(t, s, 1, repo); p["error"] != nil {
				t.Fatalf("repo.status: %v", p)
			}
			if err := os.Truncate(log, 0); err != nil {
				t.Fatal(err)
			}
			const calls = 3
			for i := 0; i < calls; i++ {
				if p := statusCall(t, s, i+2, repo); p["error"] != nil {
					t.Fatalf("repo.status: %v", p)
				}
			}
			b, err := os.ReadFile(log)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			if len(lines) != calls {
				t.Fatalf("%d repo.status calls started %d git processes, want %d:\n%s", calls, len(lines), calls, b)
			}
			for _, l := range lines {
				if !strings.Contains(l, " status ") || !strings.Contains(l, " --porcelain=v2 -z --branch") {
					t.Fatalf("unexpected git call: %s", l)
				}
			}
		})
	}
}
