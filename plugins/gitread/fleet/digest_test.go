package fleet

import (
	"path/filepath"
	"testing"
)

func TestFleetDigest(t *testing.T) {
	referenceShape(t) // asserts the reference shape; lean_fleet_test.go covers the lean one
	repo := newRepo(t)
	write(t, repo, "b.txt", "b\n")
	commitAll(t, repo, "second")
	git(t, repo, "commit", "-q", "--amend", "-m", "second, amended")
	git(t, repo, "reset", "-q", "--hard", "HEAD~1")
	fxNoGateway(t)

	var d digestData
	fxOK(t, "fleet.digest", map[string]any{"repoPaths": []string{repo}, "sinceMs": 0}, &d)
	kinds := map[string]bool{}
	for _, e := range d.Events {
		kinds[e.Kind] = true
		if e.Kind == "amend" && !e.Rewrote || e.Kind == "commit" && e.Rewrote {
			t.Errorf("rewrote wrong: %+v", e)
		}
		if e.Kind == "reset" && !e.Rewrote {
			t.Errorf("reset to an ancestor rewrites: %+v", e)
		}
		if e.Identity != "Cy Committer <cy@example.com>" || e.AtMs != authorTime*1000 {
			t.Errorf("%+v", e)
		}
	}
	for _, k := range []string{"commit", "amend", "reset"} {
		if !kinds[k] {
			t.Errorf("missing %s in %v", k, kinds)
		}
	}
	// Branch entries and the same moves on HEAD are collapsed.
	if d.EventCount != 4 || d.RepoSource != "arguments" || d.Repos[0].Error != nil {
		t.Fatalf("%d events %+v", d.EventCount, d)
	}
	fxOK(t, "fleet.digest", map[string]any{"repoPaths": []string{repo}, "sinceMs": authorTime*1000 + 1}, &d)
	if d.EventCount != 0 {
		t.Fatalf("since filter: %+v", d.Events)
	}
	fxOK(t, "fleet.digest", map[string]any{"repoPaths": []string{repo}, "sinceMs": 0, "maxEvents": 2}, &d)
	if d.EventCount != 2 || !d.Truncated {
		t.Fatalf("maxEvents: %+v", d)
	}

	t.Run("registry", func(t *testing.T) {
		root := tempDir(t)
		inside := filepath.Join(root, "in")
		git(t, root, "init", "-q", "-b", "main", inside)
		write(t, inside, "x.txt", "x\n")
		commitAll(t, inside, "x")
		runDir := tempDir(t)
		t.Setenv("FLUXGIT_RUN_DIR", runDir)
		write(t, runDir, "repos/in.path", inside+"\n")
		write(t, runDir, "repos/out.path", repo)
		write(t, runDir, "repos/gone.path", "/does/not/exist")
		write(t, runDir, "repos/rel.path", "relative/path")
		var rd digestData
		fxOK(t, "fleet.digest", map[string]any{"sinceMs": 0}, &rd, root)
		if rd.RepoSource != "fluxgit-registry" || rd.ExcludedOutsideAllowedRoots != 1 || len(rd.Repos) != 1 || rd.Repos[0].RepoPath != inside || rd.EventCount != 1 {
			t.Fatalf("%+v", rd)
		}
		fxOK(t, "fleet.digest", map[string]any{"sinceMs": 0}, &rd)
		if len(rd.Repos) != 2 || rd.ExcludedOutsideAllowedRoots != 0 {
			t.Fatalf("unconfined: %+v", rd)
		}
		empty := tempDir(t)
		t.Setenv("FLUXGIT_RUN_DIR", empty)
		mustArgError(t, "fleet.digest", map[string]any{"sinceMs": 0}, "registry")
	})
}
