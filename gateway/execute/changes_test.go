package execute

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// cardText flattens a review into the lines a person reads: facts,
// section titles, commit subjects, file lines and diffs.
func cardText(rv Review) string {
	var b strings.Builder
	for _, f := range rv.Facts {
		fmt.Fprintf(&b, "%s: %s\n", f.Label, f.Value)
	}
	for _, s := range rv.Sections {
		fmt.Fprintf(&b, "== %s [%s] commits=%d files=%d\n", s.Title, s.Kind, s.CommitsTotal, s.FilesTotal)
		for _, c := range s.Commits {
			fmt.Fprintf(&b, "commit %s\n", c.Subject)
		}
		for _, f := range s.Files {
			fmt.Fprintf(&b, "file %s %s\n%s", f.Status, f.Path, f.Diff)
		}
	}
	return b.String()
}

// TestReviewShowsWhatChanges proves, for each of the twelve operations on
// a real repository, that the card's review names what will change
// (issue 25, item 1). Each case fails when its fact, commit or diff line
// is missing.
func TestReviewShowsWhatChanges(t *testing.T) {
	cases := []struct {
		op    string
		name  string
		setup func(t *testing.T, repo string) map[string]any
		want  []string
		not   []string
	}{
		{op: "commit", name: "commit: target branch and the exact diff",
			setup: func(t *testing.T, repo string) map[string]any {
				write(t, repo, "a.txt", "alpha\nthe committed line\n")
				return map[string]any{"message": "add a line", "paths": []string{"a.txt"}}
			},
			want: []string{"Target branch: main at", "[committed]", "file M a.txt", "+the committed line"}},
		{op: "merge", name: "merge: commits coming in and per-file diffs",
			setup: func(t *testing.T, repo string) map[string]any {
				feature(t, repo)
				return map[string]any{"sourceRef": "feature", "targetRef": "main", "strategy": "merge"}
			},
			want: []string{"Into: main", "[commits-in] commits=1", "commit feature work", "file A b.txt", "+bravo"},
			not:  []string{"c.txt"}},
		{op: "merge", name: "squash: the same, one commit",
			setup: func(t *testing.T, repo string) map[string]any {
				feature(t, repo)
				return map[string]any{"sourceRef": "feature", "targetRef": "main", "strategy": "squash"}
			},
			want: []string{"Strategy: squash", "commit feature work", "+bravo"}},
		{op: "rebase", name: "rebase: commits replayed and onto what",
			setup: func(t *testing.T, repo string) map[string]any {
				feature(t, repo)
				return map[string]any{"currentRef": "feature", "ontoRef": "main", "interactive": false}
			},
			want: []string{"Onto: main at", "main work", "Branch rewritten: feature", "[replayed] commits=1", "commit feature work"}},
		{op: "reset", name: "hard reset: commits leaving and uncommitted changes lost",
			setup: func(t *testing.T, repo string) map[string]any {
				commit(t, repo, "d.txt", "delta\n", "dropped one")
				commit(t, repo, "e.txt", "echo\n", "dropped two")
				write(t, repo, "a.txt", "alpha\nan uncommitted line\n")
				return map[string]any{"targetRef": "HEAD~2", "mode": "hard"}
			},
			want: []string{"[leaving] commits=2", "commit dropped one", "commit dropped two", "[lost]", "+an uncommitted line"}},
		{op: "reset", name: "soft reset: the leaving commits' changes are kept",
			setup: func(t *testing.T, repo string) map[string]any {
				commit(t, repo, "d.txt", "delta\n", "dropped one")
				return map[string]any{"targetRef": "HEAD~1", "mode": "soft"}
			},
			want: []string{"commit dropped one", "[leaving-files]", "+delta"}, not: []string{"[lost]"}},
		{op: "discard", name: "discard: the diff thrown away, untracked files included",
			setup: func(t *testing.T, repo string) map[string]any {
				write(t, repo, "a.txt", "a discarded line\n")
				write(t, repo, "new.txt", "untracked text\n")
				return map[string]any{"paths": []string{"a.txt", "new.txt"}}
			},
			want: []string{"[discarded] commits=0 files=2", "-alpha", "+a discarded line", "file A new.txt", "+untracked text"}},
		{op: "patch", name: "patch: the diff applied",
			setup: func(t *testing.T, repo string) map[string]any {
				p := "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1,2 @@\n alpha\n+patched line\n"
				return map[string]any{"patchContent": p, "applyToIndex": false}
			},
			want: []string{"Applied to: the work tree", "[applied] commits=0 files=1", "file M a.txt", "+patched line"}},
		{op: "plan", name: "plan: each step's change",
			setup: func(t *testing.T, repo string) map[string]any {
				feature(t, repo)
				return map[string]any{"steps": []map[string]any{{"operationType": "merge", "sourceRef": "feature", "targetRef": "main", "strategy": "merge"}}}
			},
			want: []string{"Step 1 (merge): Commits coming in", "commit feature work"}},
		{op: "push", name: "push: commits sent",
			setup: func(t *testing.T, repo string) map[string]any {
				bare := tmp(t)
				git(t, bare, "init", "-q", "--bare")
				git(t, repo, "remote", "add", "origin", bare)
				git(t, repo, "push", "-q", "origin", "main")
				commit(t, repo, "s.txt", "sent\n", "a commit sent")
				return map[string]any{"remote": "origin", "branch": "main"}
			},
			want: []string{"Remote as last seen: origin/main at", "last updated here", "[sent] commits=1", "commit a commit sent", "Undo: not possible here"},
			not:  []string{"[overwritten]"}},
		{op: "push", name: "force push: remote commits overwritten, with their age",
			setup: func(t *testing.T, repo string) map[string]any {
				bare := tmp(t)
				git(t, bare, "init", "-q", "--bare")
				git(t, repo, "remote", "add", "origin", bare)
				commit(t, repo, "r.txt", "remote\n", "only on the remote")
				git(t, repo, "push", "-q", "origin", "main")
				git(t, repo, "reset", "-q", "--hard", "HEAD~1")
				commit(t, repo, "l.txt", "local\n", "the rewrite")
				return map[string]any{"remote": "origin", "branch": "main", "forceWithLease": true}
			},
			want: []string{"[sent] commits=1", "commit the rewrite", "[overwritten] commits=1", "commit only on the remote", "last updated here"}},
		{op: "branch", name: "branch: where it points",
			setup: func(t *testing.T, repo string) map[string]any {
				return map[string]any{"name": "topic", "startPoint": "main"}
			},
			want: []string{"Points at: main = ", "first", "Relative to main (HEAD's branch): starts inside it"}},
		{op: "branchDelete", name: "branchDelete: merged or not, never pushed-as-merged",
			setup: func(t *testing.T, repo string) map[string]any {
				bare := tmp(t)
				git(t, bare, "init", "-q", "--bare")
				git(t, repo, "remote", "add", "origin", bare)
				git(t, repo, "branch", "merged")
				git(t, repo, "checkout", "-q", "-b", "pushed")
				commit(t, repo, "p.txt", "p\n", "pushed only")
				git(t, repo, "push", "-q", "-u", "origin", "pushed")
				git(t, repo, "checkout", "-q", "main")
				return map[string]any{"targets": []map[string]any{{"repoPath": repo, "branches": []string{"merged", "pushed"}}}}
			},
			want: []string{"Undo: not offered for a branch deletion", "merged in ", "deleted: fully merged into main", "pushed in ", "kept: it has 1 commit(s) that are not in main (HEAD's branch) (being pushed to its upstream does not count as merged)"}},
		{op: "worktree", name: "worktree: the real path",
			setup: func(t *testing.T, repo string) map[string]any {
				return map[string]any{"branch": "wt"}
			},
			want: []string{"Real path: ", ".worktrees/wt", "Branch: wt (new) at HEAD"}},
		{op: "submodulePointer", name: "submodulePointer: old → new with the log between",
			setup: func(t *testing.T, repo string) map[string]any {
				sub := withSubmodule(t, repo)
				commit(t, sub, "s2.txt", "two\n", "sub second")
				commit(t, sub, "s3.txt", "three\n", "sub third")
				return map[string]any{"parentPath": "", "relativePath": "lib", "direction": "record", "message": "bump lib"}
			},
			want: []string{"Recorded pointer: ", " → ", "[between] commits=2", "commit sub second", "commit sub third"}},
	}
	seen := map[string]bool{}
	for _, tc := range cases {
		seen[tc.op] = true
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			repo := newRepo(t)
			fields := tc.setup(t, repo)
			e := New(Options{RunDir: isolate(t)})
			ctx := context.Background()
			b := body(repo, fields)
			bd, err := e.Bind(ctx, tc.op, b)
			if err != nil {
				t.Fatalf("Bind: %v", err)
			}
			rv, err := e.Review(ctx, tc.op, b, bd)
			if err != nil {
				t.Fatalf("Review: %v", err)
			}
			text := cardText(rv)
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("the card lacks %q:\n%s", w, text)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(text, n) {
					t.Errorf("the card shows %q, which does not change:\n%s", n, text)
				}
			}
		})
	}
	for _, op := range Ops {
		if !seen[op] {
			t.Errorf("no review case for %s", op)
		}
	}
}

