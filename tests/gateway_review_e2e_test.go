package tests

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestGatewayShowReadsTheChange is the outside check of issue 25: from
// `fluxgit gateway show <id>` (the real binary, the real gateway, a real
// repository, proposals made by an agent through fluxgit) a person or a
// script reads a changed line of a commit's diff, the subjects of the
// commits a hard reset drops, and a discarded line; the agent's
// operation.status carries only a bounded summary of the same review.
func TestGatewayShowReadsTheChange(t *testing.T) {
	l := newLoop(t)
	repo := e2eRepo(t)
	git(t, repo, "checkout", "-q", "-b", "work")
	for _, s := range []string{"the first dropped commit", "the second dropped commit"} {
		writeFile(t, filepath.Join(repo, "NOTES.md"), "notes\n"+s+"\n")
		git(t, repo, "commit", "-q", "-am", s)
	}
	writeFile(t, filepath.Join(repo, "README.md"), "# shop\na line the commit adds\n")
	writeFile(t, filepath.Join(repo, "NOTES.md"), "notes\na line the discard throws away\n")

	commitID := l.propose("commit", repo, map[string]any{"message": "docs: readme", "paths": []any{"README.md"}})
	resetID := l.propose("reset", repo, map[string]any{"targetRef": "main", "mode": "hard"})
	discardID := l.propose("discard", repo, map[string]any{"paths": []any{"NOTES.md"}})

	for _, tc := range []struct {
		id   string
		want []string
	}{
		{commitID, []string{"Target branch: work", "+a line the commit adds"}},
		{resetID, []string{"Commits that leave the branch — 2 commit(s)", "the first dropped commit", "the second dropped commit", "Uncommitted changes lost"}},
		{discardID, []string{"Changes thrown away", "+a line the discard throws away"}},
	} {
		out, err := l.g.cli("show", tc.id)
		if err != nil {
			t.Fatalf("gateway show %s: %v\n%s", tc.id, err, out)
		}
		text, _, ok := strings.Cut(out, "--- the whole record (JSON) ---")
		if !ok {
			t.Fatalf("gateway show %s has no plain-text part:\n%s", tc.id, out)
		}
		for _, w := range tc.want {
			if !strings.Contains(text, w) {
				t.Errorf("gateway show %s: the plain text lacks %q:\n%s", tc.id, w, text)
			}
		}
	}
	st := l.status(discardID)
	if s := jsonOf(st); !strings.Contains(s, `"kind":"discarded"`) || strings.Contains(s, "throws away") {
		t.Fatalf("operation.status should carry the brief without the diff: %s", s)
	}
}

// TestGatewayCommitChangedAfterCardFails: a commit whose file changed
// after the card was shown is approved and fails, nothing is committed,
// and the reason reaches the agent (operation.status) and the person
// (`fluxgit gateway show`).
func TestGatewayCommitChangedAfterCardFails(t *testing.T) {
	l := newLoop(t)
	repo := e2eRepo(t)
	writeFile(t, filepath.Join(repo, "todo.txt"), "shown on the card\n")
	id := l.propose("commit", repo, map[string]any{"message": "chore: todo", "paths": []any{"todo.txt"}})
	writeFile(t, filepath.Join(repo, "todo.txt"), "changed after the card\n")
	before := revParse(t, repo, "HEAD")
	approveOnPage(t, l.g, id, nil)
	l.awaitStatus(id, "failed")
	const reason = "the content to commit changed since the proposal was shown"
	if s := jsonOf(l.status(id)); !strings.Contains(s, reason) || !strings.Contains(s, "todo.txt") {
		t.Fatalf("operation.status lacks the reason: %s", s)
	}
	out, err := l.g.cli("show", id)
	if text, _, _ := strings.Cut(out, "--- the whole record (JSON) ---"); err != nil || !strings.Contains(text, "Outcome: failed: not committed, nothing changed: "+reason) {
		t.Fatalf("gateway show lacks the reason: %v\n%s", err, out)
	}
	if revParse(t, repo, "HEAD") != before {
		t.Fatal("a commit was made")
	}
}
