//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package privdir

import (
	"os"
	"path/filepath"
)

// Check verifies only that dir is absolute on this system, creating it when
// asked: ownership and permission bits do not describe access here (ACLs
// do), and links are not resolved component by component.
func Check(dir string, o Options) error {
	if !filepath.IsAbs(dir) {
		return &Error{Label: o.Label, Path: dir, Problem: NotAbsolute}
	}
	if o.Create {
		return os.MkdirAll(dir, 0o700)
	}
	return nil
}