// TestReviewIsBounded proves the caps: a merge of 30 commits touching 60
// files lists 20 commits and 50 files, counts all of them, and keeps the
// inline diffs within the review's budget; FileDiff then expands a file
// whose diff was not inline.
func TestReviewIsBounded(t *testing.T) {
	repo := newRepo(t)
	git(t, repo, "checkout", "-q", "-b", "big")
	for i := 0; i < 60; i++ {
		write(t, repo, fmt.Sprintf("f%02d.txt", i), strings.Repeat(fmt.Sprintf("line of file %d\n", i), 400))
	}
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "-q", "-m", "sixty files")
	for i := 1; i < 30; i++ {
		git(t, repo, "commit", "-q", "--allow-empty", "-m", fmt.Sprintf("empty %d", i))
	}
	git(t, repo, "checkout", "-q", "main")
	e := New(Options{RunDir: isolate(t)})
	ctx := context.Background()
	b := body(repo, map[string]any{"sourceRef": "big", "targetRef": "main", "strategy": "merge"})
	bd, err := e.Bind(ctx, "merge", b)
	if err != nil {
		t.Fatal(err)
	}
	rv, err := e.Review(ctx, "merge", b, bd)
	if err != nil {
		t.Fatal(err)
	}
	if len(rv.Sections) != 2 {
		t.Fatalf("want 2 sections, got %+v", rv.Sections)
	}
	c, f := rv.Sections[0], rv.Sections[1]
	if len(c.Commits) != ReviewMaxCommits || c.CommitsTotal != 30 {
		t.Fatalf("commits: %d listed of %d, want %d of 30", len(c.Commits), c.CommitsTotal, ReviewMaxCommits)
	}
	if mc, _ := c.More(); mc != 10 {
		t.Fatalf("more commits %d, want 10", mc)
	}
	if len(f.Files) != ReviewMaxFiles || f.FilesTotal != 60 || f.Insertions != 60*400 {
		t.Fatalf("files: %d listed of %d (+%d), want %d of 60 (+24000)", len(f.Files), f.FilesTotal, f.Insertions, ReviewMaxFiles)
	}
	inline, last := 0, -1
	for i, x := range f.Files {
		inline += len(x.Diff)
		if x.Diff != "" {
			last = i
		}
	}
	if inline > ReviewInlineBytes || last < 0 || last == len(f.Files)-1 {
		t.Fatalf("inline diffs %d bytes (budget %d), last inline file %d of %d", inline, ReviewInlineBytes, last, len(f.Files))
	}
	far := f.Files[len(f.Files)-1]
	d, cutShort, err := e.FileDiff(ctx, repo, f.From, f.To, far.Path)
	if err != nil || cutShort || !strings.Contains(d, "+line of file 49") || strings.Contains(d, "file 48") {
		t.Fatalf("FileDiff of %s: %v, truncated %v:\n%.300s", far.Path, err, cutShort, d)
	}
	if _, _, err := e.FileDiff(ctx, repo, "HEAD", f.To, far.Path); err == nil {
		t.Fatal("FileDiff accepted a name instead of the stored object ids")
	}
}

