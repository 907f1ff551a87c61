package repo

// Submodule dirtiness without git's recursion.
//
// To tell whether a submodule's work tree has changes, git runs `git
// status` inside it, and that process reads the submodule's own
// configuration: a filter or fsmonitor defined there would run. The runner
// therefore passes --ignore-submodules=dirty to every status and diff
// (internal/gitexec/harden.go), which keeps the "new commits" answer (the
// submodule's HEAD is read in-process) but drops "modified content" and
// "untracked content". This file recovers those with runs fluxgit starts
// itself: one hardened `git status` inside each submodule, which gets its
// own driver scan from the runner like any repository, and only for
// submodules the submodule scan would enter (work tree and git directories
// inside the repository and the allowed roots; see subScanner.inspect). A
// submodule that is not entered is never reported dirty.

import (
	"context"
	"encoding/base64"
	"errors"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/fluxgit/fluxgit/internal/gitexec"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// maxDirtyProbes bounds the submodules probed for one status; beyond it
// the rest are not reported dirty (the submodule tools still list them).
const maxDirtyProbes = 256

// errDirtyFound stops a probe's git status at its first entry.
var errDirtyFound = errors.New("submodule has changes")

// dirtySubmodules returns the raw paths, sorted by bytes like git's own
// status order, of r's top-level gitlinks whose submodule work tree has
// changes (untracked files count when untracked is set, as in git, whose
// `status -uno` ignores untracked content in submodules too). Only
// gitlinks at pathspec ("" or "." for all) or below it are probed.
func (p *Provider) dirtySubmodules(ctx context.Context, call *sdk.Call, r *Repo, untracked bool, pathspec string) ([]string, error) {
	links, err := p.gitlinksOf(ctx, r.dir, r.gitDir)
	if err != nil || len(links) == 0 {
		return nil, err
	}
	var paths []string
	for _, l := range links {
		path := string(l.path)
		if l.stage || !underPathspec(path, pathspec) {
			continue
		}
		paths = append(paths, path)
	}
	if len(paths) == 0 {
		return nil, nil
	}
	if len(paths) > maxDirtyProbes {
		paths = paths[:maxDirtyProbes]
	}
	s, err := p.newSubScanner(ctx, call, r)
	if err != nil {
		return nil, err
	}
	dirty := make([]bool, len(paths))
	err = forEach(len(paths), 4, func(i int) error {
		k, err := s.inspect(ctx, r.dir, paths[i])
		if err != nil || !k.ok || k.skip {
			return err
		}
		dirty[i], err = s.dirty(ctx, k, untracked, 1)
		return err
	})
	if err != nil {
		return nil, err
	}
	var out []string
	for i, d := range dirty {
		if d {
			out = append(out, paths[i])
		}
	}
	sort.Strings(out) // byte order, as git sorts status entries
	return out, nil
}

// dirty reports whether the entered submodule k has changes in its work
// tree or, recursively, in a submodule of its own (as git's own check
// does), with one hardened status per submodule.
func (s *subScanner) dirty(ctx context.Context, k subChild, untracked bool, depth int) (bool, error) {
	if depth > maxSubmoduleDepth {
		return false, nil
	}
	mode := "--untracked-files=no"
	if untracked {
		mode = "--untracked-files=normal"
	}
	w := &fieldWriter{sep: 0, fn: func(f []byte) error {
		if len(f) == 0 || f[0] == '#' || f[0] == '!' {
			return nil
		}
		return errDirtyFound
	}}
	_, err := s.p.runner.Stream(ctx, k.dir, w, "status", "--porcelain=v2", "-z", mode)
	switch {
	case errors.Is(err, errDirtyFound):
		return true, nil
	case err != nil:
		return false, err
	}
	links, err := s.p.gitlinksOf(ctx, k.dir, k.gitdir)
	if err != nil {
		return false, err
	}
	for _, l := range links {
		if l.stage {
			continue
		}
		kk, err := s.inspect(ctx, k.dir, string(l.path))
		if err != nil {
			return false, err
		}
		if !kk.ok || kk.skip {
			continue
		}
		if d, err := s.dirty(ctx, kk, untracked, depth+1); err != nil || d {
			return d, err
		}
	}
	return false, nil
}

// gitlinksOf lists the gitlinks of the index of the work tree dir whose
// git directory is gitDir: read from the index file when it parses
// unambiguously, else from `git ls-files --stage -z`.
func (p *Provider) gitlinksOf(ctx context.Context, dir, gitDir string) ([]gitlink, error) {
	if gitDir != "" {
		if links, ok := p.gitlinks.get(gitDir); ok {
			return links, nil
		}
		started := time.Now()
		if set, ok := readIndexGitlinks(gitDir); ok {
			p.gitlinks.put(gitDir, set.links, started)
			return set.links, nil
		}
	}
	var set gitlinkSet
	w := &fieldWriter{sep: 0, fn: set.add}
	if _, err := p.runner.Stream(ctx, dir, w, "ls-files", "--stage", "-z"); err != nil {
		return nil, err
	}
	if err := w.flush(); err != nil {
		return nil, err
	}
	return set.links, nil
}

// underPathspec reports whether the repository-relative path is at or
// below the literal pathspec ("" and "." mean everything).
func underPathspec(path, pathspec string) bool {
	pathspec = strings.Trim(pathspec, "/")
	if pathspec == "" || pathspec == "." {
		return true
	}
	return path == pathspec || strings.HasPrefix(path, pathspec+"/")
}

// dirtMerge folds dirty submodules into a porcelain v2 entry stream, the
// way git itself reports them: an unstaged modification ("Y" = 'M') of the
// gitlink. Git lists tracked changes sorted by path bytes, then untracked
// and ignored paths; a gitlink entry git already sent gets its Y set, and
// a dirty gitlink git did not list is inserted at its sorted position.
type dirtMerge struct {
	pending []string
	fn      func(statusEntry)
}

// emit passes e on after any dirty gitlink that sorts before it.
func (m *dirtMerge) emit(e statusEntry) {
	if len(m.pending) == 0 {
		m.fn(e)
		return
	}
	if e.Status == "??" || e.Status == "!!" {
		m.flush()
		m.fn(e)
		return
	}
	raw := rawPath(e)
	for len(m.pending) > 0 && m.pending[0] < raw {
		m.synth(m.pending[0])
		m.pending = m.pending[1:]
	}
	if len(m.pending) > 0 && m.pending[0] == raw {
		m.pending = m.pending[1:]
		if len(e.Status) == 2 && e.Status[1] == ' ' {
			e.Status = e.Status[:1] + "M"
		}
	}
	m.fn(e)
}

// flush emits every remaining dirty gitlink.
func (m *dirtMerge) flush() {
	for _, p := range m.pending {
		m.synth(p)
	}
	m.pending = nil
}

func (m *dirtMerge) synth(path string) {
	e := statusEntry{Status: " M"}
	e.Path, e.PathBase64 = pathText([]byte(path))
	m.fn(e)
}

// rawPath is the exact path bytes of e.
func rawPath(e statusEntry) string {
	if e.PathBase64 != "" {
		if b, err := base64.StdEncoding.DecodeString(e.PathBase64); err == nil {
			return string(b)
		}
	}
	return e.Path
}

// statusInto runs the status argv into ps (headers, entries up to ps.max,
// the count), the way streaming argv straight into ps.field would, with
// dirty submodules folded in (see dirtMerge).
func (p *Provider) statusInto(ctx context.Context, call *sdk.Call, r *Repo, ps *statusParser, argv ...string) error {
	h, err := p.scanStatusArgs(ctx, call, r, argv, gitexec.Tuning{}, false, "", func(e statusEntry) {
		ps.count++
		if len(ps.data.Entries) < ps.max {
			ps.data.Entries = append(ps.data.Entries, e)
		}
	})
	if err != nil {
		return err
	}
	ps.data.Branch, ps.data.Detached, ps.data.OID = h.Branch, h.Detached, h.OID
	ps.data.Upstream, ps.data.Ahead, ps.data.Behind = h.Upstream, h.Ahead, h.Behind
	return nil
}

// gitlinkCache keeps the gitlinks read from an index file while that file
// is unchanged. Status and the confinement check both need them on every
// call, and an index of a large repository is hundreds of kilobytes to
// parse for the handful of gitlinks in it. git replaces the index by
// renaming a new file over it, so a changed index has a new identity as
// well as new times.
type gitlinkCache struct {
	c stampedCache[[]gitlink]
}

func (c *gitlinkCache) get(gitDir string) ([]gitlink, bool) { return c.c.get(gitDir) }

func (c *gitlinkCache) put(gitDir string, links []gitlink, since time.Time) {
	c.c.put(gitDir, links, []string{filepath.Join(gitDir, "index")}, since, nil)
}
