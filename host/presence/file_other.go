//go:build !unix

package presence

import "os"

// createNew creates path for writing, failing when anything already has
// the name (CREATE_NEW on Windows never opens an existing link). Access
// is governed by the directory's ACL there, not by mode bits.
func createNew(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
}
