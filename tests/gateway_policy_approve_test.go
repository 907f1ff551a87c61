package tests

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fluxgit/fluxgit/tests/browser"
)

// autoApprovePolicy is an agent policy whose autoApprove rule agent-commits
// approves, for the test's SDK client, commits and branches on agent/*
// refs in repositories directly under dir.
func autoApprovePolicy(dir string) string {
	glob, _ := json.Marshal(filepath.Join(dir, "*"))
	return "version: 1\nautoApprove:\n  - name: agent-commits\n    agents: [\"go-sdk-*\"]\n    operations: [commit, branch]\n    refs: [\"agent/*\"]\n    paths: [" + string(glob) + "]\n"
}

// ledgerSummaries are the summaries of the ledger's entries of eventType
// for tool, waiting up to 30 s for at least one.
func ledgerSummaries(t *testing.T, g *gatewayProc, eventType, tool string) []string {
	t.Helper()
	path := filepath.Join(g.runDir, "audit", "mcp.jsonl")
	deadline := time.Now().Add(30 * time.Second)
	for {
		raw, _ := os.ReadFile(path)
		var out []string
		for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
			var e map[string]any
			if json.Unmarshal([]byte(line), &e) == nil && e["event_type"] == eventType && e["tool"] == tool {
				s, _ := e["summary"].(string)
				out = append(out, s)
			}
		}
		if len(out) > 0 || time.Now().After(deadline) {
			return out
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A commit the person's autoApprove rule covers is approved by the policy
// without a card waiting and executes, behind a restore point; the
// journal (page and history), the gateway's terminal and the audit ledger
// say "approved by policy agent-commits". A commit and two branches
// outside the rule's refs wait for the person, who approves the two
// branches at once with `fluxgit gateway approve ID ID` (one yes on the
// terminal).
func TestGatewayPolicyAutoApprovesACommit(t *testing.T) {
	repo := e2eRepo(t)
	l := policyLoop(t, autoApprovePolicy(filepath.Dir(repo)))
	git(t, repo, "checkout", "-q", "-b", "agent/work")
	before := revParse(t, repo, "agent/work")
	writeFile(t, filepath.Join(repo, "todo.txt"), "ship it\n")
	w := startWatch(t, l.g)
	waitOutput(t, "watch", w.out, "Nothing is waiting")

	p, isErr := l.tool("operation.preview.commit", map[string]any{"repoPath": repo, "reason": "r", "message": "chore: todo", "paths": []any{"todo.txt"}})
	id, _ := p["previewId"].(string)
	if isErr || id == "" {
		t.Fatalf("preview commit: %s", jsonOf(p))
	}
	if p["status"] == "pending" {
		t.Fatalf("the commit the policy covers waits for the person: %s", jsonOf(p))
	}
	d := l.awaitStatus(id, "completed")
	head := revParse(t, repo, "agent/work")
	if head == before || revParse(t, repo, "agent/work^") != before || strings.TrimSpace(git(t, repo, "log", "-1", "--format=%s", "agent/work")) != "chore: todo" {
		t.Fatalf("agent/work was not committed: %s → %s: %s", before, head, jsonOf(d))
	}
	res, _ := d["result"].(map[string]any)
	rpt, _ := res["restorePoint"].(map[string]any)
	if rpt == nil || res["restorePointId"] == nil {
		t.Fatalf("no restore point in the result: %s", jsonOf(res))
	}
	rp, isErr := l.tool("flux.latestRestorePoint", map[string]any{"repoPath": repo})
	latest := latestRestorePoint(rp)
	if isErr || latest == nil || latest["canUndo"] != true || latest["before"] != before || latest["after"] != head {
		t.Fatalf("flux.latestRestorePoint after the policy's approval: %s", jsonOf(rp))
	}
	if c := historyEntry(t, l.g, id); c["decidedBy"] != "policy agent-commits" || c["status"] != "completed" {
		t.Fatalf("the page's history entry: decidedBy %v, status %v", c["decidedBy"], c["status"])
	}
	sums := ledgerSummaries(t, l.g, "human_decision", "operation.preview.commit")
	if len(sums) != 1 || !strings.Contains(sums[0], "approved by policy agent-commits") {
		t.Fatalf("the ledger's decision: %q", sums)
	}
	if ex := ledgerSummaries(t, l.g, "operation_execution", "operation.preview.commit"); len(ex) != 1 {
		t.Fatalf("the ledger's execution entries: %q", ex)
	}
	if out := l.g.stderr.String(); !strings.Contains(out, "approved "+id+" commit "+repo+" by policy agent-commits") || strings.Contains(out, "proposal "+id) {
		t.Fatalf("the gateway's terminal has no approved-by-policy line, or announced the proposal as waiting:\n%s", out)
	}
	// `gateway watch` says the same, and never that it waits for a decision.
	waitOutput(t, "watch", w.out, "approved "+id+" commit "+repo+" by policy agent-commits", "executed "+id+" commit ")
	if strings.Contains(w.out.String(), "proposal "+id) {
		t.Fatalf("watch announced the auto-approved proposal as waiting:\n%s", w.out.String())
	}

	// Outside the rule: a commit on main (refs) and two branches other/*
	// wait for the person, who approves the branches at once.
	git(t, repo, "checkout", "-q", "main")
	writeFile(t, filepath.Join(repo, "main.txt"), "on main\n")
	onMain := l.propose("commit", repo, map[string]any{"message": "chore: main", "paths": []any{"main.txt"}})
	x := l.propose("branch", repo, map[string]any{"name": "other/x", "startPoint": "feature", "checkout": false})
	y := l.propose("branch", repo, map[string]any{"name": "other/y", "startPoint": "feature", "checkout": false})
	time.Sleep(500 * time.Millisecond)
	for _, pid := range []string{onMain, x, y} {
		if s := l.status(pid)["status"]; s != "pending" {
			t.Fatalf("proposal %s outside the rule is %v, want pending", pid, s)
		}
	}
	if havePTY {
		screen, out, err := runOnTerminal(t, l.g.env, "yes\n", "gateway", "approve", x, y)
		if err != nil || !strings.Contains(screen, x) || !strings.Contains(screen, y) || !strings.Contains(screen, "approve all 2") {
			t.Fatalf("approve %s %s on a terminal: %v\n%s\nterminal:\n%s", x, y, err, out, screen)
		}
	} else {
		approveOnPage(t, l.g, x, nil)
		approveOnPage(t, l.g, y, nil)
	}
	l.awaitStatus(x, "completed")
	l.awaitStatus(y, "completed")
	for _, b := range []string{"other/x", "other/y"} {
		if revParse(t, repo, b) != revParse(t, repo, "feature") {
			t.Fatalf("%s does not point at feature", b)
		}
	}
	for _, pid := range []string{x, y} {
		if by := historyEntry(t, l.g, pid)["decidedBy"]; by != "cli" && by != "page" {
			t.Fatalf("proposal %s decided by %v, want the person", pid, by)
		}
	}
	if s := l.status(onMain)["status"]; s != "pending" {
		t.Fatalf("the commit on main is %v, want still pending", s)
	}
}

// Several IDs are checked before the person is asked: one that is not
// pending, or needs a confirmation, stops the batch with nothing
// approved and says which and what to do.
func TestGatewayPolicyBatchApproveChecksEveryID(t *testing.T) {
	if !havePTY {
		t.Skip("the terminal CLI needs a pseudo-terminal here")
	}
	l := newLoop(t)
	repo := e2eRepo(t)
	b1 := l.propose("branch", repo, map[string]any{"name": "b1", "startPoint": "feature", "checkout": false})
	reset := l.propose("reset", repo, map[string]any{"targetRef": "HEAD~1", "mode": "hard"})
	screen, out, err := runOnTerminal(t, l.g.env, "yes\n", "gateway", "approve", b1, reset)
	if err == nil || !strings.Contains(out, "approve "+reset+" alone") || strings.Contains(screen, "Type yes") {
		t.Fatalf("a batch with a hard reset was not refused before asking (%v):\n%s\nterminal:\n%s", err, out, screen)
	}
	if s := l.status(b1)["status"]; s != "pending" {
		t.Fatalf("b1 is %v after a refused batch, want pending", s)
	}
	screen, out, err = runOnTerminal(t, l.g.env, "yes\n", "gateway", "approve", b1, reset, "--confirm-branch", "main")
	if err == nil || !strings.Contains(out, "confirm one proposal") {
		t.Fatalf("confirmation flags with several IDs were not refused (%v):\n%s\n%s", err, out, screen)
	}
}

// With an autoApprove rule, the gateway refuses to start while the policy
// file lies inside an allowed root or a git work tree, saying that the
// rules approve writes an approved write could rewrite, and how to fix it.
// The same file without autoApprove inside an allowed root is refused by
// issue 22's check, without that sentence.
func TestGatewayPolicyAutoApproveRefusedWhereReachable(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the Unix layout of the other refusal tests")
	}
	root := canonicalTempDir(t)
	inRoot := filepath.Join(root, "policy.yaml")
	writeFile(t, inRoot, autoApprovePolicy(root))
	project := e2eRepo(t)
	inTree := filepath.Join(project, "policy.yaml")
	writeFile(t, inTree, autoApprovePolicy(filepath.Dir(project)))
	plain := filepath.Join(root, "plain.yaml")
	writeFile(t, plain, "version: 1\n")
	const says = "its autoApprove rules approve writes without you"
	for _, tc := range []struct {
		name, file, roots string
		want              []string
		not               string
	}{
		{"inside an allowed root", inRoot, root, []string{"agent policy " + inRoot, "inside allowed root " + root, says, "FLUXGIT_MCP_AGENT_POLICY"}, ""},
		{"inside a work tree", inTree, "", []string{"agent policy " + inTree, "inside git work tree " + project, says}, ""},
		{"no autoApprove", plain, root, []string{"agent policy " + plain, "inside allowed root"}, says},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := append(withoutEnv(loopEnv(t), "FLUXGIT_MCP_ALLOWED_ROOTS"), "FLUXGIT_MCP_AGENT_POLICY="+tc.file)
			if tc.roots != "" {
				env = append(env, "FLUXGIT_MCP_ALLOWED_ROOTS="+tc.roots)
			}
			out := runGatewayExpectRefusal(t, env, append(tc.want, "did not start")...)
			if tc.not != "" && strings.Contains(out, tc.not) {
				t.Fatalf("the refusal of a policy without autoApprove says %q:\n%s", tc.not, out)
			}
		})
	}
}

