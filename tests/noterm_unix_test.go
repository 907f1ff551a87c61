//go:build unix

package tests

import (
	"os/exec"
	"syscall"
)

// withoutTerminal starts cmd in a new session, which has no controlling
// terminal: what an agent's tool runner gives the commands it runs.
func withoutTerminal(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }
