package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A ref literally named --output=<file> exists, and every tool that lists
// or takes refs is called: nothing is ever written, and revisions that
// start with '-' are refused with -32602 (or, for the semantic diff tools,
// fall back without running git on them).
func TestOptionInjectionThroughRefs(t *testing.T) {
	repo := fixtureRepo(t)
	work := canonicalTempDir(t) // where an injected --output would write
	target := filepath.Join(work, "pwned")
	git(t, repo, "update-ref", "refs/heads/--output="+target, "HEAD")
	git(t, repo, "update-ref", "refs/tags/--output="+target+"-tag", "HEAD")
	git(t, repo, "update-ref", "refs/remotes/origin/--output="+target+"-remote", "HEAD")

	s := startServer(t, append(baseEnv(t), "FLUXGIT_GATEWAY_ADDR=127.0.0.1:9", "FLUXGIT_MCP_AUDIT_DISABLED=1"))
	initialize(t, s)
	evil := "--output=" + target
	for i, c := range []struct {
		tool     string
		args     map[string]any
		wantCode int
	}{
		{"repo.refs", map[string]any{}, 0},
		{"repo.brief", map[string]any{}, 0},
		{"repo.branchStack", map[string]any{"baseCandidates": []string{"main", "feature/cart"}}, 0},
		{"repo.branchStack", map[string]any{"baseCandidates": []string{evil}}, -32602},
		{"repo.reflog", map[string]any{"refName": evil}, -32602},
		{"repo.history", map[string]any{}, 0},
		{"commit.details", map[string]any{"commit": evil}, -32602},
		{"diff.text", map[string]any{"base": evil}, -32602},
		{"diff.text", map[string]any{"head": evil}, -32602},
		{"repo.conflictPreflight", map[string]any{"targetRef": evil}, -32602},
		{"repo.conflictPreflight", map[string]any{"currentRef": evil, "targetRef": "main"}, -32602},
		{"diff.semantic", map[string]any{"base": evil}, 0},
		{"diff.semanticFallbacks", map[string]any{"head": evil}, 0},
		{"fleet.radar", map[string]any{"repoPaths": []string{repo}}, 0},
		{"fleet.digest", map[string]any{"sinceMs": 0, "repoPaths": []string{repo}}, 0},
		{"safety.timeline", map[string]any{}, 0},
	} {
		args := c.args
		if c.tool != "fleet.radar" && c.tool != "fleet.digest" {
			args["repoPath"] = repo
		}
		r := s.call(i+1, "tools/call", map[string]any{"name": c.tool, "arguments": args})
		switch {
		case c.wantCode == 0 && r.Error != nil:
			t.Errorf("%s: unexpected error %s", c.tool, r.raw)
		case c.wantCode != 0 && codeOf(t, r) != c.wantCode:
			t.Errorf("%s %v: want %d, got %.300s", c.tool, args, c.wantCode, r.raw)
		}
		if c.tool == "repo.refs" && !strings.Contains(r.raw, `--output=`) {
			t.Errorf("repo.refs does not list the hostile ref as a plain name: %.300s", r.raw)
		}
	}
	for _, dir := range []string{work, repo, filepath.Dir(target)} {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), "pwned") {
				t.Fatalf("a tool wrote %s", filepath.Join(dir, e.Name()))
			}
		}
	}
}
