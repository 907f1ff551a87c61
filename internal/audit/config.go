package audit

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fluxgit/fluxgit/internal/rundir"
)

// Environment variables (docs/audit.md describes each).
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
	// EnvRetainBytes overrides the retention size (DefaultRetainBytes) in
	// bytes; "0" turns the size rule off.
	EnvRetainBytes = "FLUXGIT_MCP_AUDIT_RETAIN_BYTES"
	// EnvRetainAge sets the retention age, parsed like EnvMinAge; unset
	// or "0" turns the age rule off.
	EnvRetainAge = "FLUXGIT_MCP_AUDIT_RETAIN_AGE"
	// EnvSegmentBytes overrides the rotation size (DefaultSegmentBytes),
	// MinSegmentBytes..MaxSegmentBytes.
	EnvSegmentBytes = "FLUXGIT_MCP_AUDIT_SEGMENT_BYTES"
)

// RetentionVariables are the variables of the retention policy, in the
// order docs/audit.md lists them.
var RetentionVariables = []string{EnvRetainBytes, EnvRetainAge, EnvSegmentBytes, EnvMinAge, EnvMaxBytes}

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
//   - FLUXGIT_MCP_AUDIT_RETAIN_BYTES, _RETAIN_AGE, _SEGMENT_BYTES,
//     _MIN_AGE and _MAX_BYTES set the retention policy (RetentionFromEnv);
//     a value that does not parse, or a retention age below the age
//     floor, is a *ConfigError, even when auditing is disabled;
//   - an existing ledger directory or file that appends would refuse
//     (Ledger.Check) is a *ConfigError too.
func FromEnv(log hclog.Logger) (*Ledger, error) {
	signer, err := SignerFromEnv()
	if err != nil {
		return nil, err
	}
	ret, err := RetentionFromEnv() // checked even when disabled, like the key
	if err != nil {
		return nil, err
	}
	if _, off := os.LookupEnv(EnvDisabled); off {
		return nil, nil
	}
	path, err := PathFromEnv()
	if err != nil {
		return nil, err
	}
	l, err := Open(Options{Path: path, Signer: signer, Log: log, Retention: &ret})
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

// SignerFromEnv loads the key FLUXGIT_MCP_AUDIT_SIGN_KEY names (nil when
// it is unset); set but empty or unusable is a *ConfigError.
func SignerFromEnv() (*Signer, error) {
	p, ok := os.LookupEnv(EnvSignKey)
	if !ok {
		return nil, nil
	}
	if strings.TrimSpace(p) == "" {
		return nil, &ConfigError{fmt.Errorf("%s is set but empty; unset it to write unsigned entries", EnvSignKey)}
	}
	s, err := LoadSigner(p)
	if err != nil {
		return nil, &ConfigError{fmt.Errorf("%s: %w", EnvSignKey, err)}
	}
	return s, nil
}

// PathFromEnv is the configured ledger path: FLUXGIT_MCP_AUDIT_LOG, else
// <run dir>/audit/mcp.jsonl. FLUXGIT_MCP_AUDIT_LOG set but empty, or no
// run directory, is a *ConfigError.
func PathFromEnv() (string, error) {
	path, ok := os.LookupEnv(EnvLog)
	if ok {
		if strings.TrimSpace(path) == "" {
			return "", &ConfigError{fmt.Errorf("%s is set but empty; unset it for the default path or set %s to turn auditing off", EnvLog, EnvDisabled)}
		}
		return path, nil
	}
	run, err := RunDir()
	if err != nil {
		return "", &ConfigError{fmt.Errorf("no ledger path: %v; set %s, %s or %s", err, EnvRunDir, EnvLog, EnvDisabled)}
	}
	return rundir.AuditLog(run), nil
}

// RetentionFromEnv reads the retention policy over DefaultRetention. A
// value that does not parse, a segment size out of range, or a retention
// age below the age floor (both non-zero: segments that old would be both
// due and protected) is a *ConfigError naming the variable to change.
func RetentionFromEnv() (Retention, error) {
	r := DefaultRetention()
	bytesVar := func(name, zero string, dst *int64) error {
		v, ok := os.LookupEnv(name)
		if !ok {
			return nil
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n < 0 {
			return &ConfigError{fmt.Errorf("%s: %q is not a whole number of bytes, such as 20971520 for 20 MiB (%s)", name, v, zero)}
		}
		*dst = n
		return nil
	}
	ageVar := func(name string, dst *time.Duration) error {
		v, ok := os.LookupEnv(name)
		if !ok {
			return nil
		}
		d, err := ParseAge(v)
		if err != nil {
			return &ConfigError{fmt.Errorf("%s: %w", name, err)}
		}
		*dst = d
		return nil
	}
	for _, err := range []error{
		ageVar(EnvMinAge, &r.MinAge),
		bytesVar(EnvMaxBytes, "0 removes the ceiling", &r.MaxBytes),
		bytesVar(EnvRetainBytes, "0 turns the size rule off", &r.RetainBytes),
		ageVar(EnvRetainAge, &r.RetainAge),
	} {
		if err != nil {
			return r, err
		}
	}
	if v, ok := os.LookupEnv(EnvSegmentBytes); ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n < MinSegmentBytes || n > MaxSegmentBytes {
			return r, &ConfigError{fmt.Errorf("%s: %q is not a whole number of bytes between %d (4 KiB) and %d (1 GiB); the default is %d (4 MiB)",
				EnvSegmentBytes, v, MinSegmentBytes, MaxSegmentBytes, DefaultSegmentBytes)}
		}
		r.SegmentBytes = n
	}
	if r.RetainAge > 0 && r.MinAge > 0 && r.RetainAge < r.MinAge {
		return r, &ConfigError{fmt.Errorf("%s (%s) is below %s (%s), the age under which no segment is pruned; raise %s to at least %s, or lower %s (0 turns the floor off)",
			EnvRetainAge, FormatAge(r.RetainAge), EnvMinAge, FormatAge(r.MinAge), EnvRetainAge, FormatAge(r.MinAge), EnvMinAge)}
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
