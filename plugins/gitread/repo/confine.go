package repo

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fluxgit/fluxgit/internal/pathwithin"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// maxConfineEntries bounds the walk of one repository's git directories.
// Far beyond any real repository's loose refs and objects; a tree larger
// than this cannot be verified in reasonable time and is refused.
const maxConfineEntries = 2_000_000

// maxAlternateDepth is how deep alternates of alternates are followed,
// the depth git itself stops at.
const maxAlternateDepth = 5

// confinement decides whether everything git may read for one repository
// lies inside the allowed roots. The work tree, the git directory and the
// common directory are only the start: inside them any entry can be a
// symlink (objects, refs, packed-refs, HEAD, index, logs, info, shallow,
// modules, a single loose object or pack), objects/info/alternates can
// name further object directories (relative entries relative to the
// objects directory, and alternates of alternates). git follows all of
// them, so all of them are checked: the git directories are walked
// without following links, and every link is resolved and must stay
// inside a root (a link to a directory inside the roots is walked too).
type confinement struct {
	roots                  []string
	top, gitDir, commonDir string
	visited                map[string]bool
	entries                int
	// bases name directories reached through links and alternates.
	bases []labelBase
	// What the walk's verdict was derived from, for walkCache: the
	// directories it listed, the files it read and every path it resolved.
	listed, read []string
	resolved     []resolution
}

// resolution is one filepath.EvalSymlinks the walk relied on.
type resolution struct {
	path, real string
	ok         bool
}

// resolve is filepath.EvalSymlinks, recorded.
func (c *confinement) resolve(p string) (string, error) {
	real, err := filepath.EvalSymlinks(p)
	c.resolved = append(c.resolved, resolution{p, real, err == nil})
	return real, err
}

// walkVerdict is a clean walk of a repository's git directories, kept in
// a walkCache: reused while every directory it listed lists the same
// entries (their times are stamped: adding, removing, renaming or
// replacing an entry changes them), every file it read is unchanged, and
// every path it resolved resolves the same way (a symlink elsewhere on the
// way to a target can change without touching anything listed).
type walkVerdict struct {
	resolved []resolution
	visited  []string
}

// walkCache keeps clean walks per (roots, git dir, common dir): the walk
// lists every directory of the git data, which for a store of loose
// objects is hundreds of directories on every call.
type walkCache = stampedCache[walkVerdict]

func (v walkVerdict) still() bool {
	for _, r := range v.resolved {
		real, err := filepath.EvalSymlinks(r.path)
		if (err == nil) != r.ok || real != r.real {
			return false
		}
	}
	return true
}

// walkGitDirs walks the common and git directories, or reuses a clean walk
// from cache (nil: always walk).
func (c *confinement) walkGitDirs(cache *walkCache) error {
	key := strings.Join(c.roots, "\x00") + "\x00" + c.gitDir + "\x00" + c.commonDir
	if cache != nil {
		if v, ok := cache.get(key); ok && v.still() {
			for _, d := range v.visited {
				c.visited[d] = true
			}
			return nil
		}
	}
	started := time.Now()
	if err := c.walk(c.commonDir, 0); err != nil {
		return err
	}
	if err := c.walk(c.gitDir, 0); err != nil { // a linked worktree's own directory; visited when inside commonDir
		return err
	}
	if cache != nil {
		visited := make([]string, 0, len(c.visited))
		for d := range c.visited {
			visited = append(visited, d)
		}
		paths := append(append([]string(nil), c.listed...), c.read...)
		cache.putListing(key, walkVerdict{resolved: c.resolved, visited: visited}, paths, started)
	}
	return nil
}

// confineRepo is the one place that decides whether a repository may be
// served under roots (gitlinks lists the index's gitlinks, see submodules;
// cache keeps clean walks, see walkVerdict); it returns nil when roots is
// empty (unconfined) or everything git may read stays inside them, else
// the -32011 refusal.
func confineRepo(roots []string, top, gitDir, commonDir string, gitlinks func() ([]gitlink, error), cache *walkCache) error {
	if len(roots) == 0 {
		return nil
	}
	c := &confinement{roots: roots, top: top, gitDir: gitDir, commonDir: commonDir, visited: map[string]bool{}}
	for _, d := range []struct{ what, path string }{
		{"the work tree", top}, {"the git directory", gitDir}, {"the git common directory", commonDir},
	} {
		real, err := filepath.EvalSymlinks(d.path)
		if err != nil {
			return c.refuse(d.what+" cannot be resolved", "check that the repository is intact", real)
		}
		if !insideAny(real, roots) {
			return c.refuse(d.what+" resolves outside the allowed roots (a .git file, core.worktree or commondir entry leads there)",
				"open the repository where its git data lives, or add that location to FLUXGIT_MCP_ALLOWED_ROOTS", real)
		}
	}
	if err := c.walkGitDirs(cache); err != nil {
		return err
	}
	if gitlinks == nil {
		return nil
	}
	// Only now, with the index known to be the repository's own, list it.
	links, err := gitlinks()
	if err != nil {
		return err
	}
	return c.submodules(links)
}

