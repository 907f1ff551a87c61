package rundir

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits of the presence document (F§11).
const (
	// PresenceSchemaVersion is the document's schemaVersion; readers skip
	// others.
	PresenceSchemaVersion = 1
	// MaxPresenceRepos bounds the repositories listed, newest first.
	MaxPresenceRepos = 16
	// MaxClientChars bounds the client's name and version (characters).
	MaxClientChars = 128
	// MaxPresenceBytes bounds one document read.
	MaxPresenceBytes = 64 << 10
)

// Presence is one MCP server process's presence document,
// <runDir>/presence/mcp/<pid>.json (F§11; CONTRACT §7):
// the client it serves and, per repository, the last call.
type Presence struct {
	SchemaVersion int            `json:"schemaVersion"`
	PID           int            `json:"pid"`
	Client        PresenceClient `json:"client"`
	Repos         []PresenceRepo `json:"repos"`
}

// PresenceClient names the MCP client; nil is JSON null (unknown).
type PresenceClient struct {
	Name    *string `json:"name"`
	Version *string `json:"version"`
}

// PresenceRepo is one repository the client called a tool on.
type PresenceRepo struct {
	RepoPath   string `json:"repoPath"`
	LastCallMs int64  `json:"lastCallMs"`
	LastTool   string `json:"lastTool"`
}

// PresenceName is the file name of process pid's document.
func PresenceName(pid int) string { return strconv.Itoa(pid) + ".json" }

// ParsePresence decodes a presence document; one whose schemaVersion is not
// PresenceSchemaVersion or whose pid is not positive is an error.
func ParsePresence(b []byte) (Presence, error) {
	var p Presence
	if err := json.Unmarshal(b, &p); err != nil {
		return Presence{}, fmt.Errorf("presence document: %w", err)
	}
	if p.SchemaVersion != PresenceSchemaVersion {
		return Presence{}, fmt.Errorf("presence document: schemaVersion %d, want %d", p.SchemaVersion, PresenceSchemaVersion)
	}
	if p.PID <= 0 {
		return Presence{}, errors.New("presence document: pid is not positive")
	}
	return p, nil
}

// WritePresence replaces the document of p.PID below runDir atomically
// (".<pid>.<random>.tmp" renamed over "<pid>.json", F§11). The caller
// creates the directory with its permission policy first (host/presence
// uses internal/privdir); a directory on the way that is a symbolic link
// is refused. Not synced: the document is rewritten on every call.
func WritePresence(runDir string, p Presence) error {
	b, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("encode presence document: %w", err)
	}
	return writeAtomic(runDir, PresenceSubdir, PresenceName(p.PID), b, false)
}

// RemovePresence deletes process pid's document (a clean exit).
func RemovePresence(runDir string, pid int) error {
	return remove(runDir, PresenceSubdir, PresenceName(pid))
}

// CleanClientField prepares a client-supplied string for a presence
// document, on writing and again on reading (a hand-made document must not
// smuggle more into a report): invalid UTF-8 replaced, control characters
// removed, white space trimmed, at most MaxClientChars characters.
func CleanClientField(s string) string {
	s = strings.ToValidUTF8(s, string(utf8.RuneError))
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) > MaxClientChars {
		s = string([]rune(s)[:MaxClientChars])
		s = strings.TrimSpace(s)
	}
	return s
}
