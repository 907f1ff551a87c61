//go:build !linux

package providers

import "os/exec"

// tieToHost has no Pdeathsig outside Linux: the SDK's parent watcher ends
// a provider whose host died.
func tieToHost(*exec.Cmd) {}
