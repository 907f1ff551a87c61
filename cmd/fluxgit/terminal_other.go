//go:build !unix && !windows

package main

import (
	"fmt"
	"io"
	"runtime"
)

// openTTY has no terminal to open on this system: decisions go through
// the approval page.
func openTTY() (io.ReadWriteCloser, error) {
	return nil, fmt.Errorf("%w on %s", errNoTerminal, runtime.GOOS)
}
