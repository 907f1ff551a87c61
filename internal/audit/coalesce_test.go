package audit

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// coalesceLimits are the production limits with a window the test picks
// and no fsync (the tests write thousands of entries).
func coalesceLimits(window time.Duration) *limits {
	lim := defaultLimits()
	lim.window, lim.noSync = window, true
	return &lim
}

// Kinds of calls the coalescing tests send.
func unknownCall(i int) CallRecord {
	return CallRecord{Tool: fmt.Sprintf("x%05d", i) + strings.Repeat("A", 10_000), Outcome: OutcomeBlocked,
		ErrorCode: -32602, ErrorMessage: "Unknown tool", ClientName: "flooder", Start: time.Now()}
}

func invalidCall(i int) CallRecord {
	return CallRecord{Tool: "repo.status", Known: true, ReadOnly: true, Outcome: OutcomeBlocked,
		ErrorCode: -32602, ErrorMessage: "Invalid params", ClientName: "flooder", Start: time.Now(),
		Arguments: []byte(fmt.Sprintf(`{"repoPath":"rel/%d"}`, i))}
}

func successCall(i int) CallRecord {
	return CallRecord{Tool: "repo.status", Known: true, ReadOnly: true, Outcome: OutcomeSuccess,
		ClientName: "flooder", Start: time.Now(), Arguments: []byte(fmt.Sprintf(`{"repoPath":"/r/%d"}`, i))}
}

// entry is the part of a ledger line the coalescing tests look at.
type entry struct {
	Tool            string `json:"tool"`
	Result          string `json:"result"`
	Session         string `json:"session_id"`
	Summary         string `json:"summary"`
	ToolFingerprint string `json:"toolFingerprint"`
	Count           int64  `json:"count"`
	FirstAt         int64  `json:"firstAt"`
	LastAt          int64  `json:"lastAt"`
}

func entries(t *testing.T, path string) []entry {
	t.Helper()
	var out []entry
	for _, f := range ledgerFileNames(t, path) {
		if _, err := os.Stat(f); err != nil {
			continue
		}
		for _, line := range readLines(t, f) {
			var e entry
			if err := json.Unmarshal(line, &e); err != nil {
				t.Fatal(err)
			}
			out = append(out, e)
		}
	}
	return out
}

// shape is an entry reduced to what the table states: "S" a success, "R"
// a refusal on its own, "R<n>" n refusals coalesced; suffixed with the
// tool for refusals of a served tool.
func shape(e entry) string {
	s := "S"
	if e.Result == ResultBlocked {
		s = "R"
		if e.Count > 0 {
			s += fmt.Sprint(e.Count)
		}
		if e.ToolFingerprint == "" {
			s += ":" + e.Tool
		}
	}
	return s
}

func TestCoalesceRefusals(t *testing.T) {
	type step struct {
		n    int
		call func(int) CallRecord
	}
	for _, tc := range []struct {
		name  string
		steps []step
		want  []string
	}{
		{"flood of distinct unknown names", []step{{14_000, unknownCall}},
			[]string{"R", "R13999"}},
		{"successes are never coalesced", []step{{5, successCall}},
			[]string{"S", "S", "S", "S", "S"}},
		{"a real call ends the window", []step{{10, unknownCall}, {1, successCall}, {10, unknownCall}},
			[]string{"R", "R9", "S", "R", "R9"}},
		{"keys are kept apart, in the order of their first call", []step{{1, unknownCall}, {1, invalidCall}, {1, unknownCall}, {1, invalidCall}, {1, unknownCall}},
			[]string{"R", "R:repo.status", "R2", "R1:repo.status"}},
		{"a single refusal is one plain entry", []step{{1, invalidCall}},
			[]string{"R:repo.status"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := ledgerPath(t)
			l := openTest(t, path, nil, coalesceLimits(time.Hour))
			calls := 0
			for _, s := range tc.steps {
				for i := 0; i < s.n; i++ {
					l.RecordCall(context.Background(), s.call(calls))
					calls++
				}
			}
			// Close writes what is still being counted: nothing is lost at exit.
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			es := entries(t, path)
			var got []string
			total := int64(0)
			for _, e := range es {
				got = append(got, shape(e))
				total += max(e.Count, 1)
				if e.ToolFingerprint != "" && len([]rune(e.Tool)) > MaxUnknownToolChars {
					t.Errorf("unknown tool name kept whole: %d characters", len(e.Tool))
				}
				if e.Count > 0 && (e.FirstAt == 0 || e.LastAt < e.FirstAt) {
					t.Errorf("coalesced entry times %d..%d", e.FirstAt, e.LastAt)
				}
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Fatalf("entries %v, want %v", got, tc.want)
			}
			if total != int64(calls) {
				t.Fatalf("entries stand for %d calls, %d were made", total, calls)
			}
			rep := mustVerify(t, path, VerifyOptions{})
			if rep.CoalescedCalls+rep.Entries-rep.CoalescedEntries != uint64(calls) {
				t.Fatalf("report %+v does not account for %d calls", rep, calls)
			}
		})
	}
}

