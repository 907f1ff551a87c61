package repo

import (
	"errors"
	"io"
	"os"
)

// errNotRegular is returned for anything but a regular file: a FIFO, a
// device or a directory in the place of a file the tool reads.
var errNotRegular = errors.New("not a regular file")

// readOpened reads f, which must be a regular file, returning at most
// max+1 bytes: a longer result tells the caller the file is over its cap.
// The check is on the opened file (fstat), not on the path, so nothing
// can be swapped in between.
func readOpened(f *os.File, max int64) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errNotRegular
	}
	return io.ReadAll(io.LimitReader(f, max+1))
}

// readTreeFile reads the regular file rel (slash-separated, local) below
// the directory dir without following a symlink at any component and
// without blocking on a FIFO (openInTree, per OS), capped at max+1 bytes.
func readTreeFile(dir *os.File, rel string, max int64) ([]byte, error) {
	f, err := openInTree(dir, rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readOpened(f, max)
}

// readSmallFile reads a regular file by path (following links, which the
// caller has checked) without blocking on a FIFO, capped at max+1 bytes.
func readSmallFile(path string, max int64) ([]byte, error) {
	f, err := openNonblocking(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readOpened(f, max)
}

// readFile reads at most max+1 bytes of the regular work-tree file rel
// (slash-separated) from the pinned work tree, through no symlink and without
// blocking on a FIFO.
func (r *Repo) readFile(rel string, max int64) ([]byte, error) {
	if r.pin != nil {
		return readTreeFile(r.pin.Dir(), rel, max)
	}
	dir, err := os.Open(r.dir)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	return readTreeFile(dir, rel, max)
}
