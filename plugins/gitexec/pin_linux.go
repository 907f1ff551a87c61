//go:build linux

package gitexec

import (
	"os"
	"os/exec"
	"strconv"
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
