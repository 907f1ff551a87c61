//go:build !unix

package tests

import "os/exec"

// withoutTerminal leaves cmd as it is: the tests that need a process
// without a terminal skip on this system.
func withoutTerminal(*exec.Cmd) {}
