//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package audit

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLockTimeout holds the ledger's flock from outside, so it runs only
// where the ledger locks with flock (fs_unix.go).
func TestLockTimeout(t *testing.T) {
	path := ledgerPath(t)
	lim := smallLimits()
	lim.lockTimeout = 100 * time.Millisecond
	l := openTest(t, path, nil, lim)
	appendN(t, l, 0, 1)
	f, err := os.OpenFile(path+".lock", os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(EventFromCall(testRecord(1))); err == nil || !strings.Contains(err.Error(), "not acquired") {
		t.Fatalf("append under a held lock: %v", err)
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	appendN(t, l, 1, 1)
	if rep := mustVerify(t, path, verifyOpts(nil, false, nil)); rep.Entries != 2 {
		t.Fatalf("%+v", rep)
	}
}
