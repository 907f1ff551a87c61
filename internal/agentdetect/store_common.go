package agentdetect

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/fluxgit/fluxgit/internal/pathwithin"
)

// StoreSources returns one Source per agent store: each reads only its
// agent's own files and databases below the user's home (or where the
// agent's own variable puts them), tails JSONL, opens SQLite read-only,
// and reports sessions whose working directory is inside the repository
// or one of its worktrees.
func StoreSources() []Source {
	return []Source{
		claudeStore{},
		codexStore{},
		geminiStore{},
		opencodeStore{},
		cursorStore{},
		copilotStore{},
		clineStore{},
		aiderStore{},
	}
}

// Caps that keep one scan cheap however many sessions a store holds.
const (
	// storeMaxFiles is how many session files one source reads per scan,
	// newest first.
	storeMaxFiles = 64
	// storeMaxRows bounds the rows a source reads from one database.
	storeMaxRows = 200
	// storeSmallFile bounds whole-document JSON reads.
	storeSmallFile = 1 << 20
	// storeMaxToolName bounds a reported tool name.
	storeMaxToolName = 64
	// storePIDStartSlack absorbs clock granularity when a registry's
	// session start is compared with its process's start.
	storePIDStartSlack = 5 * time.Second
)

// storeScan holds what every store source derives from a Query once.
type storeScan struct {
	q     Query
	now   time.Time
	home  string // resolved home
	roots []storeRoot

	// resolved caches storeResolve for this scan: transcripts name the
	// same cwd and files on line after line, and resolving each costs a
	// system call per path component.
	mu       sync.Mutex
	resolved map[string]string
}

// maxResolved bounds the per-scan resolve cache.
const maxResolved = 4096

// resolve is storeResolve, remembered for the rest of the scan.
func (s *storeScan) resolve(p string) string {
	s.mu.Lock()
	r, ok := s.resolved[p]
	s.mu.Unlock()
	if ok {
		return r
	}
	r = storeResolve(p)
	s.mu.Lock()
	if s.resolved == nil || len(s.resolved) >= maxResolved {
		s.resolved = map[string]string{}
	}
	s.resolved[p] = r
	s.mu.Unlock()
	return r
}

// storeRoot is one work tree as given and as resolved.
type storeRoot struct{ raw, real string }

func newStoreScan(q Query) *storeScan {
	s := &storeScan{q: q, now: q.Now}
	if s.now.IsZero() {
		s.now = time.Now()
	}
	if q.Env == nil {
		s.q.Env = func(string) string { return "" }
	}
	if q.Home != "" {
		s.home = storeResolve(q.Home)
	}
	seen := map[string]bool{}
	for _, r := range append([]string{q.Repo}, q.Worktrees...) {
		if r == "" || !filepath.IsAbs(r) {
			continue
		}
		raw := filepath.Clean(r)
		if seen[raw] {
			continue
		}
		seen[raw] = true
		s.roots = append(s.roots, storeRoot{raw: raw, real: storeResolve(raw)})
	}
	return s
}

