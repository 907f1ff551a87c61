package audit

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fluxgit/fluxgit/internal/rundir"
)

// Environment variables (README.md, "Audit ledger", describes each).
const (
	EnvLog      = "FLUXGIT_MCP_AUDIT_LOG"
	EnvDisabled = "FLUXGIT_MCP_AUDIT_DISABLED"
	EnvSignKey  = "FLUXGIT_MCP_AUDIT_SIGN_KEY"
	EnvRunDir   = "FLUXGIT_RUN_DIR"
	// EnvMinAge overrides the retention floor (DefaultMinAge): a Go
	// duration ("720h") or a whole number of days ("30d"); "0" prunes by
	// segment count alone.
	EnvMinAge = "FLUXGIT_MCP_AUDIT_MIN_AGE"
	// EnvMaxBytes overrides the size ceiling (DefaultMaxBytes) in bytes;
	// "0" removes it.
	EnvMaxBytes = "FLUXGIT_MCP_AUDIT_MAX_BYTES"
)

// ConfigError is an audit misconfiguration that must stop start-up.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string {
	return "audit ledger misconfigured (failing closed): " + e.Err.Error()
}
func (e *ConfigError) Unwrap() error { return e.Err }

// FromEnv builds the ledger the environment asks for:
//
//   - FLUXGIT_MCP_AUDIT_SIGN_KEY, when set, must name a usable PEM PKCS#8
//     Ed25519 private key — checked even when auditing is disabled; an
//     empty, missing, unreadable, group/world-accessible, oversized or
//     invalid key is a *ConfigError, never a silent unsigned fallback;
//   - FLUXGIT_MCP_AUDIT_DISABLED (any value, even empty) disables the
//     ledger: FromEnv returns nil, nil;
//   - FLUXGIT_MCP_AUDIT_LOG overrides the path (set but empty is a
//     *ConfigError); otherwise <run dir>/audit/mcp.jsonl (see RunDir);
//   - FLUXGIT_MCP_AUDIT_MIN_AGE and FLUXGIT_MCP_AUDIT_MAX_BYTES override
//     the retention floor and the size ceiling; a value that does not
//     parse is a *ConfigError, even when auditing is disabled;
//   - an existing ledger directory or file that appends would refuse
//     (Ledger.Check) is a *ConfigError too.
func FromEnv(log hclog.Logger) (*Ledger, error) {
	var signer *Signer
	if p, ok := os.LookupEnv(EnvSignKey); ok {
		if strings.TrimSpace(p) == "" {
			return nil, &ConfigError{fmt.Errorf("%s is set but empty; unset it to write unsigned entries", EnvSignKey)}
		}
		s, err := LoadSigner(p)
		if err != nil {
			return nil, &ConfigError{fmt.Errorf("%s: %w", EnvSignKey, err)}
		}
		signer = s
	}
	ret, err := retentionFromEnv() // checked even when disabled, like the key
	if err != nil {
		return nil, &ConfigError{err}
	}
	if _, off := os.LookupEnv(EnvDisabled); off {
		return nil, nil
	}
	path, ok := os.LookupEnv(EnvLog)
	if ok {
		if strings.TrimSpace(path) == "" {
			return nil, &ConfigError{fmt.Errorf("%s is set but empty; unset it for the default path or set %s to turn auditing off", EnvLog, EnvDisabled)}
		}
	} else {
		run, err := RunDir()
		if err != nil {
			return nil, &ConfigError{fmt.Errorf("no ledger path: %v; set %s, %s or %s", err, EnvRunDir, EnvLog, EnvDisabled)}
		}
		path = filepath.Join(run, "audit", "mcp.jsonl")
	}
	l, err := Open(Options{Path: path, Signer: signer, Log: log, Retention: ret})
	if err != nil {
		return nil, &ConfigError{err}
	}
	if err := l.Check(); err != nil {
		return nil, &ConfigError{err}
	}
	return l, nil
}

// RunDir is the FluxGit run directory: $FLUXGIT_RUN_DIR, else the platform
// default — %LOCALAPPDATA%\FluxGit\run on Windows, ~/Library/Application
// Support/FluxGit/run on macOS, $XDG_DATA_HOME/FluxGit/run (default
// ~/.local/share/FluxGit/run) elsewhere.
func RunDir() (string, error) { return rundir.Dir() }

// retentionFromEnv reads EnvMinAge and EnvMaxBytes over the defaults.
func retentionFromEnv() (*Retention, error) {
	r := &Retention{MinAge: DefaultMinAge, MaxBytes: DefaultMaxBytes}
	if v, ok := os.LookupEnv(EnvMinAge); ok {
		d, err := ParseAge(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", EnvMinAge, err)
		}
		r.MinAge = d
	}
	if v, ok := os.LookupEnv(EnvMaxBytes); ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%s: %q is not a whole number of bytes (0 removes the ceiling)", EnvMaxBytes, v)
		}
		r.MaxBytes = n
	}
	return r, nil
}

// ParseAge parses a retention age: a Go duration ("720h", "90m", "0") or a
// whole number of days ("30d"). Negative ages are refused.
func ParseAge(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if days, ok := strings.CutSuffix(v, "d"); ok {
		n, err := strconv.ParseInt(days, 10, 64)
		if err != nil || n < 0 || n > 100*365 {
			return 0, fmt.Errorf("%q is not a whole number of days between 0 and 36500", v)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is neither a non-negative Go duration (720h) nor a number of days (30d)", v)
	}
	return d, nil
}
