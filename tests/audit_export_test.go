package tests

import (
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fluxgit/fluxgit/internal/audit"
)

// exportLines splits a JSONL export into its lines (no trailing newline).
func exportLines(t *testing.T, out string) []string {
	t.Helper()
	if out == "" {
		return nil
	}
	if !strings.HasSuffix(out, "\n") {
		t.Fatalf("the export does not end with a newline: %.200q", out)
	}
	return strings.Split(strings.TrimSuffix(out, "\n"), "\n")
}

// chainOf is what verify-audit states about a ledger's chain, computed
// from exported lines: the number of chained entries, the SHA-256 over
// their entryHash lines and the last entryHash.
func chainOf(t *testing.T, lines []string) (n int, digest, head string) {
	t.Helper()
	h := sha256.New()
	for _, l := range lines {
		var e struct {
			EntryHash string `json:"entryHash"`
		}
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("exported line is not JSON: %v", err)
		}
		if e.EntryHash == "" {
			continue
		}
		n++
		h.Write([]byte(e.EntryHash + "\n"))
		head = e.EntryHash
	}
	return n, "sha256:" + hex.EncodeToString(h.Sum(nil)), head
}

// A ledger written by real tool calls exports in every format with the
// entry count, chain digest and head hash verify-audit reports; filters
// select; --output writes a private file with the same bytes; stats counts
// the same calls.
func TestAuditExportRoundTrip(t *testing.T) {
	ledger := filepath.Join(t.TempDir(), "audit", "mcp.jsonl")
	priv, pub := auditKeys(t)
	env := auditEnv(t, ledger, audit.EnvSignKey+"="+priv)
	s := startServer(t, env)
	initialize(t, s)
	mixedCalls(t, s, fixtureRepo(t), 1, 9) // 3 successes, 3 unknown tools, 3 invalid arguments
	s.stop()
	rep, errOut, code := verifyAudit(t, ledger, pub)
	if code != 0 || rep.Entries == 0 || rep.HeadHash == "" || !strings.HasPrefix(rep.ChainDigest, "sha256:") {
		t.Fatalf("verify-audit: exit %d %+v\n%s", code, rep, errOut)
	}
	// The text report carries the same two fields.
	text, _, _ := runCLI(t, baseEnv(t), "verify-audit", ledger, "--pubkey", pub)
	if !strings.Contains(text, "head_hash "+rep.HeadHash+"\n") || !strings.Contains(text, "chain_digest "+rep.ChainDigest+"\n") {
		t.Fatalf("text report lacks head_hash/chain_digest:\n%s", text)
	}

	// jsonl: FILE defaults to the configured ledger; the key defaults to
	// the public half of FLUXGIT_MCP_AUDIT_SIGN_KEY.
	out, errOut, code := runCLI(t, env, "audit", "export")
	if code != 0 {
		t.Fatalf("export: exit %d\n%s", code, errOut)
	}
	lines := exportLines(t, out)
	n, digest, head := chainOf(t, lines)
	if uint64(len(lines)) != rep.Entries || uint64(n) != rep.Chained || digest != rep.ChainDigest || head != rep.HeadHash {
		t.Fatalf("export: %d lines, digest %s head %s; verify-audit: %d entries, %s, %s", len(lines), digest, head, rep.Entries, rep.ChainDigest, rep.HeadHash)
	}
	stored, _ := os.ReadFile(ledger)
	if out != string(stored) {
		t.Fatalf("the jsonl export is not the ledger's lines byte for byte")
	}

	for _, tc := range []struct {
		name  string
		args  []string
		check func(t *testing.T, out string)
	}{
		{"csv", []string{"--format", "csv"}, func(t *testing.T, out string) {
			rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if uint64(len(rows)) != rep.Entries+1 || strings.Join(rows[0], ",") != strings.Join(audit.CSVColumns, ",") {
				t.Fatalf("%d rows, header %v", len(rows), rows[0])
			}
			if last := rows[len(rows)-1]; last[15] != rep.HeadHash || last[17] != "true" {
				t.Fatalf("last row %v", last)
			}
		}},
		{"json", []string{"--format", "json"}, func(t *testing.T, out string) {
			var doc struct {
				Ledger   string            `json:"ledger"`
				Verified audit.Report      `json:"verified"`
				Entries  []json.RawMessage `json:"entries"`
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatal(err)
			}
			if doc.Ledger != "mcp.jsonl" || uint64(len(doc.Entries)) != rep.Entries || doc.Verified.ChainDigest != rep.ChainDigest || doc.Verified.Signed != rep.Signed {
				t.Fatalf("json export: %q, %d entries, verified %+v", doc.Ledger, len(doc.Entries), doc.Verified)
			}
		}},
		{"one tool", []string{"--tool", "repo.status", "--pubkey", pub}, func(t *testing.T, out string) {
			var want []string
			for _, l := range lines {
				if strings.Contains(l, `"tool":"repo.status"`) {
					want = append(want, l)
				}
			}
			if got := exportLines(t, out); len(want) < 4 || strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("%d entries selected, want the %d repo.status entries", len(got), len(want))
			}
		}},
		{"since tomorrow", []string{"--since", time.Now().UTC().Add(48 * time.Hour).Format("2006-01-02")}, func(t *testing.T, out string) {
			if out != "" {
				t.Fatalf("entries from the future: %s", out)
			}
		}},
		{"since a week ago", []string{"--since", "7d", "--until", fmt.Sprint(time.Now().Add(time.Hour).Unix())}, func(t *testing.T, out string) {
			if uint64(len(exportLines(t, out))) != rep.Entries {
				t.Fatalf("a week's window lost entries")
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runCLI(t, env, append([]string{"audit", "export", ledger}, tc.args...)...)
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, errOut)
			}
			tc.check(t, out)
		})
	}

	t.Run("output file", func(t *testing.T) {
		dest := filepath.Join(t.TempDir(), "export.jsonl")
		sout, errOut, code := runCLI(t, env, "audit", "export", ledger, "--output", dest)
		if code != 0 || sout != "" {
			t.Fatalf("exit %d, stdout %q\n%s", code, sout, errOut)
		}
		b, err := os.ReadFile(dest)
		if err != nil || string(b) != out {
			t.Fatalf("--output holds other bytes than stdout: %v", err)
		}
		if fi, _ := os.Stat(dest); fi.Mode().Perm() != 0o600 {
			t.Fatalf("--output mode %04o, want 0600", fi.Mode().Perm())
		}
		if left, _ := filepath.Glob(filepath.Join(filepath.Dir(dest), ".*")); len(left) != 0 {
			t.Fatalf("temporary files left: %v", left)
		}
	})

	t.Run("stats", func(t *testing.T) {
		out, errOut, code := runCLI(t, env, "audit", "stats", "--json")
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, errOut)
		}
		var st audit.Stats
		if err := json.Unmarshal([]byte(out), &st); err != nil {
			t.Fatal(err)
		}
		refused := uint64(0)
		for _, l := range lines {
			if strings.Contains(l, `"event_type":"write_block"`) {
				var e struct {
					Count uint64 `json:"count"`
				}
				json.Unmarshal([]byte(l), &e)
				refused += max(e.Count, 1)
			}
		}
		if st.Entries != rep.Entries || st.Refusals != refused || refused < 6 || len(st.Days) == 0 || st.Verified.ChainDigest != rep.ChainDigest {
			t.Fatalf("stats %+v; %d refusals in the export", st, refused)
		}
		text, _, code := runCLI(t, env, "audit", "stats")
		found := false
		for _, l := range strings.Split(text, "\n") {
			if f := strings.Fields(l); len(f) == 2 && f[0] == "entries" && f[1] == fmt.Sprint(rep.Entries) {
				found = true
			}
		}
		if code != 0 || !found || !strings.Contains(text, "TOOL") || !strings.Contains(text, "repo.status") {
			t.Fatalf("text stats (exit %d):\n%s", code, text)
		}
	})

	// Usage errors: exit 2 with a message that says what to do.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"audit", "export", ledger, "--format", "xml"}, "is not one of jsonl, csv, json"},
		{[]string{"audit", "export", ledger, "--since", "yesterday"}, "--since"},
		{[]string{"audit", "export", ledger, "--since", "2026-11-30", "--until", "2026-11-29"}, "is not before --until"},
		{[]string{"audit", "export", filepath.Join(t.TempDir(), "none.jsonl")}, "no audit ledger at"},
		{[]string{"audit", "export", ledger, "--output", filepath.Join(t.TempDir(), "no", "such", "x.jsonl")}, "create it first"},
		{[]string{"audit", "export", ledger, "--output", ledger}, "ledger itself"},
		{[]string{"audit", "export", ledger, "extra"}, "at most one ledger FILE"},
		{[]string{"audit", "stats", ledger, "--tool", ""}, "--tool is empty"},
		{[]string{"audit"}, "export, stats or prune"},
	} {
		sout, errOut, code := runCLI(t, env, tc.args...)
		if code != 2 || sout != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d (want 2), stdout %q, stderr %q (want %q)", tc.args, code, sout, errOut, tc.want)
		}
	}
	// A signed ledger and no key at all is not verified: nothing exported.
	if sout, errOut, code := runCLI(t, auditEnv(t, ledger), "audit", "export"); code != 3 || sout != "" || !strings.Contains(errOut, "NOT verified") {
		t.Fatalf("signed ledger without a key: exit %d, stdout %d bytes\n%s", code, len(sout), errOut)
	}
}

