//go:build !unix

package pgtest

import "io/fs"

// statOwner cannot be read from mode bits here; the cluster never runs as
// another user on this platform.
func statOwner(fs.FileInfo) ([2]int, bool) { return [2]int{}, false }
