package audit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Limits of the append protocol and of retention (see docs/audit.md).
const (
	DefaultSegmentBytes = 4 << 20   // rotate the active file beyond this
	DefaultLineBytes    = 256 << 10 // one entry, newline included
	defaultLockTimeout  = 5 * time.Second

	// DefaultRetainBytes is the retention size: while the active file and
	// the rotated segments together exceed it, the oldest rotated segment
	// is pruned (subject to the age floor). 20 MiB is what the earlier
	// fixed policy kept: four 4 MiB segments and the active file.
	DefaultRetainBytes = 20 << 20
	// MinSegmentBytes and MaxSegmentBytes bound a configured segment size:
	// below 4 KiB rotation would outrun the line limit's purpose, above
	// 1 GiB one pruning step would free too much at once.
	MinSegmentBytes = 4 << 10
	MaxSegmentBytes = 1 << 30

	// DefaultMinAge is the retention floor: a rotated segment whose newest
	// entry is younger than this is never pruned, however many segments
	// exist, so a flood of calls cannot push recent history out.
	DefaultMinAge = 30 * 24 * time.Hour
	// DefaultMaxBytes is the ledger's ceiling (active file plus rotated
	// segments), far above the 20 MiB of default retention. Above it,
	// refused calls are no longer written one by one (see RecordCall);
	// real calls always are.
	DefaultMaxBytes = 1 << 30
	// DefaultCoalesceWindow is how long repeated refusals are counted
	// into one entry (see RecordCall).
	DefaultCoalesceWindow = 10 * time.Second
	// floorSegments is where the age floor gives way: beyond this many
	// rotated segments (4 GiB at the default segment size, reachable only
	// through real calls since refusals stop at the size ceiling) the
	// oldest are pruned whatever their age and the size rule, so the ledger's directory scans stay within maxDirMatches
	// and appends never start failing.
	floorSegments = 1024
)

// limits are the protocol's bounds. Production always uses the defaults;
// tests inject small ones through the unexported Options.limits.
type limits struct {
	segmentBytes int64
	lineBytes    int
	lockTimeout  time.Duration
	// retainBytes and retainAge are the retention policy (see Retention);
	// zero turns the rule off.
	retainBytes int64
	retainAge   time.Duration
	// noSync skips fsync, for building large test fixtures quickly.
	noSync bool
	// minAge, maxBytes and window: see DefaultMinAge, DefaultMaxBytes and
	// DefaultCoalesceWindow. Zero minAge lets the size rule prune young
	// segments too; zero maxBytes or window means no ceiling or no
	// coalescing.
	minAge   time.Duration
	maxBytes int64
	window   time.Duration
	// floorSegments: see the constant; 0 means the constant.
	floorSegments int
}

func defaultLimits() limits {
	return limits{segmentBytes: DefaultSegmentBytes, lineBytes: DefaultLineBytes,
		lockTimeout: defaultLockTimeout, retainBytes: DefaultRetainBytes,
		minAge: DefaultMinAge, maxBytes: DefaultMaxBytes, window: DefaultCoalesceWindow}
}

// Retention is the retention policy and the size ceiling. Use
// DefaultRetention and change what differs: every zero field is a choice
// (no limit, no rule), except SegmentBytes, where zero means the default.
type Retention struct {
	// RetainBytes: while the active file and the rotated segments
	// together exceed it, the oldest rotated segment is pruned — unless
	// its newest entry is younger than MinAge. Zero: no size rule. The
	// active file is never pruned.
	RetainBytes int64
	// RetainAge: a rotated segment whose newest entry is older is pruned
	// whatever the size. Zero: no age rule. When both are set it must not
	// be below MinAge (FromEnv refuses that).
	RetainAge time.Duration
	// SegmentBytes: the active file rotates when an entry would take it
	// beyond this (MinSegmentBytes..MaxSegmentBytes; zero: the default).
	SegmentBytes int64
	// MinAge: the size rule never prunes a rotated segment whose newest
	// entry is younger than this (the 1,024-segment cap aside). Zero: the
	// size rule prunes young segments too.
	MinAge time.Duration
	// MaxBytes: the ceiling above which refused calls are only counted
	// (see RecordCall). Zero: no ceiling.
	MaxBytes int64
}

// DefaultRetention is the policy used when nothing is configured.
func DefaultRetention() Retention {
	return Retention{RetainBytes: DefaultRetainBytes, SegmentBytes: DefaultSegmentBytes,
		MinAge: DefaultMinAge, MaxBytes: DefaultMaxBytes}
}

// ErrClosed is returned by Append after Close.
var ErrClosed = errors.New("audit ledger closed")

// IntegrityError reports a ledger that breaks the format or the chain. It
// names the file (base name) and line, never entry contents.
type IntegrityError struct {
	// Segment is the base name of the file: the active file, a rotated
	// segment or a retention checkpoint.
	Segment string
	Line    int // 1-based; 0 when the problem is not one line
	Reason  string
}

func (e *IntegrityError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s line %d: %s", e.Segment, e.Line, e.Reason)
	}
	return fmt.Sprintf("%s: %s", e.Segment, e.Reason)
}

func integrity(segment string, line int, format string, args ...any) *IntegrityError {
	return &IntegrityError{Segment: segment, Line: line, Reason: fmt.Sprintf(format, args...)}
}

// Options configures a Ledger.
type Options struct {
	// Path of the active ledger file.
	Path string
	// Signer signs every entry and checkpoint (optional).
	Signer *Signer
	// Log receives the degraded-state messages (optional).
	Log hclog.Logger
	// Retention replaces the whole default policy, DefaultRetention
	// (optional).
	Retention *Retention

	limits *limits // tests only
}

// Ledger is the hash-chained, append-only audit ledger. It is safe for
// concurrent use and shares its file with other processes through the
// lock file. Its RecordCall makes it the host's call recorder
// (host/mcp Recorder); the approval gateway calls Append directly.
type Ledger struct {
	path, dir, base string
	signer          *Signer
	log             hclog.Logger
	lim             limits

	mu        sync.Mutex // serializes appends within the process
	closed    bool
	housekept bool  // the first append's retention check ran
	cache     *tail // chain state at the end of the active file, as last seen

	healthMu sync.Mutex
	degraded bool
	failures int

	// bytes is the ledger's size on disk (active file plus rotated
	// segments) as last measured under the lock; -1 until measured.
	bytes atomic.Int64
	co    coalescer
}

// Open prepares a ledger at opts.Path. It does no I/O beyond resolving
// symlinks above the ledger's own directory (that directory and the files
// in it are never followed through links); the directory and file are
// created by the first append.
func Open(opts Options) (*Ledger, error) {
	if strings.TrimSpace(opts.Path) == "" {
		return nil, errors.New("audit: empty ledger path")
	}
	abs, err := filepath.Abs(opts.Path)
	if err != nil {
		return nil, fmt.Errorf("audit: ledger path: %w", err)
	}
	if strings.HasSuffix(opts.Path, string(filepath.Separator)) {
		return nil, fmt.Errorf("audit: ledger path %s names a directory", opts.Path)
	}
	dir, base := splitPath(abs)
	if base == "." || base == ".." || base == string(filepath.Separator) {
		return nil, fmt.Errorf("audit: ledger path %s has no file name", opts.Path)
	}
	if parent := filepath.Dir(dir); parent != dir {
		dir = filepath.Join(resolveExisting(parent), filepath.Base(dir))
	}
	if fi, err := os.Lstat(filepath.Join(dir, base)); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("audit: ledger path %s is a directory", opts.Path)
	}
	lim := defaultLimits()
	if opts.limits != nil {
		lim = *opts.limits
	}
	if r := opts.Retention; r != nil {
		if r.MinAge < 0 || r.MaxBytes < 0 || r.RetainBytes < 0 || r.RetainAge < 0 {
			return nil, errors.New("audit: negative retention age or size")
		}
		if r.SegmentBytes != 0 && (r.SegmentBytes < MinSegmentBytes || r.SegmentBytes > MaxSegmentBytes) {
			return nil, fmt.Errorf("audit: segment size %d is outside %d..%d bytes", r.SegmentBytes, MinSegmentBytes, MaxSegmentBytes)
		}
		lim.minAge, lim.maxBytes = r.MinAge, r.MaxBytes
		lim.retainBytes, lim.retainAge = r.RetainBytes, r.RetainAge
		if r.SegmentBytes != 0 {
			lim.segmentBytes = r.SegmentBytes
		}
	}
	log := opts.Log
	if log == nil {
		log = hclog.NewNullLogger()
	}
	l := &Ledger{path: filepath.Join(dir, base), dir: dir, base: base, signer: opts.Signer, log: log, lim: lim}
	l.bytes.Store(-1)
	l.co.init(l)
	return l, nil
}

