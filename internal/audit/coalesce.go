package audit

import (
	"crypto/sha256"
	"fmt"
	"sync"
	"time"
)

// Bounds of the coalescer's memory.
const (
	// maxWindows bounds the coalescing windows open at once; opening one
	// more writes the oldest first.
	maxWindows = 64
	// maxDistinctNames bounds the unknown tool names one window tells
	// apart (the summary then says "at least").
	maxDistinctNames = 1024
)

// coalesceKey groups refused calls. It never holds text the client chose
// beyond a served tool's name: every unknown name shares one key, and the
// error is keyed by its code, not its message.
type coalesceKey struct {
	session string
	tool    string // a served tool's name; "" for unknown names
	known   bool
	code    int64
	ceiling bool // the one window per session used above the size ceiling
}

// window counts the refused calls of one key after the first, which was
// written on its own.
type window struct {
	key      coalesceKey
	order    uint64
	ev       Event // the first counted call
	count    int64
	duration int64
	firstAt  int64
	lastAt   int64
	names    map[[sha256.Size]byte]struct{}
	timer    *time.Timer
}

// coalescer turns floods of refused calls into counted entries, so the
// caller a ledger records cannot flush the ledger with cheap refusals (see
// Ledger.RecordCall).
type coalescer struct {
	l       *Ledger
	mu      sync.Mutex // held across appends, so entries keep call order
	windows map[coalesceKey]*window
	order   uint64
	closed  bool
}

func (c *coalescer) init(l *Ledger) {
	c.l = l
	c.windows = map[coalesceKey]*window{}
}

func (c *coalescer) record(rec CallRecord) {
	ev := EventFromCall(rec)
	c.mu.Lock()
	defer c.mu.Unlock()
	if rec.Outcome != OutcomeBlocked || c.closed || c.l.lim.window <= 0 {
		// A real call (or coalescing is off): what was counted so far goes
		// first, then the call itself.
		c.flushAllLocked()
		c.l.recordEvent(ev)
		return
	}
	key := coalesceKey{session: ev.SessionID, known: rec.Known, code: rec.ErrorCode}
	if rec.Known {
		key.tool = rec.Tool
	}
	ceiling := c.l.overCeiling()
	if ceiling {
		key = coalesceKey{session: ev.SessionID, ceiling: true}
	}
	if w, ok := c.windows[key]; ok {
		w.add(ev, rec.Tool, rec.Known)
		return
	}
	if len(c.windows) >= maxWindows {
		c.flushOldestLocked()
	}
	c.order++
	w := &window{key: key, order: c.order}
	c.windows[key] = w
	if ceiling {
		// Nothing is written for refusals alone: the count waits for the
		// next real call or the exit.
		w.add(ev, rec.Tool, rec.Known)
		return
	}
	c.l.recordEvent(ev)
	w.timer = time.AfterFunc(c.l.lim.window, func() { c.expire(w) })
}

func (w *window) add(ev Event, tool string, known bool) {
	if w.count == 0 {
		w.ev, w.firstAt = ev, ev.Timestamp
	}
	w.count++
	w.lastAt = max(w.lastAt, ev.Timestamp)
	w.duration += ev.DurationMS
	if !known {
		if w.names == nil {
			w.names = map[[sha256.Size]byte]struct{}{}
		}
		if len(w.names) < maxDistinctNames {
			w.names[sha256.Sum256([]byte(tool))] = struct{}{}
		}
	}
}

// expire ends a window when its time is up.
func (c *coalescer) expire(w *window) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.windows[w.key] != w {
		return // already written
	}
	c.flushLocked(w)
}

func (c *coalescer) flushAllLocked() {
	for len(c.windows) > 0 {
		c.flushOldestLocked()
	}
}

// flushOldestLocked writes the window opened first, so entries of
// different keys keep the order of their first calls.
func (c *coalescer) flushOldestLocked() {
	var oldest *window
	for _, w := range c.windows {
		if oldest == nil || w.order < oldest.order {
			oldest = w
		}
	}
	if oldest != nil {
		c.flushLocked(oldest)
	}
}

func (c *coalescer) flushLocked(w *window) {
	delete(c.windows, w.key)
	if w.timer != nil {
		w.timer.Stop()
	}
	if w.count == 0 {
		return
	}
	c.l.recordEvent(w.coalesced(c.l.lim.maxBytes))
}

// coalesced is the counted entry of a window: the first counted call's
// event (its tool, scope and argument fingerprint) with count, firstAt and
// lastAt, and a summary saying what was counted.
func (w *window) coalesced(ceiling int64) Event {
	e := w.ev
	e.Count, e.FirstAt, e.LastAt = w.count, w.firstAt, w.lastAt
	e.Timestamp, e.DurationMS = w.lastAt, w.duration
	what := fmt.Sprintf("%d refused calls coalesced", w.count)
	if w.key.ceiling {
		what = fmt.Sprintf("%d refused calls counted, not itemised: the ledger is above its %d-byte ceiling", w.count, ceiling)
	}
	if n := len(w.names); n > 0 {
		atLeast := ""
		if n >= maxDistinctNames {
			atLeast = "at least "
		}
		what += fmt.Sprintf(", %s%d distinct unknown tool names", atLeast, n)
	}
	e.Summary = BoundText(what+"; the first: "+e.Summary, MaxSummaryChars)
	return e
}

// close writes every window and makes later refusals be written one by
// one, so nothing counted is lost at exit.
func (c *coalescer) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	c.flushAllLocked()
}
