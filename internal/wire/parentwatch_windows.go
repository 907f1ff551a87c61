//go:build windows

package wire

import (
	"os"
	"time"

	"golang.org/x/sys/windows"
)

// waitParentGone returns when the process that started this one has died.
// Windows never re-parents an orphan, so os.Getppid keeps its first value
// and polling it tells nothing; instead the parent's handle is waited on,
// which is signalled when that process exits. The handle is opened once at
// start, so a later reuse of the parent's pid cannot fool the wait.
func waitParentGone(parent int) {
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(parent))
	if err != nil {
		// The parent is already gone, or may not be opened: fall back to
		// polling, which at least ends the provider if that changes.
		t := time.NewTicker(parentPollInterval)
		defer t.Stop()
		parentGone(parent, os.Getppid, t.C)
		return
	}
	defer windows.CloseHandle(h)
	if ev, err := windows.WaitForSingleObject(h, windows.INFINITE); err == nil && ev == windows.WAIT_OBJECT_0 {
		return
	}
	// The wait itself failed: never end a provider whose host may be alive.
	select {}
}
