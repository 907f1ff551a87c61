//go:build unix

package wire

import (
	"os"
	"syscall"
)

// stopSignals are what a supervisor or a terminal sends a whole process
// group to stop it.
var stopSignals = []os.Signal{syscall.SIGTERM, os.Interrupt}