// resolveExisting resolves symlinks in the longest existing prefix of p.
func resolveExisting(p string) string {
	var rest []string
	cur := p
	for {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(append([]string{r}, rest...)...)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		rest = append([]string{filepath.Base(cur)}, rest...)
		cur = parent
	}
}

// Check reports what would make every append fail, without creating or
// changing anything: a symlink among the directory's components, a
// directory or ledger file that others can access or that belongs to
// someone else, a ledger file that is not a plain single-link file.
// FromEnv runs it, so such a setup stops start-up instead of degrading.
func (l *Ledger) Check() error {
	if err := checkDir(l.dir, false); err != nil {
		return err
	}
	for _, p := range []string{l.path, l.path + ".lock"} {
		if err := checkExistingFile(p); err != nil {
			return err
		}
	}
	return nil
}

// Path is the active ledger file.
func (l *Ledger) Path() string { return l.path }

// Signed reports whether entries are signed.
func (l *Ledger) Signed() bool { return l.signer != nil }

// Close writes the counts of refused calls still being coalesced (so
// nothing counted is lost at exit) and waits for an append in progress, so
// a process that exits right after it leaves no torn line behind. Later
// calls are still recorded, one entry each: a call cancelled while the
// server shuts down is recorded if the process lives long enough (a line
// cut short by the exit is repaired by the next append). Use Shutdown to
// refuse them.
func (l *Ledger) Close() error {
	if l == nil {
		return nil
	}
	l.co.close()
	l.mu.Lock()
	defer l.mu.Unlock()
	return nil
}

// Shutdown writes the pending coalesced counts, waits for an append in
// progress and refuses later ones with ErrClosed.
func (l *Ledger) Shutdown() {
	if l == nil {
		return
	}
	l.co.close()
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
}

// RecordCall records one tools/call. Successful calls and tool errors are
// appended at once, one entry each. Refused calls (a JSON-RPC error:
// unknown tool, invalid arguments, refused path, provider failure) are
// coalesced per session, tool (every unknown name counts as one key) and
// error code: the first is appended at once; the ones that follow within
// the coalescing window are counted into one entry with count, firstAt and
// lastAt, written when the window ends, before the next call that is not
// coalesced, and at Close or Shutdown. Above the size ceiling a refused
// call is never written on its own: all of a session's refusals are
// counted into one entry, written only before its next real call or at
// exit. A failure never reaches the caller: the first one is logged as the
// ledger going degraded, and the recovery is logged when an append
// succeeds again.
func (l *Ledger) RecordCall(_ context.Context, rec CallRecord) {
	if l == nil {
		return
	}
	l.co.record(rec)
}

// recordEvent appends ev and tracks the ledger's health.
func (l *Ledger) recordEvent(ev Event) {
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic while appending: %v", r)
			}
		}()
		_, err = l.Append(ev)
	}()
	if errors.Is(err, ErrClosed) {
		return
	}
	l.healthMu.Lock()
	defer l.healthMu.Unlock()
	if err != nil {
		l.failures++
		if !l.degraded {
			l.degraded = true
			l.log.Error("audit ledger degraded: append failed; tool responses are not affected", "path", l.path, "error", err)
		}
		return
	}
	if l.degraded {
		l.log.Warn("audit ledger recovered", "path", l.path, "failed_appends", l.failures)
		l.degraded, l.failures = false, 0
	}
}

// overCeiling reports whether the ledger, as last measured, is at or above
// its size ceiling.
func (l *Ledger) overCeiling() bool {
	return l.lim.maxBytes > 0 && l.bytes.Load() >= l.lim.maxBytes
}

// Appended describes an entry written by Append.
type Appended struct {
	Sequence  uint64
	EntryHash string
	SegmentID string
	// Line is the entry exactly as written (without the newline).
	Line []byte
}

// Append chains, signs and durably appends one event.
func (l *Ledger) Append(ev Event) (Appended, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return Appended{}, ErrClosed
	}
	return l.appendLocked(ev.object())
}

