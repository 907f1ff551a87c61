package gitread

// Shared helpers of the fleet, conflict-prediction and FluxGit-local tools:
// the FluxGit run directory and its repository registry, reflog files read
// from the tail, a bounded worker pool, and merge-tree in a scratch
// repository.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/fluxgit/fluxgit/internal/credpaths"
	"github.com/fluxgit/fluxgit/internal/gitexec"
	"github.com/fluxgit/fluxgit/internal/rundir"
)

// Budgets of the fleet tools: they keep a fleet-wide answer bounded however many repositories the registry names.
const (
	fxReflogTailBytes = 1 << 20
	fxFleetWorkers    = 4
)

// fxRunDirFor returns the run directory: the runDir argument when given
// (it must be absolute), else rundir.Dir (FLUXGIT_RUN_DIR made absolute,
// else the per-OS default).
// A run directory inside a protected location (the gateway's own
// directory, the secret directory) is refused: the run-directory readers
// open only their own files, but the directory itself must not be one the
// person's credentials live in.
func fxRunDirFor(arg string) (string, error) {
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

// fxRegistryEntry is one <runDir>/repos/<id>.path file.
type fxRegistryEntry struct {
	id   string
	path string // canonical repository path
}

// fxReadRegistry lists the registry, canonicalizing each path. Entries that
// do not resolve are skipped; with allowed roots, entries outside them are
// skipped and counted in excluded.
func fxReadRegistry(runDir string, roots []string) (entries []fxRegistryEntry, excluded int) {
	all, err := rundir.ReadRegistry(runDir, fxRefuseProtected)
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
		entries = append(entries, fxRegistryEntry{id: e.ID, path: e.Path})
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].path < entries[j].path })
	return entries, excluded
}

// fxRegistryID finds the id whose registry entry names repoPath.
func fxRegistryID(runDir, repoPath string) string {
	entries, _ := fxReadRegistry(runDir, nil)
	for _, e := range entries {
		if e.path == repoPath {
			return e.id
		}
	}
	return ""
}

// fxReflogEntry is one parsed reflog line.
type fxReflogEntry struct {
	old, new string // "" for the all-zero id
	identity string
	unix     int64
	message  string
}

// fxReadReflogTail reads the last fxReflogTailBytes of a reflog file, whole
// lines only, and returns its entries oldest first. A symlink or a missing
// file yields no entries.
func fxReadReflogTail(path string) ([]fxReflogEntry, error) {
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
	off := max(fi.Size()-fxReflogTailBytes, 0)
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
	var out []fxReflogEntry
	sc := bufio.NewScanner(bytes.NewReader(buf))
	sc.Buffer(make([]byte, 64<<10), fxReflogTailBytes+1)
	for sc.Scan() {
		if e, ok := fxParseReflogLine(sc.Text()); ok {
			out = append(out, e)
		}
	}
	return out, sc.Err()
}

// fxParseReflogLine parses "<old> <new> <name> <<email>> <time> <tz>\t<msg>".
func fxParseReflogLine(line string) (fxReflogEntry, bool) {
	head, msg, _ := strings.Cut(line, "\t")
	old, rest, ok1 := strings.Cut(head, " ")
	nw, rest, ok2 := strings.Cut(rest, " ")
	if !ok1 || !ok2 || !isOID(old) || !isOID(nw) {
		return fxReflogEntry{}, false
	}
	// rest = identity SP time SP tz
	i := strings.LastIndexByte(rest, ' ')
	if i < 0 {
		return fxReflogEntry{}, false
	}
	j := strings.LastIndexByte(rest[:i], ' ')
	if j < 0 {
		return fxReflogEntry{}, false
	}
	ts, err := strconv.ParseInt(rest[j+1:i], 10, 64)
	if err != nil {
		return fxReflogEntry{}, false
	}
	e := fxReflogEntry{old: old, new: nw, identity: rest[:j], unix: ts, message: msg}
	if fxIsZeroOID(e.old) {
		e.old = ""
	}
	if fxIsZeroOID(e.new) {
		e.new = ""
	}
	return e, true
}

func fxIsZeroOID(s string) bool { return strings.Trim(s, "0") == "" }

// fxTruncRunes cuts s to at most n runes, marking a cut with "…".
func fxTruncRunes(s string, n int) string {
	s, _ = clip(strings.ToValidUTF8(s, "\uFFFD"), n)
	return s
}

