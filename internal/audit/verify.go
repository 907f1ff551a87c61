package audit

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
)

// VerifyOptions configures Verify.
type VerifyOptions struct {
	// PublicKeys verify signed entries and checkpoints; an entry signed by
	// any other key fails.
	PublicKeys []ed25519.PublicKey
	// RequireSigned fails on any unsigned entry or checkpoint.
	RequireSigned bool

	limits *limits // tests only
}

// Report is what a successful verification counted.
type Report struct {
	Entries  uint64 `json:"entries"`
	Chained  uint64 `json:"chained"`
	Legacy   uint64 `json:"legacy"`
	Signed   uint64 `json:"signed"`
	Unsigned uint64 `json:"unsigned"`
	// Segments counts the files verified: rotated segments plus the active file.
	Segments      int    `json:"segments"`
	FirstSequence uint64 `json:"first_sequence"`
	LastSequence  uint64 `json:"last_sequence"`
	// RetentionCheckpointUsed is true when the retained chain starts after
	// pruned history, anchored by a retention checkpoint.
	RetentionCheckpointUsed bool `json:"retention_checkpoint_used"`
	// UnverifiedSignatures counts signed entries and checkpoints whose
	// signatures were not checked because no public key was given; Verify
	// then fails with ErrSignaturesUnchecked. Signed counts checked ones.
	UnverifiedSignatures uint64 `json:"unverified_signatures"`
	// PruningCount and Prunings are the audit.pruned entries of the
	// retained chain (a pruning recorded twice, after a crash, once).
	PruningCount int       `json:"pruning_count"`
	Prunings     []Pruning `json:"prunings"`
	// CoalescedEntries counts entries standing for several refused calls;
	// CoalescedCalls is the sum of their counts.
	CoalescedEntries uint64 `json:"coalesced_entries"`
	CoalescedCalls   uint64 `json:"coalesced_calls"`
	// HeadHash is the entryHash of the last chained entry ("" when there
	// is none): whoever kept it can tell later whether the ledger still
	// ends there or has grown from it.
	HeadHash string `json:"head_hash"`
	// ChainDigest is "sha256:" + hex SHA-256 over the entryHash of every
	// retained chained entry, in order, each followed by "\n" ("" when
	// there is none): an export holds the same ledger when its entries'
	// hashes digest to it.
	ChainDigest string `json:"chain_digest"`
}

// ErrSignaturesUnchecked: the ledger is intact as far as hashes and the
// chain can tell, but it holds signatures and no public key was given to
// check them, so it is not verified.
var ErrSignaturesUnchecked = errors.New("signatures not checked")

// Verify checks a whole ledger — the rotated segments next to path, the
// active file at path and the retention checkpoints — streaming one line at
// a time. A broken ledger yields an *IntegrityError naming the file and
// line; an unreadable one the underlying error. It reads a consistent
// snapshot of the ledger (see openSnapshot), so appends, rotations and
// prunings by running writers neither fail it nor change what it counts.
func Verify(path string, opts VerifyOptions) (Report, error) {
	return verifyLedger(path, opts, nil)
}

// visitFunc sees every verified entry, in ledger order: its line exactly
// as stored (without the newline; valid only during the call) and its
// parsed object. Signatures may still be being checked when it runs: only
// a nil error from verifyLedger makes what it saw verified.
type visitFunc func(line []byte, o Object) error

