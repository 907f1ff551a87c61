package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"

	"github.com/fluxgit/fluxgit/internal/logging"
	"github.com/fluxgit/fluxgit/internal/telemetry"
)

// obsOptions hold the resolved logging settings every command shares.
type obsOptions struct {
	level  hclog.Level
	logDir string
	// file is the LOGS_DIR writer, opened on the first logger() call so
	// that commands which never log (version, spec) create no directory.
	file *logging.RotatingFile
	log  hclog.Logger
}

// logLevelUsage is the --log-level help text; it names the RFC 5424 levels
// MCP_LOG_LEVEL takes, so both settings read the same.
var logLevelUsage = "log level (RFC 5424): " + strings.Join(logging.Levels, ", ") +
	"; trace and warn are accepted too (default $" + logging.EnvLevel + ", else info)"

// resolveObs validates --log-level, MCP_LOG_LEVEL and the LOGS_DIR rotation
// settings before any command runs, so a typo stops the process with one
// line naming the setting instead of silently logging at another level.
func (g *globalOptions) resolveObs(cmd *cobra.Command) error {
	set := false
	if f := cmd.Flags().Lookup("log-level"); f != nil {
		set = f.Changed
	}
	level, err := logging.ResolveLevel(g.logLevel, set, os.Getenv(logging.EnvLevel))
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	g.obs.level = level
	g.obs.logDir = strings.TrimSpace(os.Getenv(logging.EnvDir))
	return nil
}

// levelName is the hclog name of the resolved level, for code (the gateway's
// slog handler) that maps names itself.
func (g *globalOptions) levelName() string {
	if g.obs.level == hclog.NoLevel {
		return "info"
	}
	return g.obs.level.String()
}

// buildLogger makes the process logger once: stderr always, plus the rotated
// file in LOGS_DIR when it is set. A LOGS_DIR that cannot be used is an
// error, not a silent fallback, so an operator relying on the file notices.
func (g *globalOptions) buildLogger() (hclog.Logger, error) {
	if g.obs.log != nil {
		return g.obs.log, nil
	}
	level := g.obs.level
	if level == hclog.NoLevel {
		level = hclog.Info
	}
	var out io.Writer = os.Stderr
	if g.obs.logDir != "" {
		maxBytes, keep, err := logging.RotationFromEnv(os.Getenv)
		if err != nil {
			return nil, err
		}
		f, err := logging.OpenRotating(g.obs.logDir, maxBytes, keep)
		if err != nil {
			return nil, fmt.Errorf("file logging: %w", err)
		}
		g.obs.file = f
		out = io.MultiWriter(os.Stderr, f)
	}
	g.obs.log = hclog.New(&hclog.LoggerOptions{Name: "fluxgit", Output: out, Level: level})
	return g.obs.log, nil
}

// tracingFlushTimeout bounds the wait for the last spans at exit, so an
// unreachable collector cannot hold up a shutdown.
const tracingFlushTimeout = 5 * time.Second

// startTracing installs the OTLP exporter when OTEL_ENABLED asks for it and
// returns what flushes it at exit; off, both are no-ops.
func startTracing(log hclog.Logger) (func(), error) {
	shutdown, err := telemetry.Setup(context.Background(), "fluxgit", false)
	if err != nil {
		return nil, err
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), tracingFlushTimeout)
		defer cancel()
		if err := shutdown(ctx); err != nil {
			log.Warn("traces not exported", "err", err)
		}
	}, nil
}
