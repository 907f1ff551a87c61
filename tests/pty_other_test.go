//go:build !linux

package tests

import "testing"

// havePTY says whether runOnTerminal works here: the pseudo-terminal
// helper is Linux's (/dev/ptmx); elsewhere the tests decide on the
// approval page instead.
const havePTY = false

func runOnTerminal(t testing.TB, env []string, typed string, args ...string) (screen, out string, err error) {
	t.Skip("no pseudo-terminal helper on this system")
	return "", "", nil
}
