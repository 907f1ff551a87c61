//go:build !unix

package agentdetect

import "time"

// storePIDAlive cannot tell without the process table here; a registry
// entry then counts by its last activity alone.
func storePIDAlive(pid int, sessionStarted time.Time) bool { return false }
