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

// dirPath names the pinned directory by its path: there is no portable
// way to name an open directory.
func dirPath(_ *os.File, path string) string { return path }

// ctimeOf is not used here: the modification time alone is compared.
func ctimeOf(os.FileInfo) int64 { return 0 }