// tail is the chain state at the end of the active file.
type tail struct {
	info fileInfo // of the active file when read
	size int64
	// lastSeq is the last sequence of the chain so far (0: none yet).
	lastSeq uint64
	// lastHash is the previousHash of the next entry.
	lastHash string
	// segmentID of the active file's chained entries; "" when it has none
	// (a fresh segment gets a new id).
	segmentID string
	// firstSeq is the active file's first chained sequence (0: unknown).
	firstSeq uint64
}

func (l *Ledger) appendLocked(ev Object) (Appended, error) {
	if err := ensureDir(l.dir); err != nil {
		return Appended{}, err
	}
	lk, err := acquireLock(l.path+".lock", l.lim.lockTimeout)
	if err != nil {
		return Appended{}, err
	}
	defer lk.release()
	// Everything is checked again now that no other writer can interfere.
	if err := ensureDir(l.dir); err != nil {
		return Appended{}, err
	}
	if !l.housekept {
		// Finish a retention step a crash may have interrupted, and measure
		// the ledger. A failure never stops the recording of new entries.
		if _, err := l.prune(); err != nil {
			l.log.Warn("audit ledger retention failed", "path", l.path, "error", err)
		}
		l.housekept = true
	}
	a, rotated, err := l.writeLocked(ev)
	if err != nil {
		return a, err
	}
	if rotated {
		if _, err := l.prune(); err != nil {
			// The entry is durable; retention is retried by the next rotation.
			l.log.Warn("audit ledger retention failed", "path", l.path, "error", err)
		}
	}
	return a, nil
}

// writeLocked chains and writes one entry, rotating the active file first
// when the entry would take it beyond the segment size; the caller holds
// the lock and runs retention when it reports a rotation.
func (l *Ledger) writeLocked(ev Object) (Appended, bool, error) {
	f, created, info, err := l.openActive()
	if err != nil {
		return Appended{}, false, err
	}
	defer func() { f.Close() }()
	st, err := l.tailOf(f, info)
	if err != nil {
		l.cache = nil
		return Appended{}, false, err
	}
	at := link{sequence: st.lastSeq + 1, previousHash: st.lastHash, segmentID: st.segmentID}
	if at.segmentID == "" {
		at.segmentID = newUUID()
	}
	id := newUUID()
	entry, line, err := chainEntry(ev, at, id, l.signer)
	if err != nil {
		return Appended{}, false, err
	}
	if len(line)+1 > l.lim.lineBytes {
		return Appended{}, false, fmt.Errorf("entry of %d bytes exceeds the %d-byte line limit", len(line)+1, l.lim.lineBytes)
	}
	rotated := false
	if st.segmentID != "" && st.size+int64(len(line))+1 > l.lim.segmentBytes {
		if err := l.rotate(f, st); err != nil {
			return Appended{}, false, fmt.Errorf("rotate: %w", err)
		}
		rotated = true
		f.Close()
		if f, created, info, err = l.openActive(); err != nil {
			return Appended{}, false, err
		}
		st = tail{info: info, size: info.size, lastSeq: st.lastSeq, lastHash: st.lastHash}
		if st.size != 0 {
			return Appended{}, false, fmt.Errorf("%s is not empty right after rotation", l.path)
		}
		at.segmentID = newUUID()
		if entry, line, err = chainEntry(ev, at, id, l.signer); err != nil {
			return Appended{}, false, err
		}
	}
	buf := make([]byte, 0, len(line)+1)
	buf = append(append(buf, line...), '\n')
	if _, err := f.Write(buf); err != nil {
		_ = f.Truncate(st.size) // never leave a torn line behind if we can help it
		l.cache = nil
		return Appended{}, false, fmt.Errorf("write: %w", err)
	}
	if !l.lim.noSync {
		if err := f.Sync(); err != nil {
			l.cache = nil
			return Appended{}, false, fmt.Errorf("sync: %w", err)
		}
		if created {
			if err := syncDir(l.dir); err != nil {
				l.cache = nil
				return Appended{}, false, fmt.Errorf("sync directory: %w", err)
			}
		}
	}
	h, _ := stringField(entry, "entryHash")
	first := st.firstSeq
	if st.segmentID == "" || rotated {
		first = at.sequence
	}
	l.cache = nil
	if fi, err := f.Stat(); err == nil {
		if ni, ok := statInfo(fi); ok {
			l.cache = &tail{info: ni, size: ni.size, lastSeq: at.sequence, lastHash: h, segmentID: at.segmentID, firstSeq: first}
		}
	}
	if !rotated {
		if n := l.bytes.Load(); n >= 0 {
			l.bytes.Add(int64(len(buf)))
		}
	}
	return Appended{Sequence: at.sequence, EntryHash: h, SegmentID: at.segmentID, Line: line}, rotated, nil
}

