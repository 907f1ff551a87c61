package shiftroster

import (
	"strings"
	"unicode/utf8"

	"github.com/fluxgit/fluxgit/internal/roster"
)

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
	if !ok || !utf8.ValidString(ws) || utf8.RuneCountInString(ws) > roster.MaxWorkspaceLen {
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