// storeResolve resolves symbolic links in p. A path that no longer exists
// (a deleted file an agent touched) resolves its longest existing parent
// and keeps the rest, so it still compares with the resolved repository.
func storeResolve(p string) string {
	p = filepath.Clean(p)
	rest := ""
	for cur := p; ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			if rest == "" {
				return r
			}
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// inRepo reports the work tree an absolute directory or file is inside,
// comparing resolved paths on both sides.
func (s *storeScan) inRepo(p string) (storeRoot, bool) {
	if p == "" || !filepath.IsAbs(p) {
		return storeRoot{}, false
	}
	real := s.resolve(p)
	for _, r := range s.roots {
		if pathwithin.Within(r.real, real) {
			return r, true
		}
	}
	return storeRoot{}, false
}

// repoFile turns a path an agent touched into a slash-separated path
// relative to the work tree it is in; relative paths are taken from the
// session's cwd. Paths outside the repository are dropped.
func (s *storeScan) repoFile(p, cwd string) (string, bool) {
	p = strings.TrimSpace(p)
	if p == "" || strings.ContainsRune(p, 0) {
		return "", false
	}
	if strings.HasPrefix(p, "file://") {
		p = strings.TrimPrefix(p, "file://")
	}
	if !filepath.IsAbs(p) {
		if cwd == "" {
			return "", false
		}
		p = filepath.Join(cwd, p)
	}
	r, ok := s.inRepo(p)
	if !ok {
		return "", false
	}
	rel, ok := pathwithin.Rel(r.real, s.resolve(p))
	if !ok || rel == "." {
		return "", false
	}
	return rel, true
}

// fresh reports whether activity at t is within the freshness window.
func (s *storeScan) fresh(t time.Time) bool {
	return !t.IsZero() && !t.Before(s.now.Add(-Freshness))
}

// env reads one of the agent's own variables from this process.
func (s *storeScan) env(name string) string { return strings.TrimSpace(s.q.Env(name)) }

// storeDir returns dir when it is a real directory the scan may enter:
// not a symbolic link at all, or one that resolves inside the home. A
// store directory that is a link out of the home is never followed.
func (s *storeScan) storeDir(dir string) (string, bool) {
	if dir == "" || !filepath.IsAbs(dir) {
		return "", false
	}
	dir = filepath.Clean(dir)
	li, err := os.Lstat(dir)
	if err != nil {
		return "", false
	}
	if li.IsDir() && li.Mode()&fs.ModeSymlink == 0 {
		// A real directory whose parents may still be links (a home on
		// another volume): judged by where it resolves.
		real := storeResolve(dir)
		if pathwithin.Within(s.home, real) || !pathwithin.Within(s.home, dir) {
			return dir, true
		}
		return "", false
	}
	if li.Mode()&fs.ModeSymlink == 0 {
		return "", false
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil || !pathwithin.Within(s.home, real) {
		return "", false
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return "", false
	}
	return real, true
}

// homeJoin joins path elements below the home; "" without a home.
func (s *storeScan) homeJoin(elem ...string) string {
	if s.q.Home == "" {
		return ""
	}
	return filepath.Join(append([]string{s.q.Home}, elem...)...)
}

// storeSubdirs lists the real (non-link) subdirectories of dir.
func storeSubdirs(dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() && e.Type()&fs.ModeSymlink == 0 {
			out = append(out, e.Name())
		}
	}
	return out
}

// storeFile is a candidate session file with its modification time.
type storeFile struct {
	path string
	mod  time.Time
}

// freshFiles lists the regular files of dir accepted by keep whose
// modification time is fresh, newest first.
func (s *storeScan) freshFiles(dir string, keep func(name string) bool) []storeFile {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []storeFile
	for _, e := range ents {
		if !e.Type().IsRegular() || !keep(e.Name()) {
			continue
		}
		fi, err := e.Info()
		if err != nil || !s.fresh(fi.ModTime()) {
			continue
		}
		out = append(out, storeFile{filepath.Join(dir, e.Name()), fi.ModTime()})
	}
	return out
}

// storeNewest sorts candidate files newest first and keeps at most n.
func storeNewest(files []storeFile, n int) []storeFile {
	slices.SortFunc(files, func(a, b storeFile) int { return b.mod.Compare(a.mod) })
	if len(files) > n {
		files = files[:n]
	}
	return files
}

// storeSession accumulates what a store says about one agent session while its
// lines are read oldest to newest.
type storeSession struct {
	agent    string
	id       string
	cwd      string
	branch   string
	lastTool string
	toolAt   time.Time
	last     time.Time
	files    map[string]time.Time // repo-relative path → when touched
	pid      int
	started  time.Time
	conf     string
	live     bool
	busy     bool
	ended    bool
	source   string
}

func (a *storeSession) touch(t time.Time) {
	if t.After(a.last) {
		a.last = t
	}
}

// tool records a tool call; the newest (by its own time, then by the
// order lines are read) names the session's last tool.
func (a *storeSession) tool(name string, t time.Time) {
	n := storeToolName(name)
	if n == "" || t.Before(a.toolAt) {
		return
	}
	a.lastTool, a.toolAt = n, t
	a.touch(t)
}

// file records a repo-relative path the session touched at t.
func (a *storeSession) file(rel string, t time.Time) {
	if rel == "" {
		return
	}
	if a.files == nil {
		a.files = map[string]time.Time{}
	}
	if old, ok := a.files[rel]; !ok || !t.Before(old) {
		a.files[rel] = t
	}
}

// finding renders the session; files newest first and capped.
func (a *storeSession) finding(s *storeScan) Finding {
	f := Finding{
		Agent:      a.agent,
		Sources:    []string{a.source},
		Confidence: a.conf,
		SessionID:  a.id,
		StartTime:  a.started,
		Files:      []string{},
	}
	if f.Sources[0] == "" {
		f.Sources[0] = SourceSession
	}
	if f.Confidence == "" {
		f.Confidence = ConfidenceCwd
	}
	if a.live && a.pid > 0 {
		pid := a.pid
		f.PID = &pid
	}
	if !a.last.IsZero() {
		ms := a.last.UnixMilli()
		f.LastActivityMs = &ms
	}
	if a.branch != "" {
		b := a.branch
		f.Branch = &b
	}
	if a.lastTool != "" {
		t := a.lastTool
		f.LastTool = &t
	}
	for rel := range a.files {
		f.Files = append(f.Files, rel)
	}
	slices.SortFunc(f.Files, func(x, y string) int {
		if c := a.files[y].Compare(a.files[x]); c != 0 {
			return c
		}
		return strings.Compare(x, y)
	})
	if len(f.Files) > MaxFilesPerAgent {
		f.Files = f.Files[:MaxFilesPerAgent]
	}
	recent := !a.last.IsZero() && !a.last.Before(s.now.Add(-WorkingWindow))
	switch {
	case a.live && (a.busy || recent):
		f.State = StateWorking
	case a.live:
		f.State = StateOpen
	case recent && !a.ended:
		f.State = StateWorking
	default:
		f.State = StateRecent
	}
	return f
}

// keep reports whether a session belongs in the report: inside the
// repository, and live or fresh.
func (a *storeSession) keep(s *storeScan) bool {
	if _, ok := s.inRepo(a.cwd); !ok {
		return false
	}
	return a.live || s.fresh(a.last)
}

// storeToolName keeps a tool name a name: ASCII letters, digits and
// _ . : / -, bounded. Anything else (a store that put text or JSON where
// a name belongs) is dropped rather than reported.
func storeToolName(n string) string {
	n = strings.TrimSpace(n)
	if n == "" || len(n) > storeMaxToolName {
		return ""
	}
	for _, r := range n {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_.:/-", r)
		if !ok {
			return ""
		}
	}
	return n
}

// storeBranch keeps a branch name that git could have written.
func storeBranch(b string) string {
	b = strings.TrimPrefix(strings.TrimSpace(b), "refs/heads/")
	if b == "" || len(b) > 255 || b == "HEAD" {
		return ""
	}
	for _, r := range b {
		if unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return ""
		}
	}
	return b
}

