//go:build unix

package gitexec

import (
	"os/exec"
	"syscall"
)

// newSession starts git in a new session: a new process group (killed as
// one, like setProcessGroup) with no controlling terminal, so neither git
// nor ssh, a credential helper or gpg it starts can open /dev/tty and wait
// for a password nobody will type.
func newSession(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}
