//go:build !unix

package wire

import "os"

// stopSignals: on Windows a console's Ctrl-C and Ctrl-Break reach every
// process attached to it. The close, logoff and shutdown events (Go's
// SIGTERM there) are left alone: Windows ends the process after them
// whatever it does.
var stopSignals = []os.Signal{os.Interrupt}
