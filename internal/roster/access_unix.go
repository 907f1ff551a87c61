//go:build unix

package roster

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// writable reports whether this process may write path, judged by the
// kernel (mode bits, ACLs, read-only mounts) without opening it: closing
// a descriptor of a SQLite file would drop this process's locks on it.
func writable(path string) error {
	return unix.Access(path, unix.W_OK)
}

// ownedByMe refuses a database file that belongs to another user: whoever
// owns it can rewrite the roster this process trusts.
func ownedByMe(fi fs.FileInfo) error {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid != uint32(os.Geteuid()) {
		return fmt.Errorf("owned by uid %d, not by this user", st.Uid)
	}
	return nil
}
