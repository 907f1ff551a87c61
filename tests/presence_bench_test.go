package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// benchStores writes n session files across the Claude Code, Codex,
// Gemini CLI and Copilot CLI stores of home, in their documented formats:
// every fourth one works in repo, the rest in other projects.
func benchStores(b *testing.B, home, repo string, n int) {
	b.Helper()
	now := time.Now().UTC()
	ts := now.Format(time.RFC3339Nano)
	line := func(v any) string {
		s, err := json.Marshal(v)
		if err != nil {
			b.Fatal(err)
		}
		return string(s) + "\n"
	}
	enc := func(p string) string {
		return strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
				return r
			}
			return '-'
		}, p)
	}
	projects := map[string]string{}
	for i := range n {
		cwd := filepath.Join(home, "src", fmt.Sprintf("other%03d", i))
		if i%4 == 0 {
			cwd = repo
		}
		id := fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)
		var path, body string
		switch i % 4 {
		case 0, 1: // Claude Code transcript, 40 turns
			path = filepath.Join(home, ".claude", "projects", enc(cwd), id+".jsonl")
			for k := range 40 {
				body += line(map[string]any{"type": "assistant", "uuid": fmt.Sprint(k), "sessionId": id, "timestamp": ts, "cwd": cwd, "gitBranch": "main",
					"message": map[string]any{"content": []any{map[string]any{"type": "tool_use", "id": fmt.Sprint(k), "name": "Edit", "input": map[string]any{"file_path": filepath.Join(cwd, "src", "app.go")}}}}})
			}
		case 2: // Codex rollout
			path = filepath.Join(home, ".codex", "sessions", now.Format("2006"), now.Format("01"), now.Format("02"), "rollout-"+now.Format("2006-01-02T15-04-05")+"-"+id+".jsonl")
			body = line(map[string]any{"timestamp": ts, "type": "session_meta", "payload": map[string]any{"id": id, "timestamp": ts, "cwd": cwd, "originator": "codex_cli_rs", "cli_version": "0.50.0", "git": map[string]any{"branch": "main"}}})
			for k := range 30 {
				body += line(map[string]any{"timestamp": ts, "type": "response_item", "payload": map[string]any{"type": "function_call", "name": "shell", "arguments": `{"command":["ls"]}`, "call_id": fmt.Sprint(k)}})
			}
		case 3:
			if i%8 == 3 { // Gemini CLI chat
				slug := fmt.Sprintf("p%03d", i)
				projects[cwd] = slug
				path = filepath.Join(home, ".gemini", "tmp", slug, "chats", "session-"+now.Format("2006-01-02T15-04")+"-"+id[:8]+".jsonl")
				body = line(map[string]any{"sessionId": id, "projectHash": "x", "startTime": ts, "lastUpdated": ts, "kind": "main"})
				for k := range 20 {
					body += line(map[string]any{"id": fmt.Sprint(k), "timestamp": ts, "type": "gemini", "content": "", "toolCalls": []any{map[string]any{"id": fmt.Sprint(k), "name": "read_file", "args": map[string]any{}, "status": "success", "timestamp": ts}}})
				}
			} else { // Copilot CLI events
				path = filepath.Join(home, ".copilot", "session-state", id, "events.jsonl")
				body = line(map[string]any{"id": "e0", "timestamp": ts, "type": "session.start", "data": map[string]any{"sessionId": id, "startTime": ts, "context": map[string]any{"cwd": cwd, "gitRoot": cwd, "branch": "main"}}})
				for k := range 20 {
					body += line(map[string]any{"id": fmt.Sprintf("e%d", k+1), "timestamp": ts, "type": "tool.execution_start", "data": map[string]any{"toolName": "bash"}})
				}
			}
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	pj, _ := json.Marshal(map[string]any{"projects": projects})
	if err := os.WriteFile(filepath.Join(home, ".gemini", "projects.json"), pj, 0o600); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkAgentsPresence measures agents.presence through the real
// binary with 500 extra processes on the machine (a few named like an
// agent and working in the repository) and 200 session files across the
// agents' stores. It reports the p50 and p99 latency of one call.
func BenchmarkAgentsPresence(b *testing.B) {
	repo := fixtureRepo(b)
	env := detectEnv(b, canonicalTempDir(b), canonicalTempDir(b))
	var home string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	benchStores(b, home, repo, 200)

	binDir := canonicalTempDir(b)
	sleepBin, claudeBin := filepath.Join(binDir, "sleep"), filepath.Join(binDir, "claude")
	copyFile(b, "/bin/sleep", sleepBin)
	copyFile(b, "/bin/sleep", claudeBin)
	elsewhere := canonicalTempDir(b)
	var procs []*exec.Cmd
	b.Cleanup(func() {
		for _, c := range procs {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	})
	for i := range 500 {
		bin, dir := sleepBin, elsewhere
		if i%100 == 0 {
			bin, dir = claudeBin, repo
		}
		c := exec.Command(bin, "600")
		c.Dir = dir
		if err := c.Start(); err != nil {
			b.Fatalf("process %d: %v", i, err)
		}
		procs = append(procs, c)
	}

	s := startAs(b, env, "codex-mcp-client", "1")
	d := presenceAgents(b, s, "warm", repo)
	if n := len(agentsOf(d)); n < 5 {
		b.Fatalf("only %d agents found; the fixtures are not seen: %v", n, d)
	}
	durations := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		r := s.call(i+1, "tools/call", map[string]any{"name": "agents.presence", "arguments": map[string]any{"repoPath": repo}})
		durations = append(durations, time.Since(start))
		if r.Error != nil {
			b.Fatal(r.raw)
		}
	}
	b.StopTimer()
	slices.Sort(durations)
	pct := func(p float64) float64 {
		return float64(durations[min(len(durations)-1, int(p*float64(len(durations))))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}
