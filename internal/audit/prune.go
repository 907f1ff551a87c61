package audit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrNoLedger: there is no ledger at the path (no active file and no
// rotated segment).
var ErrNoLedger = errors.New("no audit ledger")

// ErrSignerNeeded: the ledger is signed and Prune was given no signer, so
// its audit.pruned entries would be the chain's first unsigned ones.
var ErrSignerNeeded = errors.New("the ledger is signed, so its audit.pruned entries must be signed too")

// PruneResult is what Ledger.Prune did and left.
type PruneResult struct {
	// Prunings are the segments deleted, each recorded by an audit.pruned
	// entry of the chain, oldest first.
	Prunings []Pruning `json:"prunings"`
	// Bytes is the ledger's size afterwards: the active file plus the
	// rotated segments.
	Bytes int64 `json:"bytes"`
	// Segments is the number of rotated segments left.
	Segments int `json:"segments"`
}

// Policy is the retention policy the ledger applies.
func (l *Ledger) Policy() Retention {
	return Retention{RetainBytes: l.lim.retainBytes, RetainAge: l.lim.retainAge, SegmentBytes: l.lim.segmentBytes,
		MinAge: l.lim.minAge, MaxBytes: l.lim.maxBytes}
}

// Prune applies the retention policy now, under the ledger lock and with
// the code the first append of a process and every rotation run, so an
// operator can enforce a lowered policy without waiting for the next
// rotation. It creates no ledger: a path with neither an active file nor
// a rotated segment is ErrNoLedger. A signed ledger needs the signer, or
// its audit.pruned entries would be the first unsigned ones in the chain.
func (l *Ledger) Prune() (PruneResult, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return PruneResult{}, ErrClosed
	}
	lf, err := scanDir(l.dir, l.base)
	if errors.Is(err, fs.ErrNotExist) {
		return PruneResult{}, fmt.Errorf("%w at %s", ErrNoLedger, l.path)
	}
	if err != nil {
		return PruneResult{}, err
	}
	if _, err := os.Lstat(l.path); errors.Is(err, fs.ErrNotExist) && len(lf.segments) == 0 {
		return PruneResult{}, fmt.Errorf("%w at %s", ErrNoLedger, l.path)
	}
	if err := ensureDir(l.dir); err != nil {
		return PruneResult{}, err
	}
	lk, err := acquireLock(l.path+".lock", l.lim.lockTimeout)
	if err != nil {
		return PruneResult{}, err
	}
	defer lk.release()
	if l.signer == nil {
		signed, err := l.lastEntrySigned()
		if err != nil {
			return PruneResult{}, err
		}
		if signed {
			return PruneResult{}, fmt.Errorf("%s: %w; set %s to the key that signs it", l.path, ErrSignerNeeded, EnvSignKey)
		}
	}
	ps, err := l.prune()
	l.housekept = true
	res := PruneResult{Prunings: ps, Bytes: l.bytes.Load()}
	if ps == nil {
		res.Prunings = []Pruning{}
	}
	if lf, serr := scanDir(l.dir, l.base); serr == nil {
		res.Segments = len(lf.segments)
		res.Bytes = l.diskBytes(lf)
	}
	return res, err
}

// lastEntrySigned reports whether the newest entry of the ledger — the
// active file's last line, else the newest rotated segment's — carries a
// signature.
func (l *Ledger) lastEntrySigned() (bool, error) {
	name := l.base
	fi, err := os.Lstat(l.path)
	if err != nil || fi.Size() == 0 {
		lf, err := scanDir(l.dir, l.base)
		if err != nil {
			return false, err
		}
		if len(lf.segments) == 0 {
			return false, nil
		}
		name = lf.segments[len(lf.segments)-1].name
	}
	f, err := openNoFollow(filepath.Join(l.dir, name), os.O_RDONLY, 0)
	if err != nil {
		return false, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return false, err
	}
	last, err := readLastLine(f, st.Size(), l.lim.lineBytes)
	if err != nil {
		return false, integrity(name, 0, "last line: %v", err)
	}
	o, err := parseObject(last)
	if err != nil {
		return false, integrity(name, 0, "last line: %v", err)
	}
	_, signed := o.Get("signature")
	return signed, nil
}
