package tests

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fluxgit/fluxgit/host/mcp"
	"github.com/fluxgit/fluxgit/internal/audit"
)

// seedRotated writes a ledger of n rotated segments of three recent
// entries each, the way rotation leaves them: the active file renamed to
// <file>.segment-<first>-<last>-<segmentId>. With a retention size below
// their total, the next append prunes unless the age floor forbids it.
func seedRotated(t *testing.T, ledger string, signer *audit.Signer, n int) {
	t.Helper()
	l, err := audit.Open(audit.Options{Path: ledger, Signer: signer})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Shutdown()
	for s := 0; s < n; s++ {
		var first, last audit.Appended
		for i := 0; i < 3; i++ {
			a, err := l.Append(audit.EventFromCall(mcp.CallRecord{Tool: "repo.status", Known: true, ReadOnly: true,
				Outcome: mcp.OutcomeSuccess, ClientName: "seed", Start: time.Now()}))
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				first = a
			}
			last = a
		}
		seg := fmt.Sprintf("%s.segment-%020d-%020d-%s", ledger, first.Sequence, last.Sequence, last.SegmentID)
		if err := os.Rename(ledger, seg); err != nil {
			t.Fatal(err)
		}
	}
}

// seededKey writes a signing key for the binary and returns its paths
// and the signer that seeds the ledger with the same key.
func seededKey(t *testing.T) (privPath, pubPath string, signer *audit.Signer) {
	t.Helper()
	privPath, pubPath = auditKeys(t)
	s, err := audit.LoadSigner(privPath)
	if err != nil {
		t.Fatal(err)
	}
	return privPath, pubPath, s
}

// allEntries reads every entry of the ledger: rotated segments, oldest
// first, then the active file.
func allEntries(t *testing.T, ledger string) []map[string]any {
	t.Helper()
	segs, _ := filepath.Glob(ledger + ".segment-*")
	var out []map[string]any
	for _, f := range append(segs, ledger) {
		if _, err := os.Stat(f); err != nil {
			continue // no active file right after a rotation
		}
		out = append(out, ledgerEntries(t, f)...)
	}
	return out
}

