package gitexec

import (
	"bufio"
	"container/list"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// The driver scan (see driverOverrides) costs one git process before every
// content command. Its answer depends only on the repository's own config
// files, because system and global config are switched off by fixedEnv, so
// it is cached per repository and revalidated before every use with a few
// stat() calls on exactly the files git would read:
//
//   - <repo>/.git: the entry that makes `git -C repo` find the git
//     directory. Its identity (device, inode) must not change; a gitfile
//     ("gitdir: ...") must not change at all.
//   - <gitdir>/commondir: where a linked worktree's common directory is
//     named; presence and content.
//   - <commondir>/config: the repository config.
//   - <gitdir>/config.worktree: per-worktree config; presence and content.
//
// A regular file matches only when existence, device, inode, mode, size,
// mtime and ctime (nanoseconds) are all unchanged. ctime cannot be set by
// user space, so even an in-place rewrite that keeps size and restores
// mtime is noticed. Files changed within racyWindow of the scan are not
// cached at all (file timestamps advance in kernel ticks, so a second
// write in the same tick could otherwise look unchanged).
//
// A repository whose config has include.* or includeIf.* keys is never
// cached: included files (and includeIf conditions such as onbranch:)
// are not watched, so every call rescans. So is a path without its own .git
// entry (a subdirectory, a bare repository), where discovery could find a
// different repository later. On platforms without inode and ctime
// (statsig_other.go) nothing is cached.

// driverCacheSize bounds the cache; the least recently used repository is
// dropped first.
const driverCacheSize = 256

// racyWindow: a watched file whose ctime is this close to the moment of
// the scan is considered racy and the result is not cached.
var racyWindow = time.Second

// driverScanHook, when set (tests only), is called before every real
// driver scan.
var driverScanHook func(repo string)

// fileSig identifies one watched path. Directories are compared by
// identity only: a git directory's own mtime changes on every commit and
// says nothing about the config inside it.
type fileSig struct {
	exists       bool
	dir          bool
	dev, ino     uint64
	mode         uint32
	size         int64
	mtime, ctime int64
}

func makeSig(dev, ino uint64, dir bool, mode uint32, size, mtime, ctime int64) fileSig {
	if dir {
		// A directory keeps its times only for listing stamps (statAll).
		return fileSig{exists: true, dir: true, dev: dev, ino: ino, mode: mode, mtime: mtime, ctime: ctime}
	}
	return fileSig{exists: true, dev: dev, ino: ino, mode: mode, size: size, mtime: mtime, ctime: ctime}
}

// statAll signs every path; ok=false when one of them cannot be stat'ed.
func statAll(paths []string) ([]fileSig, bool) { return statPaths(paths, false) }

// statPaths stats paths. A directory's times change whenever an entry is
// added, removed or renamed in it, which is noise for a cache that only
// needs the directory to be the same one (git dirs change all the time)
// and the signal for one derived from what directories list; listing
// selects the second.
func statPaths(paths []string, listing bool) ([]fileSig, bool) {
	sigs := make([]fileSig, len(paths))
	for i, p := range paths {
		s, err := statPath(p, listing)
		if err != nil {
			return nil, false
		}
		sigs[i] = s
	}
	return sigs, true
}

// statPath is one path's signature as statPaths takes it.
func statPath(path string, listing bool) (fileSig, error) {
	s, err := statSig(path)
	if s.dir && !listing {
		s.mtime, s.ctime = 0, 0
	}
	return s, err
}

func sameSigs(a, b []fileSig) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// racy reports a watched file changed too recently to trust its stat
// data (its ctime is within racyWindow of now, or in the future).
func racy(sigs []fileSig, now time.Time) bool {
	limit := now.Add(-racyWindow).UnixNano()
	for _, s := range sigs {
		if s.exists && s.ctime >= limit { // directory times are zero unless listed
			return true
		}
	}
	return false
}

type driverEntry struct {
	key       string
	paths     []string
	sigs      []fileSig
	overrides [][2]string // shared, never modified
	// includes marks a repository whose config has include keys: the
	// entry holds no overrides and only saves the watch-list rev-parse;
	// every call still scans.
	includes bool
}

// driverCache is a small thread-safe LRU of driver scans. The zero value
// is ready to use.
type driverCache struct {
	mu      sync.Mutex
	entries map[string]*list.Element
	lru     list.List
}

// get returns the cached entry for key when every watched file is
// unchanged; a stale entry is dropped.
func (c *driverCache) get(key string) (*driverEntry, bool) {
	c.mu.Lock()
	el, ok := c.entries[key]
	var e *driverEntry
	if ok {
		e = el.Value.(*driverEntry)
	}
	c.mu.Unlock()
	if !ok {
		return nil, false
	}
	now, ok := statAll(e.paths)
	c.mu.Lock()
	defer c.mu.Unlock()
	cur, still := c.entries[key]
	if !ok || !sameSigs(now, e.sigs) {
		if still && cur == el {
			c.lru.Remove(el)
			delete(c.entries, key)
		}
		return nil, false
	}
	if still && cur == el {
		c.lru.MoveToFront(el)
	}
	return e, true
}

func (c *driverCache) put(e *driverEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[string]*list.Element{}
	}
	if old, ok := c.entries[e.key]; ok {
		c.lru.Remove(old)
	}
	c.entries[e.key] = c.lru.PushFront(e)
	for c.lru.Len() > driverCacheSize {
		last := c.lru.Back()
		c.lru.Remove(last)
		delete(c.entries, last.Value.(*driverEntry).key)
	}
}