func verifyLedger(path string, opts VerifyOptions, visit visitFunc) (Report, error) {
	lim := defaultLimits()
	if opts.limits != nil {
		lim = *opts.limits
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return Report{}, err
	}
	if opts.RequireSigned && len(opts.PublicKeys) == 0 {
		return Report{}, errors.New("audit: RequireSigned needs at least one public key")
	}
	dir, _ := splitPath(abs)
	v := &verifier{lim: lim, dir: dir, keys: map[string]ed25519.PublicKey{}, require: opts.RequireSigned,
		visit: visit, digest: sha256.New()}
	for _, k := range opts.PublicKeys {
		if len(k) != ed25519.PublicKeySize {
			return Report{}, errors.New("audit: a public key is not an Ed25519 key")
		}
		v.keys[KeyID(k)] = k
	}
	snap, err := openSnapshot(abs, lim)
	if err != nil {
		return Report{}, err
	}
	defer snap.close()
	for _, c := range snap.checkpoints {
		var signed bool
		if len(v.keys) == 0 {
			if signed = c.signed(); signed {
				v.rep.UnverifiedSignatures++
			}
		} else if signed, err = verifySignature(c.obj, v.keys, true); err != nil {
			return Report{}, integrity(c.file.name, 0, "%v", err)
		}
		if !signed && v.require {
			return Report{}, integrity(c.file.name, 0, "retention checkpoint is not signed (--require-signed)")
		}
		v.checkpoints = append(v.checkpoints, c)
	}
	if workers := runtime.GOMAXPROCS(0); workers > 1 {
		v.pool = newSigPool(v.keys, workers)
	}
	err = func() error {
		for i, sf := range snap.files {
			v.pos = position{file: i}
			if err := v.file(sf, i == 0); err != nil {
				return err
			}
		}
		return nil
	}()
	if v.pool != nil {
		// The earliest failure wins, whichever check found it.
		if bad, at := v.pool.wait(); bad != nil && (err == nil || errors.Is(err, errStopped) || at.before(v.pos)) {
			err = bad
		}
	}
	if err != nil {
		return v.rep, err
	}
	for _, c := range v.checkpoints {
		if !v.started || c.next > v.lastSeq {
			return v.rep, integrity(c.file.name, 0, "refers to sequence %d, beyond the retained chain", c.next)
		}
	}
	v.rep.Segments = len(snap.files)
	if v.rep.Chained > 0 {
		v.rep.HeadHash = v.lastHash
		v.rep.ChainDigest = "sha256:" + hex.EncodeToString(v.digest.Sum(nil))
	}
	v.rep.PruningCount = len(v.rep.Prunings)
	if v.rep.Prunings == nil {
		v.rep.Prunings = []Pruning{}
	}
	if n := v.rep.UnverifiedSignatures; n > 0 {
		return v.rep, fmt.Errorf("%w: %d signed entries or checkpoints and no public key to check them", ErrSignaturesUnchecked, n)
	}
	return v.rep, nil
}

// snapshot is the ledger's files opened at one moment: the checkpoints
// read, every rotated segment and the active file open with the size each
// had. Reading an open file up to that size sees the same bytes whatever
// writers do afterwards: appends go beyond it, a rotation renames the
// file it reads, a pruning unlinks a file it holds open (on Unix).
type snapshot struct {
	checkpoints []*checkpoint
	files       []snapFile // rotated segments oldest first, then the active file
}

type snapFile struct {
	name string
	seg  *segmentFile // nil for the active file
	f    *os.File
	size int64
}

func (s *snapshot) close() {
	for _, f := range s.files {
		f.f.Close()
	}
}

// openSnapshot opens the ledger at abs consistently. It takes the
// ledger's lock when it can, so no writer is between two steps of an
// append, rotation or pruning; it never creates the lock file, and a
// reader that may not take it (another user's ledger, a read-only copy,
// a system without the lock) reads without it, retrying when a file
// vanished between the directory scan and its opening.
func openSnapshot(abs string, lim limits) (*snapshot, error) {
	lockPath := abs + ".lock"
	var lk *fileLock
	if fi, err := os.Lstat(lockPath); err == nil && fi.Mode().IsRegular() {
		if l, err := acquireLock(lockPath, lim.lockTimeout); err == nil {
			lk = l
		}
	}
	if lk != nil {
		defer lk.release()
	}
	for attempt := 0; ; attempt++ {
		snap, err := trySnapshot(abs)
		if err == nil || lk != nil || attempt == 3 || !errors.Is(err, errVanished) {
			return snap, err
		}
	}
}

// errVanished: a file listed by the directory scan was gone when opened.
var errVanished = errors.New("a ledger file vanished while the snapshot was taken")

func trySnapshot(abs string) (*snapshot, error) {
	dir, base := splitPath(abs)
	lf, err := scanDir(dir, base)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no audit ledger at %s: %w", abs, err)
	}
	if err != nil {
		return nil, err
	}
	if lf.bad != "" {
		return nil, integrity(lf.bad, 0, "file name does not follow the ledger's naming")
	}
	if len(lf.checkpoints) > maxCheckpoints {
		return nil, integrity(base, 0, "%d retention checkpoints; at most %d are allowed", len(lf.checkpoints), maxCheckpoints)
	}
	snap := &snapshot{}
	for _, cf := range lf.checkpoints {
		c, err := readCheckpoint(dir, cf)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s", errVanished, cf.name)
		}
		if err != nil {
			return nil, integrity(cf.name, 0, "invalid retention checkpoint: %v", err)
		}
		snap.checkpoints = append(snap.checkpoints, c)
	}
	active := true
	if fi, err := os.Lstat(abs); errors.Is(err, fs.ErrNotExist) {
		if len(lf.segments) == 0 {
			return nil, fmt.Errorf("no audit ledger at %s: %w", abs, fs.ErrNotExist)
		}
		active = false // rotated, and nothing appended since
	} else if err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, integrity(base, 0, "not a regular file")
	}
	open := func(name string, seg *segmentFile) error {
		f, err := openNoFollow(filepath.Join(dir, name), os.O_RDONLY, 0)
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: %s", errVanished, name)
		}
		if err != nil {
			return integrity(name, 0, "cannot be opened: %v", err)
		}
		fi, err := f.Stat()
		if err != nil || !fi.Mode().IsRegular() {
			f.Close()
			return integrity(name, 0, "not a regular file")
		}
		snap.files = append(snap.files, snapFile{name: name, seg: seg, f: f, size: fi.Size()})
		return nil
	}
	for i := range lf.segments {
		if err := open(lf.segments[i].name, &lf.segments[i]); err != nil {
			snap.close()
			return nil, err
		}
	}
	if active {
		if err := open(base, nil); err != nil {
			snap.close()
			return nil, err
		}
	}
	return snap, nil
}