// The flood's entries are small: 14,000 refused calls with 10 KB names
// take a few hundred bytes of ledger, not 140 MB; the summary says how
// many distinct names were tried. The control, with coalescing off, shows
// what the same flood costs without it: an entry per call, enough to
// rotate the ledger several times over.
func TestCoalesceFloodIsSmall(t *testing.T) {
	control := ledgerPath(t)
	cl := openTest(t, control, nil, coalesceLimits(0))
	for i := 0; i < 14_000; i++ {
		cl.RecordCall(context.Background(), unknownCall(i))
	}
	cl.Shutdown()
	if rep := mustVerify(t, control, VerifyOptions{}); rep.Entries != 14_000 || rep.Segments < 2 {
		t.Fatalf("control: %+v", rep)
	}

	path := ledgerPath(t)
	l := openTest(t, path, nil, coalesceLimits(time.Hour))
	for i := 0; i < 14_000; i++ {
		l.RecordCall(context.Background(), unknownCall(i))
	}
	l.Shutdown()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > 4096 {
		t.Fatalf("ledger is %d bytes after the flood", fi.Size())
	}
	es := entries(t, path)
	if len(es) != 2 || !strings.Contains(es[1].Summary, "at least 1024 distinct unknown tool names") {
		t.Fatalf("entries %+v", es)
	}
	// After Shutdown nothing more is written, counted or not.
	l.RecordCall(context.Background(), unknownCall(0))
	if n := len(entries(t, path)); n != 2 {
		t.Fatalf("%d entries after Shutdown", n)
	}
}

// A window ends on its own: the count is written without any other call,
// and the next refusal starts a new window with an entry of its own.
func TestCoalesceWindowEnds(t *testing.T) {
	path := ledgerPath(t)
	l := openTest(t, path, nil, coalesceLimits(20*time.Millisecond))
	defer l.Close()
	for i := 0; i < 5; i++ {
		l.RecordCall(context.Background(), invalidCall(i))
	}
	waitEntries(t, path, 2)
	es := entries(t, path)
	if es[0].Count != 0 || es[1].Count != 4 {
		t.Fatalf("entries %+v", es)
	}
	l.RecordCall(context.Background(), invalidCall(9))
	if es := entries(t, path); len(es) != 3 || es[2].Count != 0 {
		t.Fatalf("after the window: %+v", es)
	}
}

