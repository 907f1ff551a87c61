package execute

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// bindAndChange binds op, runs change (what happens between the card and
// the approval), then executes; the result is returned.
func bindAndChange(t *testing.T, e *Executor, op string, b json.RawMessage, change func()) (Binding, map[string]any) {
	t.Helper()
	ctx := context.Background()
	bd, err := e.Bind(ctx, op, b)
	if err != nil {
		t.Fatalf("Bind %s: %v", op, err)
	}
	if change != nil {
		change()
	}
	out := e.Execute(ctx, Job{ID: "job-1", OperationType: op, Body: b, Binding: bd})
	var res map[string]any
	if err := json.Unmarshal(out.Result, &res); err != nil {
		t.Fatalf("result is not JSON: %s", out.Result)
	}
	return bd, res
}

// A worktree's destination is bound canonical at proposal time; when a
// directory on its way becomes a symbolic link to somewhere else before
// the approval, nothing is created there and the repository is untouched
// (issue 22 finding 3).
func TestWorktreeDestinationSwapped(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	tests := []struct {
		name     string
		subFirst bool // sub exists as a real directory at proposal time
	}{{"existing directory replaced by a link", true}, {"missing directory created as a link", false}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := New(Options{RunDir: isolate(t)})
			repo := newRepo(t)
			allowed := filepath.Dir(repo)
			outside := tmp(t)
			sub := filepath.Join(allowed, "sub")
			if tt.subFirst {
				if err := os.Mkdir(sub, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			dest := filepath.Join(sub, "wt2")
			before := snapshot(t, repo)
			bd, res := bindAndChange(t, e, "worktree", body(repo, map[string]any{"branch": "side", "path": dest}), func() {
				_ = os.Remove(sub)
				if err := os.Symlink(outside, sub); err != nil {
					t.Fatal(err)
				}
			})
			if bd.WorktreePath != dest {
				t.Fatalf("bound %s, want %s", bd.WorktreePath, dest)
			}
			if res["status"] != "failed" || !strings.Contains(res["message"].(string), "now resolves to "+filepath.Join(outside, "wt2")) {
				t.Fatalf("%v", res)
			}
			if entries, _ := os.ReadDir(outside); len(entries) != 0 {
				t.Fatalf("something was created outside: %v", entries)
			}
			if after := snapshot(t, repo); after != before || strings.Contains(git(t, repo, "worktree", "list"), "wt2") {
				t.Fatalf("the repository changed:\n%s\n%s", before, after)
			}
		})
	}
}

// A worktree proposal without a path binds, checks and shows its real
// default location.
func TestWorktreeDefaultLocationBound(t *testing.T) {
	e := New(Options{RunDir: isolate(t)})
	repo := newRepo(t)
	b := body(repo, map[string]any{"branch": "task/one"})
	bd, err := e.Bind(context.Background(), "worktree", b)
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(filepath.Dir(repo), filepath.Base(repo)+".worktrees", "task-one")
	rv, err := e.Review(context.Background(), "worktree", b, bd)
	if err != nil {
		t.Fatal(err)
	}
	if bd.WorktreePath != want || rv.WorktreePath != want || !strings.Contains(rv.Summary, want) {
		t.Fatalf("binding %q, review %q %q; want %s", bd.WorktreePath, rv.WorktreePath, rv.Summary, want)
	}
	if err := os.MkdirAll(want, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Bind(context.Background(), "worktree", b); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("an existing default location was accepted: %v", err)
	}
}

