//go:build !unix

package gitexec

import (
	"os"
	"os/exec"
)

// setProcessGroup is a no-op where process groups do not exist. On
// Windows git joins a job that ends with fluxgit (pdeath_windows.go), but
// a per-call kill of git's own descendants is not implemented.
func setProcessGroup(*exec.Cmd) {}

// killGroup kills git itself, the best available without process groups.
func killGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

// killedBySignal cannot tell our kill from an exit here (a killed process
// simply exits with status 1), so an intentional stop is trusted.
func killedBySignal(ps *os.ProcessState) bool { return ps != nil }
