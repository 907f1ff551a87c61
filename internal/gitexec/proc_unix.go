//go:build unix

package gitexec

import (
	"os"
	"os/exec"
	"syscall"
)

// setProcessGroup puts git in a new process group so the whole tree it
// spawns (helpers, hooks that slipped through, remote helpers) can be killed
// with one signal.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup sends SIGKILL to the process group led by pid. ESRCH (group
// already gone) is the normal case after a clean exit and is ignored.
func killGroup(pid int) {
	if pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}

// killedBySignal reports whether git ended by a signal (our kill) rather
// than exiting on its own.
func killedBySignal(ps *os.ProcessState) bool {
	if ps == nil {
		return false
	}
	ws, ok := ps.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled()
}
