// Package logging turns the operator's logging settings (MCP_LOG_LEVEL,
// --log-level and LOGS_DIR) into an hclog logger that writes to stderr and,
// when asked, to a size-rotated file.
package logging

import (
	"fmt"
	"strings"

	"github.com/hashicorp/go-hclog"
)

// Environment variables the host reads, named as the README's configuration
// table names them.
const (
	EnvLevel    = "MCP_LOG_LEVEL"
	EnvDir      = "LOGS_DIR"
	EnvMaxBytes = "FLUXGIT_LOG_MAX_BYTES"
	EnvKeep     = "FLUXGIT_LOG_KEEP"
)

// Levels lists the accepted names in the order of RFC 5424 severity (most
// verbose first); the aliases follow. It is what an error message offers.
var Levels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// aliases are the names --log-level took before RFC 5424 names existed;
// they stay valid so existing host configurations keep working.
var aliases = []string{"trace", "warn"}

// ParseLevel maps an RFC 5424 severity name (or a legacy alias) to the
// nearest hclog level. hclog has no notice, critical, alert or emergency:
// notice logs as info and the three most severe as error, so a level never
// hides a message its RFC 5424 meaning would show.
func ParseLevel(name string) (hclog.Level, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "trace":
		return hclog.Trace, nil
	case "debug":
		return hclog.Debug, nil
	case "info", "notice":
		return hclog.Info, nil
	case "warning", "warn":
		return hclog.Warn, nil
	case "error", "critical", "alert", "emergency":
		return hclog.Error, nil
	}
	return hclog.NoLevel, fmt.Errorf("unknown log level %q: use one of %s (or the aliases %s)",
		name, strings.Join(Levels, ", "), strings.Join(aliases, ", "))
}

// ResolveLevel picks the level: an explicit flag wins over MCP_LOG_LEVEL,
// which wins over info. source names where a bad value came from, so the
// error says which setting to fix.
func ResolveLevel(flagValue string, flagSet bool, env string) (hclog.Level, error) {
	switch {
	case flagSet:
		l, err := ParseLevel(flagValue)
		if err != nil {
			return l, fmt.Errorf("--log-level: %w", err)
		}
		return l, nil
	case strings.TrimSpace(env) != "":
		l, err := ParseLevel(env)
		if err != nil {
			return l, fmt.Errorf("%s: %w", EnvLevel, err)
		}
		return l, nil
	}
	return hclog.Info, nil
}
