package tests

import (
	"fmt"
	"image"
	"image/color/palette"
	"image/draw"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fluxgit/fluxgit/tests/browser"
)

// TestGatewayCardShowsTheChangeInBrowser proves issue 25's first item in
// headless Chromium: for each of the twelve operations an agent proposes
// through fluxgit on a real repository, the pending card on the approval
// page shows what will change — the facts and the commits, and for file
// changes a diff line, expanded inline or fetched on demand through the
// page's authenticated API. With -screenshot each card is saved to
// docs/screenshots/card-<case>.png (docs/approvals.md shows them).
func TestGatewayCardShowsTheChangeInBrowser(t *testing.T) {
	b := browser.Start(t)
	l := newLoop(t)
	b.Navigate(l.g.page)
	b.WaitFor("main", 0)
	cases := []struct {
		name  string
		op    string
		setup func(t *testing.T, repo string) map[string]any
		// want are texts of the card; diff is a line of the first file's
		// diff, read after opening it (and asking for it when it is not
		// inline).
		want []string
		diff string
		// expand: the diff line lies beyond the inline part, so the
		// test asks the gateway for the whole diff (shot: no picture).
		expand bool
	}{
		{"commit", "commit", func(t *testing.T, repo string) map[string]any {
			writeFile(t, filepath.Join(repo, "README.md"), "# shop\nA line the commit adds.\n")
			return map[string]any{"message": "docs: readme", "paths": []any{"README.md"}}
		}, []string{"Target branch", "main at", "The change committed", "README.md"}, "+A line the commit adds.", false},
		{"commit-large", "commit", func(t *testing.T, repo string) map[string]any {
			var big strings.Builder
			for i := 0; i < 2000; i++ {
				fmt.Fprintf(&big, "line %d of a large file\n", i)
			}
			writeFile(t, filepath.Join(repo, "big.txt"), big.String())
			return map[string]any{"message": "add a large file", "paths": []any{"big.txt"}}
		}, []string{"The change committed — 1 file, +2000 −0", "big.txt"}, "+line 1999 of a large file", true},
		{"merge", "merge", func(t *testing.T, repo string) map[string]any {
			return map[string]any{"sourceRef": "feature", "targetRef": "main", "strategy": "merge"}
		}, []string{"Commits coming in — 1 commit", "feat: cart", "Files changed by the merge", "cart.go"}, "+package shop", false},
		{"squash", "merge", func(t *testing.T, repo string) map[string]any {
			return map[string]any{"sourceRef": "feature", "targetRef": "main", "strategy": "squash"}
		}, []string{"squash: the commits below become one new commit on main", "feat: cart"}, "+package shop", false},
		{"rebase", "rebase", func(t *testing.T, repo string) map[string]any {
			return map[string]any{"currentRef": "feature", "ontoRef": "main", "interactive": false}
		}, []string{"Onto", "docs: notes", "Commits replayed — 1 commit", "feat: cart"}, "", false},
		{"reset-hard", "reset", func(t *testing.T, repo string) map[string]any {
			writeFile(t, filepath.Join(repo, "README.md"), "# shop\nAn uncommitted line.\n")
			return map[string]any{"targetRef": "HEAD~1", "mode": "hard"}
		}, []string{"Commits that leave the branch — 1 commit", "docs: notes", "Uncommitted changes lost from the work tree", "README.md"}, "+An uncommitted line.", false},
		{"discard", "discard", func(t *testing.T, repo string) map[string]any {
			writeFile(t, filepath.Join(repo, "NOTES.md"), "notes\nA line the discard throws away.\n")
			return map[string]any{"paths": []any{"NOTES.md"}}
		}, []string{"Changes thrown away — 1 file", "NOTES.md"}, "+A line the discard throws away.", false},
		{"patch", "patch", func(t *testing.T, repo string) map[string]any {
			return map[string]any{"patchContent": "diff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n@@ -1 +1,2 @@\n # shop\n+A patched line.\n"}
		}, []string{"The patch applied — 1 file", "README.md", "Applied to"}, "+A patched line.", false},
		{"plan", "plan", func(t *testing.T, repo string) map[string]any {
			return map[string]any{"steps": []any{
				map[string]any{"operationType": "rebase", "currentRef": "feature", "ontoRef": "main", "interactive": false},
				map[string]any{"operationType": "merge", "sourceRef": "feature", "targetRef": "main", "strategy": "merge"}}}
		}, []string{"Step 1 (rebase): Commits replayed", "Step 2 (merge): Commits coming in", "feat: cart"}, "", false},
		{"push-force", "push", func(t *testing.T, repo string) map[string]any {
			bare := filepath.Join(canonicalTempDir(t), "remote.git")
			git(t, repo, "init", "-q", "--bare", bare)
			git(t, repo, "remote", "add", "origin", bare)
			writeFile(t, filepath.Join(repo, "NOTES.md"), "notes\nremote\n")
			git(t, repo, "commit", "-q", "-am", "a commit only the remote keeps")
			git(t, repo, "push", "-q", "origin", "main")
			git(t, repo, "reset", "-q", "--hard", "HEAD~1")
			writeFile(t, filepath.Join(repo, "NOTES.md"), "notes\nlocal\n")
			git(t, repo, "commit", "-q", "-am", "the rewritten commit")
			return map[string]any{"remote": "origin", "branch": "main", "forceWithLease": true}
		}, []string{"Commits sent — 1 commit", "the rewritten commit", "Remote commits overwritten — 1 commit", "a commit only the remote keeps", "last updated here", "nothing was fetched"}, "", false},
		{"branch", "branch", func(t *testing.T, repo string) map[string]any {
			return map[string]any{"name": "topic", "startPoint": "feature", "checkout": false}
		}, []string{"Points at", "feature = ", "feat: cart", "starts 1 commit(s) ahead of it"}, "", false},
		{"branchDelete", "branchDelete", func(t *testing.T, repo string) map[string]any {
			bare := filepath.Join(canonicalTempDir(t), "remote.git")
			git(t, repo, "init", "-q", "--bare", bare)
			git(t, repo, "remote", "add", "origin", bare)
			git(t, repo, "push", "-q", "-u", "origin", "feature")
			git(t, repo, "branch", "done")
			return map[string]any{"targets": []any{map[string]any{"repoPath": repo, "branches": []any{"done", "feature"}}}}
		}, []string{"deleted: fully merged into main", "kept: it has 1 commit(s) that are not in main", "being pushed to its upstream does not count as merged"}, "", false},
		{"worktree", "worktree", func(t *testing.T, repo string) map[string]any {
			return map[string]any{"branch": "review"}
		}, []string{"Real path", "shop.worktrees/review", "review (new) at HEAD"}, "", false},
		{"submodulePointer", "submodulePointer", func(t *testing.T, repo string) map[string]any {
			lib := e2eRepo(t)
			git(t, repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "lib")
			git(t, repo, "commit", "-q", "-m", "add lib")
			sub := filepath.Join(repo, "lib")
			writeFile(t, filepath.Join(sub, "LIB.md"), "lib\n")
			git(t, sub, "add", "LIB.md")
			git(t, sub, "commit", "-q", "-m", "lib: a new commit")
			return map[string]any{"relativePath": "lib", "direction": "record", "message": "bump lib"}
		}, []string{"Recorded pointer", " → ", "Log between (new commits) — 1 commit", "lib: a new commit"}, "", false},
	}
	ops := map[string]bool{}
	for _, tc := range cases {
		ops[tc.op] = true
		t.Run(tc.name, func(t *testing.T) {
			b := b.For(t)
			repo := e2eRepo(t)
			id := l.propose(tc.op, repo, tc.setup(t, repo))
			c := b.WaitFor(card(id)+" .changes", 0)
			c = b.Find(card(id))
			text := c.Text()
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("the %s card lacks %q:\n%s", tc.name, w, text)
				}
			}
			if tc.diff != "" {
				file := c.Find("details.file summary")
				file.Click()
				btn := b.FindAll(card(id) + " details.file[open] button.load-diff")
				if tc.expand != (len(btn) > 0) {
					t.Fatalf("expand %v, but the card offers %d button(s) to load the diff", tc.expand, len(btn))
				}
				if tc.expand {
					if pre := b.Find(card(id) + " details.file[open] pre.diff").Text(); strings.Contains(pre, tc.diff) {
						t.Fatalf("%q is already inline; the case does not test the expansion", tc.diff)
					}
					btn[0].Click()
				}
				b.WaitText(card(id)+" details.file[open] pre.diff", tc.diff, 0)
			}
			if *updateScreenshot && !tc.expand {
				shot := filepath.Join("..", "docs", "screenshots", "card-"+tc.name+".png")
				c.SaveScreenshot(shot)
				shrinkPNG(t, shot)
			}
			c.Find(`textarea[name="reason"]`).Type("Seen in the review test.")
			c.Find(`button[data-action="reject"]`).Click()
			l.awaitStatus(id, "rejected")
			b.WaitGone(card(id), 0)
		})
	}
	for _, op := range []string{"merge", "rebase", "discard", "reset", "patch", "plan", "worktree", "commit", "push", "branch", "branchDelete", "submodulePointer"} {
		if !ops[op] {
			t.Errorf("no browser case for %s", op)
		}
	}
	if *updateScreenshot {
		if _, err := os.Stat(filepath.Join("..", "docs", "screenshots", "card-commit.png")); err != nil {
			t.Fatal(err)
		}
	}
}

