//go:build unix

package presence

import (
	"os"
	"syscall"
)

// createNew creates path for writing, failing when anything (a link
// included) already has the name, and makes it 0600 whatever the umask.
func createNew(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(0o600); err != nil {
		_ = f.Close()
		_ = os.Remove(path)
		return nil, err
	}
	return f, nil
}
