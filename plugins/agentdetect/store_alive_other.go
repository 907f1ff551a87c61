//go:build !unix

package agentdetect

// storePIDAlive cannot tell without the process table here; a registry
// entry then counts by its last activity alone.
func storePIDAlive(pid int) bool { return false }