// TestExecutionRefusesChangedWorkTree proves the approval binds what the
// card showed for the two operations that throw work away: when the
// changes differ at execution, nothing is done and the reason says so.
func TestExecutionRefusesChangedWorkTree(t *testing.T) {
	cases := []struct {
		name   string
		op     string
		fields map[string]any
		change func(t *testing.T, repo string)
		want   string
	}{
		{"discard, the file changed again", "discard", map[string]any{"paths": []string{"a.txt"}},
			func(t *testing.T, repo string) { write(t, repo, "a.txt", "edited after the card\n") },
			"the changes to discard changed after the card was shown (changed: a.txt"},
		{"discard, a new untracked file under the path", "discard", map[string]any{"paths": []string{"."}},
			func(t *testing.T, repo string) { write(t, repo, "late.txt", "late\n") },
			"changed: late.txt"},
		{"plan whose first step discards", "plan", map[string]any{"steps": []map[string]any{{"operationType": "discard", "paths": []string{"a.txt"}}}},
			func(t *testing.T, repo string) { write(t, repo, "a.txt", "edited after the card\n") },
			"the changes to discard changed after the card was shown (changed: a.txt"},
		{"hard reset, another uncommitted change", "reset", map[string]any{"targetRef": "HEAD", "mode": "hard"},
			func(t *testing.T, repo string) { write(t, repo, "c.txt", "more\n"); git(t, repo, "add", "c.txt") },
			"the uncommitted changes a hard reset loses changed after the card was shown (changed: c.txt"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			repo := newRepo(t)
			write(t, repo, "a.txt", "shown on the card\n")
			e := New(Options{RunDir: isolate(t)})
			ctx := context.Background()
			b := body(repo, tc.fields)
			bd, err := e.Bind(ctx, tc.op, b)
			if err != nil {
				t.Fatal(err)
			}
			if bd.WorkTree == "" {
				t.Fatal("nothing bound")
			}
			tc.change(t, repo)
			before := snapshot(t, repo)
			out := e.Execute(ctx, Job{ID: "j", OperationType: tc.op, Body: b, Binding: bd})
			if out.Status != "failed" || !strings.Contains(string(out.Result), tc.want) || !strings.Contains(string(out.Result), "nothing changed") {
				t.Fatalf("%s: %s; want a failure saying %q", out.Status, out.Result, tc.want)
			}
			if after := snapshot(t, repo); after != before {
				t.Fatalf("the refused %s changed the repository:\n%s\n%s", tc.op, before, after)
			}
		})
	}
}

// TestBriefIsSmall proves the agent's summary carries counts and names
// only: no diff text reaches operation.status.
func TestBriefIsSmall(t *testing.T) {
	repo := newRepo(t)
	write(t, repo, "a.txt", "alpha\nsecret diff line\n")
	e := New(Options{RunDir: isolate(t)})
	ctx := context.Background()
	b := body(repo, map[string]any{"message": "m", "stageAll": true})
	bd, err := e.Bind(ctx, "commit", b)
	if err != nil {
		t.Fatal(err)
	}
	rv, err := e.Review(ctx, "commit", b, bd)
	if err != nil {
		t.Fatal(err)
	}
	br := fmt.Sprintf("%+v", rv.Brief())
	if strings.Contains(br, "secret diff line") || !strings.Contains(br, "a.txt") || len(rv.Brief().Sections) != 1 || rv.Brief().Sections[0].Files != 1 {
		t.Fatalf("brief %s", br)
	}
}
