package rundir

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Bounds of the registry read (F§6.18): a registry flooded with entries or
// holding huge files costs bounded work.
const (
	MaxRegistryEntries = 4096
	MaxRegistryFile    = 32 << 10
)

// Entry is one registry file <runDir>/repos/<ID>.path: the file holds the
// repository's absolute path (and a newline).
type Entry struct {
	ID string
	// Path is the repository path canonicalized (symbolic links resolved).
	Path string
}

// ReadRegistry lists the registry in file-name order. At most
// MaxRegistryEntries *.path files are looked at, each at most
// MaxRegistryFile bytes, read through no symbolic link (ReadFile; repos/
// itself must not be one). An entry is kept only when its id is ValidID
// and its content is an absolute path (no NUL or newline inside) that
// resolves; the others are skipped. Duplicates are kept (callers filter
// and deduplicate as their tool needs). A missing registry is empty.
func ReadRegistry(runDir string, check Check) ([]Entry, error) {
	if runDir == "" {
		return nil, nil
	}
	root, err := OpenRoot(runDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer root.Close()
	des, err := ReadDir(root, ReposDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Entry
	n := 0
	for _, de := range des {
		name := de.Name()
		if !strings.HasSuffix(name, ".path") || !de.Type().IsRegular() {
			continue
		}
		if n++; n > MaxRegistryEntries {
			break
		}
		id := strings.TrimSuffix(name, ".path")
		if !ValidID(id) {
			continue
		}
		b, _, err := ReadFile(root, ReposDir+"/"+name, MaxRegistryFile, check)
		if err != nil {
			continue
		}
		p, ok := ParseEntry(b)
		if !ok {
			continue
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			continue
		}
		out = append(out, Entry{ID: id, Path: real})
	}
	return out, nil
}

// ParseEntry returns the path a registry file holds: its content trimmed,
// which must be an absolute path without NUL or newline.
func ParseEntry(b []byte) (string, bool) {
	p := strings.TrimSpace(string(b))
	if p == "" || !filepath.IsAbs(p) || strings.ContainsAny(p, "\x00\n") {
		return "", false
	}
	return p, true
}

// LookupID returns the id of the first entry (in file-name order) whose
// canonical path is repoPath; "" when none.
func LookupID(runDir, repoPath string, check Check) (string, error) {
	entries, err := ReadRegistry(runDir, check)
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		if e.Path == repoPath {
			return e.ID, nil
		}
	}
	return "", nil
}

// NewID is the id the gateway registers the canonical repository path repo
// under: its base name kept to [A-Za-z0-9._-] (others become '-', leading
// and trailing dots dropped, "repo" when nothing is left), a '-', and the
// first 8 hex digits of the path's SHA-256.
func NewID(repo string) string {
	sum := sha256.Sum256([]byte(repo))
	return sanitize(filepath.Base(repo)) + "-" + hex.EncodeToString(sum[:])[:8]
}

func sanitize(s string) string {
	var b strings.Builder
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
			b.WriteRune(c)
		default:
			b.WriteByte('-')
		}
	}
	out := strings.Trim(b.String(), ".")
	if out == "" {
		return "repo"
	}
	return out
}

// Register returns the id of the canonical repository path repo, writing a
// registry entry (NewID, atomically and durably) when no entry names it.
func Register(runDir, repo string) (string, error) {
	if !filepath.IsAbs(repo) || strings.ContainsAny(repo, "\x00\n") {
		return "", fmt.Errorf("cannot register %q: not an absolute path", repo)
	}
	id, err := LookupID(runDir, repo, nil)
	if err != nil {
		return "", fmt.Errorf("read the repository registry: %w", err)
	}
	if id != "" {
		return id, nil
	}
	id = NewID(repo)
	if err := writeAtomic(runDir, ReposDir, id+".path", []byte(repo+"\n"), true); err != nil {
		return "", fmt.Errorf("register %s: %w", repo, err)
	}
	return id, nil
}
