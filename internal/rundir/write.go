package rundir

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrNotRealDir is returned when a directory a writer would write into is
// a symbolic link or not a directory: a record written through a link
// would land wherever it points.
var ErrNotRealDir = errors.New("is a symbolic link or not a directory")

// writeAtomic replaces runDir/dir/name with data. The temporary file is
// ".<stem>.<random>.tmp" (F§11's form for presence documents; the presence
// sweep removes stale *.tmp), created where nothing has the name, 0600,
// then renamed over name, so a reader (or a crash) sees the old file or
// the new one, never a torn one. Missing directories below runDir are
// created 0700; one that is a symbolic link or not a directory is refused.
// With durable, the file and the directory are synced (restore records and
// the registry must survive a crash; a presence document is rewritten on
// every call and need not).
func writeAtomic(runDir, dir, name string, data []byte, durable bool) error {
	if runDir == "" || !filepath.IsAbs(runDir) {
		return fmt.Errorf("no absolute run directory (got %q)", runDir)
	}
	if err := os.MkdirAll(runDir, 0o700); err != nil {
		return fmt.Errorf("create the run directory: %w", err)
	}
	root, err := os.OpenRoot(runDir)
	if err != nil {
		return fmt.Errorf("open the run directory: %w", err)
	}
	defer root.Close()
	elems := strings.Split(dir, "/")
	for i := 1; i <= len(elems); i++ {
		sub := filepath.Join(elems[:i]...)
		fi, err := root.Lstat(sub)
		if errors.Is(err, fs.ErrNotExist) {
			if err := root.Mkdir(sub, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("create %s: %w", sub, err)
			}
			fi, err = root.Lstat(sub)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", sub, err)
		}
		if !fi.IsDir() {
			return fmt.Errorf("%s %w", filepath.Join(runDir, sub), ErrNotRealDir)
		}
	}
	sub := filepath.Join(elems...)
	tmp := filepath.Join(sub, "."+strings.TrimSuffix(name, filepath.Ext(name))+"."+rand.Text()+".tmp")
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|createFlags, 0o600)
	if err != nil {
		return fmt.Errorf("create a temporary file in %s: %w", sub, err)
	}
	defer root.Remove(tmp) // a no-op after the rename
	werr := f.Chmod(0o600) // whatever the umask
	if werr == nil {
		_, werr = f.Write(data)
	}
	if werr == nil && durable {
		werr = f.Sync()
	}
	if err := errors.Join(werr, f.Close()); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Join(sub, name), err)
	}
	if err := root.Rename(tmp, filepath.Join(sub, name)); err != nil {
		return fmt.Errorf("replace %s: %w", filepath.Join(sub, name), err)
	}
	if !durable {
		return nil
	}
	d, err := root.Open(sub)
	if err != nil {
		return fmt.Errorf("sync %s: %w", sub, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		return fmt.Errorf("sync %s: %w", sub, err)
	}
	return nil
}

// remove deletes runDir/dir/name; a missing file is no error.
func remove(runDir, dir, name string) error {
	root, err := os.OpenRoot(runDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("open the run directory: %w", err)
	}
	defer root.Close()
	if err := root.Remove(filepath.Join(filepath.FromSlash(dir), name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", filepath.Join(dir, name), err)
	}
	return nil
}
