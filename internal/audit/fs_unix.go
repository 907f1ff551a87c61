//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package audit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"time"

	"github.com/fluxgit/fluxgit/internal/privdir"
)

// fileID identifies a file independently of its name.
type fileID struct{ dev, ino uint64 }

type fileInfo struct {
	id    fileID
	nlink uint64
	uid   uint32
	mode  fs.FileMode
	size  int64
	mtime int64 // ns
}

func statInfo(fi os.FileInfo) (fileInfo, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileInfo{}, false
	}
	return fileInfo{
		id:    fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)},
		nlink: uint64(st.Nlink),
		uid:   st.Uid,
		mode:  fi.Mode(),
		size:  fi.Size(),
		mtime: fi.ModTime().UnixNano(),
	}, true
}

// openNoFollow opens path without following a final symlink.
func openNoFollow(path string, flag int, perm fs.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flag|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, perm)
	if err != nil && errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%s is a symbolic link; the audit ledger never follows links", path)
	}
	return f, err
}

// checkOpened verifies that an opened ledger file is a private regular
// file with one link, owned by us, and still the file its name points to.
func checkOpened(f *os.File, path string) (fileInfo, error) {
	fi, err := f.Stat()
	if err != nil {
		return fileInfo{}, err
	}
	info, ok := statInfo(fi)
	if !ok {
		return info, fmt.Errorf("%s: no file identity available", path)
	}
	switch {
	case !fi.Mode().IsRegular():
		return info, fmt.Errorf("%s is not a regular file", path)
	case info.nlink != 1:
		return info, fmt.Errorf("%s has %d hard links; the ledger requires exactly one", path, info.nlink)
	case info.uid != uint32(os.Geteuid()):
		return info, fmt.Errorf("%s is owned by uid %d, not by this user", path, info.uid)
	case fi.Mode().Perm()&0o077 != 0:
		return info, fmt.Errorf("%s is group/world accessible (mode %04o); it must be 0600", path, fi.Mode().Perm())
	}
	lfi, err := os.Lstat(path)
	if err != nil {
		return info, fmt.Errorf("%s vanished while open: %w", path, err)
	}
	if l, ok := statInfo(lfi); !ok || l.id != info.id {
		return info, fmt.Errorf("%s was replaced while being opened", path)
	}
	return info, nil
}

// ensureDir creates dir (0700 for every directory it creates) and checks
// that no component of it is a symlink and that dir itself is private to
// this user.
func ensureDir(dir string) error { return checkDir(dir, true) }

// checkDir is ensureDir without creating anything: a missing directory is
// fine (the first append creates it). The check is shared with the shift
// roster's state directory (internal/privdir).
func checkDir(dir string, create bool) error {
	return privdir.Check(dir, privdir.Options{Label: "audit directory", Create: create, Forbidden: 0o077})
}

// syncDir makes renames, creations and removals in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return err
	}
	return nil
}

// fileLock is an exclusive flock on the sibling lock file.
type fileLock struct{ f *os.File }

// acquireLock takes the exclusive cross-process lock, polling until
// timeout, and re-checks afterwards that the lock file is still the one
// its name points to (a replaced lock file would not exclude anyone).
func acquireLock(path string, timeout time.Duration) (*fileLock, error) {
	deadline := time.Now().Add(timeout)
	for attempt := 0; ; attempt++ {
		f, err := openNoFollow(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("open lock file: %w", err)
		}
		if _, err := checkOpened(f, path); err != nil {
			f.Close()
			return nil, fmt.Errorf("lock file: %w", err)
		}
		wait := 50 * time.Microsecond
		for {
			err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
			if err == nil || !errors.Is(err, syscall.EWOULDBLOCK) {
				break
			}
			if time.Now().After(deadline) {
				f.Close()
				return nil, fmt.Errorf("audit lock %s not acquired within %s", path, timeout)
			}
			time.Sleep(wait)
			if wait < 5*time.Millisecond {
				wait *= 2
			}
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		// Re-check after locking: the name must still lead to our inode.
		if _, err := checkOpened(f, path); err != nil {
			f.Close()
			if attempt < 3 {
				continue
			}
			return nil, fmt.Errorf("lock file: %w", err)
		}
		return &fileLock{f: f}, nil
	}
}

func (l *fileLock) release() {
	_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	_ = l.f.Close()
}

// checkExistingFile checks a ledger file that exists without opening it:
// not a symlink, regular, one link, private, ours.
func checkExistingFile(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	info, _ := statInfo(fi)
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s is a symbolic link; the audit ledger never follows links", path)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file", path)
	case info.nlink != 1:
		return fmt.Errorf("%s has %d hard links; the ledger requires exactly one", path, info.nlink)
	case info.uid != uint32(os.Geteuid()):
		return fmt.Errorf("%s is owned by uid %d, not by this user", path, info.uid)
	case fi.Mode().Perm()&0o077 != 0:
		return fmt.Errorf("%s is group/world accessible (mode %04o); it must be 0600", path, fi.Mode().Perm())
	}
	return nil
}
