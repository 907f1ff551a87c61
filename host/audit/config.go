package audit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/hashicorp/go-hclog"
)

// Environment variables (F§9).
const (
	EnvLog      = "FLUXGIT_MCP_AUDIT_LOG"
	EnvDisabled = "FLUXGIT_MCP_AUDIT_DISABLED"
	EnvSignKey  = "FLUXGIT_MCP_AUDIT_SIGN_KEY"
	EnvRunDir   = "FLUXGIT_RUN_DIR"
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
	l, err := Open(Options{Path: path, Signer: signer, Log: log})
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
func RunDir() (string, error) {
	if d := strings.TrimSpace(os.Getenv(EnvRunDir)); d != "" {
		return filepath.Abs(d)
	}
	switch runtime.GOOS {
	case "windows":
		if d := os.Getenv("LOCALAPPDATA"); filepath.IsAbs(d) {
			return filepath.Join(d, "FluxGit", "run"), nil
		}
		return "", errors.New("LOCALAPPDATA is not set")
	case "darwin", "ios":
		home, err := home()
		if err != nil {
			return "", err
		}
		return filepath.Join(home, "Library", "Application Support", "FluxGit", "run"), nil
	default:
		if d := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(d) {
			return filepath.Join(d, "FluxGit", "run"), nil
		}
		home, err := home()
		if err != nil {
			return "", err
		}
		return filepath.Join(home, ".local", "share", "FluxGit", "run"), nil
	}
}

func home() (string, error) {
	h, err := os.UserHomeDir()
	if err != nil || !filepath.IsAbs(h) {
		return "", errors.New("the home directory is unknown")
	}
	return h, nil
}
