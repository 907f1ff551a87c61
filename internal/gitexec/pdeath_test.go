//go:build linux

package gitexec

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHelperBlockedGit is not a test: it is the "provider" process of
// TestGitDiesWithItsParent, started as a copy of the test binary. It runs
// one git call that blocks opening a FIFO nobody writes to.
func TestHelperBlockedGit(t *testing.T) {
	repo, fifo := os.Getenv("GITEXEC_HELPER_REPO"), os.Getenv("GITEXEC_HELPER_FIFO")
	if repo == "" {
		t.Skip("helper process only")
	}
	untiedForTest = os.Getenv("GITEXEC_HELPER_UNTIED") == "1"
	_, err := (&Runner{Timeout: time.Hour}).Run(context.Background(), repo, "hash-object", fifo)
	t.Fatalf("the blocked git call returned: %v", err)
}

// childGit returns the pid of a git process whose parent is ppid and whose
// command line contains want, or 0.
func childGit(ppid int, want string) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 || f[1] != strconv.Itoa(ppid) {
			continue
		}
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if strings.Contains(string(cmdline), want) {
			return pid
		}
	}
	return 0
}

// TestGitDiesWithItsParent: a provider killed with SIGKILL cannot run its
// cleanup, so git, blocked here on a FIFO with an hour of timeout left,
// must be killed by the kernel (parent-death signal). The control runs the
// same helper without the tie and finds git still alive after its parent
// is gone, so the check is not vacuous.
func TestGitDiesWithItsParent(t *testing.T) {
	repo := newRepo(t)
	for _, tc := range []struct {
		name     string
		untied   bool
		wantGone bool
	}{
		{"tied git dies with its parent", false, true},
		{"control: untied git survives its parent", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fifo := filepath.Join(t.TempDir(), "fifo")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			helper := exec.Command(os.Args[0], "-test.run=^TestHelperBlockedGit$", "-test.count=1")
			helper.Env = append(os.Environ(), "GITEXEC_HELPER_REPO="+repo, "GITEXEC_HELPER_FIFO="+fifo)
			if tc.untied {
				helper.Env = append(helper.Env, "GITEXEC_HELPER_UNTIED=1")
			}
			if err := helper.Start(); err != nil {
				t.Fatal(err)
			}
			var gitPid int
			deadline := time.Now().Add(20 * time.Second)
			for gitPid == 0 {
				if time.Now().After(deadline) {
					_ = helper.Process.Kill()
					t.Fatal("the helper never started the blocked git")
				}
				time.Sleep(10 * time.Millisecond)
				gitPid = childGit(helper.Process.Pid, "hash-object")
			}
			// Release a git left behind (the control) whatever happens.
			t.Cleanup(func() { _ = syscall.Kill(gitPid, syscall.SIGKILL) })
			if err := helper.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = helper.Wait() // the parent is gone once this returns
			if !tc.wantGone {
				if processGone(gitPid) {
					t.Fatal("control: git died with its parent even without the tie; the test proves nothing")
				}
				return
			}
			deadline = time.Now().Add(10 * time.Second)
			for !processGone(gitPid) {
				if time.Now().After(deadline) {
					t.Fatalf("git (pid %d) still running after its parent was killed", gitPid)
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}