// A commit approval binds the content the card showed: a file changed
// after the proposal makes the execution fail with nothing committed and
// the index untouched (issue 22 finding 8); unchanged, it commits exactly
// the bound tree.
func TestCommitBindsContent(t *testing.T) {
	tests := []struct {
		name   string
		fields map[string]any
		change func(t *testing.T, repo string)
		fails  bool
	}{
		{"paths, edited after the card", map[string]any{"paths": []string{"x.txt"}},
			func(t *testing.T, repo string) { write(t, repo, "x.txt", "evil\n") }, true},
		{"stageAll, a new file after the card", map[string]any{"stageAll": true},
			func(t *testing.T, repo string) { write(t, repo, "extra.txt", "evil\n") }, true},
		{"index, restaged after the card", map[string]any{},
			func(t *testing.T, repo string) { write(t, repo, "x.txt", "evil\n"); git(t, repo, "add", "x.txt") }, true},
		{"paths, an unrelated file changed", map[string]any{"paths": []string{"x.txt"}},
			func(t *testing.T, repo string) { write(t, repo, "other.txt", "not committed\n") }, false},
		{"paths, unchanged", map[string]any{"paths": []string{"x.txt"}}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := New(Options{RunDir: isolate(t)})
			repo := newRepo(t)
			write(t, repo, "x.txt", "reviewed\n")
			if _, ok := tt.fields["paths"]; !ok {
				git(t, repo, "add", "x.txt")
			}
			tt.fields["message"] = "add x"
			var before string
			bd, res := bindAndChange(t, e, "commit", body(repo, tt.fields), func() {
				if tt.change != nil {
					tt.change(t, repo)
				}
				before = snapshot(t, repo)
			})
			if tt.fails {
				if res["status"] != "failed" || !strings.Contains(res["message"].(string), "changed since the proposal") {
					t.Fatalf("%v", res)
				}
				if after := snapshot(t, repo); after != before {
					t.Fatalf("the repository changed:\n%s\n---\n%s", before, after)
				}
				return
			}
			if res["status"] != "completed" || git(t, repo, "rev-parse", "HEAD^{tree}") != bd.CommitTree {
				t.Fatalf("%v (HEAD tree %s, bound %s)", res, git(t, repo, "rev-parse", "HEAD^{tree}"), bd.CommitTree)
			}
			if git(t, repo, "show", "HEAD:x.txt") != "reviewed" {
				t.Fatal("x.txt not committed as reviewed")
			}
		})
	}
}

// The refs an operation moves without naming them count for the policy.
func TestBindingMoves(t *testing.T) {
	e := New(Options{RunDir: isolate(t)})
	repo := newRepo(t)
	feature(t, repo)
	bare := tmp(t)
	git(t, bare, "init", "-q", "--bare")
	git(t, repo, "remote", "add", "origin", bare)
	write(t, repo, "x.txt", "x\n")
	tests := []struct {
		op     string
		fields map[string]any
		want   []string
	}{
		{"commit", map[string]any{"message": "m", "paths": []string{"x.txt"}}, []string{"main"}},
		{"reset", map[string]any{"targetRef": "HEAD~1"}, []string{"main"}},
		{"rebase", map[string]any{"ontoRef": "feature"}, []string{"main"}},
		{"rebase", map[string]any{"ontoRef": "main", "currentRef": "feature"}, []string{"feature"}},
		{"merge", map[string]any{"sourceRef": "feature", "targetRef": "HEAD"}, []string{"main"}},
		{"push", map[string]any{}, []string{"main"}},
		{"plan", map[string]any{"steps": []map[string]any{
			{"operationType": "merge", "sourceRef": "main", "targetRef": "feature"},
			{"operationType": "reset", "targetRef": "HEAD~1"}}}, []string{"feature"}},
		{"patch", map[string]any{"patchContent": "x"}, nil},
	}
	for _, tt := range tests {
		bd, err := e.Bind(context.Background(), tt.op, body(repo, tt.fields))
		if err != nil {
			t.Fatalf("%s: %v", tt.op, err)
		}
		if !slices.Equal(bd.Moves, tt.want) {
			t.Errorf("%s %v: moves %q, want %q", tt.op, tt.fields, bd.Moves, tt.want)
		}
	}
	git(t, repo, "checkout", "-q", "--detach")
	if bd, err := e.Bind(context.Background(), "commit", body(repo, map[string]any{"message": "m", "paths": []string{"x.txt"}})); err != nil || !slices.Equal(bd.Moves, []string{"HEAD"}) {
		t.Errorf("detached commit: %q %v", bd.Moves, err)
	}
}

