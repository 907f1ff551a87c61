package repo

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestLeanWorktreeList(t *testing.T) {
	repo := newRepo(t)
	head := shortID(t, repo, "HEAD")
	base := tempDir(t)
	linked := filepath.Join(base, "linked wt")
	locked := filepath.Join(base, "locked")
	odd := filepath.Join(base, "line\nbreak")
	gone := filepath.Join(base, "gone")
	git(t, repo, "worktree", "add", "-q", "-b", "feature", linked)
	git(t, repo, "worktree", "add", "-q", "--detach", locked)
	git(t, repo, "worktree", "lock", locked)
	git(t, repo, "worktree", "add", "-q", "--detach", odd)
	git(t, repo, "worktree", "add", "-q", "--detach", gone)
	if err := os.RemoveAll(gone); err != nil {
		t.Fatal(err)
	}
	var ref worktreeListData
	var l leanWorktreeListData
	fxBoth(t, "worktree.list", map[string]any{"repoPath": repo}, &ref, &l)
	if ref.Total != 5 || ref.Worktrees[0].HeadSha == "" {
		t.Fatalf("reference payload changed: %+v", ref)
	}
	want := map[string]any{
		repo:   repo + " " + head + " [main]",
		linked: linked + " " + head + " [feature]",
		locked: locked + " " + head + " (detached HEAD) locked",
		odd:    map[string]any{"path": odd, "head": head, "detached": true},
		gone: map[string]any{"path": gone, "head": head, "detached": true,
			"prunable": "gitdir file points to non-existent location"},
	}
	if l.Total != 0 || len(l.Worktrees) != len(want) {
		t.Fatalf("lean worktrees %v", l.Worktrees)
	}
	if l.Worktrees[0] != want[repo] {
		t.Errorf("main work tree first: %v", l.Worktrees[0])
	}
	for _, w := range l.Worktrees {
		var key string
		switch v := w.(type) {
		case string:
			for p, x := range want {
				if x == v {
					key = p
				}
			}
		case map[string]any:
			key, _ = v["path"].(string)
			if !reflect.DeepEqual(v, want[key]) {
				t.Errorf("record %v, want %v", v, want[key])
			}
		}
		if key == "" {
			t.Errorf("unexpected row %#v", w)
		}
		delete(want, key)
	}
	if len(want) != 0 {
		t.Errorf("not listed: %v", want)
	}
}
