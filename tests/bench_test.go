package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/fluxgit/fluxgit/tests/gatewaytest"
)

// Benchmarks report; they never assert times (machines are noisy).
// Run: go test ./tests -run '^$' -bench . -benchtime 50x

// BenchmarkColdInitialize measures process start to the initialize reply.
func BenchmarkColdInitialize(b *testing.B) {
	env := baseEnv(b)
	for i := 0; i < b.N; i++ {
		s := startServer(b, env)
		s.sendJSON(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
			"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "bench", "version": "1"}}})
		s.next(30 * time.Second)
		b.StopTimer()
		s.stop()
		b.StartTimer()
	}
}

func warmServer(b *testing.B, env []string) *server {
	s := startServer(b, env)
	initialize(b, s)
	return s
}

// BenchmarkToolsList measures tools/list on a warm session.
func BenchmarkToolsList(b *testing.B) {
	s := warmServer(b, baseEnv(b))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r := s.call(i+1, "tools/list", nil); r.Error != nil {
			b.Fatal(r.raw)
		}
	}
}

// BenchmarkHostOverheadNoop is one tools/call round trip to a provider
// that does nothing: stdio framing, argument and payload validation, the
// gRPC hop and the envelope; with the audit ledger on (an fsynced append
// per call) and off.
func BenchmarkHostOverheadNoop(b *testing.B) {
	for _, mode := range []struct {
		name string
		env  []string
	}{{"audit-off", []string{"FLUXGIT_MCP_AUDIT_DISABLED=1"}}, {"audit-on", nil}} {
		b.Run(mode.name, func(b *testing.B) {
			s := warmServer(b, append(echoEnv(b), mode.env...))
			s.call(0, "tools/call", map[string]any{"name": "echo.noop", "arguments": map[string]any{}}) // start the provider
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if r := s.call(i+1, "tools/call", map[string]any{"name": "echo.noop", "arguments": map[string]any{}}); r.Error != nil {
					b.Fatal(r.raw)
				}
			}
		})
	}
}

// BenchmarkPing is the stdio round trip alone, to subtract from the above.
func BenchmarkPing(b *testing.B) {
	s := warmServer(b, baseEnv(b))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.call(i+1, "ping", nil)
	}
}

// largeRepo returns the benchmark repository: $FLUXGIT_BENCH_REPO, or one
// generated (20k files, 5k commits) once into the temp directory.
func largeRepo(b *testing.B) string {
	if d := os.Getenv("FLUXGIT_BENCH_REPO"); d != "" {
		return d
	}
	dir := filepath.Join(os.TempDir(), "fluxgit-bench-repo-20000x5000")
	if _, err := os.Stat(filepath.Join(dir, ".git", "index")); err == nil {
		return dir
	}
	os.RemoveAll(dir)
	out, err := exec.Command("go", "run", "./genrepo", "-dir", dir, "-files", "20000", "-commits", "5000").CombinedOutput()
	if err != nil {
		b.Fatalf("genrepo: %v\n%s", err, out)
	}
	return dir
}

// BenchmarkRepoStatusLarge and BenchmarkRawGitStatusLarge compare
// repo.status through the host with the single git process it wraps.
func BenchmarkRepoStatusLarge(b *testing.B) {
	repo := largeRepo(b)
	s := warmServer(b, baseEnv(b))
	statusCall(b, s, 0, repo)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		statusCall(b, s, i+1, repo)
	}
}

func BenchmarkRawGitStatusLarge(b *testing.B) {
	repo := largeRepo(b)
	for i := 0; i < b.N; i++ {
		cmd := exec.Command("git", "-C", repo, "status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all")
		if out, err := cmd.Output(); err != nil || len(out) == 0 {
			b.Fatal(fmt.Errorf("git status: %v", err))
		}
	}
}

// BenchmarkRepoHistoryLarge pages 50 commits deep into the large history.
func BenchmarkRepoHistoryLarge(b *testing.B) {
	benchToolLarge(b, "repo.history", map[string]any{"limit": 50, "cursor": "1000"})
}

// BenchmarkDiffTextLarge diffs 100 commits of the large repository (capped
// at the default 64 KiB).
func BenchmarkDiffTextLarge(b *testing.B) {
	benchToolLarge(b, "diff.text", map[string]any{"base": "HEAD~100", "head": "HEAD"})
}

// BenchmarkRepoBriefLarge is the agent's first call on the large repository.
func BenchmarkRepoBriefLarge(b *testing.B) {
	benchToolLarge(b, "repo.brief", map[string]any{})
}

func benchToolLarge(b *testing.B, tool string, args map[string]any) {
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
	for i := 0; i < b.N; i++ {
		call(i + 1)
	}
}