// openActive opens (creating if needed) the active file, never through a
// symlink, and checks it.
func (l *Ledger) openActive() (*os.File, bool, fileInfo, error) {
	created := true
	f, err := openNoFollow(l.path, os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		created = false
		f, err = openNoFollow(l.path, os.O_RDWR|os.O_APPEND, 0)
	}
	if err != nil {
		return nil, false, fileInfo{}, err
	}
	info, err := checkOpened(f, l.path)
	if err != nil {
		f.Close()
		return nil, false, fileInfo{}, err
	}
	return f, created, info, nil
}

func (l *Ledger) sync(f *os.File) error {
	if l.lim.noSync {
		return nil
	}
	return f.Sync()
}

// tailOf returns the chain state at the end of the active file, repairing
// a torn last line first.
func (l *Ledger) tailOf(f *os.File, info fileInfo) (tail, error) {
	if c := l.cache; c != nil && c.info.id == info.id && c.size == info.size && c.info.mtime == info.mtime {
		return *c, nil
	}
	t := tail{info: info, size: info.size}
	if info.size == 0 {
		return l.tailFromSegments(t)
	}
	if err := l.repairTail(f, &t); err != nil {
		return t, err
	}
	if t.size == 0 {
		return l.tailFromSegments(t)
	}
	last, err := readLastLine(f, t.size, l.lim.lineBytes)
	if err != nil {
		return t, integrity(l.base, 0, "last line: %v", err)
	}
	o, err := parseObject(last)
	if err != nil {
		return t, integrity(l.base, 0, "last line: %v", err)
	}
	if isChained(o) {
		cf, err := readChainFields(o)
		if err != nil {
			return t, integrity(l.base, 0, "last line: %v", err)
		}
		t.lastSeq, t.lastHash, t.segmentID = cf.sequence, cf.entryHash, cf.segmentID
		if int64(len(last))+1 == t.size {
			t.firstSeq = cf.sequence
		}
		return t, nil
	}
	// Only unchained (legacy) lines so far: the chain starts at sequence 1,
	// anchored to a hash over all of them.
	anchor, err := l.legacyPrefix(f)
	if err != nil {
		return t, err
	}
	t.lastSeq, t.lastHash = 0, legacyLabel(anchor)
	return t, nil
}

// repairTail fixes an unterminated last line: a complete JSON object gets
// its newline; anything else is cut off after the last complete line (or,
// when the file holds nothing else, the file is emptied).
func (l *Ledger) repairTail(f *os.File, t *tail) error {
	n := min(t.size, int64(l.lim.lineBytes)+1)
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, t.size-n); err != nil {
		return err
	}
	if buf[n-1] == '\n' {
		return nil
	}
	idx := bytes.LastIndexByte(buf, '\n')
	partial := buf[idx+1:]
	if idx < 0 && n < t.size {
		return integrity(l.base, 0, "unterminated last line longer than the line limit")
	}
	if o, err := parseObject(partial); err == nil && o != nil {
		if _, err := f.Write([]byte{'\n'}); err != nil {
			return fmt.Errorf("repair tail: %w", err)
		}
		t.size++
		l.log.Warn("audit ledger: completed a last record that lacked its newline", "path", l.path)
	} else {
		t.size -= int64(len(partial))
		if err := f.Truncate(t.size); err != nil {
			return fmt.Errorf("repair tail: %w", err)
		}
		l.log.Warn("audit ledger: removed a torn last line", "path", l.path, "bytes", len(partial))
	}
	return l.sync(f)
}