// One byte changed in a middle entry: export exits 3 and writes nothing,
// neither to stdout nor to --output; stats exits 3 too.
func TestAuditExportTamperedLedger(t *testing.T) {
	ledger := filepath.Join(t.TempDir(), "audit", "mcp.jsonl")
	s := startServer(t, auditEnv(t, ledger))
	initialize(t, s)
	mixedCalls(t, s, fixtureRepo(t), 1, 6)
	s.stop()
	b, err := os.ReadFile(ledger)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(b, []byte("\n"))
	mid := lines[len(lines)/2-1]
	i := bytes.Index(mid, []byte(`"duration_ms":`)) + len(`"duration_ms":`)
	if mid[i] == '1' { // another digit
		mid[i] = '2'
	} else {
		mid[i] = '1'
	}
	if err := os.WriteFile(ledger, bytes.Join(lines, nil), 0o600); err != nil {
		t.Fatal(err)
	}
	_, pub := auditKeys(t)
	if _, errOut, code := verifyAudit(t, ledger, pub); code != 3 {
		t.Fatalf("verify-audit accepts the tampered ledger: exit %d\n%s", code, errOut)
	}
	for _, args := range [][]string{
		{"audit", "export", ledger},
		{"audit", "export", ledger, "--format", "csv"},
		{"audit", "export", ledger, "--format", "json"},
		{"audit", "stats", ledger},
		{"audit", "stats", ledger, "--json"},
	} {
		t.Run(strings.Join(append([]string{args[1]}, args[3:]...), " "), func(t *testing.T) {
			out, errOut, code := runCLI(t, baseEnv(t), args...)
			if code != 3 || out != "" || !strings.Contains(errOut, "INVALID") || !strings.Contains(errOut, fmt.Sprintf("mcp.jsonl line %d", len(lines)/2)) {
				t.Fatalf("exit %d (want 3), stdout %d bytes\n%s", code, len(out), errOut)
			}
			if args[1] != "export" {
				return
			}
			dir := t.TempDir()
			dest := filepath.Join(dir, "export.out")
			out, errOut, code = runCLI(t, baseEnv(t), append(args, "--output", dest)...)
			if code != 3 || out != "" {
				t.Fatalf("--output: exit %d, stdout %d bytes\n%s", code, len(out), errOut)
			}
			if left, _ := os.ReadDir(dir); len(left) != 0 {
				t.Fatalf("a failed export left files: %v", left)
			}
		})
	}
}

