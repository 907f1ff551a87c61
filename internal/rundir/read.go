package rundir

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Errors of the bounded readers. They never carry a path: the reason is
// enough, and a link target may lie outside everything the caller may
// learn about. A missing directory or file is os.ErrNotExist.
var (
	ErrNotRegular = errors.New("not a regular file (symbolic links, devices and FIFOs are refused)")
	ErrLinkedDir  = errors.New("a directory on the way is a symbolic link or not a directory")
	ErrTooLarge   = errors.New("file too large")
	ErrSwapped    = errors.New("the file changed while it was opened")
	ErrUnreadable = errors.New("cannot be read")
	ErrBadID      = errors.New("not a safe repository id (no '/', '\\' or NUL, not '.' or '..')")
)

// Check vets a file after it was opened, by identity (for example: refuse
// a hard link to a credential named like a record). A nil Check accepts
// every file.
type Check func(fs.FileInfo) error

// OpenRoot opens dir as an os.Root for the readers below; a missing
// directory is os.ErrNotExist, any other failure ErrUnreadable.
func OpenRoot(dir string) (*os.Root, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, os.ErrNotExist
		}
		return nil, ErrUnreadable
	}
	return root, nil
}

// ReadFile reads the regular file name (slash-separated, local) inside
// root, at most limit bytes, and returns it with the opened file's
// information. It follows no symbolic link below root — neither the file
// nor a directory on the way may be one — and opening goes through
// os.Root, so nothing outside root is reached even if an entry is swapped
// for a link between the checks; the opened file must be the one checked
// (SameFile). A FIFO never blocks the call (non-blocking open, then the
// type check). check, when not nil, vets the opened file.
func ReadFile(root *os.Root, name string, limit int64, check Check) ([]byte, fs.FileInfo, error) {
	if !filepath.IsLocal(filepath.FromSlash(name)) {
		return nil, nil, ErrUnreadable
	}
	elems := strings.Split(name, "/")
	for i := 1; i < len(elems); i++ {
		fi, err := root.Lstat(filepath.Join(elems[:i]...))
		if err != nil {
			return nil, nil, cleanErr(err)
		}
		if !fi.IsDir() {
			return nil, nil, ErrLinkedDir
		}
	}
	rel := filepath.Join(elems...)
	fi, err := root.Lstat(rel)
	if err != nil {
		return nil, nil, cleanErr(err)
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, ErrNotRegular
	}
	if fi.Size() > limit {
		return nil, nil, ErrTooLarge
	}
	f, err := root.OpenFile(rel, os.O_RDONLY|readFlags, 0)
	if err != nil {
		return nil, nil, cleanErr(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || !os.SameFile(fi, st) {
		return nil, nil, ErrSwapped
	}
	if check != nil {
		if err := check(st); err != nil {
			return nil, nil, err
		}
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, nil, ErrUnreadable
	}
	if int64(len(b)) > limit {
		return nil, nil, ErrTooLarge
	}
	return b, st, nil
}

// ReadDir lists the directory dir (slash-separated, local; "." for root
// itself) inside root, sorted by name; no component may be a symbolic link.
func ReadDir(root *os.Root, dir string) ([]os.DirEntry, error) {
	rel := filepath.FromSlash(dir)
	if dir != "." {
		elems := strings.Split(dir, "/")
		for i := 1; i <= len(elems); i++ {
			fi, err := root.Lstat(filepath.Join(elems[:i]...))
			if err != nil {
				return nil, cleanErr(err)
			}
			if !fi.IsDir() {
				return nil, ErrLinkedDir
			}
		}
	}
	fi, err := root.Lstat(rel)
	if err != nil {
		return nil, cleanErr(err)
	}
	f, err := root.Open(rel)
	if err != nil {
		return nil, cleanErr(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !os.SameFile(fi, st) {
		return nil, ErrSwapped
	}
	des, err := f.ReadDir(-1)
	if err != nil {
		return nil, ErrUnreadable
	}
	sort.Slice(des, func(i, j int) bool { return des[i].Name() < des[j].Name() })
	return des, nil
}

// cleanErr keeps "does not exist" and "permission denied" recognisable and
// drops the path an *fs.PathError carries.
func cleanErr(err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return os.ErrNotExist
	case errors.Is(err, fs.ErrPermission):
		return os.ErrPermission
	}
	return ErrUnreadable
}
