//go:build unix

package agentdetect

import (
	"errors"
	"syscall"
)

// storePIDAlive reports whether a process with this pid exists. Signal 0
// delivers nothing; EPERM still proves the process exists (another user's).
func storePIDAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
