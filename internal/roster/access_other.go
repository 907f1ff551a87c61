//go:build !unix

package roster

import "io/fs"

// writable cannot be judged without opening the file on this platform;
// SQLite's own errors are classified instead.
func writable(string) error { return nil }

// ownedByMe cannot be judged from mode bits on this platform (ACLs decide).
func ownedByMe(fs.FileInfo) error { return nil }
