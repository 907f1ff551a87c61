//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package audit

import (
	"errors"
	"io/fs"
	"os"
	"time"
)

// The append protocol needs flock, O_NOFOLLOW and inode identities; on
// other systems the ledger reports every append as failed (degraded), and
// the verifier still works.

var errUnsupported = errors.New("the audit ledger append protocol is not supported on this system")

type fileID struct{ dev, ino uint64 }

type fileInfo struct {
	id    fileID
	nlink uint64
	uid   uint32
	mode  fs.FileMode
	size  int64
	mtime int64
}

func statInfo(fi os.FileInfo) (fileInfo, bool) {
	return fileInfo{mode: fi.Mode(), size: fi.Size(), mtime: fi.ModTime().UnixNano(), nlink: 1}, true
}

func openNoFollow(path string, flag int, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(path, flag, perm)
}

func checkOpened(*os.File, string) (fileInfo, error) { return fileInfo{}, errUnsupported }

func ensureDir(string) error { return errUnsupported }

func checkDir(string, bool) error { return nil }

func checkExistingFile(string) error { return nil }

func syncDir(string) error { return nil }

type fileLock struct{}

func acquireLock(string, time.Duration) (*fileLock, error) { return nil, errUnsupported }

func (*fileLock) release() {}
