//go:build unix

package gitexec

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// watchProcs records, for runner r only, how many git processes it had
// running at most and right now.
type procWatch struct {
	mu       sync.Mutex
	now, max int64
}

func watchProcs(t *testing.T, r *Runner) *procWatch {
	w := &procWatch{}
	procHook = func(rr *Runner, running int64) {
		if rr != r {
			return
		}
		w.mu.Lock()
		w.now = running
		w.max = max(w.max, running)
		w.mu.Unlock()
	}
	t.Cleanup(func() { procHook = nil })
	return w
}

func (w *procWatch) get() (now, max int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.now, w.max
}

// TestConcurrentCallsAreBounded: many concurrent calls all succeed and the
// runner never has more git processes running than MaxProcs.
func TestConcurrentCallsAreBounded(t *testing.T) {
	repo := newRepo(t)
	writeFile(t, filepath.Join(repo, "a.txt"), "changed\n")
	for _, limit := range []int{1, 3} {
		t.Run("limit "+strconv.Itoa(limit), func(t *testing.T) {
			r := &Runner{MaxProcs: limit}
			w := watchProcs(t, r)
			var wg sync.WaitGroup
			errs := make([]error, 40)
			for i := range errs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					out, err := r.Run(context.Background(), repo, "status", "--porcelain=v2")
					if err == nil && !strings.Contains(string(out), "a.txt") {
						err = errors.New("status without the change: " + string(out))
					}
					errs[i] = err
				}()
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Errorf("call %d: %v", i, err)
				}
			}
			if _, m := w.get(); m > int64(limit) || m < 1 {
				t.Fatalf("at most %d git processes ran at once, bound %d", m, limit)
			}
		})
	}
}

// TestQueuedCallHonoursItsContext fills every slot with git calls blocked
// on FIFOs, then shows that a further call waits without starting git and
// ends as soon as its caller's context does; releasing the FIFOs lets
// every blocked call finish.
func TestQueuedCallHonoursItsContext(t *testing.T) {
	repo := newRepo(t)
	const limit = 2
	r := &Runner{MaxProcs: limit, Timeout: time.Minute}
	w := watchProcs(t, r)
	dir := t.TempDir()
	var fifos []string
	for i := 0; i < limit; i++ {
		p := filepath.Join(dir, "fifo"+strconv.Itoa(i))
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
		fifos = append(fifos, p)
	}
	var wg sync.WaitGroup
	blockedErrs := make([]error, limit)
	for i, p := range fifos {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, blockedErrs[i] = r.Run(context.Background(), repo, "hash-object", p)
		}()
	}
	release := func() {
		for _, p := range fifos {
			f, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0)
			if err != nil {
				continue // no reader (yet): nothing to release
			}
			f.WriteString("x")
			f.Close()
		}
	}
	t.Cleanup(func() { release(); wg.Wait() })
	// Wait until both blocked gits hold their slots (their driver scans
	// are done and each is blocked opening its FIFO).
	deadline := time.Now().Add(20 * time.Second)
	for {
		if now, _ := w.get(); now == limit && allBlocked(t, fifos) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the blocked calls never started")
		}
		time.Sleep(10 * time.Millisecond)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := r.Run(ctx, repo, "rev-parse", "HEAD")
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("a call ran although every slot was taken: %v", err)
	case <-time.After(200 * time.Millisecond):
		// Still queued, as it must be; this wait is not an assertion on
		// time, it only gives a wrong implementation the chance to show.
	}
	cancel()
	err := <-done
	var ge *Error
	if !errors.Is(err, ErrCanceled) || !errors.As(err, &ge) || !strings.Contains(ge.Details, "free git slot") {
		t.Fatalf("queued call: err = %v, want ErrCanceled while waiting for a slot", err)
	}
	if _, m := w.get(); m > limit {
		t.Fatalf("%d git processes ran at once, bound %d", m, limit)
	}
	release()
	wg.Wait()
	for i, err := range blockedErrs {
		if err != nil {
			t.Errorf("blocked call %d: %v", i, err)
		}
	}
}

// allBlocked reports whether every FIFO has a reader waiting (a git
// process holding it open for reading).
func allBlocked(t *testing.T, fifos []string) bool {
	t.Helper()
	for _, p := range fifos {
		found := false
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			if _, err := strconv.Atoi(e.Name()); err != nil {
				continue
			}
			cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			if strings.Contains(string(cmdline), "hash-object\x00"+p) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
