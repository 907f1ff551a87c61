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
