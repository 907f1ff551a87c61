//go:build unix

package main

import (
	"fmt"
	"io"
	"os"
)

// openTTY opens the process's controlling terminal. Without one (a
// process started with setsid, under a service manager, or by an agent's
// tool runner with pipes for its streams) the open fails with ENXIO.
func openTTY() (io.ReadWriteCloser, error) {
	f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: open /dev/tty: %v", errNoTerminal, err)
	}
	return f, nil
}
