// Package envflag reads the on/off switches fluxgit takes from the
// environment (FLUXGIT_MCP_PRESENCE_DISABLED,
// FLUXGIT_MCP_AGENT_DETECTION_DISABLED), so every package that honours one
// agrees on what "set" means.
package envflag

import (
	"os"
	"strings"
)

// Truthy reports whether v switches a flag on: any value except blank,
// "0", "false", "no" and "off" (case-insensitive). A user who writes
// VAR=0 or VAR=false in a host configuration means "not disabled".
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