// tailFromSegments is the chain state when the active file holds nothing:
// it continues the newest rotated segment, or starts at genesis.
func (l *Ledger) tailFromSegments(t tail) (tail, error) {
	lf, err := scanDir(l.dir, l.base)
	if err != nil {
		return t, err
	}
	t.segmentID = ""
	if len(lf.segments) == 0 {
		t.lastSeq, t.lastHash = 0, GenesisHash
		return t, nil
	}
	newest := lf.segments[len(lf.segments)-1]
	f, err := openNoFollow(filepath.Join(l.dir, newest.name), os.O_RDONLY, 0)
	if err != nil {
		return t, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return t, err
	}
	last, err := readLastLine(f, fi.Size(), l.lim.lineBytes)
	if err != nil {
		return t, integrity(newest.name, 0, "last line: %v", err)
	}
	o, err := parseObject(last)
	if err != nil {
		return t, integrity(newest.name, 0, "last line: %v", err)
	}
	cf, err := readChainFields(o)
	if err != nil {
		return t, integrity(newest.name, 0, "last line: %v", err)
	}
	if cf.sequence != newest.last {
		return t, integrity(newest.name, 0, "ends at sequence %d, its name says %d", cf.sequence, newest.last)
	}
	t.lastSeq, t.lastHash = cf.sequence, cf.entryHash
	return t, nil
}

// legacyPrefix folds the anchor over an active file of unchained lines.
func (l *Ledger) legacyPrefix(f *os.File) ([]byte, error) {
	lr := newLineReader(io.NewSectionReader(f, 0, 1<<62), l.lim.lineBytes)
	var anchor []byte
	for n := 1; ; n++ {
		line, err := lr.next()
		if errors.Is(err, io.EOF) {
			return anchor, nil
		}
		if err != nil {
			return nil, integrity(l.base, n, "%v", err)
		}
		o, err := parseObject(line)
		if err != nil {
			return nil, integrity(l.base, n, "%v", err)
		}
		if isChained(o) {
			return nil, integrity(l.base, n, "chained entry before the last unchained record")
		}
		if anchor, err = legacyAnchor(anchor, o); err != nil {
			return nil, integrity(l.base, n, "%v", err)
		}
	}
}

// firstChained returns the chain fields of the first chained line of a
// file (unchained lines may precede it in the ledger's first file).
func (l *Ledger) firstChained(r io.Reader, name string) (chainFields, error) {
	lr := newLineReader(r, l.lim.lineBytes)
	for n := 1; ; n++ {
		line, err := lr.next()
		if errors.Is(err, io.EOF) {
			return chainFields{}, integrity(name, 0, "holds no chained entry")
		}
		if err != nil {
			return chainFields{}, integrity(name, n, "%v", err)
		}
		o, err := parseObject(line)
		if err != nil {
			return chainFields{}, integrity(name, n, "%v", err)
		}
		if !isChained(o) {
			continue
		}
		cf, err := readChainFields(o)
		if err != nil {
			return chainFields{}, integrity(name, n, "%v", err)
		}
		return cf, nil
	}
}

