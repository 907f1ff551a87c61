//go:build !unix

package repo

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// errSymlink is returned when a component of a work-tree path is a
// symbolic link or another reparse point.
var errSymlink = errors.New("reached through a symbolic link")

// openInTree opens rel below dir, refusing a link at any component: each
// step is checked with Lstat inside an os.Root, which itself never lets a
// path leave dir even if a component is swapped after its check. There
// are no FIFOs to block on here.
func openInTree(dir *os.File, rel string) (*os.File, error) {
	if !filepath.IsLocal(rel) {
		return nil, errors.New("path is not local")
	}
	root, err := os.OpenRoot(dir.Name())
	if err != nil {
		return nil, err
	}
	defer root.Close()
	parts := strings.Split(filepath.ToSlash(rel), "/")
	for i := range parts {
		fi, err := root.Lstat(filepath.Join(parts[:i+1]...))
		if err != nil {
			return nil, err
		}
		if fi.Mode()&fs.ModeSymlink != 0 || fi.Mode()&fs.ModeIrregular != 0 && i < len(parts)-1 {
			return nil, errSymlink
		}
	}
	f, err := root.Open(filepath.FromSlash(rel))
	if err != nil {
		return nil, err
	}
	return f, nil
}

// openNonblocking opens path for reading.
func openNonblocking(path string) (*os.File, error) { return os.Open(path) }
