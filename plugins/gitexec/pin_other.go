//go:build !linux

package gitexec

import (
	"os"
	"os/exec"
)

// runOnDir cannot hand git a directory descriptor portably here: git runs
// on the path, and Pin.Verify after the call catches a swap.
func runOnDir(*exec.Cmd, *os.File) string { return "" }

// PinsDirectory reports whether git runs on the pinned directory itself
// (rather than only being checked after the call).
const PinsDirectory = false