func waitEntries(t *testing.T, path string, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for len(entries(t, path)) < n {
		if time.Now().After(deadline) {
			t.Fatalf("window never ended: %d entries", len(entries(t, path)))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Above the size ceiling refusals are only counted, never written on
// their own; real calls are still recorded, each preceded by the count.
func TestCeilingStopsRefusalsOnly(t *testing.T) {
	path := ledgerPath(t)
	lim := coalesceLimits(time.Hour)
	lim.maxBytes = 4096
	l := openTest(t, path, nil, lim)
	for i := 0; l.bytes.Load() < lim.maxBytes; i++ {
		l.RecordCall(context.Background(), successCall(i))
	}
	before := len(entries(t, path))
	for i := 0; i < 500; i++ {
		l.RecordCall(context.Background(), unknownCall(i))
		l.RecordCall(context.Background(), invalidCall(i))
	}
	if n := len(entries(t, path)); n != before {
		t.Fatalf("%d entries written for refusals above the ceiling", n-before)
	}
	l.RecordCall(context.Background(), successCall(0))
	es := entries(t, path)
	if len(es) != before+2 || es[before].Count != 1000 || !strings.Contains(es[before].Summary, "ceiling") || shape(es[before+1]) != "S" {
		t.Fatalf("after a real call: %+v", es[before:])
	}
	// Refusals alone never reach the disk again until exit.
	for i := 0; i < 10; i++ {
		l.RecordCall(context.Background(), unknownCall(i))
	}
	l.Close()
	es = entries(t, path)
	if len(es) != before+3 || es[before+2].Count != 10 {
		t.Fatalf("at exit: %+v", es[before:])
	}
	mustVerify(t, path, VerifyOptions{})
}

// recentRecord is a call that ends now, so its segment is young.
func recentRecord(i int) CallRecord {
	r := testRecord(i)
	r.Start = time.Now()
	return r
}

// The retention floor keeps young segments past the count limit, so a
// flood of calls cannot push recent history out; with the floor at 0 (the
// control) the same flood prunes, and every pruning is an entry of the
// chain that Verify reports.
func TestRetentionFloor(t *testing.T) {
	for _, tc := range []struct {
		name     string
		minAge   time.Duration
		wantKept bool
	}{
		{"young segments are kept", time.Hour, true},
		{"control: no floor", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := ledgerPath(t)
			s := testSigner(7)
			keys := []ed25519.PublicKey{s.Public()}
			lim := smallLimits()
			lim.minAge = tc.minAge
			l := openTest(t, path, s, lim)
			for i := 0; i < 80; i++ {
				if _, err := l.Append(EventFromCall(recentRecord(i))); err != nil {
					t.Fatal(err)
				}
			}
			lf, err := scanDir(filepath.Dir(path), filepath.Base(path))
			if err != nil {
				t.Fatal(err)
			}
			rep := mustVerify(t, path, verifyOpts(keys, true, lim))
			size := ledgerDiskBytes(t, path)
			if tc.wantKept {
				if size <= lim.retainBytes || len(lf.checkpoints) != 0 || rep.FirstSequence != 1 || rep.PruningCount != 0 {
					t.Fatalf("%d bytes in %d segments, %d checkpoints, report %+v", size, len(lf.segments), len(lf.checkpoints), rep)
				}
				return
			}
			if size > lim.retainBytes+lim.segmentBytes || rep.FirstSequence == 1 || rep.PruningCount == 0 {
				t.Fatalf("%d bytes in %d segments, report %+v", size, len(lf.segments), rep)
			}
			// The retained prunings (older ones went with the segments they
			// were in) are contiguous ranges reaching the retained chain.
			next := rep.Prunings[0].FirstSequence
			for _, p := range rep.Prunings {
				if p.FirstSequence != next || p.Sequence <= p.LastSequence {
					t.Fatalf("pruning %+v, expected a range from %d", p, next)
				}
				next = p.LastSequence + 1
			}
			if next != rep.FirstSequence {
				t.Fatalf("prunings end at %d, retained chain starts at %d", next-1, rep.FirstSequence)
			}
		})
	}
}

// Segments older than the floor are pruned again once the floor lets
// them go; the pruned entry is signed and tampering with it breaks the
// chain.
func TestPrunedEntryIsChained(t *testing.T) {
	path := ledgerPath(t)
	s := testSigner(8)
	keys := []ed25519.PublicKey{s.Public()}
	lim := smallLimits()
	lim.minAge = 24 * time.Hour
	l := openTest(t, path, s, lim)
	appendN(t, l, 0, 60) // testRecord's calls ended in 2023: older than the floor
	rep := mustVerify(t, path, verifyOpts(keys, true, lim))
	if rep.PruningCount == 0 {
		t.Fatalf("old segments were not pruned: %+v", rep)
	}
	var line []byte
	for _, f := range ledgerFileNames(t, path) {
		for _, ln := range readLines(t, f) {
			if strings.Contains(string(ln), `"event_type":"audit.pruned"`) {
				line = ln
			}
		}
	}
	if line == nil || !strings.Contains(string(line), `"signature":`) {
		t.Fatalf("no signed audit.pruned entry: %s", line)
	}
	for _, f := range ledgerFileNames(t, path) {
		lines := readLines(t, f)
		for i, ln := range lines {
			if string(ln) == string(line) {
				lines[i] = []byte(strings.Replace(string(ln), `"lastSequence":`, `"lastSequence":1`, 1))
				writeLines(t, f, lines)
			}
		}
	}
	mustFail(t, path, verifyOpts(keys, true, lim))
}

// The age floor gives way at a hard number of segments, so that a flood
// of real calls (which are always recorded) can never make the ledger's
// directory too large to scan and its appends fail; the reason says so.
func TestRetentionFloorGivesWayAtSegmentCap(t *testing.T) {
	path := ledgerPath(t)
	lim := smallLimits()
	lim.minAge, lim.floorSegments = time.Hour, 5
	l := openTest(t, path, nil, lim)
	for i := 0; i < 120; i++ {
		if _, err := l.Append(EventFromCall(recentRecord(i))); err != nil {
			t.Fatal(err)
		}
	}
	lf, err := scanDir(filepath.Dir(path), filepath.Base(path))
	if err != nil {
		t.Fatal(err)
	}
	if len(lf.segments) != lim.floorSegments {
		t.Fatalf("%d segments, want the cap of %d", len(lf.segments), lim.floorSegments)
	}
	rep := mustVerify(t, path, verifyOpts(nil, false, lim))
	if rep.PruningCount == 0 || !strings.Contains(rep.Prunings[0].Reason, "gives way") {
		t.Fatalf("report %+v", rep)
	}
}

// A crash between the audit.pruned entry and the deletion makes the next
// process record the same pruning again; Verify reports it once.
func TestVerifyReportsARepeatedPruningOnce(t *testing.T) {
	path := ledgerPath(t)
	lim := smallLimits()
	lim.retainBytes = 0
	l := openTest(t, path, nil, lim)
	appendN(t, l, 0, 30)
	lf, err := scanDir(filepath.Dir(path), filepath.Base(path))
	if err != nil || len(lf.segments) < 2 {
		t.Fatalf("segments %v: %v", lf.segments, err)
	}
	for i := 0; i < 2; i++ {
		if _, _, err := l.writeLocked(prunedEvent(lf.segments[0], "test")); err != nil {
			t.Fatal(err)
		}
	}
	rep := mustVerify(t, path, verifyOpts(nil, false, lim))
	if rep.PruningCount != 1 || rep.Prunings[0].FirstSequence != lf.segments[0].first || rep.Prunings[0].LastSequence != lf.segments[0].last {
		t.Fatalf("report %+v", rep)
	}
}
