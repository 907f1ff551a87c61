package wire

import (
	"os"
	"time"
)

// exitWithParent ends the provider when its host dies. go-plugin providers
// ignore SIGINT and never read stdin, so a SIGKILLed host would otherwise
// leave them running forever. The host also ties providers to itself where
// the OS allows (Pdeathsig on Linux, a kill-on-close job object on
// Windows); this watcher covers the rest (the forking thread exiting,
// macOS and the BSDs, providers started by someone else's host).
func exitWithParent() {
	waitParentGone(os.Getppid())
	os.Exit(0)
}

// parentGone polls getppid on every tick and returns once it no longer
// reports parent: on Unix an orphan is re-parented (to init, launchd or a
// subreaper), so a changed parent pid means the host has died.
func parentGone(parent int, getppid func() int, tick <-chan time.Time) {
	for range tick {
		if getppid() != parent {
			return
		}
	}
}

// parentPollInterval bounds how long a provider outlives its host where
// the watcher polls.
const parentPollInterval = 250 * time.Millisecond
