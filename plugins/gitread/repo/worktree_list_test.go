package repo

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWorktreeList(t *testing.T) {
	referenceShape(t) // asserts the reference shape; worktree_lean_test.go covers the lean one
	repo := newRepo(t)
	head := git(t, repo, "rev-parse", "HEAD")
	base := tempDir(t)
	linked := filepath.Join(base, "linked wt")
	locked := filepath.Join(base, "locked\nwt")
	gone := filepath.Join(base, "gone")
	git(t, repo, "worktree", "add", "-q", "-b", "feature", linked)
	git(t, repo, "worktree", "add", "-q", "--detach", locked)
	git(t, repo, "worktree", "lock", "--reason", "on a USB disk", locked)
	git(t, repo, "worktree", "add", "-q", "--detach", gone)
	if err := os.RemoveAll(gone); err != nil {
		t.Fatal(err)
	}
	var d worktreeListData
	raw := mustOK(t, "worktree.list", map[string]any{"repoPath": linked}, &d)
	if d.Total != 4 || len(d.Worktrees) != 4 || d.Truncated {
		t.Fatalf("%s", raw)
	}
	w := d.Worktrees
	if w[0].Path != repo || !w[0].IsMain || w[0].Branch != "main" || w[0].HeadSha != head[:12] {
		t.Fatalf("main %+v", w[0])
	}
	if w[1].Path != gone && w[1].Path != linked {
		t.Fatalf("%+v", w)
	}
	byPath := map[string]worktree{}
	for _, x := range w {
		byPath[x.Path] = x
	}
	if x := byPath[linked]; x.IsMain || x.Branch != "feature" || x.Detached {
		t.Fatalf("linked %+v", x)
	}
	if x := byPath[locked]; !x.Locked || x.LockedReason != "on a USB disk" || !x.Detached {
		t.Fatalf("locked %+v (%s)", x, raw)
	}
	if x := byPath[gone]; !x.Prunable {
		t.Fatalf("gone %+v", x)
	}
}