// Retention by size through real tool calls: with 4 KiB segments and a
// 12 KiB budget the server rotates and prunes; verify-audit reports each
// pruning, and the audit.pruned entries are in the export.
func TestAuditRetentionBySize(t *testing.T) {
	ledger := filepath.Join(t.TempDir(), "audit", "mcp.jsonl")
	env := auditEnv(t, ledger, audit.EnvSegmentBytes+"=4096", audit.EnvRetainBytes+"=12288", audit.EnvMinAge+"=0")
	repo := fixtureRepo(t)
	s := startServer(t, env)
	initialize(t, s)
	for i := 0; i < 60; i++ {
		statusCall(t, s, i+1, repo)
	}
	s.stop()
	_, pub := auditKeys(t)
	rep, errOut, code := verifyAudit(t, ledger, pub)
	if code != 0 {
		t.Fatalf("verify-audit: exit %d\n%s\nserver:\n%s", code, errOut, s.stderr.String())
	}
	if rep.PruningCount == 0 || !rep.RetentionCheckpointUsed || rep.FirstSequence == 1 {
		t.Fatalf("nothing pruned: %+v", rep)
	}
	if size := ledgerBytes(t, ledger); size > 12288+4096 {
		t.Fatalf("the ledger holds %d bytes, more than the 12288 retained plus one segment", size)
	}
	text, _, _ := runCLI(t, baseEnv(t), "verify-audit", ledger)
	p := rep.Prunings[len(rep.Prunings)-1]
	if !strings.Contains(text, fmt.Sprintf("prunings %d\n", rep.PruningCount)) ||
		!strings.Contains(text, fmt.Sprintf("pruned %d..%d segment %s recorded at sequence %d\n", p.FirstSequence, p.LastSequence, p.SegmentIDs[0], p.Sequence)) {
		t.Fatalf("text report:\n%s", text)
	}
	out, errOut, code := runCLI(t, env, "audit", "export", "--tool", "")
	if code != 2 {
		t.Fatalf("--tool \"\": exit %d\n%s", code, errOut)
	}
	out, errOut, code = runCLI(t, env, "audit", "export")
	if code != 0 {
		t.Fatalf("export: exit %d\n%s", code, errOut)
	}
	recorded := map[uint64]string{}
	for _, l := range exportLines(t, out) {
		var e struct {
			Sequence  uint64 `json:"sequence"`
			EventType string `json:"event_type"`
			Pruned    struct {
				Reason string `json:"reason"`
			} `json:"pruned"`
		}
		json.Unmarshal([]byte(l), &e)
		if e.EventType == audit.EventPruned {
			recorded[e.Sequence] = e.Pruned.Reason
		}
	}
	for _, p := range rep.Prunings {
		if r, ok := recorded[p.Sequence]; !ok || !strings.HasPrefix(r, "size: the ledger is ") || !strings.Contains(r, "over the 12288 retained") {
			t.Errorf("pruning %+v: export has %q", p, r)
		}
	}
}

