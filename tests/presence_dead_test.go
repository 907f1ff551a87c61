package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestPresenceDeadRecordOfCaller: a presence record left by a server of
// the caller's own agent that is gone (its pid names no process) is
// reported with pid null and likelyCaller true, and a proposal's
// otherAgents hint leaves it out and counts it in omittedLikelyCaller (a
// number). Before the fix the dead pid was reported, likelyCaller was
// false and the hint listed the caller's own agent as another agent.
func TestPresenceDeadRecordOfCaller(t *testing.T) {
	repo := fixtureRepo(t)
	run := canonicalTempDir(t)
	dir := filepath.Join(run, "presence", "mcp")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	const client = "fluxgit-e2e-agent"
	b, _ := json.Marshal(map[string]any{"schemaVersion": 1, "pid": 99999993,
		"client": map[string]any{"name": client, "version": "1"},
		"repos":  []map[string]any{{"repoPath": repo, "lastCallMs": time.Now().Add(-5 * time.Minute).UnixMilli(), "lastTool": "repo.status"}}})
	if err := os.WriteFile(filepath.Join(dir, "99999993.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	s := startAs(t, detectEnv(t, run, canonicalTempDir(t)), client, "2")

	p := toolCall(t, s, 1, "agents.presence", map[string]any{"repoPath": repo})
	data, _ := p["data"].(map[string]any)
	agents, _ := data["agents"].([]any)
	var own map[string]any
	for _, a := range agents {
		if m, _ := a.(map[string]any); m["agent"] == client {
			own = m
		}
	}
	if own == nil {
		t.Fatalf("the record was not read: %s", jsonOf(p))
	}
	if own["pid"] != nil || own["likelyCaller"] != true || own["sameAgentAsCaller"] != true {
		t.Fatalf("dead record of the caller's agent: %s", jsonOf(own))
	}

	// No gateway: the preview is refused (10003) but still carries the hint.
	p = toolCall(t, s, 2, "operation.preview.branch", map[string]any{"repoPath": repo, "reason": "try", "name": "x"})
	hint, _ := p["otherAgents"].(map[string]any)
	if hint == nil {
		t.Fatalf("no otherAgents hint: %s", jsonOf(p))
	}
	if n, ok := hint["omittedLikelyCaller"].(float64); !ok || n < 1 {
		t.Fatalf("omittedLikelyCaller %v, want a count of at least 1: %s", hint["omittedLikelyCaller"], jsonOf(hint))
	}
	listed, _ := hint["agents"].([]any)
	for _, a := range listed {
		if m, _ := a.(map[string]any); m["agent"] == client {
			t.Fatalf("the hint lists the caller's own agent: %s", jsonOf(hint))
		}
	}
}
