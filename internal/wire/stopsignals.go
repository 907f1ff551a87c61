package wire

import (
	"os"
	"os/signal"
)

// ignoreStopSignals keeps the provider alive through the stop signals a
// supervisor sends the whole process group (systemd's default
// KillMode=control-group, `kill -TERM -PGID`, Ctrl-C in a terminal): the
// host receives them too and stops its providers itself, after the calls
// in flight have finished (issue 22, finding 6). Dying first would fail
// those calls with -32603. The provider still ends when the host closes
// the plugin connection or kills it (go-plugin), when the host dies
// (exitWithParent, Pdeathsig), and on SIGKILL.
//
// The signals are caught and dropped rather than set to SIG_IGN: an
// ignored disposition would be inherited by the git processes a provider
// starts, and those must stay stoppable.
func ignoreStopSignals() {
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, stopSignals...)
	go func() {
		for range ch {
		}
	}()
}
