package roster

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fluxgit/fluxgit/internal/gitexec"
)

// Environment variables read at provider start.
const (
	// EnvWorkspace names the default workspace verbatim (an opaque name).
	EnvWorkspace = "SHIFT_WORKSPACE"
	// EnvStateDir is the directory holding roster.sqlite.
	EnvStateDir = "SHIFT_STATE_DIR"
)

// DatabaseName is the roster file inside the state directory.
const DatabaseName = "roster.sqlite"

// MaxWorkspaceLen bounds a workspace name in characters (the inputSchema's
// maxLength).
const MaxWorkspaceLen = 4096

// DefaultStateDir is ~/.local/state/shift-mcp-server, the directory every
// process of the same OS user shares when SHIFT_STATE_DIR is unset.
func DefaultStateDir() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return "", errors.New("cannot determine the home directory; set " + EnvStateDir)
	}
	return filepath.Join(home, ".local", "state", "shift-mcp-server"), nil
}

// StateDirFromEnv resolves SHIFT_STATE_DIR (made absolute against the start
// directory) or the default.
func StateDirFromEnv(getenv func(string) string) (string, error) {
	if d := getenv(EnvStateDir); d != "" {
		abs, err := filepath.Abs(d)
		if err != nil {
			return "", err
		}
		return abs, nil
	}
	return DefaultStateDir()
}

// GitTopLevel returns the work-tree root enclosing dir, or "" when dir is
// not inside a work tree (or git is unusable). It goes through gitexec, so
// the start directory's repository config cannot run anything.
type GitTopLevel func(ctx context.Context, dir string) string

// GitexecTopLevel is the GitTopLevel of production: git rev-parse through
// internal/gitexec, bounded to 10 s.
func GitexecTopLevel(ctx context.Context, dir string) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := gitexec.Run(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return ""
	}
	top := strings.TrimRight(string(out), "\r\n")
	if top == "" || strings.ContainsRune(top, '\n') || !filepath.IsAbs(top) {
		return ""
	}
	return top
}

// ResolveDefaultWorkspace applies the default-workspace rule: SHIFT_WORKSPACE
// verbatim when set and non-empty; otherwise the real path (symlinks
// resolved) of the git work-tree root enclosing start; otherwise the real
// path of start itself. Subdirectories of one work tree and symlinks to it
// therefore collapse to the same workspace.
func ResolveDefaultWorkspace(ctx context.Context, env string, start string, top GitTopLevel) string {
	if env != "" {
		return env
	}
	real := start
	if r, err := filepath.EvalSymlinks(start); err == nil {
		real = r
	}
	if top != nil {
		if t := top(ctx, real); t != "" {
			if r, err := filepath.EvalSymlinks(t); err == nil {
				return r
			}
			return filepath.Clean(t)
		}
	}
	return real
}
