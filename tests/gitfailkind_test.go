package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGitFailureKinds: "Local git fallback failed" (10010, the reference's
// code and message) covers a path that is no repository, an unknown
// revision and a missing file alike; data.kind says which one and
// data.hint how to fix it, in the payload the model reads.
func TestGitFailureKinds(t *testing.T) {
	repo := fixtureRepo(t)
	plain := filepath.Join(canonicalTempDir(t), "plain")
	if err := os.Mkdir(plain, 0o755); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, baseEnv(t))
	initialize(t, s)
	tests := []struct {
		name, tool string
		args       map[string]any
		kind, hint string // hint: a word the hint must contain
	}{
		{"not a repository", "repo.status", map[string]any{"repoPath": plain}, "not_a_repository", ".git"},
		{"agents.presence outside a repository", "agents.presence", map[string]any{"repoPath": plain}, "not_a_repository", ".git"},
		{"unknown commit", "commit.details", map[string]any{"repoPath": repo, "commit": "no-such-branch"}, "unknown_revision", "repo.refs"},
		{"unknown diff base", "diff.text", map[string]any{"repoPath": repo, "base": "no-such-branch"}, "unknown_revision", "repo.refs"},
		{"unknown revision of a file", "file.read", map[string]any{"repoPath": repo, "path": "README.md", "rev": "no-such-branch"}, "unknown_revision", "repo.refs"},
		{"missing file", "file.read", map[string]any{"repoPath": repo, "path": "no-such-file.txt"}, "missing_path", "case-sensitive"},
		{"missing file to blame", "file.blame", map[string]any{"repoPath": repo, "path": "no-such-file.txt"}, "missing_path", "case-sensitive"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.call(i+1, "tools/call", map[string]any{"name": tt.tool, "arguments": tt.args})
			p := toolPayload(t, r)
			e, _ := p["error"].(map[string]any)
			if e == nil || e["code"] != float64(10010) || e["message"] != "Local git fallback failed" {
				t.Fatalf("want the 10010 failure, got %s", r.raw)
			}
			d, _ := e["data"].(map[string]any)
			hint, _ := d["hint"].(string)
			if d["kind"] != tt.kind || !strings.Contains(hint, tt.hint) || d["command"] == nil || d["details"] == "" {
				t.Fatalf("data %v, want kind %s and a hint mentioning %q", d, tt.kind, tt.hint)
			}
		})
	}
}