// submodules checks the checked-out submodules of the index's gitlinks.
// git never runs inside them (internal/gitexec/harden.go keeps it out),
// but status and diff still read each one's HEAD and refs in-process to
// tell whether it moved to another commit, through <path>/.git: a
// directory, a symlink, or a file whose "gitdir:" line may name any
// place. The submodule directory and that git directory must resolve
// inside the roots, and a git directory not already walked (the usual
// one lives in the common directory's modules/) is walked like the
// repository's own.
func (c *confinement) submodules(links []gitlink) error {
	for _, l := range links {
		rel := filepath.FromSlash(string(l.path))
		if !filepath.IsLocal(rel) {
			continue // git itself refuses such an index entry
		}
		sub := filepath.Join(c.top, rel)
		dotgit := filepath.Join(sub, ".git")
		fi, err := os.Lstat(dotgit)
		if err != nil {
			continue // not checked out: git reads nothing for it
		}
		what := "submodule " + string(l.path)
		if real, err := filepath.EvalSymlinks(sub); err != nil || real != sub {
			continue // git does not look through a symlink on the way to a gitlink
		}
		real := sub
		target := dotgit
		if fi.Mode().IsRegular() {
			lines, err := readLines(dotgit)
			if err != nil || len(lines) == 0 || !strings.HasPrefix(lines[0], "gitdir: ") {
				continue // git does not treat it as a repository either
			}
			target = strings.TrimPrefix(lines[0], "gitdir: ")
			if !filepath.IsAbs(target) {
				target = filepath.Join(real, target)
			}
		}
		gd, err := filepath.EvalSymlinks(target)
		if err != nil {
			continue
		}
		if !insideAny(gd, c.roots) {
			return c.refuse("the "+what+"'s .git leads to a git directory outside the allowed roots, so git would read another repository's commit through it",
				"run `git submodule absorbgitdirs` so its git data lives in the repository, or add that location to FLUXGIT_MCP_ALLOWED_ROOTS", gd)
		}
		c.bases = append(c.bases, labelBase{gd, "(the git directory of " + what + ")"})
		if err := c.walk(gd, 0); err != nil {
			return err
		}
	}
	return nil
}

// label names p for the model in repository terms: relative to the work
// tree, the git directories or a directory reached through an in-root
// link or alternate, never as the (possibly outside) path itself.
func (c *confinement) label(p string) string {
	bases := make([]labelBase, 0, len(c.bases)+3)
	for i := len(c.bases) - 1; i >= 0; i-- { // innermost link first
		bases = append(bases, c.bases[i])
	}
	bases = append(bases, labelBase{c.top, ""}, labelBase{c.gitDir, "$GIT_DIR"}, labelBase{c.commonDir, "$GIT_COMMON_DIR"})
	for _, b := range bases {
		if rel, ok := pathwithin.Rel(b.base, p); ok {
			switch {
			case b.name == "":
				return rel
			case rel == ".":
				return b.name
			}
			return b.name + "/" + rel
		}
	}
	return "a location reached through an in-root symlink or alternate"
}

// labelBase names a directory for label.
type labelBase struct{ base, name string }

// refuse builds the outside-roots refusal (the host answers it as
// -32011). real, the resolved location, is only fingerprinted, as the host
// does for a repoPath outside the roots.
func (c *confinement) refuse(what, fix, real string) error {
	data := map[string]any{
		"environmentVariable": "FLUXGIT_MCP_ALLOWED_ROOTS",
		"details":             what + "; fix: " + fix + ".",
	}
	if real != "" {
		sum := sha256.Sum256([]byte(real))
		data["repoPathFingerprint"] = "sha256:" + hex.EncodeToString(sum[:])
	}
	return sdk.OutsideRoots("Repository path is outside the MCP allowed roots", data)
}

func (c *confinement) outside(p, real string) error {
	return c.refuse("the repository's "+c.label(p)+" is a symlink that resolves outside the allowed roots, so git would read another repository's data through it",
		"replace the symlink with a copy of what it points to, or add its target to FLUXGIT_MCP_ALLOWED_ROOTS", real)
}

// skipped are entries of a git directory git never reads during the
// hardened reads: hooks are disabled by the runner, lfs belongs to git-lfs.
var skipped = map[string]bool{"hooks": true, "lfs": true}

// walk checks dir's tree. Entries are listed without following links, so
// only symlinks cost an extra resolution.
func (c *confinement) walk(dir string, altDepth int) error {
	real, err := c.resolve(dir)
	if err != nil {
		return nil // absent: git reads nothing there
	}
	return c.walkReal(dir, real, altDepth)
}

