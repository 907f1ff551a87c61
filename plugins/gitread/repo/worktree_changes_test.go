package repo

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
)

func TestWorktreeChanges(t *testing.T) {
	referenceShape(t) // asserts the reference shape
	repo := newRepo(t)
	write(t, repo, "b.txt", "b\n")
	write(t, repo, "old.txt", "rename me, long enough to be detected as such\n")
	commitAll(t, repo, "base")
	write(t, repo, "a.txt", "staged\n")
	git(t, repo, "add", "a.txt")
	write(t, repo, "a.txt", "staged then edited\n")
	write(t, repo, "b.txt", "unstaged\n")
	git(t, repo, "mv", "old.txt", "new name.txt")
	write(t, repo, "u.txt", "u\n")
	var d worktreeChangesData
	raw := mustOK(t, "worktree.changes", map[string]any{"repoPath": repo}, &d)
	want := worktreeChangesData{
		Staged:      []statusEntry{{Status: "MM", Path: "a.txt"}, {Status: "R ", Path: "new name.txt", OrigPath: "old.txt"}},
		Unstaged:    []statusEntry{{Status: "MM", Path: "a.txt"}, {Status: " M", Path: "b.txt"}},
		Untracked:   []statusEntry{{Status: "??", Path: "u.txt"}},
		StagedCount: 2, UnstagedCount: 2, UntrackedCount: 1,
	}
	if !reflect.DeepEqual(d, want) {
		t.Fatalf("got %s", raw)
	}

	t.Run("conflicts appear on both sides", func(t *testing.T) {
		var d worktreeChangesData
		mustOK(t, "worktree.changes", map[string]any{"repoPath": conflictRepo(t, "merge")}, &d)
		if d.StagedCount != 3 || d.UnstagedCount != 3 {
			t.Fatalf("%+v", d)
		}
	})
	t.Run("cap", func(t *testing.T) {
		repo := newRepo(t)
		for i := 0; i < maxChangeEntries+2; i++ {
			if err := os.WriteFile(filepath.Join(repo, "f"+strconv.Itoa(i)), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		var d worktreeChangesData
		mustOK(t, "worktree.changes", map[string]any{"repoPath": repo}, &d)
		if len(d.Untracked) != maxChangeEntries || d.UntrackedCount != maxChangeEntries+2 || !d.Truncated {
			t.Fatalf("%d %d %v", len(d.Untracked), d.UntrackedCount, d.Truncated)
		}
	})
}
