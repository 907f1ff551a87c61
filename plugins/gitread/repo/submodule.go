package repo

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fluxgit/fluxgit/internal/gitexec"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// Bounds of the recursive submodule scan.
const (
	maxSubmoduleDepth   = 16
	maxSubmoduleEntries = 1000
)

type submoduleArgs struct {
	RepoPath string  `json:"repoPath"`
	RepoID   string  `json:"repoId"`
	Path     *string `json:"path"`
}

// submodule is one gitlink, in the states `git submodule status` uses:
// "U" unmerged, "-" not initialized, "+" checked out at another commit
// than the recorded one, " " clean.
type submodule struct {
	State       string `json:"state"`
	Commit      string `json:"commit"`
	Path        string `json:"path"`
	PathBase64  string `json:"pathBase64,omitempty"`
	Description string `json:"description"`
	// Recorded is the commit the superproject records, set when it differs
	// from Commit (state "+").
	Recorded string `json:"recorded,omitempty"`
	Depth    int    `json:"depth"`
}

// submoduleData is the submodule.status payload.
type submoduleData struct {
	Submodules []submodule `json:"submodules"`
	Total      int64       `json:"total"`
	// Skipped counts submodules whose git directory or work tree leads
	// outside the repository (or the allowed roots); they are not followed.
	Skipped int64   `json:"skipped"`
	Path    *string `json:"path"`
}

func (p *Provider) submoduleStatus(ctx context.Context, call *sdk.Call) (any, error) {
	var a submoduleArgs
	if err := decode(call, &a); err != nil {
		return nil, err
	}
	var filter string
	if a.Path != nil && strings.TrimSpace(*a.Path) != "" {
		f, err := checkRepoRelative("path", strings.TrimSpace(*a.Path))
		if err != nil {
			return nil, err
		}
		if f = strings.Trim(f, "/"); f != "." && f != "" {
			filter = f
		}
	}
	r, err := p.open(ctx, call, a.RepoPath)
	if err != nil {
		return nil, err
	}
	s, err := p.scanSubmodules(ctx, call, r, false)
	if err != nil {
		return nil, err
	}
	d := &submoduleData{Submodules: []submodule{}, Skipped: s.skipped}
	for _, m := range s.list {
		if filter != "" && m.Path != filter && !strings.HasPrefix(m.Path, filter+"/") {
			continue
		}
		d.Submodules = append(d.Submodules, m)
	}
	d.Total = int64(len(d.Submodules))
	if filter != "" {
		d.Path = &filter
	}
	return d, nil
}

// subScan is the result of a recursive submodule scan.
type subScan struct {
	list    []submodule
	skipped int64
	// capped is set (lenient mode only) when a bound stopped the scan.
	capped bool
}

type subScanner struct {
	p       *Provider
	lenient bool
	top     string
	allowed []string // where submodule git directories may live
	roots   []string // the host's allowed roots, if any
	visited map[string]bool
	out     subScan
	// rootLinks, when set, are the top level's gitlinks, listed by the
	// caller in a call it needed anyway.
	rootLinks *gitlinkSet
}

// scanSubmodules lists the gitlinks of r and, recursively, of every
// initialized submodule, using `ls-files --stage -z` (mode 160000) per
// repository rather than the `git submodule` script. A submodule is only
// entered when its work tree and its git directory resolve inside the
// repository (or its common git directory) and inside the allowed roots;
// otherwise it is counted as skipped. Strict mode fails with 10010 past the
// depth or entry bound; lenient mode (repo.brief) stops and sets capped.
func (p *Provider) scanSubmodules(ctx context.Context, call *sdk.Call, r *Repo, lenient bool) (*subScan, error) {
	return p.scanSubmodulesFrom(ctx, call, r, lenient, nil)
}