// Retention by age on demand: segments written without a size rule stay;
// once their newest entries are older than FLUXGIT_MCP_AUDIT_RETAIN_AGE,
// `fluxgit audit prune` deletes them, recording each pruning in the chain.
func TestAuditRetentionByAgePrune(t *testing.T) {
	ledger := filepath.Join(t.TempDir(), "audit", "mcp.jsonl")
	priv, pub, _ := seededKey(t)
	base := auditEnv(t, ledger, audit.EnvSignKey+"="+priv, audit.EnvSegmentBytes+"=4096", audit.EnvRetainBytes+"=0", audit.EnvMinAge+"=0")
	repo := fixtureRepo(t)
	s := startServer(t, base)
	initialize(t, s)
	for i := 0; i < 30; i++ {
		statusCall(t, s, i+1, repo)
	}
	s.stop()
	before, errOut, code := verifyAudit(t, ledger, pub)
	if code != 0 || before.PruningCount != 0 || before.Segments < 3 {
		t.Fatalf("before: exit %d %+v\n%s", code, before, errOut)
	}
	// Refusals first: each says what to change.
	for _, tc := range []struct {
		env  []string
		code int
		want string
	}{
		{auditEnv(t, ledger, audit.EnvRetainAge+"=1s"), 2, "raise " + audit.EnvRetainAge}, // below the default 30d floor
		{auditEnv(t, ledger, audit.EnvRetainAge+"=1s", audit.EnvMinAge+"=0"), 2, "set " + audit.EnvSignKey},
		{auditEnv(t, filepath.Join(t.TempDir(), "none.jsonl"), audit.EnvMinAge+"=0"), 2, "no audit ledger"},
	} {
		if out, errOut, code := runCLI(t, tc.env, "audit", "prune"); code != tc.code || !strings.Contains(errOut, tc.want) || out != "" {
			t.Errorf("%v: exit %d (want %d), stdout %q, stderr %q (want %q)", tc.env[len(tc.env)-2:], code, tc.code, out, errOut, tc.want)
		}
	}
	if after, _, _ := verifyAudit(t, ledger, pub); after.Entries != before.Entries {
		t.Fatalf("a refused prune changed the ledger: %+v", after)
	}
	time.Sleep(1500 * time.Millisecond) // let every segment's newest entry age past 1s
	env := append(base, audit.EnvRetainAge+"=1s")
	out, errOut, code := runCLI(t, env, "audit", "prune", "--json")
	if code != 0 {
		t.Fatalf("prune: exit %d\n%s", code, errOut)
	}
	var res struct {
		Prunings []audit.Pruning `json:"prunings"`
		Segments int             `json:"segments"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("prune --json printed %q: %v", out, err)
	}
	if len(res.Prunings) != before.Segments-1 {
		t.Fatalf("pruned %d segments, %d were rotated: %s", len(res.Prunings), before.Segments-1, out)
	}
	after, errOut, code := verifyAudit(t, ledger, pub, "--require-signed")
	if code != 0 || after.PruningCount != len(res.Prunings) || !after.RetentionCheckpointUsed {
		t.Fatalf("after: exit %d %+v\n%s", code, after, errOut)
	}
	for i, p := range after.Prunings {
		if p.Reason != "age: newest entry is older than 1s" || p.Sequence != res.Prunings[i].Sequence {
			t.Errorf("pruning %+v, prune printed %+v", p, res.Prunings[i])
		}
	}
	// The prunings are entries of the export, signed like the rest.
	out, errOut, code = runCLI(t, env, "audit", "export", "--format", "csv")
	if code != 0 {
		t.Fatalf("export: exit %d\n%s", code, errOut)
	}
	rows, _ := csv.NewReader(strings.NewReader(out)).ReadAll()
	pruned := 0
	for _, r := range rows[1:] {
		if r[3] == audit.EventPruned && r[17] == "true" {
			pruned++
		}
	}
	if pruned != len(res.Prunings) {
		t.Fatalf("%d signed audit.pruned rows in the export, %d prunings", pruned, len(res.Prunings))
	}
	// Nothing more is due: a second prune records nothing.
	out, _, code = runCLI(t, env, "audit", "prune")
	if code != 0 || !strings.Contains(out, "prunings 0\n") {
		t.Fatalf("second prune (exit %d):\n%s", code, out)
	}
}

// The retention variables are checked at start-up, even with auditing
// disabled, and a bad value stops the server with a message naming it.
func TestAuditRetentionConfigFailsClosed(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{[]string{audit.EnvRetainAge + "=7d"}, "is below " + audit.EnvMinAge},
		{[]string{audit.EnvRetainBytes + "=20MiB"}, audit.EnvRetainBytes},
		{[]string{audit.EnvSegmentBytes + "=1024", audit.EnvDisabled + "=1"}, "between 4096"},
	} {
		_, errOut, code := runCLI(t, append(baseEnv(t), tc.env...))
		if code != 1 || !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, "failing closed") {
			t.Errorf("%v: exit %d, want 1 mentioning %q\n%s", tc.env, code, tc.want, errOut)
		}
	}
}
