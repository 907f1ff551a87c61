// Command fluxgit is an MCP server for Git. With no arguments it serves MCP
// on stdin/stdout; see `fluxgit --help` for the other commands.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/hashicorp/go-plugin"
)

// Exit codes shared by every command.
const (
	exitOK       = 0
	exitFindings = 1
	exitUsage    = 2
)

// exitError carries a command's exit code through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func main() {
	defer plugin.CleanupClients()
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	root := newRootCmd()
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintln(os.Stderr, "fluxgit:", ee.err)
		}
		return ee.code
	}
	// Cobra's own failures are flag and argument errors.
	fmt.Fprintln(os.Stderr, "fluxgit:", err)
	return exitUsage
}