// 14,000 refused calls with long, distinct unknown tool names, sent as
// fast as the server answers, cannot flush the ledger: they become a few
// counted entries that hold no 2 KiB name, the ledger's older history
// (five rotated segments, over the retention size) stays in
// place because it is younger than the age floor, and the counts written
// at exit add up to every call. Both runs set a retention size just below
// the seeded history; the control also sets the age floor to 0 by
// environment: the same run prunes the oldest segment, and the pruning is
// an audit.pruned entry of the chain that verify-audit reports.
func TestAuditFloodCannotFlushTheLedger(t *testing.T) {
	const flood = 14_000
	for _, tc := range []struct {
		name     string
		env      []string
		wantKept bool
	}{
		{"default age floor", nil, true},
		{"control: age floor 0", []string{audit.EnvMinAge + "=0"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ledger := filepath.Join(t.TempDir(), "audit", "mcp.jsonl")
			priv, pub, key := seededKey(t)
			seedRotated(t, ledger, key, 5)
			seeded := len(allEntries(t, ledger))
			// A retention size one byte short of the seeded history: the
			// oldest segment is due, unless the age floor protects it.
			retain := fmt.Sprintf("%s=%d", audit.EnvRetainBytes, ledgerBytes(t, ledger)-1)
			repo := fixtureRepo(t)
			s := startServer(t, auditEnv(t, ledger, append([]string{audit.EnvSignKey + "=" + priv, retain}, tc.env...)...))
			initialize(t, s)
			statusCall(t, s, 1, repo)

			sent := make(chan error, 1)
			go func() {
				var err error
				for i := 0; i < flood && err == nil; i++ {
					name := fmt.Sprintf("nope.%05d.", i) + strings.Repeat("z", 2048)
					b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 100 + i, "method": "tools/call",
						"params": map[string]any{"name": name, "arguments": map[string]any{}}})
					_, err = io.WriteString(s.stdin, string(b)+"\n")
				}
				sent <- err
			}()
			for i := 0; i < flood; i++ {
				r := decodeResponse(t, s.next(60*time.Second))
				if r.Error == nil || r.Error.Code != -32602 {
					t.Fatalf("an unknown tool was not refused: %.300s", r.raw)
				}
			}
			if err := <-sent; err != nil {
				t.Fatal(err)
			}
			s.stop() // the last window is written at exit

			es := allEntries(t, ledger)
			var coalesced, counted, single int
			for _, e := range es {
				if e["result"] != "blocked" || e["session_id"] == "seed" {
					continue
				}
				if tool, _ := e["tool"].(string); len(tool) > audit.MaxUnknownToolChars {
					t.Fatalf("an unknown name of %d characters was written", len(tool))
				}
				if c, ok := e["count"].(float64); ok {
					coalesced++
					counted += int(c)
				} else {
					single++
				}
			}
			if counted+single != flood {
				t.Fatalf("entries stand for %d refused calls, %d were made (%d coalesced entries)", counted+single, flood, coalesced)
			}
			t.Logf("%d refused calls: %d entries (%d coalesced for %d calls); ledger %d bytes", flood, coalesced+single, coalesced, counted, ledgerBytes(t, ledger))
			if coalesced+single > 40 {
				t.Fatalf("%d entries for the flood, want a few", coalesced+single)
			}
			rep, errOut, code := verifyAudit(t, ledger, pub, "--require-signed")
			if code != 0 {
				t.Fatalf("verify-audit: exit %d\n%s\nserver:\n%s", code, errOut, s.stderr.String())
			}
			if rep.CoalescedEntries != uint64(coalesced) || rep.CoalescedCalls != uint64(counted) {
				t.Errorf("report %+v, counted %d coalesced entries for %d calls", rep, coalesced, counted)
			}
			if tc.wantKept {
				if rep.FirstSequence != 1 || rep.PruningCount != 0 || rep.RetentionCheckpointUsed {
					t.Fatalf("history was pruned under the age floor: %+v", rep)
				}
				if es[0]["session_id"] != "seed" || es[0]["sequence"] != float64(1) {
					t.Fatalf("the first entry is gone: %v", es[0])
				}
				return
			}
			if rep.FirstSequence != 4 || rep.PruningCount != 1 || !rep.RetentionCheckpointUsed {
				t.Fatalf("control: report %+v, want the first segment (1..3) pruned and recorded", rep)
			}
			p := rep.Prunings[0]
			if p.FirstSequence != 1 || p.LastSequence != 3 || len(p.SegmentIDs) != 1 || p.Sequence != uint64(seeded+1) {
				t.Fatalf("control: pruning %+v", p)
			}
			out, _, code := runCLI(t, baseEnv(t), "verify-audit", ledger, "--pubkey", pub)
			if code != 0 || !strings.Contains(out, "prunings 1\npruned 1..3 segment "+p.SegmentIDs[0]) {
				t.Fatalf("text report (exit %d):\n%s", code, out)
			}
		})
	}
}

// The refusals still being counted when fluxgit exits are written on the
// way out, whether stdin closes or SIGTERM arrives: the ledger is read
// while the window is open (one entry for 30 refusals) and after the exit
// (the count of the other 29).
func TestAuditCoalescedCountWrittenAtExit(t *testing.T) {
	for _, tc := range []struct {
		name string
		exit func(s *server)
	}{
		{"stdin closed", func(s *server) { s.stop() }},
		{"SIGTERM", func(s *server) {
			if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			<-s.done
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ledger := filepath.Join(t.TempDir(), "audit", "mcp.jsonl")
			s := startServer(t, auditEnv(t, ledger))
			initialize(t, s)
			for i := 0; i < 30; i++ {
				if r := s.call(i+1, "tools/call", map[string]any{"name": "repo.status", "arguments": map[string]any{"repoPath": "relative"}}); codeOf(t, r) != -32602 {
					t.Fatalf("relative repoPath not refused with -32602: %s", r.raw)
				}
			}
			if n := len(ledgerEntries(t, ledger)); n != 1 {
				t.Skipf("the coalescing window ended before the exit (%d entries); nothing to prove on a machine this slow", n)
			}
			tc.exit(s)
			es := ledgerEntries(t, ledger)
			if len(es) != 2 || es[1]["count"] != float64(29) {
				t.Fatalf("after the exit: %v\nserver:\n%s", es, s.stderr.String())
			}
		})
	}
}

// ledgerBytes is the size of the ledger's active file and rotated segments.
func ledgerBytes(t *testing.T, ledger string) int64 {
	t.Helper()
	segs, _ := filepath.Glob(ledger + ".segment-*")
	var n int64
	for _, f := range append(segs, ledger) {
		if fi, err := os.Stat(f); err == nil {
			n += fi.Size()
		}
	}
	return n
}