// historyEntry is proposal id as the approval page's history (or, while it
// is still open, its cards) receives it.
func historyEntry(t *testing.T, g *gatewayProc, id string) map[string]any {
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
		History   []map[string]any `json:"history"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	for _, p := range append(st.History, st.Proposals...) {
		if p["previewId"] == id {
			return p
		}
	}
	t.Fatalf("proposal %s is neither in the page's history nor on a card", id)
	return nil
}

// On the approval page (headless Chromium): a policy auto-approval appears
// in the history as "approved by policy agent-commits"; two pending
// branch cards are ticked and approved with one "Approve selected"; a hard
// reset, which asks for a typed branch, has no box to tick.
func TestGatewayPolicyApproveSelectedInBrowser(t *testing.T) {
	b := browser.Start(t)
	repo := e2eRepo(t)
	l := policyLoop(t, autoApprovePolicy(filepath.Dir(repo)))
	git(t, repo, "checkout", "-q", "-b", "agent/work")
	writeFile(t, filepath.Join(repo, "todo.txt"), "ship it\n")
	p, isErr := l.tool("operation.preview.commit", map[string]any{"repoPath": repo, "reason": "r", "message": "chore: todo", "paths": []any{"todo.txt"}})
	auto, _ := p["previewId"].(string)
	if isErr || auto == "" {
		t.Fatalf("preview commit: %s", jsonOf(p))
	}
	l.awaitStatus(auto, "completed")

	x := l.propose("branch", repo, map[string]any{"name": "other/x", "startPoint": "feature", "checkout": false})
	y := l.propose("branch", repo, map[string]any{"name": "other/y", "startPoint": "feature", "checkout": false})
	reset := l.propose("reset", repo, map[string]any{"targetRef": "HEAD~1", "mode": "hard"})
	b.Navigate(l.g.page)
	b.WaitText(`section#history li[data-preview-id="`+auto+`"]`, "approved by policy agent-commits", 0)
	b.WaitFor(card(x)+` input.select`, 0).Click()
	b.WaitFor(card(y)+` input.select`, 0).Click()
	b.WaitFor(card(reset), 0)
	if n := len(b.FindAll(card(reset) + ` input.select`)); n != 0 {
		t.Fatal("the hard reset, which needs a typed branch, can be selected for a batch")
	}
	btn := b.WaitText(`#approve-selected`, "Approve selected (2)", 0)
	if *updateScreenshot {
		b.SaveScreenshot(filepath.Join("..", "docs", "screenshots", "approval-policy-and-batch.png"))
		b.Script(`document.getElementById('history').scrollIntoView()`)
		b.SaveScreenshot(filepath.Join("..", "docs", "screenshots", "approval-policy-history.png"))
		b.Script(`window.scrollTo(0, 0)`)
	}
	btn.Click()
	l.awaitStatus(x, "completed")
	l.awaitStatus(y, "completed")
	if s := l.status(reset)["status"]; s != "pending" {
		t.Fatalf("the hard reset is %v after Approve selected, want pending", s)
	}
	for _, id := range []string{x, y} {
		if by := historyEntry(t, l.g, id)["decidedBy"]; by != "page" {
			t.Fatalf("%s decided by %v, want page", id, by)
		}
	}
}
