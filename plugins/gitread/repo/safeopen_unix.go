//go:build unix

package repo

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// errSymlink is returned when a component of a work-tree path is a
// symbolic link: the file could then be anywhere on disk.
var errSymlink = errors.New("reached through a symbolic link")

// openInTree opens rel below dir one component at a time with O_NOFOLLOW,
// so a symlink anywhere on the way fails instead of leading out of the
// tree, and the last one with O_NONBLOCK, so a FIFO cannot block the open.
func openInTree(dir *os.File, rel string) (*os.File, error) {
	if !filepath.IsLocal(rel) {
		return nil, errors.New("path is not local")
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	fd := int(dir.Fd())
	owned := -1
	defer func() {
		if owned >= 0 {
			unix.Close(owned)
		}
	}()
	for i, name := range parts {
		last := i == len(parts)-1
		flags := unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_CLOEXEC | unix.O_NONBLOCK
		if !last {
			flags |= unix.O_DIRECTORY
		}
		var next int
		var err error
		for {
			next, err = unix.Openat(fd, name, flags, 0)
			if err != unix.EINTR {
				break
			}
		}
		if err != nil {
			if err == unix.ELOOP || (!last && err == unix.ENOTDIR) {
				var st unix.Stat_t
				if unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
					return nil, errSymlink
				}
			}
			return nil, &os.PathError{Op: "open", Path: rel, Err: err}
		}
		if owned >= 0 {
			unix.Close(owned)
		}
		owned, fd = next, next
	}
	// Reads on a regular file ignore O_NONBLOCK; clearing it keeps later
	// reads ordinary for any other kind, which readOpened refuses anyway.
	_ = unix.SetNonblock(fd, false)
	f := os.NewFile(uintptr(fd), rel)
	owned = -1
	return f, nil
}

// openNonblocking opens path for reading without blocking on a FIFO.
func openNonblocking(path string) (*os.File, error) {
	for {
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: path, Err: err}
		}
		_ = unix.SetNonblock(fd, false)
		return os.NewFile(uintptr(fd), path), nil
	}
}
