//go:build unix

package agentdetect

import (
	"errors"
	"syscall"
	"time"
)

// storePIDAlive reports whether the process a registry entry names still
// runs: a process with this pid exists (signal 0 delivers nothing; EPERM
// still proves it exists) and, where its start time can be read, it did
// not start after the session did (a later start is a reused pid).
func storePIDAlive(pid int, sessionStarted time.Time) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	if start := storeProcStart(pid); !start.IsZero() && !sessionStarted.IsZero() &&
		start.After(sessionStarted.Add(storePIDStartSlack)) {
		return false
	}
	return true
}
