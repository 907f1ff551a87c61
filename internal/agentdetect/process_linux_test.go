//go:build linux

package agentdetect

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// copySleep copies /bin/sleep to dir/name: a real foreign executable
// whose own name is an agent's.
func copySleep(t testing.TB, dir, name string) string {
	t.Helper()
	src, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep binary")
	}
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	dst := filepath.Join(dir, name)
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return dst
}

func startSleep(t testing.TB, bin, dir string, args ...string) *exec.Cmd {
	t.Helper()
	c := exec.Command(bin, append([]string{"600"}, args...)...)
	c.Dir = dir
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	return c
}

func TestProcessSource(t *testing.T) {
	repo := newRepo(t, "repo")
	wt := newRepo(t, "worktree")
	outside := t.TempDir()
	bin := t.TempDir()
	codexBin := copySleep(t, bin, "codex")
	q := Query{Repo: repo, Worktrees: []string{repo, wt}, SelfPID: os.Getpid(), Now: time.Now()}
	const session = "0b2c7f3e-1d2a-4c5b-9e8f-123456789abc"

	tests := []struct {
		name      string
		start     func(t *testing.T) *exec.Cmd
		wantAgent string // "" means must not be found
		wantConf  string
		wantSess  string
	}{
		{"claude in repo", func(t *testing.T) *exec.Cmd { return startHelper(t, repo, "sleep", "claude") }, "claude-code", ConfidenceCwd, ""},
		{"claude path argv0 in subdirectory", func(t *testing.T) *exec.Cmd {
			return startHelper(t, filepath.Join(repo, "sub"), "sleep", "/home/u/.local/bin/claude", "--dangerously-skip-permissions")
		}, "claude-code", ConfidenceCwd, ""},
		{"copied sleep named codex", func(t *testing.T) *exec.Cmd { return startSleep(t, codexBin, repo) }, "codex", ConfidenceCwd, ""},
		{"aider behind python", func(t *testing.T) *exec.Cmd {
			return startHelper(t, repo, "sleep", "/usr/bin/python3", "/home/u/.local/bin/aider", "--model", "x")
		}, "aider", ConfidenceCwd, ""},
		{"gemini behind node", func(t *testing.T) *exec.Cmd {
			return startHelper(t, repo, "sleep", "node", "/usr/lib/node_modules/@google/gemini-cli/dist/index.js")
		}, "gemini-cli", ConfidenceCwd, ""},
		{"opencode", func(t *testing.T) *exec.Cmd { return startHelper(t, repo, "sleep", "opencode") }, "opencode", ConfidenceCwd, ""},
		{"copilot package", func(t *testing.T) *exec.Cmd {
			return startHelper(t, repo, "sleep", "node", "/opt/npm/@github/copilot/index.js")
		}, "copilot-cli", ConfidenceCwd, ""},
		{"cursor-agent", func(t *testing.T) *exec.Cmd { return startHelper(t, repo, "sleep", "cursor-agent") }, "cursor", ConfidenceCwd, ""},
		{"claude resuming a session", func(t *testing.T) *exec.Cmd {
			return startHelper(t, repo, "sleep", "claude", "--resume", session)
		}, "claude-code", ConfidenceArgv, session},
		{"codex in another worktree", func(t *testing.T) *exec.Cmd { return startHelper(t, wt, "sleep", "codex") }, "codex", ConfidenceCwd, ""},
		{"codex outside naming the repo with --cd", func(t *testing.T) *exec.Cmd {
			return startHelper(t, outside, "sleep", "codex", "--cd", repo)
		}, "codex", ConfidenceArgv, ""},
		{"claude outside the repository", func(t *testing.T) *exec.Cmd { return startHelper(t, outside, "sleep", "claude") }, "", "", ""},
		{"sibling directory with the repo as prefix", func(t *testing.T) *exec.Cmd {
			sib := repo + "-old"
			if err := os.MkdirAll(sib, 0o755); err != nil {
				t.Fatal(err)
			}
			return startHelper(t, sib, "sleep", "claude")
		}, "", "", ""},
		{"editor opened on a file named claude", func(t *testing.T) *exec.Cmd { return startHelper(t, repo, "sleep", "vim", "claude") }, "", "", ""},
		{"an unrelated process in the repo", func(t *testing.T) *exec.Cmd { return startHelper(t, repo, "sleep", "make", "-j4") }, "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.start(t)
			pid := c.Process.Pid
			fs, err := ProcessSource{}.Scan(context.Background(), q)
			if err != nil {
				t.Fatal(err)
			}
			var got *Finding
			for i := range fs {
				if fs[i].PID != nil && *fs[i].PID == pid {
					got = &fs[i]
				}
			}
			if tt.wantAgent == "" {
				if got != nil {
					t.Fatalf("found %+v, want nothing", *got)
				}
				return
			}
			if got == nil {
				t.Fatalf("pid %d not found among %d findings", pid, len(fs))
			}
			wantStart, ok := ProcessStartTime(pid)
			if !ok || got.StartTime.IsZero() || !got.StartTime.Equal(wantStart) || got.StartTime.After(time.Now()) {
				t.Errorf("start time %v, want %v", got.StartTime, wantStart)
			}
			if got.Agent != tt.wantAgent || got.Confidence != tt.wantConf || got.SessionID != tt.wantSess ||
				got.State != StateOpen || strings.Join(got.Sources, ",") != SourceProcess {
				t.Errorf("got %+v, want agent %s confidence %s session %q", *got, tt.wantAgent, tt.wantConf, tt.wantSess)
			}
		})
	}
}

