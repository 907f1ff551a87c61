//go:build unix

package shiftroster

import "golang.org/x/sys/unix"

// writable reports whether this process may write path, judged by the
// kernel (mode bits, ACLs, read-only mounts) without opening it: closing
// a descriptor of a SQLite file would drop this process's locks on it.
func writable(path string) error {
	return unix.Access(path, unix.W_OK)
}
