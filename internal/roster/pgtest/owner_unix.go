//go:build unix

package pgtest

import (
	"io/fs"
	"syscall"
)

// statOwner is the uid and gid of a file.
func statOwner(fi fs.FileInfo) ([2]int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return [2]int{}, false
	}
	return [2]int{int(st.Uid), int(st.Gid)}, true
}
