package repo

// The run-directory reads git-read's families share: the FluxGit run
// directory (RunDirFor), its repository registry (ReadRegistry,
// RegistryID), reflog files read from the tail (ReadReflogTail), and the
// rundir.Check that refuses a protected file (RefuseProtected). The file
// formats themselves are internal/rundir's.

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/fluxgit/fluxgit/internal/credpaths"
	"github.com/fluxgit/fluxgit/internal/rundir"
)

// reflogTailBytes bounds how much of a reflog file ReadReflogTail reads, so
// a fleet-wide answer stays bounded however long the reflogs grow.
const reflogTailBytes = 1 << 20

// RunDirFor returns the run directory: the runDir argument when given
// (it must be absolute), else rundir.Dir (FLUXGIT_RUN_DIR made absolute,
// else the per-OS default).
// A run directory inside a protected location (the gateway's own
// directory, the secret directory) is refused: the run-directory readers
// open only their own files, but the directory itself must not be one the
// person's credentials live in.
func RunDirFor(arg string) (string, error) {
	field := "the FluxGit run directory"
	var dir string
	if arg != "" {
		if !filepath.IsAbs(arg) || strings.ContainsRune(arg, 0) {
			return "", invalid("arguments.runDir must be an absolute filesystem path")
		}
		dir, field = filepath.Clean(arg), "arguments.runDir"
	} else {
		// The one resolver the host and the gateway use too (read at call
		// time, so a change in the provider's environment applies to the
		// next call); an unknown default leaves no run directory.
		dir, _ = rundir.Dir()
	}
	if dir != "" {
		if e, ok := credpaths.Lookup(protectedList(), dir); ok {
			return "", refuseProtected(field, e)
		}
	}
	return dir, nil
}

// RegistryEntry is one <runDir>/repos/<id>.path file; the format is
// internal/rundir's, this package only filters the list.
type RegistryEntry = rundir.Entry

// ReadRegistry lists the registry, canonicalizing each path. Entries that
// do not resolve are skipped; with allowed roots, entries outside them are
// skipped and counted in excluded.
func ReadRegistry(runDir string, roots []string) (entries []RegistryEntry, excluded int) {
	all, err := rundir.ReadRegistry(runDir, RefuseProtected)
	if err != nil {
		return nil, 0
	}
	seen := map[string]bool{}
	protected := protectedList()
	for _, e := range all {
		if _, ok := credpaths.Lookup(protected, e.Path); ok {
			continue // never a repository any tool opens
		}
		if len(roots) > 0 && !insideAny(e.Path, roots) {
			excluded++
			continue
		}
		if seen[e.Path] {
			continue
		}
		seen[e.Path] = true
		entries = append(entries, e)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Path < entries[j].Path })
	return entries, excluded
}

// RegistryID finds the id whose registry entry names repoPath.
func RegistryID(runDir, repoPath string) string {
	entries, _ := ReadRegistry(runDir, nil)
	for _, e := range entries {
		if e.Path == repoPath {
			return e.ID
		}
	}
	return ""
}

// ReflogEntry is one parsed reflog line.
type ReflogEntry struct {
	Old, New string // "" for the all-zero id
	Identity string // "Name <email>"
	Unix     int64  // seconds since the epoch
	Message  string
}

// ReadReflogTail reads the last reflogTailBytes of a reflog file, whole
// lines only, and returns its entries oldest first. A symlink or a missing
// file yields no entries.
func ReadReflogTail(path string) ([]ReflogEntry, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	off := max(fi.Size()-reflogTailBytes, 0)
	buf := make([]byte, fi.Size()-off)
	n, err := f.ReadAt(buf, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	buf = buf[:n]
	if off > 0 { // the first line is probably cut: drop it
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			return nil, nil
		}
		buf = buf[i+1:]
	}
	var out []ReflogEntry
	sc := bufio.NewScanner(bytes.NewReader(buf))
	sc.Buffer(make([]byte, 64<<10), reflogTailBytes+1)
	for sc.Scan() {
		if e, ok := parseReflogLine(sc.Text()); ok {
			out = append(out, e)
		}
	}
	return out, sc.Err()
}

// parseReflogLine parses "<old> <new> <name> <<email>> <time> <tz>\t<msg>".
func parseReflogLine(line string) (ReflogEntry, bool) {
	head, msg, _ := strings.Cut(line, "\t")
	old, rest, ok1 := strings.Cut(head, " ")
	nw, rest, ok2 := strings.Cut(rest, " ")
	if !ok1 || !ok2 || !isOID(old) || !isOID(nw) {
		return ReflogEntry{}, false
	}
	// rest = identity SP time SP tz
	i := strings.LastIndexByte(rest, ' ')
	if i < 0 {
		return ReflogEntry{}, false
	}
	j := strings.LastIndexByte(rest[:i], ' ')
	if j < 0 {
		return ReflogEntry{}, false
	}
	ts, err := strconv.ParseInt(rest[j+1:i], 10, 64)
	if err != nil {
		return ReflogEntry{}, false
	}
	e := ReflogEntry{Old: old, New: nw, Identity: rest[:j], Unix: ts, Message: msg}
	if isZeroOID(e.Old) {
		e.Old = ""
	}
	if isZeroOID(e.New) {
		e.New = ""
	}
	return e, true
}

func isZeroOID(s string) bool { return strings.Trim(s, "0") == "" }

// errProtectedFile refuses a run-directory file that is a protected file of
// the person's by identity (a hard link to the session secret named like a
// record).
var errProtectedFile = errors.New("it is a protected file of the person's (a credential or the gateway's state), which fluxgit never reads")

// RefuseProtected is the rundir.Check of every run-directory read: it
// refuses a file that is a protected file of the person's.
func RefuseProtected(st fs.FileInfo) error {
	if _, ok := credpaths.Opened(protectedList(), st); ok {
		return errProtectedFile
	}
	return nil
}

// TruncRunes cuts s to at most n runes, marking a cut with "…".
func TruncRunes(s string, n int) string {
	s, _ = clip(strings.ToValidUTF8(s, "\uFFFD"), n)
	return s
}
