package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// errNoTerminal is what openTerminal returns when this process has no
// interactive terminal: the non-interactive shell an agent runs commands
// in, a pipe, a service.
var errNoTerminal = errors.New("no interactive terminal")

// openTerminal opens the terminal the person sits at — /dev/tty on Unix,
// CONIN$/CONOUT$ on Windows — never stdin or stdout, which an agent that
// runs the command controls. It is a variable only so that this package's
// own tests can hand in a scripted terminal; nothing outside the compiled
// binary can change it (no flag, no environment variable).
var openTerminal = openTTY

// needTerminalMsg says why a decision was refused without a terminal and
// what a person does instead.
func needTerminalMsg(verb string) string {
	return fmt.Sprintf("fluxgit gateway %s needs a person at an interactive terminal: it asks for a confirmation typed there, "+
		"and this process has no terminal (an agent's non-interactive shell has none). "+
		"Run the command yourself in a terminal, or decide on the approval page `fluxgit gateway` printed at start", verb)
}

// confirmOnTerminal shows what is about to happen on the person's
// terminal and reads one line typed there; only "yes" goes ahead. Every
// other answer, an interrupted read or no terminal at all, refuses.
func confirmOnTerminal(verb, summary string) error {
	t, err := openTerminal()
	if err != nil {
		return &exitError{code: 1, err: fmt.Errorf("%s (%v)", needTerminalMsg(verb), err)}
	}
	defer t.Close()
	if _, err := fmt.Fprintf(t, "%s\nType yes to %s, anything else cancels: ", summary, verb); err != nil {
		return &exitError{code: 1, err: fmt.Errorf("%s (write to the terminal: %v)", needTerminalMsg(verb), err)}
	}
	line, err := bufio.NewReader(t).ReadString('\n')
	if err != nil && !(errors.Is(err, io.EOF) && line != "") {
		return &exitError{code: 1, err: fmt.Errorf("nothing was confirmed on the terminal (%v); nothing changed", err)}
	}
	if strings.ToLower(strings.TrimSpace(line)) != "yes" {
		return &exitError{code: 1, err: fmt.Errorf("not confirmed (the terminal answer was not yes); nothing changed")}
	}
	return nil
}
