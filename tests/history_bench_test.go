package tests

import (
	"os/exec"
	"testing"
	"time"
)

// History benchmarks over the generated repository (tests/genrepo: 5,000
// commits, 20,000 files; or $FLUXGIT_BENCH_REPO). They report ms per call
// and never assert times. Run:
//
//	go test ./tests -run '^$' -bench 'HistorySearch|HistoryFiltered|RefsRecency' -benchtime 10x

// benchHistoryTool times one tool call through the warm server.
func benchHistoryTool(b *testing.B, tool string, args map[string]any) {
	repo := largeRepo(b)
	s := warmServer(b, append(baseEnv(b), "FLUXGIT_MCP_AUDIT_DISABLED=1"))
	args["repoPath"] = repo
	call := func(id int) {
		p := toolPayload(b, s.call(id, "tools/call", map[string]any{"name": tool, "arguments": args}))
		if p["error"] != nil {
			b.Fatalf("%s: %v", tool, p["error"])
		}
	}
	call(0)
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		call(i + 1)
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/call")
}

// BenchmarkHistorySearchFullWalk searches all 5,000 commits: the string
// appears in few commits, so the budget is never reached and git walks
// and diffs the whole history.
func BenchmarkHistorySearchFullWalk(b *testing.B) {
	benchHistoryTool(b, "history.search", map[string]any{"text": "revision 2500\n"})
}

// BenchmarkHistorySearchNoMatch is the worst case: nothing matches.
func BenchmarkHistorySearchNoMatch(b *testing.B) {
	benchHistoryTool(b, "history.search", map[string]any{"text": "no such text anywhere"})
}

// BenchmarkHistorySearchRegexBudget stops at the budget: recent commits
// match, so git ends after limit+1 hits.
func BenchmarkHistorySearchRegexBudget(b *testing.B) {
	benchHistoryTool(b, "history.search", map[string]any{"regex": "^revision 4[0-9]{3}$", "limit": 20})
}

// BenchmarkRawGitPickaxeFullWalk is the single git process the full walk
// wraps, for comparison.
func BenchmarkRawGitPickaxeFullWalk(b *testing.B) {
	repo := largeRepo(b)
	start := time.Now()
	for i := 0; i < b.N; i++ {
		cmd := exec.Command("git", "-C", repo, "log", "-z", "--name-only", "-Srevision 2500\n", "-n21", "--format=%H")
		if out, err := cmd.Output(); err != nil || len(out) == 0 {
			b.Fatalf("git log -S: %v", err)
		}
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/call")
}

// BenchmarkHistoryFiltered pages through repo.history with a path, an
// author and a date window over the 5,000 commits.
func BenchmarkHistoryFiltered(b *testing.B) {
	benchHistoryTool(b, "repo.history", map[string]any{"paths": []string{"pkg07"}, "author": "bench", "since": "1700000000", "rev": "HEAD~100..HEAD", "limit": 50})
}