type verifier struct {
	lim         limits
	visit       visitFunc
	digest      hash.Hash // over the chained entries' entryHash lines
	dir         string
	keys        map[string]ed25519.PublicKey
	require     bool
	checkpoints []*checkpoint

	pool *sigPool // parallel Ed25519 checks (nil: inline)
	pos  position // line being verified

	rep      Report
	started  bool   // the first chained entry was seen
	anchor   []byte // legacy-prefix anchor (nil: no unchained records)
	lastSeq  uint64
	lastHash string
	prevSeg  string // segmentId of the previous file
}

// file verifies one file of the ledger, up to the size the snapshot saw.
func (v *verifier) file(sf snapFile, firstFile bool) error {
	name, seg := sf.name, sf.seg
	lr := newLineReader(io.NewSectionReader(sf.f, 0, sf.size), v.lim.lineBytes)
	var fileSeg string
	var first, last uint64
	for n := 1; ; n++ {
		v.pos.line = n
		if v.pool != nil && v.pool.failed.Load() {
			return errStopped
		}
		line, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return integrity(name, n, "%v", err)
		}
		if len(line) == 0 {
			return integrity(name, n, "%v", errBlankLine)
		}
		o, err := parseObject(line)
		if err != nil {
			return integrity(name, n, "%v", err)
		}
		if !isChained(o) {
			if v.started || !firstFile {
				return integrity(name, n, "unchained record after the chain started")
			}
			if err := v.signature(o, false, name, n); err != nil {
				return integrity(name, n, "%v", err)
			}
			if v.anchor, err = legacyAnchor(v.anchor, o); err != nil {
				return integrity(name, n, "%v", err)
			}
			if v.visit != nil {
				if err := v.visit(line, o); err != nil {
					return err
				}
			}
			v.rep.Entries++
			v.rep.Legacy++
			continue
		}
		cf, err := readChainFields(o)
		if err != nil {
			return integrity(name, n, "%v", err)
		}
		if !v.started {
			if err := v.start(name, n, o, cf); err != nil {
				return err
			}
		} else {
			if cf.sequence != v.lastSeq+1 {
				return integrity(name, n, "sequence %d does not follow %d", cf.sequence, v.lastSeq)
			}
			if cf.previousHash != v.lastHash {
				return integrity(name, n, "previousHash does not match the preceding entry")
			}
		}
		h, err := entryHash(o)
		if err != nil {
			return integrity(name, n, "%v", err)
		}
		if h != cf.entryHash {
			return integrity(name, n, "entryHash does not match the entry")
		}
		switch {
		case fileSeg == "":
			if cf.segmentID == v.prevSeg {
				return integrity(name, n, "segmentId repeats the previous file's")
			}
			fileSeg = cf.segmentID
		case cf.segmentID != fileSeg:
			return integrity(name, n, "segmentId changes within the file")
		}
		if seg != nil && cf.segmentID != seg.segmentID {
			return integrity(name, n, "segmentId does not match the segment's name")
		}
		if err := v.signature(o, true, name, n); err != nil {
			return integrity(name, n, "%v", err)
		}
		for _, c := range v.checkpoints {
			if c.next == cf.sequence && c.previousHash != cf.previousHash {
				return integrity(c.file.name, 0, "does not match the chain at sequence %d", c.next)
			}
		}
		if first == 0 {
			first = cf.sequence
		}
		last = cf.sequence
		if err := v.content(o, cf); err != nil {
			return integrity(name, n, "%v", err)
		}
		v.lastSeq, v.lastHash = cf.sequence, cf.entryHash
		v.digest.Write([]byte(cf.entryHash))
		v.digest.Write([]byte{'\n'})
		if v.visit != nil {
			if err := v.visit(line, o); err != nil {
				return err
			}
		}
		v.rep.Entries++
		v.rep.Chained++
		v.rep.LastSequence = cf.sequence
	}
	if seg != nil {
		if first == 0 {
			return integrity(name, 0, "rotated segment holds no chained entry")
		}
		if first != seg.first || last != seg.last {
			return integrity(name, 0, "holds sequences %d..%d, its name says %d..%d", first, last, seg.first, seg.last)
		}
	}
	if fileSeg != "" {
		v.prevSeg = fileSeg
	}
	return nil
}

