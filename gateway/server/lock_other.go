//go:build !unix

package server

import (
	"fmt"
	"os"
)

// lockFile opens path exclusively: on systems without flock, a second
// gateway fails to open the file while the first holds it open.
func lockFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("another fluxgit gateway may be running on this run directory (lock %s): %w", path, err)
	}
	return f, nil
}