// shrinkPNG re-encodes a screenshot with a 256-colour palette and the
// best compression, so the pictures in docs/ stay small (a third of
// Chromium's own PNG).
func shrinkPNG(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	p := image.NewPaletted(img.Bounds(), palette.Plan9)
	draw.Draw(p, p.Rect, img, img.Bounds().Min, draw.Src)
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(out, p); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestGatewayChangedCommitFailsInBrowser: the person approves a commit
// card in the browser after its file changed; the commit fails, nothing
// is committed, and the page's history says why.
func TestGatewayChangedCommitFailsInBrowser(t *testing.T) {
	b := browser.Start(t)
	l := newLoop(t)
	repo := e2eRepo(t)
	writeFile(t, filepath.Join(repo, "todo.txt"), "shown on the card\n")
	id := l.propose("commit", repo, map[string]any{"message": "chore: todo", "paths": []any{"todo.txt"}})
	b.Navigate(l.g.page)
	c := b.WaitFor(card(id)+" .changes", 0)
	c = b.Find(card(id))
	c.Find("details.file summary").Click()
	b.WaitText(card(id)+" details.file[open] pre.diff", "+shown on the card", 0)
	before := revParse(t, repo, "HEAD")
	writeFile(t, filepath.Join(repo, "todo.txt"), "changed after the card\n")
	c.Find(`button[data-action="approve"]`).Click()
	l.awaitStatus(id, "failed")
	msg := b.WaitText(`section#history li[data-preview-id="`+id+`"][data-status="failed"] .hist-msg`, "the content to commit changed since the proposal was shown", 0).Text()
	if !strings.Contains(msg, "todo.txt") || !strings.Contains(msg, "nothing changed") {
		t.Fatalf("the history's reason: %q", msg)
	}
	if *updateScreenshot {
		b.Find(`section#history li[data-preview-id="` + id + `"]`).SaveScreenshot(filepath.Join("..", "docs", "screenshots", "card-commit-changed.png"))
		shrinkPNG(t, filepath.Join("..", "docs", "screenshots", "card-commit-changed.png"))
	}
	if revParse(t, repo, "HEAD") != before {
		t.Fatal("a commit was made")
	}
}