// start checks where the retained chain begins: after the unchained
// prefix, at genesis, or at exactly one matching retention checkpoint.
func (v *verifier) start(name string, n int, o Object, cf chainFields) error {
	switch {
	case v.anchor != nil:
		if cf.sequence != 1 || cf.previousHash != legacyLabel(v.anchor) {
			return integrity(name, n, "first chained entry does not continue the unchained prefix")
		}
	case cf.sequence == 1:
		if cf.previousHash != GenesisHash {
			return integrity(name, n, "first entry's previousHash is not %q", GenesisHash)
		}
	default:
		var match []*checkpoint
		for _, c := range v.checkpoints {
			if c.next == cf.sequence && c.previousHash == cf.previousHash {
				match = append(match, c)
			}
		}
		switch len(match) {
		case 0:
			return integrity(name, n, "chain starts at sequence %d without a matching retention checkpoint", cf.sequence)
		case 1:
		default:
			return integrity(name, n, "%d retention checkpoints claim the chain start", len(match))
		}
		if _, signedEntry := o.Get("signature"); signedEntry && !match[0].signed() {
			return integrity(match[0].file.name, 0, "unsigned retention checkpoint in front of a signed chain")
		}
		v.rep.RetentionCheckpointUsed = true
	}
	v.started = true
	v.rep.FirstSequence = cf.sequence
	return nil
}

// content collects what the report says about an entry's meaning:
// prunings and coalesced counts.
func (v *verifier) content(o Object, cf chainFields) error {
	if et, _ := stringField(o, "event_type"); et == EventPruned {
		p, err := readPruning(o, cf.sequence)
		if err != nil {
			return err
		}
		for _, q := range v.rep.Prunings {
			if q.FirstSequence == p.FirstSequence && q.LastSequence == p.LastSequence {
				return nil // recorded again after an interrupted pruning
			}
		}
		v.rep.Prunings = append(v.rep.Prunings, p)
		return nil
	}
	if _, ok := o.Get("count"); ok {
		n, err := uintField(o, "count")
		if err != nil {
			return err
		}
		v.rep.CoalescedEntries++
		v.rep.CoalescedCalls += n
	}
	return nil
}

func (v *verifier) signature(o Object, chained bool, name string, n int) error {
	if len(v.keys) == 0 {
		if _, signed := o.Get("signature"); signed {
			// Nothing to check it with: counted, and Verify fails at the end.
			v.rep.UnverifiedSignatures++
			return nil
		}
	}
	signed, chk, err := prepareSignature(o, v.keys, chained)
	if err != nil {
		return err
	}
	if !signed {
		if v.require {
			return errors.New("entry is not signed (--require-signed)")
		}
		v.rep.Unsigned++
		return nil
	}
	v.rep.Signed++
	if v.pool != nil && chk.pub != nil {
		v.pool.submit(sigJob{at: v.pos, name: name, line: n, chk: chk})
		return nil
	}
	return chk.verify(v.keys)
}

// position orders lines across the ledger's files.
type position struct{ file, line int }

func (p position) before(q position) bool {
	return p.file < q.file || (p.file == q.file && p.line < q.line)
}

// errStopped ends the walk early once a signature check failed.
var errStopped = errors.New("stopped after a failed signature")

type sigJob struct {
	at   position
	name string
	line int
	chk  *sigCheck
}

// sigPool runs Ed25519 verifications on all cores while the walk goes on;
// its queue is bounded, so memory stays bounded too.
type sigPool struct {
	keys   map[string]ed25519.PublicKey
	jobs   chan sigJob
	wg     sync.WaitGroup
	failed atomic.Bool

	mu    sync.Mutex
	bad   *IntegrityError
	badAt position
}

func newSigPool(keys map[string]ed25519.PublicKey, workers int) *sigPool {
	p := &sigPool{keys: keys, jobs: make(chan sigJob, 4*workers)}
	for i := 0; i < workers; i++ {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			for j := range p.jobs {
				if err := j.chk.verify(p.keys); err != nil {
					p.mu.Lock()
					if p.bad == nil || j.at.before(p.badAt) {
						p.bad, p.badAt = integrity(j.name, j.line, "%v", err), j.at
					}
					p.mu.Unlock()
					p.failed.Store(true)
				}
			}
		}()
	}
	return p
}

func (p *sigPool) submit(j sigJob) { p.jobs <- j }

// wait finishes the queued checks and returns the earliest failure.
func (p *sigPool) wait() (*IntegrityError, position) {
	close(p.jobs)
	p.wg.Wait()
	return p.bad, p.badAt
}
