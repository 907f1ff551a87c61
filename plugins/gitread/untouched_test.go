package gitread

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFleetToolsLeaveRepositoryUntouched(t *testing.T) {
	repo := newRepo(t)
	write(t, repo, "a.txt", "alpha\n")
	write(t, repo, "dirty.txt", "d\n")
	fxNoGateway(t)
	t.Setenv("FLUXGIT_GATEWAY_ADDR", "127.0.0.1:4000")
	t.Setenv("FLUXGIT_RUN_DIR", tempDir(t))
	before := snapshot(t, repo)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"fleet.radar", map[string]any{"repoPaths": []string{repo}}},
		{"fleet.digest", map[string]any{"repoPaths": []string{repo}, "sinceMs": 0}},
		{"repo.conflictPreflight", map[string]any{"repoPath": repo, "targetRef": "HEAD"}},
		{"diff.semantic", map[string]any{"repoPath": repo}},
		{"safety.timeline", map[string]any{"repoPath": repo}},
		{"flux.restorePoints", map[string]any{"repoPath": repo}},
	} {
		var d map[string]any
		fxOK(t, c.tool, c.args, &d)
	}
	if diff := diffSnapshots(before, snapshot(t, repo)); len(diff) > 0 {
		t.Fatalf("repository modified:\n%s", strings.Join(diff, "\n"))
	}
	if _, err := os.Stat(filepath.Join(repo, ".git", "index.lock")); err == nil {
		t.Fatal("lock left behind")
	}
}
