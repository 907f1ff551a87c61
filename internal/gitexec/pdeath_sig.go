//go:build linux || freebsd

package gitexec

import (
	"os/exec"
	"runtime"
	"syscall"
)

// tieToParent makes the kernel SIGKILL git when fluxgit dies, so a killed
// provider or host leaves no git running for the rest of its timeout.
//
// The death signal is delivered when the thread that forked the child
// exits, not the process (prctl(2) PR_SET_PDEATHSIG). The Go runtime only
// ends a thread when a goroutine exits while locked to it, so the calling
// goroutine is locked to its thread from before Start until after Wait:
// no other goroutine can run on that thread (and exit locked) while git
// lives, and the thread ends only with the process. The returned function
// unlocks it; call it after Wait.
func tieToParent(cmd *exec.Cmd) (release func()) {
	if untiedForTest {
		return func() {}
	}
	runtime.LockOSThread()
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	return runtime.UnlockOSThread
}

// untiedForTest turns tieToParent off, only for the control experiment of
// the test that proves git dies with its parent.
var untiedForTest bool

// afterStart has nothing to do where the death signal is set before Start.
func afterStart(*exec.Cmd) {}
