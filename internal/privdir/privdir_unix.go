//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package privdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Check verifies dir, which must be absolute: no component of it may be a
// symbolic link or a non-directory, and dir itself must be owned by the
// effective user and have none of the forbidden permission bits. A failed
// check is an *Error.
func Check(dir string, o Options) error {
	label, create := o.Label, o.Create
	if !filepath.IsAbs(dir) {
		return &Error{Label: label, Path: dir, Problem: NotAbsolute}
	}
	// Walk from the root so that every component is checked (and created)
	// in turn, never followed.
	parts := strings.Split(strings.TrimPrefix(filepath.Clean(dir), string(filepath.Separator)), string(filepath.Separator))
	cur := string(filepath.Separator)
	for _, p := range parts {
		if p == "" {
			continue
		}
		cur = filepath.Join(cur, p)
		fi, err := os.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) && !create {
			return nil
		}
		if errors.Is(err, fs.ErrNotExist) {
			if err := os.Mkdir(cur, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("create %s: %w", label, err)
			}
			if fi, err = os.Lstat(cur); err != nil {
				return err
			}
			if fi.IsDir() && fi.Mode()&fs.ModeSymlink == 0 {
				// Mkdir's mode is filtered by the umask; make it exact.
				if err := os.Chmod(cur, 0o700); err != nil {
					return err
				}
			}
		} else if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return &Error{Label: label, Path: cur, Problem: Symlink}
		}
		if !fi.IsDir() {
			return &Error{Label: label, Path: cur, Problem: NotDirectory}
		}
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if perm := fi.Mode().Perm(); perm&o.forbidden() != 0 {
		return &Error{Label: label, Path: dir, Problem: Permissive, Mode: perm, Forbidden: o.forbidden()}
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid != uint32(os.Geteuid()) {
		return &Error{Label: label, Path: dir, Problem: ForeignOwner, UID: st.Uid}
	}
	return nil
}
