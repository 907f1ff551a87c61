package audit

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// smallLimits rotate after a few entries and retain about two rotated
// segments and the active file.
func smallLimits() *limits {
	return &limits{segmentBytes: 4096, lineBytes: DefaultLineBytes, retainBytes: 3 * 4096, lockTimeout: 10 * time.Second}
}

func testSigner(seed byte) *Signer {
	s := make([]byte, ed25519.SeedSize)
	for i := range s {
		s[i] = seed + byte(i)
	}
	return NewSigner(ed25519.NewKeyFromSeed(s))
}

// ledgerPath is a fresh ledger path inside a private directory.
func ledgerPath(t testing.TB) string {
	return filepath.Join(t.TempDir(), "audit", "mcp.jsonl")
}

func openTest(t testing.TB, path string, signer *Signer, lim *limits) *Ledger {
	t.Helper()
	l, err := Open(Options{Path: path, Signer: signer, limits: lim})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// testRecord is a varied tools/call.
func testRecord(i int) CallRecord {
	recs := []CallRecord{
		{Tool: "repo.status", Known: true, ReadOnly: true, Outcome: OutcomeSuccess,
			Arguments: []byte(fmt.Sprintf(`{"repoPath":"/home/ada/src/project-%d"}`, i))},
		{Tool: "operation.preview.reset", Known: true, Event: EventWriteProposal, Risk: RiskHigh, Outcome: OutcomeSuccess,
			Arguments: []byte(fmt.Sprintf(`{"repoId":"acme/secret-%d","target":"HEAD~1"}`, i))},
		{Tool: "nope", Outcome: OutcomeBlocked, ErrorMessage: "Unknown tool 'nope'"},
		{Tool: "fleet.radar", Known: true, ReadOnly: true, Outcome: OutcomeError,
			Arguments: []byte(`{"repoPaths":["/a","/b"]}`)},
	}
	r := recs[i%len(recs)]
	r.ClientName = fmt.Sprintf("agent %d", i%3)
	r.Start = time.UnixMilli(1_700_000_000_000 + int64(i))
	r.Duration = time.Duration(i%50) * time.Millisecond
	return r
}

func appendN(t testing.TB, l *Ledger, from, n int) {
	t.Helper()
	for i := from; i < from+n; i++ {
		if _, err := l.Append(EventFromCall(testRecord(i))); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
	}
}

func verifyOpts(keys []ed25519.PublicKey, require bool, lim *limits) VerifyOptions {
	return VerifyOptions{PublicKeys: keys, RequireSigned: require, limits: lim}
}

func mustVerify(t testing.TB, path string, opts VerifyOptions) Report {
	t.Helper()
	rep, err := Verify(path, opts)
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	return rep
}

// mustFail asserts verification fails with an IntegrityError and returns it.
func mustFail(t testing.TB, path string, opts VerifyOptions) *IntegrityError {
	t.Helper()
	_, err := Verify(path, opts)
	var ie *IntegrityError
	if !errors.As(err, &ie) {
		t.Fatalf("verify: want an integrity error, got %v", err)
	}
	return ie
}

// copyLedger copies the ledger's directory and returns the copy's ledger path.
func copyLedger(t testing.TB, path string) string {
	t.Helper()
	src := filepath.Dir(path)
	dst := filepath.Join(t.TempDir(), "copy")
	if err := os.Mkdir(dst, 0o700); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dst, filepath.Base(path))
}

// ledgerFileNames lists the ledger's files in verification order: rotated
// segments oldest first, then the active file.
func ledgerFileNames(t testing.TB, path string) []string {
	t.Helper()
	lf, err := scanDir(filepath.Dir(path), filepath.Base(path))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range lf.segments {
		out = append(out, filepath.Join(filepath.Dir(path), s.name))
	}
	return append(out, path)
}

func checkpointPaths(t testing.TB, path string) []string {
	t.Helper()
	lf, err := scanDir(filepath.Dir(path), filepath.Base(path))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range lf.checkpoints {
		out = append(out, filepath.Join(filepath.Dir(path), c.name))
	}
	return out
}

func readLines(t testing.TB, file string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var lines [][]byte
	for _, l := range bytes.SplitAfter(b, []byte("\n")) {
		if len(l) > 0 {
			lines = append(lines, l)
		}
	}
	return lines
}

func writeLines(t testing.TB, file string, lines [][]byte) {
	t.Helper()
	if err := os.WriteFile(file, bytes.Join(lines, nil), 0o600); err != nil {
		t.Fatal(err)
	}
}

func countLines(t testing.TB, path string) int {
	n := 0
	for _, f := range ledgerFileNames(t, path) {
		if _, err := os.Stat(f); err == nil {
			n += len(readLines(t, f))
		}
	}
	return n
}

// resign rewrites every entry and checkpoint of a ledger as if produced
// with another key: chain recomputed, new signatures. It is what an
// attacker holding a different key could do.
func resign(t testing.TB, path string, s *Signer) {
	t.Helper()
	prev := ""
	for _, f := range ledgerFileNames(t, path) {
		if _, err := os.Stat(f); err != nil {
			continue
		}
		var out [][]byte
		for _, line := range readLines(t, f) {
			o, err := parseObject(bytes.TrimSuffix(line, []byte("\n")))
			if err != nil {
				t.Fatal(err)
			}
			if prev != "" {
				o = o.Set("previousHash", prev)
			}
			o = o.Without("signature", "entryHash").Set("signatureKeyId", s.keyID).Set("signatureVersion", int64(3))
			h, _ := entryHash(o)
			o = o.Set("entryHash", h)
			msg, _ := appendObjectExcept(nil, o, "signature")
			o = o.Set("signature", s.sign(msg))
			b, _ := appendObjectExcept(nil, o)
			out = append(out, append(b, '\n'))
			prev = h
		}
		writeLines(t, f, out)
	}
	for _, c := range checkpointPaths(t, path) {
		b, _ := os.ReadFile(c)
		o, err := parseObject(b)
		if err != nil {
			t.Fatal(err)
		}
		o = o.Without("signature").Set("signatureKeyId", s.keyID).Set("signatureVersion", int64(3))
		msg, _ := appendObjectExcept(nil, o, "signature")
		o = o.Set("signature", s.sign(msg))
		nb, _ := appendObjectExcept(nil, o)
		if err := os.WriteFile(c, append(nb, '\n'), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// noContents asserts an error message names no entry contents.
func noContents(t testing.TB, err error) {
	t.Helper()
	msg := err.Error()
	for _, s := range []string{"repo.status", "operation.preview", "agent", "secret", "sha256:", "completed", "nope"} {
		if strings.Contains(msg, s) {
			t.Errorf("error message discloses entry contents (%q): %s", s, msg)
		}
	}
}

// ledgerDiskBytes is the size of the active file and the rotated segments.
func ledgerDiskBytes(t testing.TB, path string) int64 {
	t.Helper()
	var n int64
	for _, f := range ledgerFileNames(t, path) {
		if fi, err := os.Stat(f); err == nil {
			n += fi.Size()
		}
	}
	return n
}
