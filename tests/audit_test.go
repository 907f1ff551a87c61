package tests

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fluxgit/fluxgit/internal/audit"
)

// auditKeys writes a private signing key (0600) and its public key; it
// returns their paths.
func auditKeys(t testing.TB) (priv, pub string) {
	t.Helper()
	pk, sk, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	priv, pub = filepath.Join(dir, "audit.key.pem"), filepath.Join(dir, "audit.pub.pem")
	if err := os.WriteFile(priv, audit.MarshalPrivateKey(sk), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pub, audit.MarshalPublicKey(pk), 0o644); err != nil {
		t.Fatal(err)
	}
	return priv, pub
}

// auditEnv is baseEnv with the ledger at an explicit path.
func auditEnv(t testing.TB, ledger string, extra ...string) []string {
	return append(append(baseEnv(t), audit.EnvLog+"="+ledger), extra...)
}

// verifyAudit runs `fluxgit verify-audit` and returns its report (on exit
// 0), its stderr and its exit code.
func verifyAudit(t *testing.T, ledger, pub string, extra ...string) (audit.Report, string, int) {
	t.Helper()
	out, errOut, code := runCLI(t, baseEnv(t), append([]string{"verify-audit", ledger, "--pubkey", pub, "--json"}, extra...)...)
	var rep audit.Report
	if code == 0 {
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("verify-audit --json printed %q: %v", out, err)
		}
	}
	return rep, errOut, code
}

// envValue is the value of key in env ("" when absent).
func envValue(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}

// ledgerEntries reads the active ledger file's entries.
func ledgerEntries(t *testing.T, ledger string) []map[string]any {
	t.Helper()
	f, err := os.Open(ledger)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("ledger line is not JSON: %v", err)
		}
		out = append(out, m)
	}
	return out
}

// mixedCalls makes n tools/calls on s: successes, an unknown tool and an
// invalid argument, so every outcome is recorded.
func mixedCalls(t testing.TB, s *server, repo string, base, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		id := base + i
		switch i % 3 {
		case 0:
			statusCall(t, s, id, repo)
		case 1:
			if r := s.call(id, "tools/call", map[string]any{"name": "no.such.tool", "arguments": map[string]any{"repoId": "acme/secret"}}); r.Error == nil {
				t.Fatalf("unknown tool succeeded: %s", r.raw)
			}
		case 2:
			if r := s.call(id, "tools/call", map[string]any{"name": "repo.status", "arguments": map[string]any{"repoPath": "relative/path"}}); codeOf(t, r) != -32602 {
				t.Fatalf("relative repoPath accepted: %s", r.raw)
			}
		}
	}
}

// The default ledger: <run dir>/audit/mcp.jsonl, private, one entry per
// call with the labels of each outcome and nothing in clear.
func TestAuditLedgerDefaultPath(t *testing.T) {
	env := baseEnv(t)
	runDir := envValue(env, audit.EnvRunDir)
	repo := fixtureRepo(t)
	s := startServer(t, env)
	initialize(t, s)
	mixedCalls(t, s, repo, 1, 3)
	s.stop()
	ledger := filepath.Join(runDir, "audit", "mcp.jsonl")
	for p, mode := range map[string]os.FileMode{filepath.Dir(ledger): 0o700, ledger: 0o600} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatalf("%v; stderr:\n%s", err, s.stderr.String())
		}
		if fi.Mode().Perm() != mode {
			t.Errorf("%s: mode %04o, want %04o", p, fi.Mode().Perm(), mode)
		}
	}
	raw, _ := os.ReadFile(ledger)
	for _, clear := range []string{repo, "acme/secret", "relative/path"} {
		if bytes.Contains(raw, []byte(clear)) {
			t.Errorf("ledger holds %q in clear", clear)
		}
	}
	entries := ledgerEntries(t, ledger)
	if len(entries) != 3 {
		t.Fatalf("%d entries, want 3", len(entries))
	}
	want := []map[string]any{
		{"tool": "repo.status", "event_type": "tool_call", "approval": "not_required", "risk": "none", "result": "success", "readOnly": true},
		{"tool": "no.such.tool", "event_type": "write_block", "approval": "denied", "risk": "none", "result": "blocked", "readOnly": false},
		{"tool": "repo.status", "event_type": "write_block", "approval": "denied", "risk": "none", "result": "blocked", "readOnly": true},
	}
	for i, w := range want {
		for k, v := range w {
			if entries[i][k] != v {
				t.Errorf("entry %d: %s = %v, want %v", i+1, k, entries[i][k], v)
			}
		}
		if entries[i]["session_id"] != "lifecycle" || entries[i]["sequence"] != float64(i+1) || entries[i]["sidecarReadOnly"] != true {
			t.Errorf("entry %d: session %v sequence %v", i+1, entries[i]["session_id"], entries[i]["sequence"])
		}
	}
	if !strings.HasPrefix(entries[0]["repo_scope"].(string), "repoPath:sha256:") ||
		!strings.HasPrefix(entries[1]["repo_scope"].(string), "repoId:sha256:") {
		t.Errorf("repo scopes %v %v", entries[0]["repo_scope"], entries[1]["repo_scope"])
	}
	_, pub := auditKeys(t)
	if rep, errOut, code := verifyAudit(t, ledger, pub); code != 0 || rep.Entries != 3 || rep.Unsigned != 3 {
		t.Fatalf("verify-audit: exit %d %+v\n%s", code, rep, errOut)
	}
}

