//go:build !linux && !freebsd && !windows

package gitexec

import "os/exec"

// tieToParent has no kernel support to use here (macOS and the other BSDs
// have no parent-death signal): git is still killed with its process group
// on timeout, cancellation and after every call, but not when fluxgit
// itself is killed.
func tieToParent(*exec.Cmd) (release func()) { return func() {} }

// afterStart: see tieToParent.
func afterStart(*exec.Cmd) {}