// rotate renames the active file to its segment name.
func (l *Ledger) rotate(f *os.File, st tail) error {
	first := st.firstSeq
	if first == 0 {
		cf, err := l.firstChained(io.NewSectionReader(f, 0, st.size), l.base)
		if err != nil {
			return err
		}
		first = cf.sequence
	}
	dest := filepath.Join(l.dir, segmentName(l.base, first, st.lastSeq, st.segmentID))
	if _, err := os.Lstat(dest); err == nil {
		return fmt.Errorf("%s already exists", filepath.Base(dest))
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.Rename(l.path, dest); err != nil {
		return err
	}
	l.cache = nil
	return syncDir(l.dir)
}

// prune enforces the retention policy, oldest rotated segment first: a
// segment goes when its newest entry is older than the retention age, or
// while the ledger is larger than the retention size and the segment's
// newest entry is older than the age floor, or while more rotated
// segments exist than the floor allows. For each, it appends an
// audit.pruned entry naming what goes and why (so the chain itself
// records every pruning), writes (and syncs) a checkpoint naming where the
// retained chain resumes, then deletes the segment, then older
// checkpoints. One segment at a time, so a crash at any point leaves a
// verifiable ledger (a crash between the entry and the deletion records
// the same pruning twice). It ends by measuring the ledger's size. The
// caller holds the lock.
func (l *Ledger) prune() ([]Pruning, error) {
	lf, err := scanDir(l.dir, l.base)
	if err != nil {
		return nil, err
	}
	for _, t := range lf.temps {
		_ = os.Remove(filepath.Join(l.dir, t))
	}
	// Only segments that existed when retention started are candidates:
	// the audit.pruned entries may fill and rotate the active file, and
	// pruning that new segment would only record yet another pruning.
	var horizon uint64
	if n := len(lf.segments); n > 0 {
		horizon = lf.segments[n-1].last
	}
	var done []Pruning
	for len(lf.segments) > 0 && lf.segments[0].last <= horizon {
		drop := lf.segments[0]
		reason, ok, err := l.pruneReason(lf, drop)
		if err != nil {
			return done, err
		}
		if !ok {
			break // every later segment is younger still
		}
		// Where the retained chain resumes: the next segment's first entry,
		// else the active file's; an empty active file is resumed by the
		// audit.pruned entry itself.
		var resume chainFields
		known := false
		if len(lf.segments) > 1 {
			keep := lf.segments[1]
			if resume, err = l.firstEntryOf(keep); err != nil {
				return done, err
			}
			if resume.sequence != keep.first {
				return done, integrity(keep.name, 0, "retained segments are not contiguous; not pruning")
			}
			known = true
		} else if fi, err := os.Lstat(l.path); err == nil && fi.Size() > 0 {
			if resume, err = l.firstEntryOfFile(l.path, l.base); err != nil {
				return done, err
			}
			known = true
		}
		if known && resume.sequence != drop.last+1 {
			return done, integrity(l.base, 0, "retained chain does not continue the segment to prune; not pruning")
		}
		a, _, err := l.writeLocked(prunedEvent(drop, reason))
		if err != nil {
			return done, fmt.Errorf("record pruning: %w", err)
		}
		if !known {
			if resume, err = l.firstEntryOfFile(l.path, l.base); err != nil {
				return done, err
			}
			if resume.sequence != drop.last+1 {
				return done, integrity(l.base, 0, "retained chain does not continue the segment to prune; not pruning")
			}
		}
		if err := l.writeCheckpoint(lf.checkpoints, resume.sequence, resume.previousHash); err != nil {
			return done, fmt.Errorf("checkpoint: %w", err)
		}
		if err := os.Remove(filepath.Join(l.dir, drop.name)); err != nil {
			return done, err
		}
		if err := syncDir(l.dir); err != nil {
			return done, err
		}
		for _, c := range lf.checkpoints {
			if c.next < resume.sequence {
				_ = os.Remove(filepath.Join(l.dir, c.name))
			}
		}
		if err := syncDir(l.dir); err != nil {
			return done, err
		}
		// The entry just written says what was pruned, as the verifier
		// reads it back (pruned.go).
		o, err := parseObject(a.Line)
		if err != nil {
			return done, fmt.Errorf("read back the pruning entry: %w", err)
		}
		p, err := readPruning(o, a.Sequence)
		if err != nil {
			return done, fmt.Errorf("read back the pruning entry: %w", err)
		}
		done = append(done, p)
		if lf, err = scanDir(l.dir, l.base); err != nil {
			return done, err
		}
	}
	l.measure(lf)
	return done, nil
}

// pruneReason tells whether the oldest rotated segment drop is to be
// pruned now and why, in the words the audit.pruned entry records.
func (l *Ledger) pruneReason(lf ledgerFiles, drop segmentFile) (string, bool, error) {
	floorCap := l.lim.floorSegments
	if floorCap == 0 {
		floorCap = floorSegments
	}
	overCap := len(lf.segments) > floorCap
	var age time.Duration
	if l.lim.retainAge > 0 || l.lim.minAge > 0 {
		newest, err := l.newestTimestamp(drop)
		if err != nil {
			return "", false, err
		}
		age = time.Since(time.UnixMilli(newest))
	}
	if l.lim.retainAge > 0 && age > l.lim.retainAge {
		return "age: newest entry is older than " + FormatAge(l.lim.retainAge), true, nil
	}
	if l.lim.retainBytes > 0 {
		if total := l.diskBytes(lf); total > l.lim.retainBytes {
			reason := fmt.Sprintf("size: the ledger is %d bytes, over the %d retained", total, l.lim.retainBytes)
			switch {
			case l.lim.minAge == 0:
				return reason, true, nil
			case age >= l.lim.minAge:
				return reason + fmt.Sprintf(", and this segment's newest entry is older than the %s floor", FormatAge(l.lim.minAge)), true, nil
			case overCap:
				return reason + fmt.Sprintf(", and more than %d rotated segments exist: the age floor gives way at that many", floorCap), true, nil
			}
			return "", false, nil
		}
	}
	if overCap {
		return fmt.Sprintf("count: more than %d rotated segments exist: the age floor gives way at that many", floorCap), true, nil
	}
	return "", false, nil
}

// FormatAge writes a retention age the way ParseAge reads it: whole days
// as "30d", anything else as a Go duration.
func FormatAge(d time.Duration) string {
	if d > 0 && d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	}
	return d.String()
}