// "Merged" for branchDelete means merged into HEAD's branch (detached or
// unborn HEAD: the default branch), never into the branch's own upstream:
// a branch that was only pushed is kept.
func TestBranchDeleteMergedMeansBase(t *testing.T) {
	tests := []struct {
		name     string
		detach   bool
		branches []string
		deleted  map[string]bool
		reason   map[string]string
	}{
		{name: "on main", branches: []string{"pushed", "merged"},
			deleted: map[string]bool{"merged": true},
			reason:  map[string]string{"pushed": "not in main (HEAD's branch)", "merged": "fully merged into main (HEAD's branch)"}},
		{name: "detached HEAD compares with the default branch", detach: true, branches: []string{"pushed", "merged", "main"},
			deleted: map[string]bool{"merged": true},
			reason:  map[string]string{"pushed": "not in main (the default branch)", "main": "the base branch"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := New(Options{RunDir: isolate(t)})
			repo := newRepo(t)
			bare := tmp(t)
			git(t, bare, "init", "-q", "--bare")
			git(t, repo, "remote", "add", "origin", bare)
			git(t, repo, "branch", "merged")
			git(t, repo, "checkout", "-q", "-b", "pushed")
			commit(t, repo, "p.txt", "p\n", "pushed, never merged")
			git(t, repo, "push", "-q", "-u", "origin", "pushed")
			git(t, repo, "checkout", "-q", "main")
			if tt.detach {
				git(t, repo, "checkout", "-q", "--detach", "HEAD")
			}
			b := body(repo, map[string]any{"targets": []map[string]any{{"repoPath": repo, "branches": tt.branches}}})
			bd, err := e.Bind(context.Background(), "branchDelete", b)
			if err != nil {
				t.Fatal(err)
			}
			rv, err := e.Review(context.Background(), "branchDelete", b, bd)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range rv.Verdicts {
				if v.Delete != tt.deleted[v.Branch] {
					t.Errorf("%s: delete=%v (%s)", v.Branch, v.Delete, v.Reason)
				}
				if want := tt.reason[v.Branch]; want != "" && !strings.Contains(v.Reason, want) {
					t.Errorf("%s: reason %q, want it to say %q", v.Branch, v.Reason, want)
				}
				if strings.Contains(v.Reason, "upstream "+"refs/") {
					t.Errorf("%s: the upstream is offered as merged: %q", v.Branch, v.Reason)
				}
			}
			e.Execute(context.Background(), Job{ID: "b", OperationType: "branchDelete", Body: b, Binding: bd})
			if _, err := gitErr(repo, "rev-parse", "--verify", "--quiet", "refs/heads/pushed"); err != nil {
				t.Fatal("the only-pushed branch was deleted")
			}
		})
	}
}

// The first commit of a repository (HEAD unborn) binds and commits its
// tree too, with paths and with stageAll.
func TestCommitBindsContentUnborn(t *testing.T) {
	for _, fields := range []map[string]any{{"paths": []string{"x.txt"}}, {"stageAll": true}} {
		e := New(Options{RunDir: isolate(t)})
		repo := tmp(t)
		git(t, repo, "init", "-q", "-b", "main")
		git(t, repo, "config", "user.name", "Repo User")
		git(t, repo, "config", "user.email", "repo@example.com")
		write(t, repo, "x.txt", "x\n")
		fields["message"] = "first"
		bd, res := bindAndChange(t, e, "commit", body(repo, fields), nil)
		if res["status"] != "completed" || git(t, repo, "rev-parse", "HEAD^{tree}") != bd.CommitTree || git(t, repo, "status", "--porcelain") != "" {
			t.Fatalf("%v: %v, status %q", fields, res, git(t, repo, "status", "--porcelain"))
		}
	}
}

// A filter only the repository's configuration defines is never run: the
// commit proposal is refused with a reason naming the key, and nothing ran.
func TestCommitRefusesRepositoryOnlyFilter(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("shell filter: Unix")
	}
	e := New(Options{RunDir: isolate(t)})
	repo := newRepo(t)
	marker := filepath.Join(tmp(t), "filter-ran")
	git(t, repo, "config", "filter.evil.clean", "sh -c 'touch "+marker+"; cat'")
	write(t, repo, ".gitattributes", "*.txt filter=evil\n")
	write(t, repo, "x.txt", "x\n")
	_, err := e.Bind(context.Background(), "commit", body(repo, map[string]any{"message": "m", "paths": []string{"x.txt"}}))
	var be *BindError
	if !errors.As(err, &be) || !strings.Contains(err.Error(), "filter.evil.clean") || !strings.Contains(err.Error(), "global configuration") {
		t.Fatalf("want a refusal naming the key and the fix, got %v", err)
	}
	if _, statErr := os.Stat(marker); statErr == nil {
		t.Fatal("the repository's filter ran")
	}
}