// Several fluxgit processes append to one ledger at the same time: nothing
// lost, nothing interleaved, every entry signed.
func TestAuditConcurrentProcesses(t *testing.T) {
	const procs, calls = 4, 12
	dir := t.TempDir()
	ledger := filepath.Join(dir, "audit", "mcp.jsonl")
	priv, pub := auditKeys(t)
	repo := fixtureRepo(t)
	t.Run("sessions", func(t *testing.T) {
		for p := 0; p < procs; p++ {
			t.Run(fmt.Sprint(p), func(t *testing.T) {
				t.Parallel()
				s := startServer(t, auditEnv(t, ledger, audit.EnvSignKey+"="+priv))
				initialize(t, s)
				mixedCalls(t, s, repo, 1, calls)
			})
		}
	})
	rep, errOut, code := verifyAudit(t, ledger, pub, "--require-signed")
	if code != 0 {
		t.Fatalf("verify-audit: exit %d\n%s", code, errOut)
	}
	if rep.Entries != procs*calls || rep.Signed != procs*calls || rep.LastSequence != procs*calls || rep.FirstSequence != 1 {
		t.Fatalf("report %+v, want %d signed entries", rep, procs*calls)
	}
	// The plain text form of the report.
	out, _, code := runCLI(t, baseEnv(t), "verify-audit", ledger, "--pubkey", pub)
	if code != 0 || !strings.Contains(out, fmt.Sprintf("entries %d\n", procs*calls)) || !strings.Contains(out, fmt.Sprintf("sequence 1..%d\n", procs*calls)) {
		t.Fatalf("text report:\n%s", out)
	}
}

func TestAuditVerifyCLI(t *testing.T) {
	dir := t.TempDir()
	ledger := filepath.Join(dir, "audit", "mcp.jsonl")
	priv, pub := auditKeys(t)
	s := startServer(t, auditEnv(t, ledger, audit.EnvSignKey+"="+priv))
	initialize(t, s)
	mixedCalls(t, s, fixtureRepo(t), 1, 6)
	s.stop()
	if _, errOut, code := verifyAudit(t, ledger, pub, "--require-signed"); code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	tamper := func(name string, edit func(lines []string) []string, wantLine string) {
		t.Run(name, func(t *testing.T) {
			cp := filepath.Join(t.TempDir(), "mcp.jsonl")
			b, _ := os.ReadFile(ledger)
			lines := strings.SplitAfter(string(b), "\n")
			lines = lines[:len(lines)-1] // trailing ""
			if err := os.WriteFile(cp, []byte(strings.Join(edit(lines), "")), 0o600); err != nil {
				t.Fatal(err)
			}
			_, errOut, code := verifyAudit(t, cp, pub)
			if code != 3 {
				t.Fatalf("exit %d, want 3\n%s", code, errOut)
			}
			if !strings.Contains(errOut, "mcp.jsonl "+wantLine) {
				t.Errorf("stderr does not name the file and %s: %s", wantLine, errOut)
			}
			for _, secret := range []string{"repo.status", "no.such.tool", "lifecycle", "sha256:"} {
				if strings.Contains(errOut, secret) {
					t.Errorf("stderr discloses entry contents (%q): %s", secret, errOut)
				}
			}
		})
	}
	tamper("changed result", func(ls []string) []string {
		ls[1] = strings.Replace(ls[1], `"result":"blocked"`, `"result":"success"`, 1)
		return ls
	}, "line 2")
	tamper("deleted line", func(ls []string) []string { return append(ls[:2], ls[3:]...) }, "line 3")
	tamper("swapped lines", func(ls []string) []string { ls[3], ls[4] = ls[4], ls[3]; return ls }, "line 4")
	tamper("torn tail", func(ls []string) []string { ls[5] = ls[5][:30]; return ls }, "line 6")

	// Re-signed with another key: the chain is consistent, the key is not ours.
	t.Run("other key", func(t *testing.T) {
		_, otherPub := auditKeys(t)
		if _, errOut, code := verifyAudit(t, ledger, otherPub); code != 3 || !strings.Contains(errOut, "not a given public key") {
			t.Fatalf("exit %d\n%s", code, errOut)
		}
	})
	// Usage errors exit 2. (A signed ledger without --pubkey is not a usage
	// error but an unverified ledger: see TestVerifyAuditKeyHandling.)
	for _, args := range [][]string{
		{"verify-audit"},
		{"verify-audit", ledger, "--require-signed"},
		{"verify-audit", ledger, "extra", "--pubkey", pub},
		{"verify-audit", ledger, "--pubkey", filepath.Join(dir, "missing.pem")},
		{"verify-audit", ledger, "--pubkey", priv},
		{"verify-audit", ledger, "--pubkey", pub, "--bogus"},
	} {
		if _, errOut, code := runCLI(t, baseEnv(t), args...); code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s", args, code, errOut)
		}
	}
	// No ledger at all is a failed verification, not a usage error.
	if _, _, code := verifyAudit(t, filepath.Join(dir, "none.jsonl"), pub); code != 3 {
		t.Errorf("missing ledger: exit %d, want 3", code)
	}
}

