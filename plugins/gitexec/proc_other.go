//go:build !unix

package gitexec

import (
	"os"
	"os/exec"
)

// setProcessGroup is a no-op where process groups do not exist; the
// contract's Windows job-object variant is not implemented yet.
func setProcessGroup(*exec.Cmd) {}

// killGroup kills git itself, the best available without process groups.
func killGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}