func TestProcessSourceSkipsSelfAndHonoursContext(t *testing.T) {
	repo := newRepo(t, "repo")
	c := startHelper(t, repo, "sleep", "claude")
	q := Query{Repo: repo, SelfPID: c.Process.Pid, Now: time.Now()}
	fs, err := ProcessSource{}.Scan(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		if *f.PID == c.Process.Pid {
			t.Fatal("SelfPID reported")
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (ProcessSource{}).Scan(ctx, q); err == nil {
		t.Fatal("a cancelled scan reported success")
	}
}

func TestPIDReuseGuard(t *testing.T) {
	repo := newRepo(t, "repo")
	c := startHelper(t, repo, "sleep", "claude")
	pid := c.Process.Pid
	start, ok := ProcessStartTime(pid)
	if !ok {
		t.Fatal("no start time for a live process")
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		pid  int
		at   time.Time
		want bool
	}{
		{"record written after the process started", pid, start.Add(time.Minute), true},
		{"record written when the process started", pid, start, true},
		{"record older than the process: pid reused", pid, start.Add(-time.Hour), false},
		{"process gone", dead.Process.Pid, time.Now(), false},
		{"no pid", 0, time.Now(), false},
	}
	for _, tt := range tests {
		if got := AliveSince(tt.pid, tt.at); got != tt.want {
			t.Errorf("%s: AliveSince = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestAncestors(t *testing.T) {
	repo := newRepo(t, "repo")
	got := Ancestors(os.Getpid())
	if len(got) == 0 || got[0] != os.Getppid() || len(got) > MaxAncestors {
		t.Fatalf("Ancestors(self) = %v, want parent %d first, at most %d", got, os.Getppid(), MaxAncestors)
	}
	child := startChild(t, repo)
	anc := Ancestors(child.child)
	if len(anc) < 2 || anc[0] != child.parent || anc[1] != os.Getpid() {
		t.Fatalf("Ancestors(child) = %v, want [%d %d ...]", anc, child.parent, os.Getpid())
	}
	if Ancestors(0) != nil {
		t.Fatal("Ancestors(0) is not empty")
	}
}

type family struct{ parent, child int }

// startChild starts a "claude" helper that runs a child of its own (as
// an agent runs its fluxgit sidecar) and returns both pids.
func startChild(t testing.TB, dir string) family {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := exec.Command(self)
	c.Args = []string{"claude"}
	c.Dir = dir
	c.Env = append(os.Environ(), helperEnv+"=parent")
	stdout, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		c.Process.Kill()
		t.Fatal(err)
	}
	child, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if p, err := os.FindProcess(child); err == nil {
			p.Kill()
		}
		c.Process.Kill()
		c.Wait()
	})
	return family{parent: c.Process.Pid, child: child}
}
