package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Huge output stays within the caps, and every cut is flagged: a 50 MB
// diff and 100,000 untracked files.
func TestHugeOutputIsCappedAndFlagged(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 50 MB file and 100k files")
	}
	dir := filepath.Join(canonicalTempDir(t), "huge")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "init", "-q", "-b", "main")
	writeFile(t, filepath.Join(dir, "small.txt"), "small\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "small")
	base := strings.TrimSpace(git(t, dir, "rev-parse", "HEAD"))
	// 50 MB of text lines in one commit.
	line := strings.Repeat("x", 99) + "\n"
	f, err := os.Create(filepath.Join(dir, "big.txt"))
	if err != nil {
		t.Fatal(err)
	}
	chunk := strings.Repeat(line, 10000) // 1 MB
	for i := 0; i < 50; i++ {
		if _, err := f.WriteString(chunk); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	git(t, dir, "add", "big.txt")
	git(t, dir, "commit", "-q", "-m", "big")
	// 100,000 untracked files in 100 directories.
	for d := 0; d < 100; d++ {
		sub := filepath.Join(dir, "untracked", fmt.Sprintf("d%03d", d))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 1000; i++ {
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%04d", i)), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}

	s := startServer(t, append(baseEnv(t), "FLUXGIT_MCP_AUDIT_DISABLED=1"))
	initialize(t, s)
	callData := func(id int, tool string, args map[string]any) (map[string]any, int) {
		t.Helper()
		args["repoPath"] = dir
		r := s.call(id, "tools/call", map[string]any{"name": tool, "arguments": args})
		p := toolPayload(t, r)
		data, ok := p["data"].(map[string]any)
		if !ok {
			t.Fatalf("%s: no data: %.400s", tool, r.raw)
		}
		b, _ := json.Marshal(data)
		return data, len(b)
	}

	// By default git is stopped at the budget: the totals then count what
	// was read and say so.
	d, _ := callData(1, "diff.text", map[string]any{"base": base, "head": "HEAD"})
	if d["truncated"] != true || d["totalsExact"] != false || len(d["diff"].(string)) > 65536 || d["totalBytes"].(float64) < float64(len(d["diff"].(string))) {
		t.Fatalf("diff.text: truncated=%v totalsExact=%v totalBytes=%v len=%d", d["truncated"], d["totalsExact"], d["totalBytes"], len(d["diff"].(string)))
	}
	// exactTotals reads git's whole output for the exact size.
	d, _ = callData(11, "diff.text", map[string]any{"base": base, "head": "HEAD", "exactTotals": true})
	if d["truncated"] != true || d["totalsExact"] == false || d["totalBytes"].(float64) < 50e6 || len(d["diff"].(string)) > 65536 {
		t.Fatalf("diff.text exactTotals: truncated=%v totalBytes=%v len=%d", d["truncated"], d["totalBytes"], len(d["diff"].(string)))
	}
	if d["totalLines"].(float64) < 500000 {
		t.Fatalf("diff.text totalLines = %v", d["totalLines"])
	}

	// Lean repo.status and worktree.changes use git's default untracked
	// mode, as git status does: the new directory is one entry, so nothing
	// needs cutting. (The cap itself: TestLeanWorktreeChangesTruncated and
	// the reference shape's parity runs.)
	st, size := callData(2, "repo.status", map[string]any{})
	if e, _ := st["entries"].([]any); len(e) != 1 || e[0] != "?? untracked/" || st["changedFiles"] != nil {
		t.Fatalf("repo.status: changedFiles=%v entries=%v", st["changedFiles"], st["entries"])
	}
	if size > 200_000 {
		t.Fatalf("repo.status data is %d bytes", size)
	}

	wc, _ := callData(3, "worktree.changes", map[string]any{})
	if e, _ := wc["entries"].([]any); len(e) != 1 || e[0] != "?? untracked/" || wc["untrackedCount"] != nil {
		t.Fatalf("worktree.changes: %v", wc)
	}

	_, briefSize := callData(4, "repo.brief", map[string]any{})
	if briefSize >= 2400 {
		t.Fatalf("repo.brief data is %d characters, budget 2400", briefSize)
	}
	t.Logf("repo.brief on 100k untracked files: %d characters", briefSize)

	cd, _ := callData(5, "commit.details", map[string]any{"commit": "HEAD"})
	if files := cd["files"].([]any); len(files) != 1 {
		t.Fatalf("commit.details files: %v", files)
	}
}
