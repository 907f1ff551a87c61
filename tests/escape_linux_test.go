//go:build linux

package tests

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestSwappedRepositoryDirectory replaces the checked in-root repository
// with a symlink to an outside one and back, as fast as it can, while
// tools are called: a git call that resolved the path again would read
// the outside repository. No reply may ever contain its marker.
func TestSwappedRepositoryDirectory(t *testing.T) {
	l := newEscapeLayout(t)
	repo := l.innerRepo(t, "repo")
	// The outside repository is a copy of the inner one plus changes that
	// name the marker, so every tool (also those that read the work tree
	// or look up inner commits) would show it if git read it.
	mirror := filepath.Join(filepath.Dir(l.outside), "mirror")
	git(t, filepath.Dir(mirror), "clone", "-q", repo, mirror)
	git(t, mirror, "fetch", "-q", l.outside, "main:"+outsideMarker)
	writeFile(t, filepath.Join(mirror, "inner.txt"), outsideMarker+"\n")
	writeFile(t, filepath.Join(mirror, outsideMarker+"-untracked.txt"), "x\n")
	l.outside = mirror
	// The swap is atomic (renameat2 RENAME_EXCHANGE), so the path always
	// names either the repository or the symlink, never nothing.
	link := repo + ".link"
	if err := os.Symlink(l.outside, link); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	var swaps atomic.Int64
	// longestOut is the longest time, in nanoseconds, the symlink stayed
	// in place: a starved swap goroutine on a loaded machine leaves it
	// there and every call is then rightly refused.
	var longestOut atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		exchange := func() {
			if err := unix.Renameat2(unix.AT_FDCWD, link, unix.AT_FDCWD, repo, unix.RENAME_EXCHANGE); err != nil {
				t.Error("exchange:", err)
				stop.Store(true)
			}
		}
		for !stop.Load() {
			// Bursts of swaps, then quiet spells in which calls complete.
			for burst := time.Now(); time.Since(burst) < 5*time.Millisecond; {
				exchange() // the symlink is in place
				out := time.Now()
				time.Sleep(100 * time.Microsecond)
				exchange() // the repository is back
				if d := int64(time.Since(out)); d > longestOut.Load() {
					longestOut.Store(d)
				}
				swaps.Add(1)
				time.Sleep(200 * time.Microsecond)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	defer func() {
		stop.Store(true)
		wg.Wait()
	}()

	// Control: a plain git -C on the path does see the outside repository
	// while the loop runs.
	seen := false
	for i := 0; i < 2000 && !seen; i++ {
		out, _ := gitCmd(repo, "status", "--porcelain").Output()
		seen = strings.Contains(string(out), outsideMarker)
	}
	if !seen {
		t.Fatal("control: git -C never saw the outside repository; the swap loop proves nothing")
	}

	s := startServer(t, append(baseEnv(t), "FLUXGIT_MCP_ALLOWED_ROOTS="+l.root, "FLUXGIT_MCP_AUDIT_DISABLED=1"))
	initialize(t, s)
	tools := []struct {
		name string
		args map[string]any
	}{
		{"repo.history", nil}, {"commit.details", map[string]any{"commit": "HEAD"}},
		{"diff.text", map[string]any{"base": "HEAD"}}, {"repo.status", nil}, {"repo.refs", nil},
		{"repo.scope", map[string]any{"path": "."}}, {"worktree.changes", nil},
	}
	ok, outcomes, lastRefusal := 0, map[string]int{}, ""
	// At least 300 calls, and more (up to a bound) until one is answered
	// with data: the leak check means nothing unless some call ran git
	// while the loop was swapping.
	const calls, maxCalls = 300, 3000
	i := 0
	for ; i < maxCalls && (i < calls || ok == 0); i++ {
		tool := tools[i%len(tools)]
		args := map[string]any{"repoPath": repo}
		for k, v := range tool.args {
			args[k] = v
		}
		r := s.call(i+1, "tools/call", map[string]any{"name": tool.name, "arguments": args})
		if strings.Contains(r.raw, outsideMarker) {
			t.Fatalf("call %d (%s) leaked the outside repository: %s", i, tool.name, r.raw)
		}
		switch {
		case r.Error != nil:
			outcomes["refused "+strconv.Itoa(r.Error.Code)]++
			lastRefusal = r.raw
		case strings.Contains(r.raw, `"isError":true`):
			switch outcomes["tool error"]++; {
			case strings.Contains(r.raw, "renamed or replaced while git read it"), strings.Contains(r.raw, "moved or replaced while git read it"):
				outcomes["swap detected after git ran"]++
			case strings.Contains(r.raw, "keeps changing"):
				outcomes["swapping while git was to start"]++
			}
		default:
			ok++
		}
	}
	t.Logf("%d calls, %d answered with data, others %v, %d swaps, symlink in place at most %v", i, ok, outcomes, swaps.Load(), time.Duration(longestOut.Load()))
	if ok == 0 {
		// Say what the path was and why the last call was refused, so a
		// failure here tells a stalled swap loop from a server that kept
		// refusing a repository that was back in place.
		state := "missing"
		if fi, err := os.Lstat(repo); err == nil {
			state = fi.Mode().Type().String()
		}
		t.Fatalf("no call of %d succeeded, so the test did not exercise the pinned path (the repository path is now %s; %d swaps, symlink in place at most %v; last refusal: %.600s)",
			i, state, swaps.Load(), time.Duration(longestOut.Load()), lastRefusal)
	}
}
