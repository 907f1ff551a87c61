package repo

import (
	"strings"
	"testing"
)

func TestRepoReflog(t *testing.T) {
	repo := newRepo(t)
	first := git(t, repo, "rev-parse", "HEAD")
	write(t, repo, "a.txt", "two\n")
	second := commitAll(t, repo, "second")
	git(t, repo, "commit", "-q", "--amend", "-m", "second amended")
	amended := git(t, repo, "rev-parse", "HEAD")
	git(t, repo, "reset", "-q", "--hard", first)
	write(t, repo, "a.txt", "stash me\n")
	git(t, repo, "stash", "push", "-q", "-m", "wip")

	var d reflogData
	mustOK(t, "repo.reflog", map[string]any{"repoPath": repo}, &d)
	// git stash records its own "reset: moving to HEAD" on top.
	wantNew := []string{first, first, amended, second, first}
	if len(d.Entries) != 5 || d.EntryCount != 5 || d.Truncated || !d.ReadOnly || d.RecoveryGuidance == "" {
		t.Fatalf("%+v", d)
	}
	for i, e := range d.Entries {
		if e.NewCommit != wantNew[i] || e.Index != int64(i) || e.Selector != "HEAD@{"+string(rune('0'+i))+"}" || e.Timestamp != authorTime || e.AuthorName != "Cy Committer" {
			t.Fatalf("entry %d: %+v", i, e)
		}
	}
	if !strings.HasPrefix(d.Entries[1].Message, "reset: moving to") || !strings.HasPrefix(d.Entries[2].Message, "commit (amend)") {
		t.Fatalf("%+v", d.Entries)
	}
	if d.Entries[0].CanCompare || *d.Entries[1].OldCommit != amended || !d.Entries[1].CanCompare || d.Entries[4].OldCommit != nil {
		t.Fatalf("%+v", d.Entries)
	}

	t.Run("limit", func(t *testing.T) {
		var d reflogData
		mustOK(t, "repo.reflog", map[string]any{"repoPath": repo, "limit": 3}, &d)
		if len(d.Entries) != 3 || !d.Truncated || *d.Entries[2].OldCommit != second {
			t.Fatalf("%+v", d)
		}
	})
	t.Run("branch and stash refs", func(t *testing.T) {
		for _, ref := range []string{"main", "refs/heads/main", "stash"} {
			var d reflogData
			mustOK(t, "repo.reflog", map[string]any{"repoPath": repo, "refName": ref}, &d)
			if len(d.Entries) == 0 || d.RefName != ref || !strings.HasPrefix(d.Entries[0].Selector, ref+"@{0}") {
				t.Fatalf("%s: %+v", ref, d)
			}
		}
	})
	t.Run("not a ref", func(t *testing.T) {
		for _, ref := range []string{"nope", "HEAD~1", first} {
			fd := mustFail(t, "repo.reflog", map[string]any{"repoPath": repo, "refName": ref})
			if !strings.Contains(fd.Details, "does not name a ref") {
				t.Fatalf("%s: %+v", ref, fd)
			}
		}
	})
	t.Run("limit bounds", func(t *testing.T) {
		mustArgError(t, "repo.reflog", map[string]any{"repoPath": repo, "limit": 101}, "arguments.limit must be between 1 and 100")
	})
}