// scanSubmodulesFrom is scanSubmodules with the top level's gitlinks
// already listed (nil: list them).
func (p *Provider) scanSubmodulesFrom(ctx context.Context, call *sdk.Call, r *Repo, lenient bool, root *gitlinkSet) (*subScan, error) {
	s, err := p.newSubScanner(ctx, call, r)
	if err != nil {
		return nil, err
	}
	s.lenient, s.rootLinks = lenient, root
	if err := s.scan(ctx, r.dir, "", 0); err != nil {
		if lenient && err == errSubmoduleCap {
			s.out.capped = true
			return &s.out, nil
		}
		return nil, err
	}
	return &s.out, nil
}

// newSubScanner prepares a scan of r's submodules: they may live only in
// r's work tree or its common git directory, and inside the allowed roots.
func (p *Provider) newSubScanner(ctx context.Context, call *sdk.Call, r *Repo) (*subScanner, error) {
	_, common, err := p.gitDirs(ctx, r)
	if err != nil {
		return nil, err
	}
	if real, err := filepath.EvalSymlinks(common); err == nil {
		common = real
	}
	s := &subScanner{p: p, top: r.dir, allowed: []string{r.dir, common},
		roots: call.Meta.AllowedRoots, visited: map[string]bool{}}
	s.visited[common] = true
	return s, nil
}

var errSubmoduleCap = fmt.Errorf("submodule bound reached")

type gitlink struct {
	path   []byte
	sha    string
	stage2 string
	stage  bool // some non-zero stage
}

// gitlinkSet collects the gitlinks of one `ls-files --stage` listing.
type gitlinkSet struct {
	links []gitlink
	idx   map[string]int
}

// add takes one "<mode> SP <sha> SP <stage> TAB <path>" record.
func (g *gitlinkSet) add(f []byte) error {
	if !bytes.HasPrefix(f, []byte("160000 ")) {
		return nil
	}
	meta, path, ok := bytes.Cut(f, []byte{'\t'})
	parts := strings.Fields(string(meta))
	if !ok || len(parts) != 3 {
		return errStatusFormat
	}
	if g.idx == nil {
		g.idx = map[string]int{}
	}
	i, seen := g.idx[string(path)]
	if !seen {
		i = len(g.links)
		g.idx[string(path)] = i
		g.links = append(g.links, gitlink{path: append([]byte(nil), path...)})
	}
	l := &g.links[i]
	switch parts[2] {
	case "0":
		l.sha = parts[1]
	case "2":
		l.stage, l.stage2 = true, parts[1]
	default:
		l.stage = true
		if l.sha == "" {
			l.sha = parts[1]
		}
	}
	return nil
}