// walkReal is walk with dir's resolved path known: a plain subdirectory of
// a resolved directory resolves to real/name, so only the starting points
// and symlink targets pay for EvalSymlinks (a loose-object store has
// hundreds of subdirectories).
func (c *confinement) walkReal(dir, real string, altDepth int) error {
	if c.visited[real] {
		return nil
	}
	c.visited[real] = true
	c.listed = append(c.listed, dir)
	ents, err := os.ReadDir(dir)
	if err != nil {
		if unreadable(err) {
			return nil // git cannot read it either
		}
		return c.refuse("the repository's "+c.label(dir)+" cannot be listed to check it ("+err.Error()+")", "make it readable", "")
	}
	for _, e := range ents {
		if c.entries++; c.entries > maxConfineEntries {
			return c.refuse("the repository's git directories hold more than "+strconv.Itoa(maxConfineEntries)+" entries, too many to check",
				"run `git gc` to pack loose objects and refs", "")
		}
		p := filepath.Join(dir, e.Name())
		if skipped[e.Name()] && (dir == c.gitDir || dir == c.commonDir) {
			continue
		}
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			target, err := c.resolve(p)
			if err != nil {
				// Dangling now, but its target may appear: judge where it
				// points as written.
				lt, lerr := os.Readlink(p)
				if lerr != nil {
					continue
				}
				if !filepath.IsAbs(lt) {
					lt = filepath.Join(dir, lt)
				}
				if lt = filepath.Clean(lt); !insideAny(lt, c.roots) {
					return c.outside(p, lt)
				}
				continue
			}
			if !insideAny(target, c.roots) {
				return c.outside(p, target)
			}
			if fi, err := os.Stat(target); err == nil && fi.IsDir() {
				c.bases = append(c.bases, labelBase{target, "(the target of " + c.label(p) + ")"})
				if err := c.walk(target, altDepth); err != nil {
					return err
				}
			}
		case e.IsDir():
			if err := c.walkReal(p, filepath.Join(real, e.Name()), altDepth); err != nil {
				return err
			}
		}
		switch {
		case e.Name() == "alternates" && filepath.Base(dir) == "info":
			if err := c.alternates(p, filepath.Dir(dir), altDepth); err != nil {
				return err
			}
		}
	}
	return nil
}

// alternates checks each object directory an alternates file lists, as
// git reads it: one per line, blank lines and # comments ignored, a
// double-quoted line C-unquoted, a relative entry relative to objDir.
func (c *confinement) alternates(file, objDir string, depth int) error {
	c.read = append(c.read, file)
	lines, err := readLines(file)
	if err != nil {
		if unreadable(err) {
			return nil
		}
		return c.refuse("the repository's "+c.label(file)+" cannot be checked ("+err.Error()+")", "make it a regular file of at most 1 MiB", "")
	}
	for i, line := range lines {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		where := "entry " + strconv.Itoa(i+1) + " of the repository's " + c.label(file)
		if strings.HasPrefix(line, `"`) {
			u, err := strconv.Unquote(line)
			if err != nil {
				return c.refuse(where+" is quoted in a way fluxgit cannot check", "write the path unquoted", "")
			}
			line = u
		}
		if !filepath.IsAbs(line) {
			line = filepath.Join(objDir, line)
		}
		real, err := c.resolve(line)
		if err != nil {
			continue // missing: git skips it with a warning
		}
		if !insideAny(real, c.roots) {
			return c.refuse(where+" names an object directory outside the allowed roots, so git would read another repository's objects",
				"remove the entry after `git repack -a -d` copies the objects in, or add that object directory to FLUXGIT_MCP_ALLOWED_ROOTS", real)
		}
		if depth+1 > maxAlternateDepth {
			continue // git stops here too
		}
		c.bases = append(c.bases, labelBase{real, "(the object directory in " + where + ")"})
		if err := c.walk(real, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// readLines reads a small text file as lines without their line endings,
// without blocking on a FIFO.
func readLines(path string) ([]string, error) {
	b, err := readSmallFile(path, 1<<20)
	if err != nil {
		return nil, err
	}
	if len(b) > 1<<20 {
		return nil, errors.New("larger than 1 MiB")
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		out = append(out, strings.TrimRight(l, "\r"))
	}
	return out, nil
}

// unreadable reports whether err means git could not read the file either
// (so it cannot lead anywhere); other errors make the file uncheckable.
func unreadable(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission)
}

// insideAny reports whether the resolved path p is one of roots or below
// one of them.
func insideAny(p string, roots []string) bool {
	for _, r := range roots {
		if pathwithin.Within(r, p) {
			return true
		}
	}
	return false
}
