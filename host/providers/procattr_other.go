//go:build !linux && !windows

package providers

import "os/exec"

// tieToHost has no kernel support on macOS and the BSDs (no parent-death
// signal): the provider's own watcher (internal/wire, exitWithParent) ends
// it once it is re-parented, within its poll interval.
func tieToHost(*exec.Cmd) {}

// afterStart: see tieToHost.
func afterStart(*exec.Cmd) error { return nil }
