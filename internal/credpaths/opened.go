package credpaths

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/fluxgit/fluxgit/internal/pathwithin"
)

// Lookup reports the protected location p leads to, by its name as given
// (made absolute and clean) or by where it resolves (symlinks followed, as
// far as it exists). Checking both matters: a file committed at a path
// that is protected on disk is refused even when the disk copy is gone,
// and a symlink in a work tree that points into a protected directory is
// refused by its target.
//
// Names are compared case-insensitively too: the file systems of macOS and
// Windows usually are, so ".FLUXGIT-RUN/gateway/session.json" is the
// secret there; on Linux this refuses a few more names than it must.
func Lookup(list []Path, p string) (Path, bool) {
	if len(list) == 0 || p == "" {
		return Path{}, false
	}
	var cands []string
	if a, err := filepath.Abs(p); err == nil {
		cands = append(cands, filepath.Clean(a))
	}
	cands = append(cands, Canonical(p))
	for _, c := range cands {
		if e, ok := Contains(list, c); ok {
			return e, true
		}
	}
	for _, c := range cands {
		for _, e := range list {
			if strings.EqualFold(c, e.Path) || e.Dir && pathwithin.WithinAnyCase(e.Path, c) {
				return e, true
			}
		}
	}
	return Path{}, false
}

// maxDirScan bounds how many entries of one protected directory Opened
// compares; fluxgit's own protected directories hold a handful of files.
const maxDirScan = 256

// Opened reports whether the file fi describes (an opened file's Stat) is
// one of the protected files, or a file directly inside a protected
// directory, by identity rather than by name. It is the check after the
// open: it catches a hard link to a protected file, and a rename or link
// swapped in between a path check and the open. Protected files that do
// not exist are skipped.
func Opened(list []Path, fi os.FileInfo) (Path, bool) {
	if fi == nil {
		return Path{}, false
	}
	for _, e := range list {
		st, err := os.Stat(e.Path)
		if err != nil {
			continue
		}
		if os.SameFile(st, fi) {
			return e, true
		}
		if !e.Dir || !st.IsDir() || fi.IsDir() {
			continue
		}
		d, err := os.Open(e.Path)
		if err != nil {
			continue
		}
		names, _ := d.Readdirnames(maxDirScan)
		d.Close()
		for _, n := range names {
			if c, err := os.Stat(filepath.Join(e.Path, n)); err == nil && os.SameFile(c, fi) {
				return e, true
			}
		}
	}
	return Path{}, false
}

// Refusal is the text a read tool returns when field leads to e: it names
// what the file holds, never where it is, and tells the model what to do
// instead. Every read tool and the host use it, so the model sees one
// message whichever layer refused.
func Refusal(field string, e Path) string {
	return field + " leads to a protected file of the person's (" + e.Label + "): fluxgit never reads it, " +
		"whatever path, link, revision or run directory leads there. It holds a credential, a policy or the " +
		"gateway's state, which no tool an agent calls may see; read a different file, and ask the person " +
		"if you need to know something about their fluxgit setup."
}
