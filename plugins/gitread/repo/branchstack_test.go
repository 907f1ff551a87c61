package repo

import (
	"path/filepath"
	"testing"
)

// upstreamRepo is a clone of a local bare remote whose main is one commit
// ahead and one behind origin/main, with stacked branches.
func upstreamRepo(t *testing.T) string {
	t.Helper()
	remote := tempDir(t)
	git(t, remote, "init", "-q", "--bare", "-b", "main")
	seed := newRepo(t)
	git(t, seed, "push", "-q", remote, "main")
	work := filepath.Join(tempDir(t), "work")
	git(t, filepath.Dir(work), "clone", "-q", remote, work)
	write(t, seed, "seed.txt", "upstream\n")
	commitAll(t, seed, "upstream work")
	git(t, seed, "push", "-q", remote, "main")
	git(t, work, "fetch", "-q")
	write(t, work, "local.txt", "local\n")
	commitAll(t, work, "local work")
	return work
}

func TestBranchStack(t *testing.T) {
	t.Run("diverged from upstream", func(t *testing.T) {
		repo := upstreamRepo(t)
		var d branchStackData
		mustOK(t, "repo.branchStack", map[string]any{"repoPath": repo}, &d)
		if d.Current.Ref != "refs/heads/main" || d.Current.Ahead != 1 || d.Current.Behind != 1 || d.Upstream == nil ||
			d.Upstream.Label != "origin/main" || d.Risk != "high" || d.Base == nil || d.Base.Label != "origin/main" {
			t.Fatalf("%+v", d)
		}
		if d.Base.Distance.AheadFromBase != 1 || d.Base.Distance.BehindBase != 1 || d.NetworkFetchPerformed || !d.ReadOnly {
			t.Fatalf("%+v", d.Base)
		}
	})
	t.Run("stacked feature branches", func(t *testing.T) {
		repo := newRepo(t)
		git(t, repo, "checkout", "-q", "-b", "feature")
		write(t, repo, "f.txt", "1\n")
		commitAll(t, repo, "feature 1")
		git(t, repo, "checkout", "-q", "-b", "feature-2")
		write(t, repo, "f.txt", "2\n")
		commitAll(t, repo, "feature 2")
		git(t, repo, "branch", "tracker", "feature")
		git(t, repo, "branch", "--set-upstream-to=feature", "tracker")
		git(t, repo, "branch", "sibling", "main")
		git(t, repo, "checkout", "-q", "sibling")
		write(t, repo, "s.txt", "s\n")
		commitAll(t, repo, "sibling")
		git(t, repo, "checkout", "-q", "feature")

		var d branchStackData
		mustOK(t, "repo.branchStack", map[string]any{"repoPath": repo}, &d)
		if d.Base == nil || d.Base.Ref != "refs/heads/main" || d.Base.Distance.AheadFromBase != 1 || d.Upstream != nil || d.Risk != "medium" {
			t.Fatalf("%+v", d)
		}
		got := map[string]stackRelated{}
		for _, r := range d.Related {
			got[r.Label] = r
		}
		if got["tracker"].Relation != "tracks-current" || got["feature-2"].Relation != "descends-from-current" ||
			got["feature-2"].AheadOfCurrent != 1 || got["sibling"].Relation != "shares-base" ||
			got["sibling"].AheadOfCurrent != 1 || got["sibling"].BehindCurrent != 1 || len(d.Related) != 3 {
			t.Fatalf("%+v", d.Related)
		}
		var small branchStackData
		mustOK(t, "repo.branchStack", map[string]any{"repoPath": repo, "maxRelated": 1, "baseCandidates": []string{"nope", "sibling"}}, &small)
		if len(small.Related) != 1 || !small.RelatedTruncated || small.Base.Label != "sibling" {
			t.Fatalf("%+v", small)
		}
	})
	t.Run("detached and no base", func(t *testing.T) {
		repo := newRepo(t)
		git(t, repo, "checkout", "-q", "--detach")
		var d branchStackData
		raw := mustOK(t, "repo.branchStack", map[string]any{"repoPath": repo, "baseCandidates": []string{"trunk"}}, &d)
		if d.Current.Ref != "HEAD" || d.Base != nil || d.Upstream != nil {
			t.Fatal(raw)
		}
	})
}
