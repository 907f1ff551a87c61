package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FLUXGIT_MCP_ALLOWED_ROOTS holds against symlinks, `..`, gitdir files
// and worktrees whose git directory lives elsewhere; a malformed list
// refuses every call. Codes: -32011 outside, -32010 bad setting, -32602
// for repository-relative paths that try to climb out.
func TestAllowedRootsContainment(t *testing.T) {
	base := canonicalTempDir(t)
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{root, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	inside := filepath.Join(root, "repo")
	if err := os.Mkdir(inside, 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, inside, "init", "-q", "-b", "main")
	writeFile(t, filepath.Join(inside, "a.txt"), "a\n")
	git(t, inside, "add", "a.txt")
	git(t, inside, "commit", "-q", "-m", "one")

	foreign := filepath.Join(outside, "foreign")
	if err := os.Mkdir(foreign, 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, foreign, "init", "-q", "-b", "main")
	writeFile(t, filepath.Join(foreign, "b.txt"), "b\n")
	git(t, foreign, "add", "b.txt")
	git(t, foreign, "commit", "-q", "-m", "one")
	// A worktree inside the root whose git directory is the foreign repo's.
	linked := filepath.Join(root, "linked")
	git(t, foreign, "worktree", "add", "-q", linked)
	// A symlink inside the root leading out of it.
	link := filepath.Join(root, "escape")
	if err := os.Symlink(foreign, link); err != nil {
		t.Fatal(err)
	}
	// A work tree inside the root with a `.git` file pointing outside.
	gitfile := filepath.Join(root, "gitfile")
	if err := os.Mkdir(gitfile, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(gitfile, ".git"), "gitdir: "+filepath.Join(foreign, ".git")+"\n")

	s := startServer(t, append(baseEnv(t), "FLUXGIT_MCP_ALLOWED_ROOTS="+root))
	initialize(t, s)
	for i, tc := range []struct {
		name     string
		tool     string
		args     map[string]any
		wantCode int // 0: success
	}{
		{"inside", "repo.status", map[string]any{"repoPath": inside}, 0},
		{"symlink out of the root", "repo.status", map[string]any{"repoPath": link}, -32011},
		{"dotdot out of the root", "repo.status", map[string]any{"repoPath": inside + "/../../outside/foreign"}, -32011},
		{"outside", "repo.history", map[string]any{"repoPath": foreign}, -32011},
		{"worktree whose git dir is outside", "repo.status", map[string]any{"repoPath": linked}, -32011},
		{"gitdir file pointing outside", "repo.refs", map[string]any{"repoPath": gitfile}, -32011},
		{"repository-relative path with ..", "diff.text", map[string]any{"repoPath": inside, "path": "../outside"}, -32602},
		{"fleet with one path outside", "fleet.radar", map[string]any{"repoPaths": []string{inside, foreign}}, -32011},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := s.call(100+i, "tools/call", map[string]any{"name": tc.tool, "arguments": tc.args})
			if tc.wantCode == 0 {
				if p := toolPayload(t, r); p["error"] != nil {
					t.Fatalf("want success, got %v", p)
				}
				return
			}
			if codeOf(t, r) != tc.wantCode {
				t.Fatalf("want JSON-RPC error %d, got %s", tc.wantCode, r.raw)
			}
			if tc.wantCode == -32011 && strings.Contains(string(r.Error.Data), foreign) {
				t.Fatalf("refusal discloses the refused path: %s", r.raw)
			}
		})
	}

	bad := startServer(t, append(baseEnv(t), "FLUXGIT_MCP_ALLOWED_ROOTS=relative/root"))
	initialize(t, bad)
	r := bad.call(1, "tools/call", map[string]any{"name": "repo.status", "arguments": map[string]any{"repoPath": inside}})
	if r.Error == nil || r.Error.Code != -32010 {
		t.Fatalf("malformed allow-list: want -32010, got %s", r.raw)
	}
}
