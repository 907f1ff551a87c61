//go:build linux

package agentdetect

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/fluxgit/fluxgit/internal/rundir"
)

// BenchmarkDetect measures one whole detection (process table, editors,
// presence records) with 500 extra processes on the machine, a few agent
// processes in and out of the repository, 50 presence records, 20 IDE
// lock files and 200 editor workspaces (10 of them active). It reports the p50 and p99 of
// single detections.
func BenchmarkDetect(b *testing.B) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		b.Skip("no sleep binary")
	}
	repo := newRepo(b, "repo")
	elsewhere := b.TempDir()
	for range 500 {
		c := exec.Command(sleep, "600")
		c.Dir = elsewhere
		if err := c.Start(); err != nil {
			b.Fatalf("spawning the crowd: %v", err)
		}
		b.Cleanup(func() { c.Process.Kill(); c.Wait() })
	}
	for _, a := range []string{"claude", "codex", "aider"} {
		startHelper(b, repo, "sleep", a)
		startHelper(b, elsewhere, "sleep", a)
	}
	now := time.Now()
	run := b.TempDir()
	for i := range 50 {
		writeBenchFile(b, rundir.PresenceDir(run), fmt.Sprintf("%d.json", 700000+i),
			fmt.Sprintf(`{"schemaVersion":1,"pid":%d,"client":{"name":"codex-mcp-client","version":"1"},"repos":[{"repoPath":%q,"lastCallMs":%d,"lastTool":"repo.status"}]}`,
				700000+i, repo, now.Add(-time.Minute).UnixMilli()))
	}
	home := b.TempDir()
	for i := range 20 {
		writeBenchFile(b, filepath.Join(home, ".claude", "ide"), fmt.Sprintf("%d.lock", 40000+i),
			fmt.Sprintf(`{"pid":%d,"workspaceFolders":[%q],"authToken":"x"}`, 700000+i, repo))
	}
	cfg := b.TempDir()
	// Editors keep a directory per folder ever opened; most are old.
	old := now.Add(-30 * 24 * time.Hour)
	for i := range 200 {
		dir := filepath.Join(cfg, "Code", "User", "workspaceStorage", fmt.Sprintf("%032x", i))
		writeBenchFile(b, dir, "workspace.json", fmt.Sprintf(`{"folder":"file://%s"}`, filepath.Join(elsewhere, fmt.Sprint(i))))
		if i >= 10 {
			if err := os.Chtimes(dir, old, old); err != nil {
				b.Fatal(err)
			}
		}
	}
	q := Query{Repo: repo, Worktrees: []string{repo}, Home: home, RunDir: run, SelfPID: os.Getpid(), Env: func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return cfg
		}
		return ""
	}}
	sources := DefaultSources(Options{})
	if r := Detect(context.Background(), q, sources); len(r.Failed) != 0 || r.AgentCount < 3 {
		b.Fatalf("warm-up detection: %d agents, failed %v", r.AgentCount, r.Failed)
	}
	durs := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		q.Now = t0
		Detect(context.Background(), q, sources)
		durs = append(durs, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(durs)
	pct := func(p float64) float64 {
		return float64(durs[min(len(durs)-1, int(p*float64(len(durs))))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}

func writeBenchFile(b *testing.B, dir, name, content string) {
	b.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
		b.Fatal(err)
	}
}
