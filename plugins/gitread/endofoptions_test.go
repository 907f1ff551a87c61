package gitread

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fluxgit/fluxgit/internal/gitexec"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// TestCallerValuesFollowEndOfOptions: every value a caller supplies that
// reaches git's command line (revisions, ref names, paths) comes after
// `--end-of-options` (revisions, refs) or `--` (paths), so no value can be
// read as an option whatever it looks like. Every tool that takes such an
// argument is called with recognisable values, and every argv the runner
// sees is checked. It fails if a call site passes one without the guard.
func TestCallerValuesFollowEndOfOptions(t *testing.T) {
	const rev, dir = "userrev-x", "userpath-x"
	repo := newRepo(t)
	write(t, repo, dir+"/f.txt", "x\n")
	commitAll(t, repo, "second")
	git(t, repo, "branch", rev)
	write(t, repo, dir+"/f.txt", "changed\n")

	var mu sync.Mutex
	var argvs [][]string
	p := withRunner(&gitexec.Runner{Observe: func(_ string, args []string) {
		mu.Lock()
		argvs = append(argvs, args)
		mu.Unlock()
	}})
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"commit.details", map[string]any{"commit": rev}},
		{"diff.text", map[string]any{"base": rev, "head": rev, "path": dir}},
		{"diff.text", map[string]any{"base": rev, "path": dir + "/f.txt"}},
		{"diff.text", map[string]any{"base": rev, "staged": true, "mode": "stat", "paths": []string{dir, dir + "/f.txt"}}},
		{"diff.text", map[string]any{"base": rev, "head": rev, "mode": "nameStatus", "renameSimilarity": 60, "exactTotals": false, "paths": []string{dir}}},
		{"diff.semantic", map[string]any{"base": rev, "head": rev, "path": dir}},
		{"repo.conflictPreflight", map[string]any{"currentRef": rev, "targetRef": rev}},
		{"repo.reflog", map[string]any{"refName": rev}},
		{"repo.scope", map[string]any{"path": dir}},
		{"submodule.status", map[string]any{"path": dir}},
		{"repo.branchStack", map[string]any{"baseCandidates": []string{rev}}},
	}
	for _, c := range calls {
		c.args["repoPath"] = repo
		raw, err := json.Marshal(c.args)
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		argvs = nil
		mu.Unlock()
		res, err := p.CallTool(context.Background(), &sdk.Call{Tool: c.tool, Arguments: raw})
		if err != nil || res.Error != nil {
			t.Fatalf("%s: %v %+v", c.tool, err, res)
		}
		mu.Lock()
		reached := false
		for _, argv := range argvs {
			guard := len(argv)
			for _, g := range []string{"--end-of-options", "--"} {
				if i := slices.Index(argv, g); i >= 0 && i < guard {
					guard = i
				}
			}
			for i, a := range argv {
				if strings.Contains(a, rev) || strings.Contains(a, dir) {
					reached = true
					if i < guard {
						t.Errorf("%s: caller value %q passed before --end-of-options / --: %q", c.tool, a, argv)
					}
				}
			}
		}
		mu.Unlock()
		// These match caller values against git's output, or (diff.semantic
		// locally) only echo them; the others must pass them to git.
		local := map[string]bool{"repo.branchStack": true, "submodule.status": true, "diff.semantic": true}
		if !reached && !local[c.tool] {
			t.Errorf("%s: no caller value reached git; the check proves nothing for it", c.tool)
		}
	}
}
