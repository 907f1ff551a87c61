package repo

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fluxgit/fluxgit/internal/gitexec"
)

// discovered is what one rev-parse tells open() about a repository path.
type discovered struct {
	// top, gitDir and commonDir are absolute; git reports them resolved,
	// as seen from the directory it ran in.
	top, gitDir, commonDir string
	// prefix is repoPath relative to top ("" when repoPath is the top).
	prefix string
}

// discoveryArgs asks for every location at once, in absolute form.
var discoveryArgs = []string{"rev-parse", "--path-format=absolute", "--show-toplevel", "--git-dir", "--git-common-dir", "--show-prefix"}

// discover runs the rev-parse (under pin when there is one) and, when the
// answer may be reused, caches it.
func (p *Provider) discover(ctx context.Context, repoPath string, pin *gitexec.Pin) (discovered, error) {
	started := time.Now()
	out, err := p.runner.Run(ctx, repoPath, discoveryArgs...)
	if err != nil {
		return discovered{}, err
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) == 3 {
		lines = append(lines, "") // an empty prefix may print no line
	}
	if len(lines) != 4 || !filepath.IsAbs(lines[0]) || !filepath.IsAbs(lines[1]) || !filepath.IsAbs(lines[2]) {
		return discovered{}, &failure{gitexec.Command(repoPath, discoveryArgs...), "unexpected rev-parse output; is this a work tree?"}
	}
	d := discovered{
		top: filepath.Clean(lines[0]), gitDir: filepath.Clean(lines[1]), commonDir: filepath.Clean(lines[2]),
		prefix: strings.TrimSuffix(lines[3], "/"),
	}
	if pin != nil && d.prefix == "" && d.top == repoPath {
		p.discovery.put(repoPath, pin, d, started)
	}
	return d, nil
}

// discoveryCache keeps rev-parse answers per repository path. An answer
// is reused only when the path still names the directory it was computed
// in (the pin's identity) and none of the files it was derived from
// changed: the .git entry (a gitdir file can be rewritten), the commondir
// file, the configuration files (core.worktree moves the work tree) and
// the git directories themselves. Only paths that are their own work
// tree's top are cached, so no nearer .git can appear between them.
type discoveryCache struct {
	c stampedCache[discoveryEntry]
}

type discoveryEntry struct {
	d   discovered
	dir os.FileInfo
}

func discoveryPaths(top string, d discovered) []string {
	return []string{
		top,
		filepath.Join(top, ".git"),
		d.gitDir,
		filepath.Join(d.gitDir, "commondir"),
		filepath.Join(d.gitDir, "config"),
		filepath.Join(d.gitDir, "config.worktree"),
		d.commonDir,
		filepath.Join(d.commonDir, "config"),
	}
}

func (c *discoveryCache) put(repoPath string, pin *gitexec.Pin, d discovered, since time.Time) {
	// The stamped directory must be the one git ran in; the stamps are
	// taken first, so a swap after this check shows as changed stamps.
	c.c.put(repoPath, discoveryEntry{d: d, dir: pin.Info()}, discoveryPaths(repoPath, d), since, func() bool {
		fi, err := os.Stat(repoPath)
		return err == nil && os.SameFile(fi, pin.Info())
	})
}

func (c *discoveryCache) get(repoPath string, pin *gitexec.Pin) (discovered, bool) {
	if pin == nil {
		return discovered{}, false
	}
	e, ok := c.c.get(repoPath)
	if !ok || !os.SameFile(e.dir, pin.Info()) {
		return discovered{}, false
	}
	return e.d, true
}

// stampedCacheSize bounds a stampedCache; past it the cache starts over.
const stampedCacheSize = 512

// stampedCache keeps values derived from files, each reused only while
// none of its files changed (gitexec.Stamps). A value read while a file
// was changing is not kept.
type stampedCache[V any] struct {
	mu      sync.Mutex
	entries map[string]*stampedEntry[V]
}

type stampedEntry[V any] struct {
	v      V // shared, never modified
	paths  []string
	stamps gitexec.Stamps
}

// get returns the value kept for key while its files are unchanged.
func (c *stampedCache[V]) get(key string) (V, bool) {
	c.mu.Lock()
	e := c.entries[key]
	c.mu.Unlock()
	if e == nil || !e.stamps.Still(e.paths) {
		var zero V
		return zero, false
	}
	return e.v, true
}

// put keeps v for key, derived from paths by reads that began at since,
// when the stamps are reliable and valid (if given) still holds once they
// are taken.
func (c *stampedCache[V]) put(key string, v V, paths []string, since time.Time, valid func() bool) {
	stamps, ok := gitexec.TakeStamps(paths, since)
	if !ok || valid != nil && !valid() {
		return
	}
	c.keep(key, v, paths, stamps)
}

// putListing is put for a value derived from what the directories among
// paths list (gitexec.TakeListingStamps).
func (c *stampedCache[V]) putListing(key string, v V, paths []string, since time.Time) {
	if stamps, ok := gitexec.TakeListingStamps(paths, since); ok {
		c.keep(key, v, paths, stamps)
	}
}

func (c *stampedCache[V]) keep(key string, v V, paths []string, stamps gitexec.Stamps) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= stampedCacheSize {
		c.entries = map[string]*stampedEntry[V]{}
	}
	c.entries[key] = &stampedEntry[V]{v: v, paths: paths, stamps: stamps}
}