// fxMergeResult is the outcome of a merge-tree --write-tree run.
type fxMergeResult struct {
	clean bool
	paths []string // conflicted paths, sorted and unique
}

// fxMergeTree performs a real three-way merge of two commits (renames
// included) without touching the repository: merge-tree --write-tree
// writes the merged blobs and trees as objects, so it runs in a throwaway
// bare repository that borrows the real object store through alternates
// and receives those writes instead. Only object ids reach its command
// line; the scratch repository has no configuration of its own, so no
// merge driver or attribute of the real repository can run either.
func (p *Provider) fxMergeTree(ctx context.Context, r *repo, ours, theirs string) (*fxMergeResult, error) {
	_, commonDir, err := p.gitDirs(ctx, r)
	if err != nil {
		return nil, err
	}
	return p.fxMergeTreeIn(ctx, r, commonDir, ours, theirs)
}

func (p *Provider) fxMergeTreeIn(ctx context.Context, r *repo, commonDir, ours, theirs string) (*fxMergeResult, error) {
	args := []string{"merge-tree", "--write-tree", "--name-only", "-z", "--no-messages", ours, theirs}
	cmd := gitexec.Command(r.dir, args...)
	if !isOID(ours) || !isOID(theirs) {
		return nil, &failure{cmd, "merge-tree needs full object ids"}
	}
	objects := filepath.Join(commonDir, "objects")
	if strings.ContainsAny(objects, "\n\r") || strings.HasPrefix(objects, "\"") {
		return nil, &failure{cmd, "object directory path cannot be used as an alternate"}
	}
	scratch, err := os.MkdirTemp("", "fluxgit-merge-")
	if err != nil {
		return nil, &failure{cmd, "cannot create scratch repository: " + err.Error()}
	}
	defer os.RemoveAll(scratch)
	config := "[core]\n\trepositoryformatversion = 0\n\tbare = true\n"
	if len(ours) == 64 {
		config = "[core]\n\trepositoryformatversion = 1\n\tbare = true\n[extensions]\n\tobjectformat = sha256\n"
	}
	for _, d := range []string{"objects/info", "refs/heads", "refs/tags"} {
		if err := os.MkdirAll(filepath.Join(scratch, d), 0o700); err != nil {
			return nil, &failure{cmd, "cannot create scratch repository: " + err.Error()}
		}
	}
	for name, content := range map[string]string{
		"HEAD":                    "ref: refs/heads/main\n",
		"config":                  config,
		"objects/info/alternates": objects + "\n",
	} {
		if err := os.WriteFile(filepath.Join(scratch, name), []byte(content), 0o600); err != nil {
			return nil, &failure{cmd, "cannot create scratch repository: " + err.Error()}
		}
	}
	var out bytes.Buffer
	_, err = p.runner.Stream(ctx, scratch, &fxLimitWriter{w: &out, n: 8 << 20}, args...)
	res := &fxMergeResult{clean: err == nil}
	if err != nil {
		var ge *gitexec.Error
		if !errors.As(err, &ge) || ge.ExitCode != 1 || !errors.Is(err, gitexec.ErrExit) {
			if errors.As(err, &ge) {
				return nil, &failure{cmd, ge.Details}
			}
			return nil, err
		}
	}
	// Output: <tree oid> NUL, then one NUL-terminated path per conflicted
	// stage entry (a path may repeat).
	fields := strings.Split(out.String(), "\x00")
	if len(fields) == 0 || !isOID(fields[0]) {
		return nil, &failure{cmd, "unexpected merge-tree output"}
	}
	seen := map[string]bool{}
	for _, f := range fields[1:] {
		if f != "" && !seen[f] {
			seen[f] = true
			res.paths = append(res.paths, f)
		}
	}
	sort.Strings(res.paths)
	if !res.clean && len(res.paths) == 0 {
		// Conflicts without a conflicted path (e.g. a rename/rename of the
		// same file to one name): report the merge as conflicting anyway.
		res.paths = []string{}
	}
	return res, nil
}

// fxLimitWriter keeps the first n bytes and fails beyond, stopping git.
type fxLimitWriter struct {
	w io.Writer
	n int
}

func (l *fxLimitWriter) Write(b []byte) (int, error) {
	if len(b) > l.n {
		return 0, errors.New("merge-tree output exceeds its budget")
	}
	l.n -= len(b)
	return l.w.Write(b)
}

// fxTextPath renders a git path for JSON (lossy when not UTF-8).
func fxTextPath(s string) string { t, _ := pathText([]byte(s)); return t }