func TestAuditRequireSignedRejectsUnsigned(t *testing.T) {
	ledger := filepath.Join(t.TempDir(), "audit", "mcp.jsonl")
	s := startServer(t, auditEnv(t, ledger))
	initialize(t, s)
	statusCall(t, s, 1, fixtureRepo(t))
	s.stop()
	_, pub := auditKeys(t)
	if _, errOut, code := verifyAudit(t, ledger, pub); code != 0 {
		t.Fatalf("unsigned ledger without --require-signed: exit %d\n%s", code, errOut)
	}
	if _, errOut, code := verifyAudit(t, ledger, pub, "--require-signed"); code != 3 || !strings.Contains(errOut, "not signed") {
		t.Fatalf("--require-signed on an unsigned ledger: exit %d\n%s", code, errOut)
	}
}

// kill -9 in the middle of a burst of calls, plus a torn last line: the
// next process repairs the tail and the chain verifies.
func TestAuditSurvivesKill9(t *testing.T) {
	ledger := filepath.Join(t.TempDir(), "audit", "mcp.jsonl")
	priv, pub := auditKeys(t)
	env := auditEnv(t, ledger, audit.EnvSignKey+"="+priv)
	repo := fixtureRepo(t)
	s := startServer(t, env)
	initialize(t, s)
	mixedCalls(t, s, repo, 1, 3)
	for i := 0; i < 40; i++ { // fire without waiting, then kill mid-flight
		s.sendJSON(map[string]any{"jsonrpc": "2.0", "id": 100 + i, "method": "tools/call",
			"params": map[string]any{"name": "repo.status", "arguments": map[string]any{"repoPath": repo}}})
	}
	time.Sleep(30 * time.Millisecond)
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-s.done
	// Whatever the kill left, make the worst case certain: a torn write.
	f, err := os.OpenFile(ledger, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"approval":"not_required","args_fingerprint":"sha2`)
	f.Close()
	if _, _, code := verifyAudit(t, ledger, pub); code != 3 {
		t.Fatalf("a torn tail must fail verification until repaired, exit %d", code)
	}
	s2 := startServer(t, env)
	initialize(t, s2)
	mixedCalls(t, s2, repo, 1, 3)
	s2.stop()
	rep, errOut, code := verifyAudit(t, ledger, pub, "--require-signed")
	if code != 0 {
		t.Fatalf("after repair: exit %d\n%s\nserver stderr:\n%s", code, errOut, s2.stderr.String())
	}
	if rep.Entries < 6 {
		t.Fatalf("report %+v: entries of answered calls were lost", rep)
	}
	if !strings.Contains(s2.stderr.String(), "torn last line") {
		t.Errorf("the repair was not logged:\n%s", s2.stderr.String())
	}
}

// Audit misconfiguration stops the server before it serves anything.
func TestAuditFailsClosed(t *testing.T) {
	priv, _ := auditKeys(t)
	loose := filepath.Join(t.TempDir(), "loose.pem")
	b, _ := os.ReadFile(priv)
	os.WriteFile(loose, b, 0o644)
	os.Chmod(loose, 0o644)
	shared := filepath.Join(t.TempDir(), "shared")
	os.Mkdir(shared, 0o755)
	os.Chmod(shared, 0o755)
	garbage := filepath.Join(t.TempDir(), "garbage.pem")
	os.WriteFile(garbage, []byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"), 0o600)
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{[]string{audit.EnvSignKey + "=" + loose}, "group/world accessible"},
		{[]string{audit.EnvSignKey + "="}, "set but empty"},
		{[]string{audit.EnvSignKey + "=" + filepath.Join(t.TempDir(), "none.pem")}, "no such file"},
		{[]string{audit.EnvSignKey + "=" + garbage}, "not a valid PKCS#8"},
		{[]string{audit.EnvSignKey + "=" + loose, audit.EnvDisabled + "=1"}, "group/world accessible"}, // checked even when disabled
		{[]string{audit.EnvLog + "="}, "set but empty"},
		{[]string{audit.EnvMinAge + "=forever"}, audit.EnvMinAge},
		{[]string{audit.EnvMinAge + "=-1h", audit.EnvDisabled + "=1"}, audit.EnvMinAge}, // checked even when disabled
		{[]string{audit.EnvMaxBytes + "=1GiB"}, audit.EnvMaxBytes},
		{[]string{audit.EnvLog + "=" + filepath.Join(shared, "mcp.jsonl")}, "group/world accessible"},
	} {
		_, errOut, code := runCLI(t, append(baseEnv(t), tc.env...))
		if code != 1 || !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, "failing closed") {
			t.Errorf("%v: exit %d, want 1 mentioning %q\n%s", tc.env, code, tc.want, errOut)
		}
	}
}

