package gitexec

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// ErrMoved means a pinned repository directory was replaced or moved while
// git ran, so the output may describe another repository and was dropped.
var ErrMoved = errors.New("repository changed during the git call")

// Pin holds a repository directory that passed a provider's checks, so
// that later git calls read that directory and not whatever its path names
// by then: a path is resolved again by every `git -C`, and swapping the
// checked directory for a symlink between two calls would otherwise serve
// another repository's data.
//
// Where the OS allows it (pin_linux.go) git runs on the open directory
// itself; everywhere, the identity (device and inode) of every watched
// path is compared after each call and the output is discarded on a
// mismatch.
type Pin struct {
	path    string   // the repository argument the pin applies to
	dir     *os.File // the checked directory, open
	info    os.FileInfo
	watched []watch
	guards  []guard
}

type watch struct {
	label, path string
	fi          os.FileInfo
}

// OpenPin opens the directory path names (following symlinks, as git -C
// would) and pins it. The caller checks what the pin points at, using
// Name or the output of git run under the pin, then closes it (a PinSet
// does that at the end of a call).
func OpenPin(path string) (*Pin, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.IsDir() {
		f.Close()
		return nil, errors.New("not a directory")
	}
	p := &Pin{path: path, dir: f}
	if !PinsDirectory {
		// git runs on the path here, so the path must still name the
		// directory afterwards.
		p.watched = []watch{{label: "the repository directory", path: path, fi: fi}}
	}
	p.info = fi
	return p, nil
}

// Path is the repository argument the pin applies to.
func (p *Pin) Path() string { return p.path }

// Dir is the pinned directory, open; callers may read files relative to
// it but must not close it.
func (p *Pin) Dir() *os.File { return p.dir }

// Info is the identity of the pinned directory.
func (p *Pin) Info() os.FileInfo { return p.info }

// Watch records the identity path has now; after every git call under
// the pin it must still be the same file. label names it in errors in
// terms the caller understands (never the path itself, which may be
// outside what the caller may see).
func (p *Pin) Watch(label, path string) error {
	if rest, ok := strings.CutPrefix(path, p.path+string(filepath.Separator)); ok {
		// Below the pinned directory: look it up from there, as git does,
		// so that only a change inside the directory counts.
		path = filepath.Join(dirPath(p.dir, p.path), rest)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	p.watched = append(p.watched, watch{label: label, path: path, fi: fi})
	return nil
}

// Verify reports, as an *Error with ErrMoved, the first watched path that
// no longer names the file it named when the pin was taken.
func (p *Pin) Verify(command []string) error {
	for _, w := range p.watched {
		now, err := os.Stat(w.path)
		if err == nil && os.SameFile(w.fi, now) {
			continue
		}
		return &Error{Command: command, ExitCode: -1, Err: ErrMoved,
			Details: w.label + " was moved or replaced while git read it, so the output was discarded; " +
				"retry the call, and if this keeps happening stop whatever is replacing the repository"}
	}
	return nil
}

// Close releases the directory.
func (p *Pin) Close() error { return p.dir.Close() }

// PinSet holds the pins of one tool call. git calls whose repository
// argument equals a pin's path run under that pin.
type PinSet struct {
	mu   sync.Mutex
	pins map[string]*Pin
	all  []*Pin
}

type pinSetKey struct{}

// WithPins returns a context carrying a new, empty PinSet. Close the set
// when the call is over.
func WithPins(ctx context.Context) (context.Context, *PinSet) {
	s := &PinSet{pins: map[string]*Pin{}}
	return context.WithValue(ctx, pinSetKey{}, s), s
}

// PinsFrom returns the PinSet of ctx, or nil.
func PinsFrom(ctx context.Context) *PinSet {
	s, _ := ctx.Value(pinSetKey{}).(*PinSet)
	return s
}

// Add makes p apply to later calls naming p.Path(); the set owns p.
func (s *PinSet) Add(p *Pin) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pins[p.path] = p
	s.all = append(s.all, p)
}

// Remove stops p applying (a pin replaced during open); the set still
// closes it in Close.
func (s *PinSet) Remove(p *Pin) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pins[p.path] == p {
		delete(s.pins, p.path)
	}
}

func (s *PinSet) get(path string) *Pin {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pins[path]
}

// Close closes every pin the set ever held.
func (s *PinSet) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.all {
		p.Close()
	}
	s.all, s.pins = nil, map[string]*Pin{}
}

// Guard adds a directory whose entries must not change while git runs:
// git turns the work tree into a path string and changes into it
// (setup_work_tree), so renaming the pinned directory away and back, or
// swapping one of its ancestors, during a call could still point git at
// another repository even though it started on the pinned directory. A
// rename changes the parent directory's modification and change times,
// so guarding the work tree and its ancestors (up to the allowed root)
// detects that; the output is then discarded.
func (p *Pin) Guard(dir string) error {
	st, err := stampDir(dir)
	if err != nil {
		return err
	}
	p.guards = append(p.guards, guard{path: dir, at: st})
	return nil
}

type guard struct {
	path string
	at   dirStamp
}

// dirStamp is a directory's identity and times; ctime is zero where the
// OS does not report it.
type dirStamp struct {
	fi           os.FileInfo
	mtime, ctime int64
}

