//go:build !windows

package wire

import (
	"os"
	"time"
)

// waitParentGone returns when the process that started this one has died.
func waitParentGone(parent int) {
	t := time.NewTicker(parentPollInterval)
	defer t.Stop()
	parentGone(parent, os.Getppid, t.C)
}
