package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Repository configuration never runs a program during a read. The repo
// below wires every program-valued setting git honours during reads to a
// script that leaves a marker — fsmonitor, pager, external diff, diff
// drivers (command and textconv), clean/smudge/process filters selected by
// .gitattributes, merge drivers, hooks, gpg for signature display — and
// has a stat-dirty file, an upstream that diverged (so conflict prediction
// merges) and a conflicting branch. Every git-read tool is called through
// the real host; the marker must never appear.
func TestRepositoryConfigNeverRunsAProgram(t *testing.T) {
	base := canonicalTempDir(t)
	marker := filepath.Join(base, "MARKER")
	script := filepath.Join(base, "evil.sh")
	writeFile(t, script, "#!/bin/sh\necho ran \"$0\" \"$@\" >> "+marker+"\ncat\n")
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	remote := filepath.Join(base, "remote.git")
	git(t, base, "init", "-q", "--bare", "-b", "main", remote)
	repo := filepath.Join(base, "repo")
	if err := os.Mkdir(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, repo, "init", "-q", "-b", "main")
	writeFile(t, filepath.Join(repo, "a.txt"), "one\ntwo\n")
	writeFile(t, filepath.Join(repo, "src", "b.txt"), "b\n")
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "-q", "-m", "base")
	git(t, repo, "remote", "add", "origin", remote)
	git(t, repo, "push", "-q", "origin", "main")
	git(t, repo, "branch", "--set-upstream-to=origin/main")
	// Diverge: the upstream and the local branch change the same line.
	git(t, repo, "checkout", "-q", "-b", "other")
	writeFile(t, filepath.Join(repo, "a.txt"), "ONE\ntwo\n")
	git(t, repo, "commit", "-q", "-am", "other side")
	git(t, repo, "push", "-q", "origin", "other:main")
	git(t, repo, "fetch", "-q", "origin")
	git(t, repo, "checkout", "-q", "main")
	writeFile(t, filepath.Join(repo, "a.txt"), "uno\ntwo\n")
	git(t, repo, "commit", "-q", "-am", "local side")

	// Now arm the repository.
	hooks := filepath.Join(repo, ".git", "evil-hooks")
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"post-checkout", "post-index-change", "reference-transaction", "fsmonitor-watchman"} {
		if err := os.Symlink(script, filepath.Join(hooks, h)); err != nil {
			t.Fatal(err)
		}
	}
	cfg := "\n[core]\n\tfsmonitor = " + script + "\n\tpager = " + script + "\n\thooksPath = " + hooks +
		"\n\tsshCommand = " + script + "\n\teditor = " + script +
		"\n[diff]\n\texternal = " + script +
		"\n[diff \"evil\"]\n\ttextconv = " + script + "\n\tcommand = " + script +
		"\n[filter \"evil\"]\n\tclean = " + script + "\n\tsmudge = " + script + "\n\tprocess = " + script + "\n\trequired = true" +
		"\n[merge \"evil\"]\n\tdriver = " + script + " %O %A %B" +
		"\n[log]\n\tshowSignature = true\n[gpg]\n\tprogram = " + script +
		"\n[pager]\n\tlog = " + script + "\n\tdiff = " + script + "\n\tstatus = " + script + "\n"
	f, err := os.OpenFile(filepath.Join(repo, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(cfg); err != nil {
		t.Fatal(err)
	}
	f.Close()
	writeFile(t, filepath.Join(repo, ".gitattributes"), "* filter=evil diff=evil merge=evil\n")
	// Stat-dirty and content-dirty files, so status has to look at content.
	writeFile(t, filepath.Join(repo, "a.txt"), "uno\ntwo\nthree\n")
	now := filepath.Join(repo, "src", "b.txt")
	writeFile(t, now, "b\n")
	writeFile(t, filepath.Join(repo, "new.txt"), "new\n")

	runDir := t.TempDir()
	env := append(baseEnv(t), "FLUXGIT_RUN_DIR="+runDir, "FLUXGIT_GATEWAY_ADDR=127.0.0.1:9", "FLUXGIT_MCP_AUDIT_DISABLED=1")
	s := startServer(t, env)
	initialize(t, s)
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"repo.brief", map[string]any{"repoPath": repo}},
		{"repo.scope", map[string]any{"repoPath": repo, "path": "src"}},
		{"repo.status", map[string]any{"repoPath": repo}},
		{"repo.refs", map[string]any{"repoPath": repo}},
		{"repo.branchStack", map[string]any{"repoPath": repo}},
		{"repo.history", map[string]any{"repoPath": repo}},
		{"repo.history", map[string]any{"repoPath": repo, "rev": "origin/main..main", "paths": []string{"a.txt"}, "author": "a", "since": "0"}},
		{"history.search", map[string]any{"repoPath": repo, "text": "uno", "rev": "origin/main...main"}},
		{"history.search", map[string]any{"repoPath": repo, "regex": "^(one|uno)$", "ignoreCase": true}},
		{"repo.refs", map[string]any{"repoPath": repo, "sort": "recency", "pattern": "*"}},
		{"repo.reflog", map[string]any{"repoPath": repo}},
		{"commit.details", map[string]any{"repoPath": repo, "commit": "HEAD"}},
		{"worktree.changes", map[string]any{"repoPath": repo}},
		{"worktree.list", map[string]any{"repoPath": repo}},
		{"submodule.status", map[string]any{"repoPath": repo}},
		{"diff.text", map[string]any{"repoPath": repo}},
		{"diff.text", map[string]any{"repoPath": repo, "base": "HEAD~1", "head": "HEAD"}},
		{"conflict.read", map[string]any{"repoPath": repo}},
		{"file.read", map[string]any{"repoPath": repo, "path": "a.txt"}},
		{"file.read", map[string]any{"repoPath": repo, "path": "a.txt", "worktree": true}},
		{"file.blame", map[string]any{"repoPath": repo, "path": "a.txt", "detectMoves": true, "detectCopies": true}},
		{"fleet.digest", map[string]any{"sinceMs": 0, "repoPaths": []string{repo}}},
		{"fleet.radar", map[string]any{"repoPaths": []string{repo}}},
		{"repo.conflictPreflight", map[string]any{"repoPath": repo, "targetRef": "origin/main"}},
		{"diff.semantic", map[string]any{"repoPath": repo}},
		{"diff.semanticFallbacks", map[string]any{"repoPath": repo}},
		{"safety.timeline", map[string]any{"repoPath": repo}},
		{"safety.eventDetails", map[string]any{"repoPath": repo}},
		{"flux.latestRestorePoint", map[string]any{"repoPath": repo, "repoId": "r1"}},
		{"flux.restorePoints", map[string]any{"repoPath": repo, "repoId": "r1"}},
		{"flux.restorePointDetails", map[string]any{"repoPath": repo, "repoId": "r1"}},
		{"agents.presence", map[string]any{"repoPath": repo}},
	}
	calls = append(calls, handshakeCalls(repo)...)
	seen := map[string]bool{}
	for i, c := range calls {
		seen[c.tool] = true
		r := s.call(i+1, "tools/call", map[string]any{"name": c.tool, "arguments": c.args})
		if r.Error != nil {
			t.Errorf("%s: JSON-RPC error %s", c.tool, r.raw)
			continue
		}
		toolPayload(t, r)
		if b, err := os.ReadFile(marker); err == nil {
			t.Fatalf("%s ran a repository-configured program:\n%s", c.tool, b)
		}
	}
	// The conflict prediction really merged (the guard is not vacuous).
	r := s.call(100, "tools/call", map[string]any{"name": "repo.conflictPreflight", "arguments": map[string]any{"repoPath": repo, "targetRef": "origin/main"}})
	if p := toolPayload(t, r); !strings.Contains(r.raw, `conflicts`) {
		t.Fatalf("preflight did not predict the conflict: %v", p)
	}
	// Every git-read tool was exercised.
	var listed struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	if err := json.Unmarshal(s.call(101, "tools/list", nil).Result, &listed); err != nil {
		t.Fatal(err)
	}
	for _, tool := range listed.Tools {
		if !seen[tool.Name] && !strings.HasPrefix(tool.Name, "shift_") {
			t.Errorf("tool %s not exercised by this test", tool.Name)
		}
	}
	// Sanity: plain git in the same repository does run the filter, so the
	// marker mechanism works.
	cmd := gitCmd(repo, "status")
	cmd.Env = append(gitEnv(), "GIT_CONFIG_NOSYSTEM=1")
	_ = cmd.Run()
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("control: plain git status did not trigger the armed repository (%v); the test proves nothing", err)
	}
}