// A ledger that cannot be written never changes a tool response; the
// failure is logged once.
func TestAuditFailureDoesNotChangeResponses(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "audit")
	repo := fixtureRepo(t)
	s := startServer(t, auditEnv(t, filepath.Join(blocker, "mcp.jsonl")))
	initialize(t, s)
	// Fine at start-up; then the ledger's directory turns into a file.
	os.WriteFile(blocker, nil, 0o600)
	broken := statusCall(t, s, 1, repo)
	statusCall(t, s, 2, repo)
	s.stop()
	ok := startServer(t, baseEnv(t))
	initialize(t, ok)
	healthy := statusCall(t, ok, 1, repo)
	if fmt.Sprint(broken) != fmt.Sprint(healthy) {
		t.Fatalf("responses differ:\n%v\n%v", broken, healthy)
	}
	if n := strings.Count(s.stderr.String(), "audit ledger degraded"); n != 1 {
		t.Fatalf("%d degraded messages, want 1:\n%s", n, s.stderr.String())
	}
}

func TestAuditDisabled(t *testing.T) {
	env := baseEnv(t)
	runDir := envValue(env, audit.EnvRunDir)
	s := startServer(t, append(env, audit.EnvDisabled+"=1"))
	initialize(t, s)
	statusCall(t, s, 1, fixtureRepo(t))
	s.stop()
	if _, err := os.Stat(filepath.Join(runDir, "audit")); !os.IsNotExist(err) {
		t.Fatalf("audit directory exists although auditing is disabled: %v", err)
	}
}

// BenchmarkRepoStatusAudit is repo.status on a small repository with the
// ledger off, unsigned and signed: the differences are the audit's share
// of a call.
func BenchmarkRepoStatusAudit(b *testing.B) {
	repo := fixtureRepo(b)
	priv, _ := auditKeys(b)
	for _, bc := range []struct {
		name string
		env  func(b *testing.B) []string
	}{
		{"disabled", func(b *testing.B) []string { return append(baseEnv(b), audit.EnvDisabled+"=1") }},
		{"unsigned", func(b *testing.B) []string { return baseEnv(b) }},
		{"signed", func(b *testing.B) []string { return append(baseEnv(b), audit.EnvSignKey+"="+priv) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := warmServer(b, bc.env(b))
			statusCall(b, s, 0, repo)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				statusCall(b, s, i+1, repo)
			}
		})
	}
}
