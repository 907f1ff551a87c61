package shiftroster

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

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

// stateDirFromEnv resolves SHIFT_STATE_DIR (made absolute against the start
// directory) or the default.
func stateDirFromEnv(getenv func(string) string) (string, error) {
	if d := getenv(EnvStateDir); d != "" {
		abs, err := filepath.Abs(d)
		if err != nil {
			return "", err
		}
		return abs, nil
	}
	return DefaultStateDir()
}

// gitTopLevel returns the work-tree root enclosing dir, or "" when dir is
// not inside a work tree (or git is unusable). It goes through gitexec, so
// the start directory's repository config cannot run anything.
type gitTopLevel func(ctx context.Context, dir string) string

func gitexecTopLevel(ctx context.Context, dir string) string {
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
func ResolveDefaultWorkspace(ctx context.Context, env string, start string, top gitTopLevel) string {
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

// Status resource URIs.
const (
	// StatusURI is the bare resource: the process's default workspace.
	StatusURI = "shift://status"
	// StatusTemplate is the RFC 6570 template of the per-workspace roster.
	StatusTemplate = "shift://status{?workspace}"
	statusQuery    = "?workspace="
)

// QualifiedStatusURI expands StatusTemplate for workspace with RFC 6570
// form-style query expansion: every byte of the UTF-8 name outside the
// unreserved set (ALPHA / DIGIT / "-" / "." / "_" / "~") becomes %XX with
// upper-case hex, so "/home/me/src" gives
// "shift://status?workspace=%2Fhome%2Fme%2Fsrc" and "a b" gives
// "shift://status?workspace=a%20b".
func QualifiedStatusURI(workspace string) string {
	return StatusURI + statusQuery + pctEncode(workspace)
}

func pctEncode(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if unreserved(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&0xF])
	}
	return b.String()
}

func unreserved(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

// ParseStatusURI returns the workspace a status URI names. The bare URI and
// an empty workspace value mean the default workspace (isDefault true). A
// qualified URI names exactly the workspace it encodes: percent escapes are
// decoded (either hex case), and a literal '+' means a space, the same
// form decoding the host applies when it matches subscriptions (RFC 6570
// expansion never emits a literal '+': a plus is %2B). Anything else - a
// second parameter, a fragment, a bad escape, a raw space or non-ASCII byte,
// a name that is not UTF-8 or is longer than MaxWorkspaceLen characters -
// is not a status URI.
func ParseStatusURI(uri string) (workspace string, isDefault bool, ok bool) {
	if uri == StatusURI {
		return "", true, true
	}
	raw, found := strings.CutPrefix(uri, StatusURI+statusQuery)
	if !found || strings.ContainsAny(raw, "&#") {
		return "", false, false
	}
	ws, ok := pctDecode(raw)
	if !ok || !utf8.ValidString(ws) || utf8.RuneCountInString(ws) > MaxWorkspaceLen {
		return "", false, false
	}
	if ws == "" {
		return "", true, true
	}
	return ws, false, true
}

func pctDecode(s string) (string, bool) {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '%':
			if i+2 >= len(s) {
				return "", false
			}
			hi, ok1 := unhex(s[i+1])
			lo, ok2 := unhex(s[i+2])
			if !ok1 || !ok2 {
				return "", false
			}
			b.WriteByte(hi<<4 | lo)
			i += 2
		case '+':
			b.WriteByte(' ')
		default:
			if c < 0x21 || c > 0x7E {
				return "", false // raw spaces, controls and non-ASCII are not URI characters
			}
			b.WriteByte(c)
		}
	}
	return b.String(), true
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
