package proposals

import (
	"strings"

	"github.com/google/uuid"
)

// DefaultAgentID is the agentId sent when the client named itself with
// nothing usable.
const DefaultAgentID = "external-mcp-sidecar"

// maxAgentIDBytes caps a sanitised agent id.
const maxAgentIDBytes = 128

// SanitizeAgentID turns a client's self-declared name into the agentId
// the gateway sees: trimmed, every character outside [A-Za-z0-9._:-]
// replaced by '-', runs of '-' collapsed, cut at 128 bytes and trimmed of
// '-' at both ends; DefaultAgentID when nothing remains. The id is for
// attribution and the gateway's agent policy only, never authentication,
// so a name that sanitises to someone else's id gains nothing.
func SanitizeAgentID(name string) string {
	var b strings.Builder
	for _, r := range strings.TrimSpace(name) {
		if !agentIDChar(r) {
			r = '-'
		}
		if r == '-' && strings.HasSuffix(b.String(), "-") {
			continue
		}
		b.WriteRune(r)
	}
	s := b.String()
	if len(s) > maxAgentIDBytes {
		s = s[:maxAgentIDBytes] // ASCII only by now, so bytes are characters
	}
	s = strings.Trim(s, "-")
	if s == "" {
		return DefaultAgentID
	}
	return s
}

func agentIDChar(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == ':' || r == '-'
}

// maxPreviewIDLen bounds a previewId (and a client idempotency key).
const maxPreviewIDLen = 128

// ValidPreviewID reports whether id may name a proposal: 1–128 ASCII
// letters, digits, '-' or '_'. Only such an id is ever put into a URL
// path, so a gateway cannot steer a later request elsewhere.
func ValidPreviewID(id string) bool {
	if id == "" || len(id) > maxPreviewIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// newUUID returns a random (version 4) UUID in its canonical lowercase
// form, which is also a valid previewId.
func newUUID() string { return uuid.NewString() }

// idempotencyKey scopes a key to its operation type, so one client key can
// never alias proposals of two different operations, and makes every
// unkeyed call a new intent.
func idempotencyKey(op string, clientKey *string, fresh func() string) string {
	if clientKey != nil {
		return op + ":client:" + *clientKey
	}
	return op + ":call:" + fresh()
}