func (c *driverCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// watchList returns the files whose signatures validate a cached scan of
// repo, with their signatures taken now, or nil when repo must not be
// cached. It costs one rev-parse (no driver scan: rev-parse converts no
// content) and runs only on a cache miss.
func (r *Runner) watchList(ctx context.Context, exe, repo string) ([]string, []fileSig) {
	if !sigSupported {
		return nil, nil
	}
	dotgit := filepath.Join(repo, ".git")
	pre, err := statPath(dotgit, false)
	if err != nil || !pre.exists {
		return nil, nil
	}
	args := []string{"rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir"}
	out := &limitBuffer{keep: 1 << 16, limit: 1 << 16, what: "stdout"}
	if err := r.start(ctx, exe, Command(repo, args...), hardenedArgs(repo, args), nil, out); err != nil {
		return nil, nil
	}
	lines := strings.Split(strings.TrimSuffix(out.buf.String(), "\n"), "\n")
	if len(lines) != 2 || !filepath.IsAbs(lines[0]) || !filepath.IsAbs(lines[1]) {
		return nil, nil
	}
	gitDir, commonDir := filepath.Clean(lines[0]), filepath.Clean(lines[1])
	if !ownsGitDir(dotgit, pre.dir, gitDir) {
		return nil, nil // git found its directory some other way
	}
	paths := []string{
		dotgit,
		filepath.Join(gitDir, "commondir"),
		filepath.Join(commonDir, "config"),
		filepath.Join(gitDir, "config.worktree"),
	}
	sigs, ok := statAll(paths)
	if !ok || sigs[0] != pre {
		return nil, nil
	}
	return paths, sigs
}

// ownsGitDir checks that the .git entry of the repository is what led git
// to gitDir: the directory itself, or a gitfile naming it.
func ownsGitDir(dotgit string, isDir bool, gitDir string) bool {
	want, err := filepath.EvalSymlinks(gitDir)
	if err != nil {
		return false
	}
	target := dotgit
	if !isDir {
		f, err := os.Open(dotgit)
		if err != nil {
			return false
		}
		line, _ := bufio.NewReader(io.LimitReader(f, 8192)).ReadString('\n')
		f.Close()
		t, found := strings.CutPrefix(strings.TrimRight(line, " \t\r\n"), "gitdir: ")
		if !found || t == "" {
			return false
		}
		if !filepath.IsAbs(t) {
			t = filepath.Join(filepath.Dir(dotgit), t)
		}
		target = t
	}
	got, err := filepath.EvalSymlinks(target)
	return err == nil && got == want
}
