//go:build linux

package gitexec

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// runOnDir passes dir to git as an inherited descriptor and returns the
// -C argument naming it: /proc/self/fd/N in the child is the directory
// that was checked, whatever its path names now.
func runOnDir(cmd *exec.Cmd, dir *os.File) string {
	cmd.ExtraFiles = append(cmd.ExtraFiles, dir)
	return "/proc/self/fd/" + strconv.Itoa(2+len(cmd.ExtraFiles))
}

// PinsDirectory reports whether git runs on the pinned directory itself
// (rather than only being checked after the call).
const PinsDirectory = true

// dirPath names the open directory dir in this process: the descriptor's
// /proc entry resolves to it whatever happened to its path.
func dirPath(dir *os.File, _ string) string {
	return "/proc/self/fd/" + strconv.Itoa(int(dir.Fd()))
}

// ctimeOf is the inode change time, which no caller can set.
func ctimeOf(fi os.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ctim.Nano()
	}
	return 0
}
