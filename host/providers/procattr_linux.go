package providers

import (
	"os/exec"
	"syscall"
)

// tieToHost ends the provider when the host dies, even by SIGKILL; the
// SDK's parent watcher covers what Pdeathsig misses.
func tieToHost(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// afterStart has nothing to do where the death signal is set before start.
func afterStart(*exec.Cmd) error { return nil }
