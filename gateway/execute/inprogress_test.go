package execute

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A merge is refused, with the repository left as it was, while another
// merge, rebase, cherry-pick or revert is in progress: an abort could not
// restore what that operation left behind. The state files are looked up
// in the work tree's own git directory, so a linked worktree is checked
// too.
func TestMergeRefusedWhileAnotherOperationIsInProgress(t *testing.T) {
	isolate(t)
	for _, tc := range []struct {
		name     string
		file     string
		dir      bool
		worktree bool
		want     string
	}{
		{name: "merge", file: "MERGE_HEAD", want: "in progress (MERGE_HEAD exists)"},
		{name: "cherry-pick", file: "CHERRY_PICK_HEAD", want: "in progress (CHERRY_PICK_HEAD exists)"},
		{name: "revert", file: "REVERT_HEAD", want: "in progress (REVERT_HEAD exists)"},
		{name: "rebase stopped", file: "REBASE_HEAD", want: "in progress (REBASE_HEAD exists)"},
		{name: "interactive rebase", file: "rebase-merge", dir: true, want: "rebase is in progress"},
		{name: "am-style rebase", file: "rebase-apply", dir: true, want: "rebase is in progress"},
		{name: "merge in a linked worktree", file: "MERGE_HEAD", worktree: true, want: "in progress (MERGE_HEAD exists)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := newRepo(t)
			feature(t, repo)
			where := repo
			if tc.worktree {
				where = filepath.Join(tmp(t), "wt")
				git(t, repo, "worktree", "add", "-q", "-b", "side", where, "main")
			}
			gitDir := git(t, where, "rev-parse", "--path-format=absolute", "--git-dir")
			state := filepath.Join(gitDir, tc.file)
			var err error
			if tc.dir {
				err = os.Mkdir(state, 0o755)
			} else {
				err = os.WriteFile(state, []byte(head(t, where)+"\n"), 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, where)
			target := "main"
			if tc.worktree {
				target = "side"
			}
			res, out := run(t, New(Options{RunDir: tmp(t)}), "merge", body(where, map[string]any{"sourceRef": "feature", "targetRef": target, "strategy": "merge"}))
			if out.Status != "failed" || !strings.Contains(res["message"].(string), tc.want) {
				t.Fatalf("%s: %v", out.Status, res["message"])
			}
			if after := snapshot(t, where); after != before {
				t.Fatalf("the repository changed:\n%s\n---\n%s", before, after)
			}
		})
	}
}