func stampDir(path string) (dirStamp, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return dirStamp{}, err
	}
	return dirStamp{fi: fi, mtime: fi.ModTime().UnixNano(), ctime: ctimeOf(fi)}, nil
}

func (a dirStamp) same(b dirStamp) bool {
	return os.SameFile(a.fi, b.fi) && a.mtime == b.mtime && a.ctime == b.ctime
}

// Guard timing. File-system timestamps advance in clock ticks (a few
// milliseconds), so a rename and its undo within one tick of the stamp
// could leave the times unchanged: a guarded directory changed within
// guardQuiet is waited on until it has been quiet that long, for at most
// guardWait, before git starts.
var (
	guardQuiet = 20 * time.Millisecond
	guardWait  = 250 * time.Millisecond
)

// pinRun is one git call under a pin.
type pinRun struct {
	pin    *Pin
	before []dirStamp
	err    string // why the guards could not be taken; the call fails
}

// applyPin is the runner's hook: when cmd runs in a pinned repository it
// points git at the pinned directory (where the OS allows), stamps the
// guarded directories, and returns what pinCheck verifies once git has
// exited; otherwise it returns nil.
func applyPin(ctx context.Context, cmd *exec.Cmd) *pinRun {
	s := PinsFrom(ctx)
	if s == nil {
		return nil
	}
	for i := 1; i+1 < len(cmd.Args); i++ {
		if cmd.Args[i] != "-C" {
			continue
		}
		p := s.get(cmd.Args[i+1])
		if p == nil {
			return nil
		}
		if arg := runOnDir(cmd, p.dir); arg != "" {
			cmd.Args[i+1] = arg
		}
		return p.stampGuards(ctx)
	}
	return nil
}

// stampGuards takes the before-stamps of p's guards once they are quiet.
func (p *Pin) stampGuards(ctx context.Context) *pinRun {
	run := &pinRun{pin: p}
	if len(p.guards) == 0 {
		return run
	}
	deadline := time.Now().Add(guardWait)
	for {
		run.before = run.before[:0]
		latest := int64(0)
		for _, g := range p.guards {
			st, err := stampDir(g.path)
			if err != nil {
				run.err = "a directory holding the repository (" + g.label() + ") is gone"
				return run
			}
			run.before = append(run.before, st)
			latest = max(latest, st.mtime, st.ctime)
		}
		quietFor := time.Since(time.Unix(0, latest))
		if quietFor >= guardQuiet {
			return run
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			run.err = "a directory holding the repository keeps changing"
			return run
		}
		time.Sleep(guardQuiet - quietFor)
	}
}

func (g guard) label() string { return "guarded directory " + filepath.Base(g.path) }

// pinCheck wraps start's result: a call that ran under a pin whose
// directories moved, or whose guarded directories changed, fails whatever
// git said.
func pinCheck(run *pinRun, command []string, err *error) {
	if run == nil {
		return
	}
	moved := func(details string) {
		*err = &Error{Command: command, ExitCode: -1, Err: ErrMoved,
			Details: details + ", so the output was discarded; retry the call, and if this keeps happening stop whatever is renaming or replacing the repository"}
	}
	if run.err != "" {
		moved(run.err)
		return
	}
	for i, g := range run.pin.guards {
		now, serr := stampDir(g.path)
		if serr != nil || !now.same(run.before[i]) {
			moved("the repository or a directory above it was renamed or replaced while git read it")
			return
		}
	}
	if verr := run.pin.Verify(command); verr != nil {
		*err = verr
	}
}

// Stamps records what a list of paths named when taken: identity for
// directories, identity, size and times for files, absence for missing
// paths. Providers use it to reuse a result derived from those files only
// while none of them changed (the driver scan cache works the same way).
type Stamps struct {
	sigs    []fileSig
	listing bool
}

// TakeStamps stamps paths. ok is false where the OS gives no reliable
// signature, when a path cannot be stat'ed, or when a file changed at or
// after since (less the clock-granularity window): a result computed from
// reads that began at since may then not match the stamped contents.
func TakeStamps(paths []string, since time.Time) (s Stamps, ok bool) {
	return takeStamps(paths, since, false)
}

// TakeListingStamps is TakeStamps for a result derived from what
// directories list (which entries they hold and of what kind): a
// directory's times are stamped too, so an entry added, removed, renamed
// or replaced in it makes Still false.
func TakeListingStamps(paths []string, since time.Time) (s Stamps, ok bool) {
	return takeStamps(paths, since, true)
}

func takeStamps(paths []string, since time.Time, listing bool) (Stamps, bool) {
	if !sigSupported {
		return Stamps{}, false
	}
	sigs, ok := statPaths(paths, listing)
	if !ok || racy(sigs, since) {
		return Stamps{}, false
	}
	return Stamps{sigs: sigs, listing: listing}, true
}

// Still reports whether paths (the list s was taken from) are unchanged.
func (s Stamps) Still(paths []string) bool {
	if len(s.sigs) == 0 {
		return false
	}
	now, ok := statPaths(paths, s.listing)
	return ok && sameSigs(now, s.sigs)
}
