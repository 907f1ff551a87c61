// Package envflag reads the environment the way every fluxgit package
// agrees on: the on/off switches (FLUXGIT_READ_ONLY,
// FLUXGIT_MCP_PRESENCE_DISABLED, …) with one set of boolean spellings, and
// the list of variables fluxgit knows, so that a misspelt one is reported
// instead of silently ignored (Known, Unknown).
package envflag

import (
	"fmt"
	"os"
	"strings"
)

// Spellings is how the accepted boolean values are described in messages
// and in README.md.
const Spellings = "1/0, true/false, yes/no or on/off"

// ParseBool reads a boolean variable's value: 1, true, yes, on and 0,
// false, no, off, in any case, surrounding blanks ignored. Anything else
// is an error naming the accepted spellings.
func ParseBool(v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true, nil
	case "0", "false", "no", "off":
		return false, nil
	}
	return false, fmt.Errorf("%q is not a boolean: use true or false (%s)", v, Spellings)
}

// Truthy reports whether v switches a flag on: any value except blank,
// "0", "false", "no" and "off" (case-insensitive). A user who writes
// VAR=0 or VAR=false in a host configuration means "not disabled"; an
// unexpected value of a *_DISABLED switch still disables, the safe side.
func Truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "0", "false", "no", "off":
		return false
	}
	return true
}

// Set reports whether the environment variable name is set to a truthy
// value (see Truthy).
func Set(name string) bool {
	v, ok := os.LookupEnv(name)
	return ok && Truthy(v)
}
