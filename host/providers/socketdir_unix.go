//go:build unix

package providers

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// SocketDir is the private per-user directory provider sockets are created
// in: <temp dir>/fluxgit-<uid>. go-plugin's plugin side creates its unix
// socket in the directory named by PLUGIN_UNIX_SOCKET_DIR (otherwise in the
// temp directory itself) and removes it only on a clean exit, so every
// SIGKILLed provider or host would leave one behind; keeping them in one
// private directory lets each host start remove the stale ones.
func SocketDir() string {
	return filepath.Join(os.TempDir(), "fluxgit-"+strconv.Itoa(os.Getuid()))
}

// prepareSocketDir creates SocketDir (0700) or checks the existing one, and
// removes the sockets in it that were left by providers now gone. It refuses
// a directory that is a symlink, is not owned by this user, or that group or
// others may write to: then a provider's socket could be replaced.
func prepareSocketDir(start time.Time) (string, error) {
	dir := SocketDir()
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("create socket directory %s: %w", dir, err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return "", fmt.Errorf("socket directory %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("socket directory %s is not a directory (%s)", dir, fi.Mode().Type())
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) != os.Getuid() {
		return "", fmt.Errorf("socket directory %s is not owned by this user", dir)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return "", fmt.Errorf("socket directory %s is writable by group or others (mode %s)", dir, fi.Mode().Perm())
	}
	removeStaleSockets(dir, start)
	return dir, nil
}

// removeStaleSockets removes the sockets in dir that existed before start
// and that nothing listens on any more (a connection is refused). Entries
// are never followed: symlinks, regular files and directories are left
// alone, as are sockets of other users and sockets a live provider serves.
func removeStaleSockets(dir string, start time.Time) int {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	removed := 0
	for _, e := range entries {
		if e.Type()&fs.ModeSocket == 0 {
			continue
		}
		path := filepath.Join(dir, e.Name())
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode()&fs.ModeSocket == 0 || !fi.ModTime().Before(start) {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Getuid() {
			continue
		}
		conn, err := net.DialTimeout("unix", path, time.Second)
		if err == nil {
			conn.Close() // a live provider's socket
			continue
		}
		if errors.Is(err, syscall.ECONNREFUSED) && os.Remove(path) == nil {
			removed++
		}
	}
	return removed
}
