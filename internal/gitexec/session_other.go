//go:build !unix

package gitexec

import "os/exec"

// newSession falls back to setProcessGroup where sessions do not exist.
func newSession(cmd *exec.Cmd) { setProcessGroup(cmd) }
