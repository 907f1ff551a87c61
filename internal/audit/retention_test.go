package audit

import (
	"crypto/ed25519"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The retention policy by size, by age, both and neither: which segments
// go, that each pruning is an audit.pruned entry naming its rule, and that
// the result verifies. testRecord's calls are from 2023 (old);
// recentRecord's are from now.
func TestRetentionPolicy(t *testing.T) {
	const seg = 4096
	for _, tc := range []struct {
		name        string
		retainBytes int64
		retainAge   time.Duration
		minAge      time.Duration
		recent      bool
		// wantReason prefixes every pruning's reason; "" means no pruning.
		wantReason string
		// wantNoSegments: every rotated segment went (age rule).
		wantNoSegments bool
	}{
		{"size, no floor", 3 * seg, 0, 0, false, "size: the ledger is ", false},
		{"size, old segments past the floor", 3 * seg, 0, time.Hour, false, "size: the ledger is ", false},
		{"size, young segments under the floor", 3 * seg, 0, time.Hour, true, "", false},
		{"age, old segments", 0, 24 * time.Hour, 0, false, "age: newest entry is older than 1d", true},
		{"age, young segments", 0, 24 * time.Hour, 0, true, "", false},
		{"age and size, old segments: age first", 1 << 30, 48 * time.Hour, 24 * time.Hour, false, "age: newest entry is older than 2d", true},
		{"age and size, young segments over the size, no floor", 3 * seg, 48 * time.Hour, 0, true, "size: the ledger is ", false},
		{"no rule", 0, 0, 0, false, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := ledgerPath(t)
			lim := smallLimits()
			lim.retainBytes, lim.retainAge, lim.minAge, lim.noSync = tc.retainBytes, tc.retainAge, tc.minAge, true
			l := openTest(t, path, nil, lim)
			for i := 0; i < 60; i++ {
				rec := testRecord(i)
				if tc.recent {
					rec = recentRecord(i)
				}
				if _, err := l.Append(EventFromCall(rec)); err != nil {
					t.Fatal(err)
				}
			}
			rep := mustVerify(t, path, verifyOpts(nil, false, lim))
			lf, err := scanDir(filepath.Dir(path), filepath.Base(path))
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantReason == "" {
				if rep.PruningCount != 0 || rep.FirstSequence != 1 || len(lf.segments) < 5 {
					t.Fatalf("pruned although no rule applies: %d segments, report %+v", len(lf.segments), rep)
				}
				return
			}
			if rep.PruningCount == 0 || !rep.RetentionCheckpointUsed {
				t.Fatalf("nothing pruned: %+v", rep)
			}
			for _, p := range rep.Prunings {
				if !strings.HasPrefix(p.Reason, tc.wantReason) {
					t.Errorf("pruning %d..%d: reason %q, want it to start %q", p.FirstSequence, p.LastSequence, p.Reason, tc.wantReason)
				}
			}
			if tc.wantNoSegments && len(lf.segments) != 0 {
				t.Errorf("%d rotated segments left; the age rule prunes every old one", len(lf.segments))
			}
			if tc.retainBytes > 0 && !tc.wantNoSegments {
				if size := ledgerDiskBytes(t, path); size > tc.retainBytes+lim.segmentBytes {
					t.Errorf("%d bytes left, retained %d", size, tc.retainBytes)
				}
			}
		})
	}
}

// Ledger.Prune applies a policy now: it creates no ledger, refuses to add
// unsigned entries to a signed chain, and returns what the chain records.
func TestPruneOnDemand(t *testing.T) {
	t.Run("no ledger", func(t *testing.T) {
		path := ledgerPath(t)
		l := openTest(t, path, nil, smallLimits())
		if _, err := l.Prune(); !errors.Is(err, ErrNoLedger) {
			t.Fatalf("want ErrNoLedger, got %v", err)
		}
		if _, err := os.Stat(filepath.Dir(path)); !os.IsNotExist(err) {
			t.Fatalf("Prune created the ledger's directory: %v", err)
		}
	})
	s := testSigner(21)
	wide := smallLimits()
	wide.retainBytes = 0
	for _, tc := range []struct {
		name     string
		signer   *Signer
		wantErr  error
		wantSome bool
	}{
		{"signed ledger, no signer", nil, ErrSignerNeeded, false},
		{"signed ledger, its signer", s, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := ledgerPath(t)
			appendN(t, openTest(t, path, s, wide), 0, 40)
			narrow := smallLimits()
			narrow.retainAge = time.Hour // testRecord's entries are from 2023
			l := openTest(t, path, tc.signer, narrow)
			res, err := l.Prune()
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err %v, want %v", err, tc.wantErr)
			}
			rep := mustVerify(t, path, verifyOpts([]ed25519.PublicKey{s.Public()}, true, narrow))
			if !tc.wantSome {
				if rep.PruningCount != 0 {
					t.Fatalf("pruned after refusing: %+v", rep)
				}
				return
			}
			if len(res.Prunings) == 0 || res.Segments != len(ledgerFileNames(t, path))-1 || res.Bytes != ledgerDiskBytes(t, path) {
				t.Fatalf("result %+v", res)
			}
			last := res.Prunings[len(res.Prunings)-1]
			found := false
			for _, p := range rep.Prunings {
				if p.Sequence == last.Sequence && p.FirstSequence == last.FirstSequence && p.Reason == last.Reason {
					found = true
				}
			}
			if !found {
				t.Fatalf("Prune returned %+v, the chain records %+v", last, rep.Prunings)
			}
		})
	}
}
