//go:build linux

package agentdetect

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/fluxgit/fluxgit/internal/rundir"
)

// TestDetectRealSources runs the default sources against real processes
// and a real presence record: a "claude" process in the repository whose
// child (its MCP sidecar) wrote a presence record merges into one agent
// carrying the agent's pid; a codex process elsewhere is not reported.
func TestDetectRealSources(t *testing.T) {
	repo := newRepo(t, "repo")
	fam := startChild(t, repo)
	startHelper(t, t.TempDir(), "sleep", "codex")
	gem := startHelper(t, repo, "sleep", "gemini")
	now := time.Now()
	run := t.TempDir()
	writeRecord(t, rundir.PresenceDir(run), "x.json", record(fam.child, client("claude-code"), recRepo{repo, now.Add(-5 * time.Minute).UnixMilli(), "repo.status"}), now)
	q := Query{Repo: repo, Worktrees: []string{repo}, Home: t.TempDir(), Env: func(string) string { return "" }, RunDir: run, SelfPID: os.Getpid(), Now: now}
	r := Detect(context.Background(), q, DefaultSources(Options{}))
	if len(r.Failed) != 0 {
		t.Fatalf("failed sources %v", r.Failed)
	}
	got := summary(r)
	want := []string{
		"claude-code open registry [mcp,process] pid=" + itoa(fam.parent) + " tool=repo.status",
		"gemini-cli open cwd [process] pid=" + itoa(gem.Process.Pid),
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("agents %q, want %q", got, want)
	}
	for _, f := range r.Agents {
		if f.Agent == "claude-code" && (f.MCPClient == nil || f.MCPClient.Name != "claude-code" || f.LastActivityMs == nil) {
			t.Errorf("merged finding lost the record's client or activity: %+v", f)
		}
	}
}