func (s *subScanner) scan(ctx context.Context, dir, prefix string, depth int) error {
	args := []string{"ls-files", "--stage", "-z"}
	if depth > maxSubmoduleDepth {
		if s.lenient {
			return errSubmoduleCap
		}
		return &failure{gitexec.Command(dir, args...), fmt.Sprintf("submodules nested deeper than %d levels", maxSubmoduleDepth)}
	}
	var links []gitlink
	if depth == 0 && s.rootLinks != nil {
		links = s.rootLinks.links // already listed by the caller
	} else {
		var set gitlinkSet
		w := &fieldWriter{sep: 0, fn: set.add}
		if _, err := s.p.runner.Stream(ctx, dir, w, args...); err != nil {
			return err
		}
		if err := w.flush(); err != nil {
			return err
		}
		links = set.links
	}

	kids := make([]subChild, len(links))
	err := forEach(len(links), 8, func(i int) error {
		if links[i].stage {
			return nil
		}
		var err error
		kids[i], err = s.inspect(ctx, dir, string(links[i].path))
		return err
	})
	if err != nil {
		return err
	}

	for i, l := range links {
		k := kids[i]
		if k.skip {
			s.out.skipped++
			continue
		}
		if len(s.out.list) >= maxSubmoduleEntries {
			if s.lenient {
				return errSubmoduleCap
			}
			return &failure{gitexec.Command(dir, args...), fmt.Sprintf("more than %d submodules", maxSubmoduleEntries)}
		}
		full := append([]byte(prefix), l.path...)
		m := submodule{Commit: l.sha, Depth: depth}
		m.Path, m.PathBase64 = pathText(full)
		switch {
		case l.stage:
			m.State = "U"
			if l.stage2 != "" {
				m.Commit = l.stage2
			}
		case !k.ok:
			m.State = "-"
		case k.head != l.sha:
			m.State, m.Commit, m.Recorded = "+", k.head, l.sha
		default:
			m.State = " "
		}
		s.out.list = append(s.out.list, m)
		if k.ok && !l.stage {
			if s.visited[k.gitdir] {
				continue
			}
			s.visited[k.gitdir] = true
			if err := s.scan(ctx, k.dir, string(full)+"/", depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// subChild is what inspect found out about one gitlink's directory.
type subChild struct {
	dir    string // absolute work tree of the submodule
	head   string // its HEAD commit
	gitdir string // its canonical git directory
	ok     bool   // initialized, and dir is its own top level
	skip   bool   // leads outside the repository or the roots: not followed
}

// inspect decides whether the submodule at rel under dir may be entered
// (enterable) and, when it may, asks git (one rev-parse run inside it,
// never git's own recursion) for its top level, git directories and HEAD,
// which must again lie inside the repository and the allowed roots.
func (s *subScanner) inspect(ctx context.Context, dir, rel string) (subChild, error) {
	var k subChild
	k.dir, k.skip, k.ok = s.enterable(dir, rel)
	if !k.ok || k.skip {
		return k, nil
	}
	out, err := s.p.runner.Run(ctx, k.dir, "rev-parse", "--path-format=absolute", "--show-toplevel", "--git-dir", "--git-common-dir", "HEAD")
	if err != nil {
		if isExit(err, 128, 1) {
			k.ok = false
			return k, nil
		}
		return k, err
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 4 || !isOID(lines[3]) {
		k.ok = false
		return k, nil
	}
	realDir, _ := filepath.EvalSymlinks(k.dir)
	if filepath.Clean(lines[0]) != realDir {
		k.ok = false // git found an enclosing repository: not initialized
		return k, nil
	}
	if !insideDir(lines[1], s.allowed...) || !insideDir(lines[2], s.allowed...) ||
		(len(s.roots) > 0 && (!insideAny(canonicalDir(lines[1]), s.roots) || !insideAny(canonicalDir(lines[2]), s.roots))) {
		k.skip = true
		return k, nil
	}
	k.head, k.gitdir = lines[3], canonicalDir(lines[1])
	return k, nil
}

// enterable decides whether the submodule at rel under dir may be entered:
// its directory must be a real directory inside the top-level work tree
// (no symlink out) with a .git entry whose target stays inside the
// repository. ok=false means not initialized; skip=true means it leads
// outside and must not be followed.
func (s *subScanner) enterable(dir, rel string) (abs string, skip, ok bool) {
	if !filepath.IsLocal(rel) {
		return "", true, false
	}
	abs = filepath.Join(dir, rel)
	fi, err := os.Lstat(abs)
	if err != nil || !fi.IsDir() {
		if err == nil && fi.Mode()&os.ModeSymlink != 0 {
			return abs, true, false
		}
		return abs, false, false
	}
	if !insideDir(abs, s.top) {
		return abs, true, false
	}
	dotgit := filepath.Join(abs, ".git")
	gi, err := os.Lstat(dotgit)
	if err != nil {
		return abs, false, false
	}
	var gitdir string
	switch {
	case gi.IsDir():
		gitdir = dotgit
	case gi.Mode().IsRegular():
		f, err := os.Open(dotgit)
		if err != nil {
			return abs, false, false
		}
		line, _ := bufio.NewReader(io.LimitReader(f, 8192)).ReadString('\n')
		f.Close()
		target, found := strings.CutPrefix(strings.TrimSpace(line), "gitdir: ")
		if !found || target == "" {
			return abs, false, false
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(abs, target)
		}
		gitdir = target
	default:
		return abs, true, false
	}
	if !insideDir(gitdir, s.allowed...) {
		return abs, true, false
	}
	if len(s.roots) > 0 && !insideAny(canonicalDir(gitdir), s.roots) {
		return abs, true, false
	}
	return abs, false, true
}
