package tests

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// obsEnv is baseEnv without any logging or tracing settings the test runner
// itself may carry, so each case states exactly what it configures.
func obsEnv(t *testing.T, extra ...string) []string {
	var env []string
	for _, kv := range baseEnv(t) {
		if strings.HasPrefix(kv, "MCP_LOG_LEVEL=") || strings.HasPrefix(kv, "LOGS_DIR=") || strings.HasPrefix(kv, "OTEL_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

// TestLogLevelAndLogsDir drives the real binary with one malformed frame on
// stdin: the stdio transport logs the rejected frame at debug, so whether it
// reaches stderr and LOGS_DIR shows which level the process resolved.
func TestLogLevelAndLogsDir(t *testing.T) {
	const debugLine = "rejected message"
	cases := []struct {
		name      string
		env       []string
		args      []string
		code      int
		wantDebug bool
		errHas    []string // substrings of the single stderr line on failure
	}{
		{name: "rfc debug", env: []string{"MCP_LOG_LEVEL=debug"}, wantDebug: true},
		{name: "rfc notice hides debug", env: []string{"MCP_LOG_LEVEL=notice"}},
		{name: "default info hides debug"},
		{name: "flag wins over env", env: []string{"MCP_LOG_LEVEL=emergency"}, args: []string{"--log-level", "debug"}, wantDebug: true},
		{name: "legacy alias trace", args: []string{"--log-level", "trace"}, wantDebug: true},
		{name: "flag critical", env: []string{"MCP_LOG_LEVEL=debug"}, args: []string{"--log-level", "critical"}},
		{name: "unknown env level", env: []string{"MCP_LOG_LEVEL=loud"}, code: 2, errHas: []string{"MCP_LOG_LEVEL", `"loud"`, "notice", "emergency"}},
		{name: "unknown flag level", args: []string{"--log-level", "verbose"}, code: 2, errHas: []string{"--log-level", `"verbose"`, "warning"}},
		{name: "relative LOGS_DIR", env: []string{"LOGS_DIR=logs"}, code: 1, errHas: []string{"LOGS_DIR", "absolute"}},
		{name: "bad rotation size", env: []string{"FLUXGIT_LOG_MAX_BYTES=10MB"}, code: 1, errHas: []string{"FLUXGIT_LOG_MAX_BYTES", "positive number of bytes"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			logs := filepath.Join(t.TempDir(), "logs")
			env := obsEnv(t, "LOGS_DIR="+logs)
			env = append(env, c.env...) // a case's LOGS_DIR, later, wins
			cmd := exec.Command(fluxgitBin, append([]string{"serve"}, c.args...)...)
			cmd.Env = env
			cmd.Dir = t.TempDir()
			cmd.Stdin = strings.NewReader("garbage{\n")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			err := cmd.Run()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != c.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, c.code, stderr.String())
			}
			if c.code != 0 {
				line := strings.TrimSpace(stderr.String())
				if strings.Contains(line, "\n") {
					t.Errorf("want one stderr line, got:\n%s", line)
				}
				for _, s := range c.errHas {
					if !strings.Contains(line, s) {
						t.Errorf("stderr %q lacks %q", line, s)
					}
				}
				// Refused before anything is written.
				if _, err := os.Stat(logs); !os.IsNotExist(err) {
					t.Errorf("LOGS_DIR was created on a refused start: %v", err)
				}
				if _, err := os.Stat(filepath.Join(cmd.Dir, "logs")); !os.IsNotExist(err) {
					t.Errorf("a relative LOGS_DIR was created: %v", err)
				}
				return
			}
			file, err := os.ReadFile(filepath.Join(logs, "fluxgit.log"))
			if err != nil {
				t.Fatalf("LOGS_DIR file: %v", err)
			}
			if got := strings.Contains(stderr.String(), debugLine); got != c.wantDebug {
				t.Errorf("debug line on stderr = %v, want %v:\n%s", got, c.wantDebug, stderr.String())
			}
			if got := strings.Contains(string(file), debugLine); got != c.wantDebug {
				t.Errorf("debug line in %s = %v, want %v:\n%s", logs, got, c.wantDebug, file)
			}
		})
	}
}
