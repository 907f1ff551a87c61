package audit

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"
)

// The golden vector pins the canonical JSON, entryHash and signature of a
// fixed entry: any drift in the format breaks it. The values were checked
// against an independent implementation (Python json + hashlib +
// cryptography) of the canonical rules.
func TestGoldenVector(t *testing.T) {
	ev := Event{
		Timestamp: 1712345678901, Tool: "repo.status", EventType: EventToolCall,
		RepoScope:       RepoScope([]byte(`{"repoPath":"/home/ada/src/démo"}`)),
		ArgsFingerprint: ArgsFingerprint([]byte(`{ "repoPath" : "/home/ada/src/démo", "limit": 1.0 }`)),
		Risk:            RiskNone, Approval: ApprovalNotRequired, Result: ResultSuccess,
		SessionID: SessionID("Claude Code"), DurationMS: 12,
		Summary: "read-only tool repo.status completed\twith a tab", ReadOnly: true,
	}
	at := link{sequence: 42, previousHash: "sha256:ab" + strings.Repeat("0", 62), segmentID: "7ab6fa7a-c5bf-4d82-86a8-26b4728b5acd"}
	const id = "bdeca765-488c-4e2a-b86b-25cd734f2988"

	const wantUnsigned = `{"approval":"not_required","args_fingerprint":"sha256:8974f7f726f0619a71038658845d492772d27f205a45409ce91766b99f57026c","auditChainVersion":1,"auditSchemaVersion":1,"duration_ms":12,"entryHash":"sha256:2bbe85182ff8719dfa5319d7ac2d4fe6fdd5de989227bfdb210b52aeae0b5198","event_type":"tool_call","id":"bdeca765-488c-4e2a-b86b-25cd734f2988","previousHash":"sha256:ab00000000000000000000000000000000000000000000000000000000000000","readOnly":true,"repo_scope":"repoPath:sha256:219f26e43c5f57208b0b2bece76e00ce293b2a3a4059b4beeb2ff1c0358fe9e4","result":"success","risk":"none","segmentId":"7ab6fa7a-c5bf-4d82-86a8-26b4728b5acd","sequence":42,"session_id":"Claude-Code","sidecarReadOnly":true,"summary":"read-only tool repo.status completed with a tab","timestamp":1712345678901,"tool":"repo.status"}`
	_, line, err := chainEntry(ev.object(), at, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(line) != wantUnsigned {
		t.Fatalf("unsigned golden line drifted:\n got %s\nwant %s", line, wantUnsigned)
	}
	// The hash input is the line without entryHash.
	body := strings.Replace(wantUnsigned, `"entryHash":"sha256:2bbe85182ff8719dfa5319d7ac2d4fe6fdd5de989227bfdb210b52aeae0b5198",`, "", 1)
	if "sha256:"+hexSHA(body) != "sha256:2bbe85182ff8719dfa5319d7ac2d4fe6fdd5de989227bfdb210b52aeae0b5198" {
		t.Fatal("entryHash is not SHA-256 of the canonical entry without entryHash")
	}

	// Ed25519 is deterministic, so the signed entry is pinned too.
	seed := make([]byte, 32)
	for i := range seed {
		seed[i] = byte(i + 1)
	}
	s := NewSigner(ed25519.NewKeyFromSeed(seed))
	if s.KeyID() != "79b5562e8fe654f9" {
		t.Fatalf("key id %s", s.KeyID())
	}
	const wantSigned = `{"approval":"not_required","args_fingerprint":"sha256:8974f7f726f0619a71038658845d492772d27f205a45409ce91766b99f57026c","auditChainVersion":1,"auditSchemaVersion":1,"duration_ms":12,"entryHash":"sha256:45036748cd16fdeb429186327cbcfc0cbecfe06bf0848d417ae0e2b6c79b3423","event_type":"tool_call","id":"bdeca765-488c-4e2a-b86b-25cd734f2988","previousHash":"sha256:ab00000000000000000000000000000000000000000000000000000000000000","readOnly":true,"repo_scope":"repoPath:sha256:219f26e43c5f57208b0b2bece76e00ce293b2a3a4059b4beeb2ff1c0358fe9e4","result":"success","risk":"none","segmentId":"7ab6fa7a-c5bf-4d82-86a8-26b4728b5acd","sequence":42,"session_id":"Claude-Code","sidecarReadOnly":true,"signature":"4Kz_NIorHW89yG_v_BU_eiIWbDuSarAYs1gjXR4nUqIrz6xjrAmEtTzPKIToFZuq3DzUtBQEDLjx1Pp7CTH9CA","signatureKeyId":"79b5562e8fe654f9","signatureVersion":3,"summary":"read-only tool repo.status completed with a tab","timestamp":1712345678901,"tool":"repo.status"}`
	o, line, err := chainEntry(ev.object(), at, id, s)
	if err != nil {
		t.Fatal(err)
	}
	if string(line) != wantSigned {
		t.Fatalf("signed golden line drifted:\n got %s\nwant %s", line, wantSigned)
	}
	keys := map[string]ed25519.PublicKey{s.KeyID(): s.Public()}
	if o, err = parseObject(line); err != nil {
		t.Fatal(err)
	}
	if signed, err := verifySignature(o, keys, true); !signed || err != nil {
		t.Fatalf("golden signature: %v %v", signed, err)
	}
}

func TestAppendAndVerify(t *testing.T) {
	path := ledgerPath(t)
	l := openTest(t, path, nil, nil)
	appendN(t, l, 0, 10)
	rep := mustVerify(t, path, verifyOpts(nil, false, nil))
	// head_hash and chain_digest, computed here from the stored lines.
	digest := sha256.New()
	var head string
	for _, line := range readLines(t, path) {
		o, err := parseObject(bytes.TrimSuffix(line, []byte("\n")))
		if err != nil {
			t.Fatal(err)
		}
		head, _ = stringField(o, "entryHash")
		digest.Write([]byte(head + "\n"))
	}
	want := Report{Entries: 10, Chained: 10, Unsigned: 10, Segments: 1, FirstSequence: 1, LastSequence: 10, Prunings: []Pruning{},
		HeadHash: head, ChainDigest: "sha256:" + hex.EncodeToString(digest.Sum(nil))}
	if !reflect.DeepEqual(rep, want) {
		t.Fatalf("report %+v, want %+v", rep, want)
	}
	for file, mode := range map[string]os.FileMode{filepath.Dir(path): 0o700, path: 0o600, path + ".lock": 0o600} {
		fi, err := os.Stat(file)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != mode {
			t.Errorf("%s: mode %04o, want %04o", file, fi.Mode().Perm(), mode)
		}
	}
	b, _ := os.ReadFile(path)
	for _, clear := range []string{"/home/ada", "acme/secret", "HEAD~1", "agent 1"} {
		if bytes.Contains(b, []byte(clear)) {
			t.Errorf("ledger stores %q in clear", clear)
		}
	}
	lines := readLines(t, path)
	first, _ := parseObject(bytes.TrimSpace(lines[0]))
	if p, _ := stringField(first, "previousHash"); p != GenesisHash {
		t.Fatalf("first previousHash %q", p)
	}
	// A second ledger on the same file continues the chain.
	l2 := openTest(t, path, nil, nil)
	a, err := l2.Append(EventFromCall(testRecord(99)))
	if err != nil || a.Sequence != 11 {
		t.Fatalf("continued at %d: %v", a.Sequence, err)
	}
}

func TestSignedLedger(t *testing.T) {
	path := ledgerPath(t)
	s := testSigner(1)
	l := openTest(t, path, s, nil)
	appendN(t, l, 0, 6)
	rep := mustVerify(t, path, verifyOpts([]ed25519.PublicKey{s.Public()}, true, nil))
	if rep.Signed != 6 || rep.Unsigned != 0 {
		t.Fatalf("report %+v", rep)
	}
	// Another key cannot vouch for these signatures.
	other := testSigner(2)
	ie := mustFail(t, path, verifyOpts([]ed25519.PublicKey{other.Public()}, false, nil))
	if !strings.Contains(ie.Reason, "not a given public key") || ie.Line != 1 {
		t.Fatalf("unexpected failure: %v", ie)
	}
	// No key at all: the chain is walked, but the ledger is not verified.
	if rep, err := Verify(path, verifyOpts(nil, false, nil)); !errors.Is(err, ErrSignaturesUnchecked) || rep.UnverifiedSignatures != 6 || rep.Signed != 0 {
		t.Fatalf("without a key: %+v %v", rep, err)
	}
	// Several keys (rotation): fine as long as one matches.
	mustVerify(t, path, verifyOpts([]ed25519.PublicKey{other.Public(), s.Public()}, true, nil))
	// Mixed ledger: unsigned entries after signed ones fail only --require-signed.
	appendN(t, openTest(t, path, nil, nil), 6, 2)
	rep = mustVerify(t, path, verifyOpts([]ed25519.PublicKey{s.Public()}, false, nil))
	if rep.Signed != 6 || rep.Unsigned != 2 {
		t.Fatalf("mixed report %+v", rep)
	}
	if ie := mustFail(t, path, verifyOpts([]ed25519.PublicKey{s.Public()}, true, nil)); ie.Line != 7 {
		t.Fatalf("require-signed should fail at line 7: %v", ie)
	}
}

func TestRequireSignedRejectsUnsigned(t *testing.T) {
	path := ledgerPath(t)
	appendN(t, openTest(t, path, nil, nil), 0, 3)
	ie := mustFail(t, path, verifyOpts([]ed25519.PublicKey{testSigner(1).Public()}, true, nil))
	if ie.Line != 1 || !strings.Contains(ie.Reason, "not signed") {
		t.Fatalf("%v", ie)
	}
}

// Several ledgers on one file stand in for several processes: each has its
// own lock file descriptor, so flock arbitrates between them exactly as
// between processes.
func TestConcurrentAppends(t *testing.T) {
	for _, signed := range []bool{false, true} {
		t.Run(fmt.Sprintf("signed=%v", signed), func(t *testing.T) {
			path := ledgerPath(t)
			var s *Signer
			if signed {
				s = testSigner(3)
			}
			const ledgers, workers, each = 3, 4, 20
			lim := smallLimits()
			lim.retainBytes = 0 // keep everything, so the count is exact
			var wg sync.WaitGroup
			errs := make(chan error, ledgers*workers)
			for i := 0; i < ledgers; i++ {
				l := openTest(t, path, s, lim)
				for w := 0; w < workers; w++ {
					wg.Add(1)
					go func(base int) {
						defer wg.Done()
						for k := 0; k < each; k++ {
							if _, err := l.Append(EventFromCall(testRecord(base + k))); err != nil {
								errs <- err
								return
							}
						}
					}((i*workers + w) * 1000)
				}
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			var keys []ed25519.PublicKey
			if s != nil {
				keys = append(keys, s.Public())
			}
			lim2 := *lim
			rep := mustVerify(t, path, verifyOpts(keys, signed, &lim2))
			if rep.Entries != ledgers*workers*each || rep.LastSequence != ledgers*workers*each || rep.Segments < 2 {
				t.Fatalf("report %+v", rep)
			}
		})
	}
}

func TestRotationAndRetention(t *testing.T) {
	for _, signed := range []bool{false, true} {
		t.Run(fmt.Sprintf("signed=%v", signed), func(t *testing.T) {
			path := ledgerPath(t)
			var s *Signer
			var keys []ed25519.PublicKey
			if signed {
				s = testSigner(4)
				keys = []ed25519.PublicKey{s.Public()}
			}
			lim := smallLimits()
			l := openTest(t, path, s, lim)
			appendN(t, l, 0, 60)
			lf, err := scanDir(filepath.Dir(path), filepath.Base(path))
			if err != nil {
				t.Fatal(err)
			}
			// Pruning runs after each rotation: then the ledger is within the
			// retained size; the active file has grown by less than a segment since.
			if size := ledgerDiskBytes(t, path); len(lf.segments) == 0 || size > lim.retainBytes+lim.segmentBytes {
				t.Fatalf("%d bytes in %d rotated segments, want at most %d", size, len(lf.segments), lim.retainBytes+lim.segmentBytes)
			}
			if len(lf.checkpoints) != 1 {
				t.Fatalf("%d checkpoints, want 1", len(lf.checkpoints))
			}
			cp, err := readCheckpoint(filepath.Dir(path), lf.checkpoints[0])
			if err != nil {
				t.Fatal(err)
			}
			if cp.next != lf.segments[0].first || cp.signed() != signed {
				t.Fatalf("checkpoint next %d (oldest segment starts at %d), signed %v", cp.next, lf.segments[0].first, cp.signed())
			}
			for _, seg := range lf.segments {
				fi, _ := os.Stat(filepath.Join(filepath.Dir(path), seg.name))
				if fi.Size() > lim.segmentBytes {
					t.Errorf("%s: %d bytes > segment limit %d", seg.name, fi.Size(), lim.segmentBytes)
				}
			}
			// Every pruning appended an audit.pruned entry before deleting, so
			// the chain is longer than the 60 calls.
			rep := mustVerify(t, path, verifyOpts(keys, signed, lim))
			if !rep.RetentionCheckpointUsed || rep.LastSequence <= 60 || rep.FirstSequence != cp.next ||
				rep.Entries != rep.LastSequence-cp.next+1 || int(rep.Entries) != countLines(t, path) || rep.Segments != len(lf.segments)+1 {
				t.Fatalf("report %+v (checkpoint at %d)", rep, cp.next)
			}
			if rep.PruningCount == 0 || rep.PruningCount != len(rep.Prunings) {
				t.Fatalf("prunings not reported: %+v", rep)
			}
			last := rep.Prunings[len(rep.Prunings)-1]
			if last.LastSequence+1 != cp.next || len(last.SegmentIDs) != 1 || !strings.HasPrefix(last.Reason, "size: the ledger is ") {
				t.Fatalf("newest pruning %+v, checkpoint at %d", last, cp.next)
			}
			// The production limits accept this ledger too (fewer segments than kept).
			mustVerify(t, path, verifyOpts(keys, signed, nil))
		})
	}
}

// A crash can stop retention at any step; every intermediate state must
// verify, and the next append completes the work.
func TestRetentionCrashWindows(t *testing.T) {
	path := ledgerPath(t)
	s := testSigner(5)
	keys := []ed25519.PublicKey{s.Public()}
	wide := smallLimits()
	wide.retainBytes = 0 // nothing pruned yet
	appendN(t, openTest(t, path, s, wide), 0, 40)
	lf, _ := scanDir(filepath.Dir(path), filepath.Base(path))
	before := len(lf.segments)
	if before < 3 {
		t.Fatalf("setup: %d segments", before)
	}
	narrow := smallLimits()
	narrow.retainBytes = ledgerDiskBytes(t, path) - 1 // one segment too many
	// 1. Rotated but not pruned yet: keep+1 segments verify.
	mustVerify(t, path, verifyOpts(keys, true, narrow))
	// 2. Checkpoint written, oldest segment not yet deleted: still verifies.
	l := openTest(t, path, s, narrow)
	cf, err := l.firstEntryOf(lf.segments[1])
	if err != nil {
		t.Fatal(err)
	}
	if err := l.writeCheckpoint(lf.checkpoints, cf.sequence, cf.previousHash); err != nil {
		t.Fatal(err)
	}
	mustVerify(t, path, verifyOpts(keys, true, narrow))
	// 3. An abandoned checkpoint temp file is ignored, then cleaned up.
	tmp := filepath.Join(filepath.Dir(path), checkpointTempPrefix(filepath.Base(path))+newUUID()+".tmp")
	if err := os.WriteFile(tmp, []byte(`{"auditCheckpointVersion":1,"next`), 0o600); err != nil {
		t.Fatal(err)
	}
	mustVerify(t, path, verifyOpts(keys, true, narrow))
	// The next append finishes retention without a duplicate checkpoint.
	appendN(t, l, 40, 1)
	lf, _ = scanDir(filepath.Dir(path), filepath.Base(path))
	// The oldest segment went (the audit.pruned entry may have rotated the
	// active file into a new one).
	if lf.segments[0].first != cf.sequence || len(lf.segments) > before || len(lf.checkpoints) != 1 || len(lf.temps) != 0 {
		t.Fatalf("after the retried prune: %d segments (from %d), %d checkpoints, %d temps", len(lf.segments), before, len(lf.checkpoints), len(lf.temps))
	}
	rep := mustVerify(t, path, verifyOpts(keys, true, narrow))
	if !rep.RetentionCheckpointUsed || rep.FirstSequence != lf.checkpoints[0].next || rep.FirstSequence < cf.sequence {
		t.Fatalf("report %+v, checkpoint %+v", rep, lf.checkpoints[0])
	}
}

// A crash right after a rotation, before the first write to the new active
// file, leaves no active file: the ledger still verifies and the next
// append starts the new segment.
func TestCrashAfterRotation(t *testing.T) {
	path := ledgerPath(t)
	lim := smallLimits()
	l := openTest(t, path, nil, lim)
	for i := 0; ; i++ {
		a, err := l.Append(EventFromCall(testRecord(i)))
		if err != nil {
			t.Fatal(err)
		}
		if st, _ := os.Stat(path); i > 0 && st.Size() == int64(len(a.Line)+1) { // just rotated
			break
		}
	}
	if err := os.Remove(path); err != nil { // as if the process died before this write
		t.Fatal(err)
	}
	rep := mustVerify(t, path, verifyOpts(nil, false, lim))
	appendN(t, openTest(t, path, nil, lim), 100, 1)
	if rep2 := mustVerify(t, path, verifyOpts(nil, false, lim)); rep2.LastSequence != rep.LastSequence+1 {
		t.Fatalf("before %+v after %+v", rep, rep2)
	}
}

func TestTornTailRepair(t *testing.T) {
	for _, tc := range []struct {
		name string
		// tear damages the ledger after n appends; want is the number of
		// entries after the next append.
		tear func(t *testing.T, path string)
		want uint64
	}{
		{"torn last line", func(t *testing.T, path string) {
			appendRaw(t, path, `{"approval":"not_requ`)
		}, 6},
		{"complete record without its newline", func(t *testing.T, path string) {
			b, _ := os.ReadFile(path)
			if err := os.WriteFile(path, b[:len(b)-1], 0o600); err != nil {
				t.Fatal(err)
			}
		}, 6},
		{"half of the last entry", func(t *testing.T, path string) {
			lines := readLines(t, path)
			last := lines[len(lines)-1]
			lines[len(lines)-1] = last[:len(last)/2]
			writeLines(t, path, lines)
		}, 5},
		{"torn only line", func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte(`{"approval":"de`), 0o600); err != nil {
				t.Fatal(err)
			}
		}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := ledgerPath(t)
			l := openTest(t, path, nil, nil)
			appendN(t, l, 0, 5)
			tc.tear(t, path)
			if tc.name != "complete record without its newline" {
				mustFail(t, path, verifyOpts(nil, false, nil)) // the damage is visible...
			}
			l2 := openTest(t, path, nil, nil) // ...to the next process, which repairs it
			appendN(t, l2, 5, 1)
			rep := mustVerify(t, path, verifyOpts(nil, false, nil))
			if rep.Entries != tc.want {
				t.Fatalf("entries %d, want %d", rep.Entries, tc.want)
			}
		})
	}
	// After a rotation the torn line can be the only one of the active
	// file: the chain resumes from the newest segment.
	t.Run("torn first line of a fresh segment", func(t *testing.T) {
		path := ledgerPath(t)
		lim := smallLimits()
		l := openTest(t, path, nil, lim)
		appendN(t, l, 0, 12)
		lines := readLines(t, path)
		writeLines(t, path, [][]byte{lines[0][:40]})
		if err := os.Remove(path); err != nil { // a rotation's fresh file with a torn first write
			t.Fatal(err)
		}
		writeLines(t, path, [][]byte{lines[0][:40]})
		appendN(t, openTest(t, path, nil, lim), 12, 1)
		mustVerify(t, path, verifyOpts(nil, false, lim))
	})
}