// BenchmarkRepoStatusVsRawGit compares, in one run, repo.status through the
// host (one git process when discovery is cached) with the single raw
// `git status` it wraps, on $FLUXGIT_BENCH_REPO (for instance a clone of
// git/git). It reports the mean of each and their ratio; run it with
//
//	FLUXGIT_BENCH_REPO=/path go test ./tests -run '^$' -bench RepoStatusVsRawGit -benchtime 40x
func BenchmarkRepoStatusVsRawGit(b *testing.B) {
	repo := os.Getenv("FLUXGIT_BENCH_REPO")
	if repo == "" {
		b.Skip("FLUXGIT_BENCH_REPO is not set")
	}
	for _, mode := range []struct {
		name string
		env  []string
	}{
		{"unconfined", nil},
		{"confined", []string{"FLUXGIT_MCP_ALLOWED_ROOTS=" + filepath.Dir(repo)}},
	} {
		b.Run(mode.name, func(b *testing.B) {
			s := warmServer(b, append(append(baseEnv(b), "FLUXGIT_MCP_AUDIT_DISABLED=1"), mode.env...))
			statusCall(b, s, 0, repo) // start the provider, fill the caches
			raw := func() {
				cmd := exec.Command("git", "-C", repo, "status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all")
				cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0")
				if out, err := cmd.Output(); err != nil || len(out) == 0 {
					b.Fatal(fmt.Errorf("git status: %v", err))
				}
			}
			raw()
			var tool, git time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				// Interleaved, so both see the same machine load.
				t0 := time.Now()
				raw()
				t1 := time.Now()
				if p := statusCall(b, s, i+1, repo); p["error"] != nil {
					b.Fatalf("repo.status: %v", p["error"])
				}
				git += t1.Sub(t0)
				tool += time.Since(t1)
			}
			b.ReportMetric(float64(git.Microseconds())/float64(b.N), "raw-us/op")
			b.ReportMetric(float64(tool.Microseconds())/float64(b.N), "tool-us/op")
			b.ReportMetric(float64(tool)/float64(git), "ratio")
		})
	}
}

// BenchmarkProgressLatency measures how long a progress notification takes
// from the provider's Progress call to the client reading it off stdout:
// the provider stamps each message with its send time.
func BenchmarkProgressLatency(b *testing.B) {
	s := warmServer(b, append(exampleEnv(b), "FLUXGIT_MCP_AUDIT_DISABLED=1"))
	var total time.Duration
	n := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id := i + 1
		s.sendJSON(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{
			"name": "example.count", "arguments": map[string]any{"steps": 4, "stamp": true}, "_meta": map[string]any{"progressToken": id}}})
		for {
			line := s.next(30 * time.Second)
			got := time.Now()
			var m struct {
				ID     json.RawMessage `json:"id"`
				Params struct {
					Message string `json:"message"`
				} `json:"params"`
			}
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				b.Fatal(err)
			}
			if m.ID != nil {
				break
			}
			sent, err := strconv.ParseInt(m.Params.Message, 10, 64)
			if err != nil {
				b.Fatalf("progress without a stamp: %s", line)
			}
			total += got.Sub(time.Unix(0, sent))
			n++
		}
	}
	b.StopTimer()
	if n > 0 {
		b.ReportMetric(float64(total.Microseconds())/float64(n), "µs/progress")
	}
}

// BenchmarkPreviewRoundTrip is one operation.preview.commit through the
// host and the handshake provider to a loopback gateway that answers at
// once (a POST and the one status read). It reports the round trip's p50
// and p99 and the host+provider share: the round trip minus the time the
// gateway itself spent handling the two requests, measured inside it.
//
//	go test ./tests -run '^$' -bench PreviewRoundTrip -benchtime 500x
func BenchmarkPreviewRoundTrip(b *testing.B) {
	for _, mode := range []struct {
		name string
		env  []string
	}{
		{"audit-off", []string{"FLUXGIT_MCP_AUDIT_DISABLED=1"}},
		{"audit-on", nil},
		// Without the otherAgents detection that every preview runs.
		{"audit-off-no-hint", []string{"FLUXGIT_MCP_AUDIT_DISABLED=1", "FLUXGIT_MCP_AGENT_DETECTION_DISABLED=1"}},
	} {
		b.Run(mode.name, func(b *testing.B) {
			g := gatewaytest.New(b)
			repo := fixtureRepo(b)
			s := warmServer(b, append(handshakeEnv(b, g), mode.env...))
			args := withPreviewBase(map[string]any{"message": "docs: notes"}, repo)
			call := func(id int) {
				p := toolPayload(b, s.call(id, "tools/call", map[string]any{"name": "operation.preview.commit", "arguments": args}))
				if p["accepted"] != true {
					b.Fatalf("preview not accepted: %v", p)
				}
			}
			call(0) // start the provider
			g.ResetRecords()
			total := make([]time.Duration, 0, b.N)
			share := make([]time.Duration, 0, b.N)
			gw := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				call(i + 1)
				d := time.Since(t0)
				b.StopTimer()
				reqs := g.Requests()
				if len(reqs) != 2 {
					b.Fatalf("call %d: the gateway saw %d requests, want 2", i+1, len(reqs))
				}
				var inGateway time.Duration
				for _, r := range reqs {
					inGateway += r.Handled
				}
				if v := g.Violations(); len(v) != 0 {
					b.Fatalf("contract violations: %v", v)
				}
				g.ResetRecords()
				total, share, gw = append(total, d), append(share, d-inGateway), append(gw, inGateway)
				b.StartTimer()
			}
			b.StopTimer()
			us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
			b.ReportMetric(us(percentile(total, 50)), "p50-µs")
			b.ReportMetric(us(percentile(total, 99)), "p99-µs")
			b.ReportMetric(us(percentile(share, 50)), "host+provider-p50-µs")
			b.ReportMetric(us(percentile(share, 99)), "host+provider-p99-µs")
			b.ReportMetric(us(percentile(gw, 50)), "gateway-p50-µs")
		})
	}
}

// percentile is the p-th percentile (nearest rank) of ds; it sorts ds.
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	rank := (p*len(ds) + 99) / 100
	if rank < 1 {
		rank = 1
	}
	return ds[rank-1]
}
