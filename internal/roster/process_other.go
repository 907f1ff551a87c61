//go:build !unix

package roster

import "os"

// processGone cannot tell here without opening the process; a worker is
// never called stale on this platform.
func processGone(int) bool { return false }

func hostname() string {
	h, _ := os.Hostname()
	return h
}
