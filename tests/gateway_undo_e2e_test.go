package tests

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fluxgit/fluxgit/tests/browser"
)

// restoreCLI runs `fluxgit gateway undo|redo --repo repo` as a person does:
// on a terminal, typing yes (Linux, through a pseudo-terminal); elsewhere
// the same action on the approval page. It returns the command's output
// and whether the gateway did it.
func restoreCLI(t *testing.T, g *gatewayProc, action, repo string) (string, bool) {
	t.Helper()
	if havePTY {
		screen, out, err := runOnTerminal(t, g.env, "yes\n", "gateway", action, "--repo", repo)
		return out + screen, err == nil
	}
	pc := newPersonClient(t, g)
	code := pc.post(t, "/ui/api/"+action, map[string]any{"repoPath": repo}, true, pc.csrf, pc.base, "")
	return "", code == http.StatusOK
}

// pageState is /ui/api/state as the approval page receives it.
func pageState(t *testing.T, g *gatewayProc) map[string]any {
	t.Helper()
	pc := newPersonClient(t, g)
	req, _ := http.NewRequest(http.MethodGet, pc.base+"/ui/api/state", nil)
	req.AddCookie(pc.cookie)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

// Three consecutive approvals — a commit, a merge and a discard — are
// undone one by one through `fluxgit gateway undo` and redone with
// `fluxgit gateway redo`, through the real binaries. Each undo and redo is
// an entry of the history (the page's restoreActions) and of the ledger;
// the discard's undo drops its safety stash; an undo that cannot run says
// why; flux.latestRestorePoint reports canRedo only when a redo can run.
func TestGatewayUndoRedoStack(t *testing.T) {
	l := newLoop(t)
	repo := e2eRepo(t)
	start := revParse(t, repo, "main")

	writeFile(t, filepath.Join(repo, "todo.txt"), "ship it\n")
	id := l.propose("commit", repo, map[string]any{"message": "chore: todo", "paths": []any{"todo.txt"}})
	approveOnPage(t, l.g, id, nil)
	l.awaitStatus(id, "completed")
	afterCommit := revParse(t, repo, "main")

	id = l.propose("merge", repo, map[string]any{"sourceRef": "feature", "targetRef": "main"})
	approveOnPage(t, l.g, id, nil)
	l.awaitStatus(id, "completed")
	afterMerge := revParse(t, repo, "main")

	writeFile(t, filepath.Join(repo, "NOTES.md"), "scratch\n")
	id = l.propose("discard", repo, map[string]any{"paths": []any{"NOTES.md"}})
	approveOnPage(t, l.g, id, nil)
	d := l.awaitStatus(id, "completed")
	stash, _ := d["result"].(map[string]any)["safetyStash"].(string)
	if stash == "" || !strings.Contains(git(t, repo, "stash", "list", "--format=%H"), stash) {
		t.Fatalf("no safety stash: %s", jsonOf(d))
	}

	latest := func() map[string]any {
		rp, _ := l.tool("flux.latestRestorePoint", map[string]any{"repoPath": repo})
		return latestRestorePoint(rp)
	}
	steps := []struct {
		action, op, head, notes string
		canRedo                 bool
	}{
		{"undo", "discard", afterMerge, "scratch\n", false},
		{"undo", "merge", afterCommit, "scratch\n", false},
		{"undo", "commit", start, "scratch\n", false},
		{"redo", "commit", afterCommit, "scratch\n", false},
		{"redo", "merge", afterMerge, "scratch\n", false},
		{"redo", "discard", afterMerge, "notes\n", false},
	}
	for i, s := range steps {
		out, ok := restoreCLI(t, l.g, s.action, repo)
		if !ok {
			t.Fatalf("step %d %s: refused:\n%s", i, s.action, out)
		}
		if got := revParse(t, repo, "main"); got != s.head {
			t.Fatalf("step %d %s %s: main %s, want %s\n%s", i, s.action, s.op, got, s.head, out)
		}
		if b, _ := os.ReadFile(filepath.Join(repo, "NOTES.md")); string(b) != s.notes {
			t.Fatalf("step %d: NOTES.md %q, want %q", i, b, s.notes)
		}
		if i == 0 {
			// The changes are back in the work tree: the stash is dropped.
			if strings.Contains(git(t, repo, "stash", "list", "--format=%H"), stash) {
				t.Fatal("the discard's undo left its safety stash behind")
			}
			if havePTY && !strings.Contains(out, "was dropped") {
				t.Fatalf("the CLI does not say the stash was dropped:\n%s", out)
			}
		}
		if i == 2 {
			// The commit's undo kept its file, staged.
			if st := git(t, repo, "status", "--porcelain", "--", "todo.txt"); !strings.HasPrefix(st, "A  todo.txt") {
				t.Fatalf("the commit's undo did not keep todo.txt staged: %q", st)
			}
			if rp := latest(); rp == nil || rp["canRedo"] != false {
				// The latest record is the discard's, whose redo is two
				// steps away: nothing can redo it from here.
				t.Fatalf("flux.latestRestorePoint after three undos: %s", jsonOf(rp))
			}
		}
	}
	if out, ok := restoreCLI(t, l.g, "redo", repo); ok || havePTY && !strings.Contains(out, "nothing to redo") {
		t.Fatalf("a redo past the newest point was not refused with a reason:\n%s", out)
	}
	// A commit made by hand: the newest point can no longer be undone, and
	// the page says why.
	git(t, repo, "commit", "-q", "--allow-empty", "-m", "by hand")
	out, ok := restoreCLI(t, l.g, "undo", repo)
	if ok || havePTY && !strings.Contains(out, "no longer") {
		t.Fatalf("an undo after a manual commit was not refused with a reason:\n%s", out)
	}
	st := pageState(t, l.g)
	rps, _ := st["restorePoints"].([]any)
	if len(rps) != 1 || rps[0].(map[string]any)["canUndo"] != false || !strings.Contains(rps[0].(map[string]any)["why"].(string), "no longer") {
		t.Fatalf("restorePoints %s", jsonOf(rps))
	}
	acts, _ := st["restoreActions"].([]any)
	var kinds []string
	for _, a := range acts {
		m := a.(map[string]any)
		op, _ := m["operation"].(string)
		kinds = append([]string{m["action"].(string) + ":" + op + ":" + jsonOf(m["ok"])}, kinds...)
	}
	want := "undo:discard:true undo:merge:true undo:commit:true redo:commit:true redo:merge:true redo:discard:true redo::false undo::false"
	if strings.Join(kinds, " ") != want {
		t.Fatalf("history entries %v, want %s", kinds, want)
	}
	var ledger []string
	for _, e := range ledgerEntries(t, filepath.Join(l.g.runDir, "audit", "mcp.jsonl")) {
		if tool, _ := e["tool"].(string); tool == "gateway.undo" || tool == "gateway.redo" {
			ledger = append(ledger, tool+":"+e["result"].(string))
		}
	}
	if strings.Join(ledger, " ") != "gateway.undo:success gateway.undo:success gateway.undo:success gateway.redo:success gateway.redo:success gateway.redo:success gateway.redo:error gateway.undo:error" {
		t.Fatalf("ledger entries %v", ledger)
	}
}

// A push cannot be undone locally: after it completes, its history row on
// the page says so, and the restore list offers no Undo for it (the
// gateway takes no restore point for a push).
func TestGatewayPushNotUndoableInBrowser(t *testing.T) {
	b := browser.Start(t)
	l := newLoop(t)
	repo := e2eRepo(t)
	bare := filepath.Join(canonicalTempDir(t), "remote.git")
	git(t, repo, "init", "-q", "--bare", bare)
	git(t, repo, "remote", "add", "origin", bare)
	id := l.propose("push", repo, map[string]any{"branch": "main"})
	approveOnPage(t, l.g, id, nil)
	l.awaitStatus(id, "completed")
	b.Navigate(l.g.page)
	b.WaitText(`section#history li[data-preview-id="`+id+`"] .not-undoable`, "Cannot be undone here", 0)
	if els := b.FindAll(`button[data-action="undo"]`); len(els) != 0 {
		t.Fatalf("the page offers %d Undo button(s) after a push alone", len(els))
	}
}

// The same stack from the person's side of the page: three approved
// commits are undone one by one with the Undo button, each confirmed in the
// page, and redone one by one with Redo, in headless Chromium.
func TestGatewayUndoRedoThreeInBrowser(t *testing.T) {
	b := browser.Start(t)
	l := newLoop(t)
	repo := e2eRepo(t)
	heads := []string{revParse(t, repo, "main")}
	for i, name := range []string{"one.txt", "two.txt", "three.txt"} {
		writeFile(t, filepath.Join(repo, name), name+"\n")
		id := l.propose("commit", repo, map[string]any{"message": "chore: " + name, "paths": []any{name}})
		approveOnPage(t, l.g, id, nil)
		l.awaitStatus(id, "completed")
		heads = append(heads, revParse(t, repo, "main"))
		if heads[i+1] == heads[i] {
			t.Fatalf("commit %d did not move main", i+1)
		}
	}
	b.Navigate(l.g.page)
	undo := `button[data-action="undo"][data-repo="` + repo + `"]`
	redo := `button[data-action="redo"][data-repo="` + repo + `"]`
	for i := 3; i > 0; i-- {
		b.WaitClick(undo, 0)
		b.WaitClick(`button[data-action="confirm-undo"][data-repo="`+repo+`"]`, 0)
		waitRev(t, repo, "main", heads[i-1], "undo did not take main back one commit")
		// An undone commit keeps its change staged; the page records it.
		if !strings.Contains(git(t, repo, "diff", "--cached", "--name-only"), []string{"one.txt", "two.txt", "three.txt"}[i-1]) {
			t.Fatalf("undo %d lost the commit's change", 4-i)
		}
		b.WaitFor(`li.restore-action[data-action="undo"][data-ok="true"]:nth-of-type(`+strconv.Itoa(4-i)+`)`, 0)
	}
	for i := 1; i <= 3; i++ {
		b.WaitClick(redo, 0)
		b.WaitClick(`button[data-action="confirm-redo"][data-repo="`+repo+`"]`, 0)
		waitRev(t, repo, "main", heads[i], "redo did not put the commit back")
	}
	st := pageState(t, l.g)
	acts, _ := st["restoreActions"].([]any)
	if len(acts) != 6 {
		t.Fatalf("the history holds %d undo/redo entries, want 6: %s", len(acts), jsonOf(acts))
	}
}
