//go:build !linux && !freebsd

package gitexec

import "os/exec"

// tieToParent has no kernel support to use here (macOS and Windows have
// no parent-death signal): git is still killed with its process group on
// timeout, cancellation and after every call, but not when fluxgit itself
// is killed.
func tieToParent(*exec.Cmd) (release func()) { return func() {} }
