//go:build unix

package roster

import (
	"errors"
	"os"
	"syscall"
)

// processGone reports that no process has the id (kill(pid, 0) fails
// with ESRCH; EPERM means it exists but is another user's).
func processGone(pid int) bool {
	err := syscall.Kill(pid, 0)
	return errors.Is(err, syscall.ESRCH)
}

func hostname() string {
	h, _ := os.Hostname()
	return h
}