func appendRaw(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

func TestLegacyPrefix(t *testing.T) {
	path := ledgerPath(t)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	s := testSigner(6)
	// Three unchained records as the older sidecar wrote them, one signed
	// with the version-1 domain (no signatureVersion; key id not signed).
	var lines [][]byte
	for i, tool := range []string{"repo.status", "repo.refs", "diff.text"} {
		o := Object{}.Set("id", fmt.Sprintf("mcp-tool-%d-%s", 1712345678000+i, tool)).Set("timestamp", int64(1712345678000+i)).
			Set("tool", tool).Set("result", "success").Set("session_id", FallbackSessionID)
		if i == 1 {
			msg, _ := appendObjectExcept(nil, o)
			o = o.Set("signature", s.sign(msg)).Set("signatureKeyId", s.KeyID())
		}
		b, _ := Canonical(o)
		lines = append(lines, append(b, '\n'))
	}
	writeLines(t, path, lines)
	l := openTest(t, path, nil, nil)
	appendN(t, l, 0, 2)
	rep := mustVerify(t, path, verifyOpts([]ed25519.PublicKey{s.Public()}, false, nil))
	if rep.Legacy != 3 || rep.Chained != 2 || rep.Signed != 1 || rep.FirstSequence != 1 {
		t.Fatalf("report %+v", rep)
	}
	first, _ := parseObject(bytes.TrimSpace(readLines(t, path)[3]))
	if p, _ := stringField(first, "previousHash"); !strings.HasPrefix(p, "legacy-sha256:") {
		t.Fatalf("first chained previousHash %q", p)
	}
	// Changing a legacy record breaks the anchor.
	bad := copyLedger(t, path)
	ls := readLines(t, bad)
	ls[0] = bytes.Replace(ls[0], []byte("repo.status"), []byte("repo.Status"), 1)
	writeLines(t, bad, ls)
	if ie := mustFail(t, bad, verifyOpts([]ed25519.PublicKey{s.Public()}, false, nil)); ie.Line != 4 {
		t.Fatalf("%v", ie)
	}
	// A legacy record after the chain started is refused.
	bad = copyLedger(t, path)
	ls = readLines(t, bad)
	writeLines(t, bad, append(ls, ls[0]))
	if ie := mustFail(t, bad, verifyOpts([]ed25519.PublicKey{s.Public()}, false, nil)); ie.Line != 6 {
		t.Fatalf("%v", ie)
	}
}

func TestUnsafeFilesystem(t *testing.T) {
	newLedger := func(t *testing.T) (*Ledger, string) {
		path := ledgerPath(t)
		l := openTest(t, path, nil, nil)
		appendN(t, l, 0, 1)
		return l, path
	}
	expectFail := func(t *testing.T, l *Ledger, want string) {
		t.Helper()
		l.cache = nil
		_, err := l.Append(EventFromCall(testRecord(1)))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("append: %v, want an error containing %q", err, want)
		}
	}
	t.Run("ledger file is a symlink", func(t *testing.T) {
		l, path := newLedger(t)
		target := filepath.Join(t.TempDir(), "elsewhere")
		if err := os.WriteFile(target, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		os.Remove(path)
		if err := os.Symlink(target, path); err != nil {
			t.Fatal(err)
		}
		expectFail(t, l, "symbolic link")
		if b, _ := os.ReadFile(target); len(b) != 0 {
			t.Fatal("wrote through the symlink")
		}
	})
	t.Run("directory replaced by a symlink", func(t *testing.T) {
		l, path := newLedger(t)
		dir := filepath.Dir(path)
		other := t.TempDir()
		if err := os.Rename(dir, filepath.Join(other, "moved")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(other, "moved"), dir); err != nil {
			t.Fatal(err)
		}
		expectFail(t, l, "symbolic link")
	})
	t.Run("directory readable by others", func(t *testing.T) {
		l, path := newLedger(t)
		if err := os.Chmod(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		expectFail(t, l, "group/world accessible")
	})
	t.Run("file readable by others", func(t *testing.T) {
		l, path := newLedger(t)
		if err := os.Chmod(path, 0o644); err != nil {
			t.Fatal(err)
		}
		expectFail(t, l, "group/world accessible")
	})
	t.Run("hard link", func(t *testing.T) {
		l, path := newLedger(t)
		if err := os.Link(path, path+".copy"); err != nil {
			t.Fatal(err)
		}
		expectFail(t, l, "hard links")
	})
	t.Run("lock file is a symlink", func(t *testing.T) {
		l, path := newLedger(t)
		os.Remove(path + ".lock")
		if err := os.Symlink(filepath.Join(t.TempDir(), "x"), path+".lock"); err != nil {
			t.Fatal(err)
		}
		expectFail(t, l, "symbolic link")
	})
	t.Run("path is a directory", func(t *testing.T) {
		if _, err := Open(Options{Path: t.TempDir()}); err == nil {
			t.Fatal("Open accepted a directory")
		}
		if _, err := Open(Options{Path: "  "}); err == nil {
			t.Fatal("Open accepted an empty path")
		}
	})
	t.Run("parent is a file", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "f")
		if err := os.WriteFile(file, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		expectFail(t, openTest(t, filepath.Join(file, "mcp.jsonl"), nil, nil), "not a directory")
	})
}

func TestRecordCallDegradedOnce(t *testing.T) {
	var buf bytes.Buffer
	log := hclog.New(&hclog.LoggerOptions{Output: &buf, Level: hclog.Info})
	dir := t.TempDir()
	blocker := filepath.Join(dir, "audit")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil { // the ledger's directory is a file
		t.Fatal(err)
	}
	l, err := Open(Options{Path: filepath.Join(blocker, "mcp.jsonl"), Log: log})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		l.RecordCall(context.Background(), testRecord(i)) // never panics, never returns an error
	}
	if n := strings.Count(buf.String(), "degraded"); n != 1 {
		t.Fatalf("%d degraded messages, want 1:\n%s", n, buf.String())
	}
	os.Remove(blocker)
	l.RecordCall(context.Background(), testRecord(3))
	if !strings.Contains(buf.String(), "recovered") || !strings.Contains(buf.String(), "failed_appends=3") {
		t.Fatalf("no recovery message:\n%s", buf.String())
	}
	if rep := mustVerify(t, l.Path(), verifyOpts(nil, false, nil)); rep.Entries != 1 {
		t.Fatalf("%+v", rep)
	}
	// A cancelled request context does not stop the record.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	l.RecordCall(ctx, testRecord(4))
	if rep := mustVerify(t, l.Path(), verifyOpts(nil, false, nil)); rep.Entries != 2 {
		t.Fatalf("%+v", rep)
	}
}

func TestLineLimit(t *testing.T) {
	path := ledgerPath(t)
	lim := smallLimits()
	lim.lineBytes = 600
	l := openTest(t, path, nil, lim)
	rec := testRecord(0)
	rec.ErrorMessage, rec.Outcome = strings.Repeat("x", 500), OutcomeBlocked
	if _, err := l.Append(EventFromCall(rec)); err == nil || !strings.Contains(err.Error(), "line limit") {
		t.Fatalf("oversized entry: %v", err)
	}
	if fi, err := os.Stat(path); err == nil && fi.Size() != 0 {
		t.Fatal("an oversized entry was written")
	}
}

func TestShutdownAndNil(t *testing.T) {
	var nl *Ledger
	nl.RecordCall(context.Background(), testRecord(0))
	if nl.Close() != nil {
		t.Fatal("nil ledger")
	}
	nl.Shutdown()
	l := openTest(t, ledgerPath(t), nil, nil)
	appendN(t, l, 0, 1)
	l.Close()
	appendN(t, l, 1, 1) // Close does not refuse later appends
	l.Shutdown()
	if _, err := l.Append(EventFromCall(testRecord(2))); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Shutdown: %v", err)
	}
}