// diskBytes is the size of the rotated segments lf lists plus the active
// file.
func (l *Ledger) diskBytes(lf ledgerFiles) int64 {
	var total int64
	for _, s := range append([]string{l.base}, segmentNames(lf)...) {
		if fi, err := os.Lstat(filepath.Join(l.dir, s)); err == nil {
			total += fi.Size()
		}
	}
	return total
}

// measure records the ledger's size: the rotated segments lf lists plus
// the active file.
func (l *Ledger) measure(lf ledgerFiles) { l.bytes.Store(l.diskBytes(lf)) }

func segmentNames(lf ledgerFiles) []string {
	out := make([]string, len(lf.segments))
	for i, s := range lf.segments {
		out[i] = s.name
	}
	return out
}

// newestTimestamp is the timestamp of a rotated segment's last entry.
func (l *Ledger) newestTimestamp(s segmentFile) (int64, error) {
	f, err := openNoFollow(filepath.Join(l.dir, s.name), os.O_RDONLY, 0)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	last, err := readLastLine(f, fi.Size(), l.lim.lineBytes)
	if err != nil {
		return 0, integrity(s.name, 0, "last line: %v", err)
	}
	o, err := parseObject(last)
	if err != nil {
		return 0, integrity(s.name, 0, "last line: %v", err)
	}
	n, ok := mustNumber(o, "timestamp")
	if !ok {
		return 0, integrity(s.name, 0, "last line: timestamp missing")
	}
	ts, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		return 0, integrity(s.name, 0, "last line: timestamp is not an integer")
	}
	return ts, nil
}

func (l *Ledger) firstEntryOf(s segmentFile) (chainFields, error) {
	return l.firstEntryOfFile(filepath.Join(l.dir, s.name), s.name)
}

// firstEntryOfFile is the chain fields of the first chained entry of the
// file at path (named name in errors).
func (l *Ledger) firstEntryOfFile(path, name string) (chainFields, error) {
	f, err := openNoFollow(path, os.O_RDONLY, 0)
	if err != nil {
		return chainFields{}, err
	}
	defer f.Close()
	return l.firstChained(f, name)
}

// writeCheckpoint writes the retention checkpoint for a chain resuming at
// next, unless a matching one exists already (a retried prune).
func (l *Ledger) writeCheckpoint(existing []checkpointFile, next uint64, previousHash string) error {
	for _, c := range existing {
		if c.next != next {
			continue
		}
		if cp, err := readCheckpoint(l.dir, c); err == nil && cp.previousHash == previousHash &&
			(l.signer == nil || cp.keyID == l.signer.keyID) {
			return nil
		}
	}
	o := Object{
		{"auditCheckpointVersion", int64(CheckpointVersion)},
		{"createdAt", time.Now().UnixMilli()},
		{"nextSequence", next},
		{"previousHash", previousHash},
		{"prunedThroughSequence", next - 1},
	}
	if l.signer != nil {
		o = o.Set("signatureKeyId", l.signer.keyID).Set("signatureVersion", int64(SignatureVersion))
		msg, err := appendObjectExcept(nil, o, "signature")
		if err != nil {
			return err
		}
		o = o.Set("signature", l.signer.sign(msg))
	}
	data, err := appendObjectExcept(nil, o)
	if err != nil {
		return err
	}
	data = append(data, '\n')
	tmp := filepath.Join(l.dir, checkpointTempPrefix(l.base)+newUUID()+".tmp")
	f, err := openNoFollow(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil && !l.lim.noSync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, filepath.Join(l.dir, checkpointName(l.base, next, newUUID()))); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return syncDir(l.dir)
}