// storeSessions keeps the sessions of one scan by id, in first-seen order.
type storeSessions struct {
	agent string
	byID  map[string]*storeSession
	order []string
}

func newStoreSessions(agent string) *storeSessions {
	return &storeSessions{agent: agent, byID: map[string]*storeSession{}}
}

// get returns the session with this id, creating it.
func (m *storeSessions) get(id string) *storeSession {
	if a, ok := m.byID[id]; ok {
		return a
	}
	a := &storeSession{agent: m.agent, id: id}
	m.byID[id] = a
	m.order = append(m.order, id)
	return a
}

// findings renders the sessions worth reporting.
func (m *storeSessions) findings(s *storeScan) []Finding {
	var out []Finding
	for _, id := range m.order {
		if a := m.byID[id]; a.keep(s) {
			out = append(out, a.finding(s))
		}
	}
	return out
}

// storeParseTime reads an ISO 8601 timestamp.
func storeParseTime(v string) time.Time {
	if v == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}
	}
	return t
}

// storeUnix reads a Unix timestamp in seconds, milliseconds or
// microseconds, judged by its size (stores changed units over time).
func storeUnix(v int64) time.Time {
	switch {
	case v <= 0:
		return time.Time{}
	case v < 1e11:
		return time.Unix(v, 0)
	case v < 1e14:
		return time.UnixMilli(v)
	default:
		return time.UnixMicro(v)
	}
}

// storeJSONTime reads a timestamp that a store wrote as a number (any unit) or
// an ISO string.
func storeJSONTime(v any) time.Time {
	switch t := v.(type) {
	case float64:
		return storeUnix(int64(t))
	case string:
		if n, err := strconv.ParseInt(t, 10, 64); err == nil {
			return storeUnix(n)
		}
		return storeParseTime(t)
	}
	return time.Time{}
}

// storeErrs reports a source's errors only when it found nothing: a store
// that answered in part is not a failed source.
func storeErrs(found int, errs []error) error {
	if found > 0 {
		return nil
	}
	return errors.Join(errs...)
}

// configDirs returns the per-user application configuration directories
// VS Code forks live in, for this OS.
func (s *storeScan) configDirs() []string {
	var out []string
	switch runtime.GOOS {
	case "darwin":
		out = append(out, s.homeJoin("Library", "Application Support"))
	case "windows":
		if v := s.env("APPDATA"); v != "" {
			out = append(out, v)
		}
	default:
		if v := s.env("XDG_CONFIG_HOME"); v != "" {
			out = append(out, v)
		}
		out = append(out, s.homeJoin(".config"))
	}
	return out
}

// storeLater returns the later of two times.
func storeLater(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
