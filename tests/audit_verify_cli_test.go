package tests

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fluxgit/fluxgit/host/mcp"
	"github.com/fluxgit/fluxgit/internal/audit"
)

// writeLedger appends n entries to a fresh ledger, signed when signer is
// set, and returns its path.
func writeLedger(t *testing.T, signer *audit.Signer, n int) string {
	t.Helper()
	ledger := filepath.Join(t.TempDir(), "audit", "mcp.jsonl")
	l, err := audit.Open(audit.Options{Path: ledger, Signer: signer})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Shutdown()
	for i := 0; i < n; i++ {
		if _, err := l.Append(audit.EventFromCall(mcp.CallRecord{Tool: "repo.status", Known: true, ReadOnly: true,
			Outcome: mcp.OutcomeSuccess, ClientName: "cli-test", Start: time.Now()})); err != nil {
			t.Fatal(err)
		}
	}
	return ledger
}

// verify-audit needs --pubkey only for signatures: an unsigned ledger
// verifies without it; a signed ledger without a key is NOT verified
// (exit 3, the unchecked signatures counted), since a signature nobody
// checked proves nothing; --require-signed needs --pubkey (usage, exit 2).
func TestVerifyAuditKeyHandling(t *testing.T) {
	_, pub, signer := seededKey(t)
	_, otherPub := auditKeys(t)
	unsigned := writeLedger(t, nil, 4)
	signed := writeLedger(t, signer, 4)
	for _, tc := range []struct {
		name       string
		args       []string
		code       int
		stdout     string // substring of stdout
		stderr     string // substring of stderr
		unverified uint64 // unverified_signatures in the --json report (exit 0 or 3)
	}{
		{"unsigned, no key", []string{unsigned}, 0, "entries 4\n", "", 0},
		{"unsigned, no key, json", []string{unsigned, "--json"}, 0, `"unsigned":4`, "", 0},
		{"unsigned, a key", []string{unsigned, "--pubkey", pub}, 0, "ok\n", "", 0},
		{"unsigned, require-signed without key", []string{unsigned, "--require-signed"}, 2, "", "--require-signed needs --pubkey", 0},
		{"unsigned, require-signed with key", []string{unsigned, "--require-signed", "--pubkey", pub}, 3, "", "not signed", 0},
		{"signed, no key", []string{signed}, 3, "unverified_signatures 4\n", "NOT verified", 0},
		{"signed, no key, json", []string{signed, "--json"}, 3, `"unverified_signatures":4`, "pass --pubkey", 4},
		{"signed, its key", []string{signed, "--pubkey", pub, "--require-signed"}, 0, "signed 4\n", "", 0},
		{"signed, another key", []string{signed, "--pubkey", otherPub}, 3, "", "not a given public key", 0},
		{"signed, require-signed without key", []string{signed, "--require-signed"}, 2, "", "--require-signed needs --pubkey", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runCLI(t, baseEnv(t), append([]string{"verify-audit"}, tc.args...)...)
			if code != tc.code || !strings.Contains(out, tc.stdout) || !strings.Contains(errOut, tc.stderr) {
				t.Fatalf("exit %d (want %d)\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, errOut)
			}
			if code == 3 && tc.stdout == "" && strings.Contains(out, "ok") {
				t.Fatalf("a failed verification printed ok:\n%s", out)
			}
			if code != 0 && strings.Contains(out, "\nok\n") {
				t.Fatalf("exit %d but the report says ok:\n%s", code, out)
			}
			if strings.Contains(strings.Join(tc.args, " "), "--json") {
				var rep audit.Report
				if err := json.Unmarshal([]byte(out), &rep); err != nil {
					t.Fatalf("--json printed %q: %v", out, err)
				}
				if rep.UnverifiedSignatures != tc.unverified || rep.Entries != 4 {
					t.Fatalf("report %+v", rep)
				}
			}
		})
	}
}
