package repo

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// TestConcurrentBriefsAllSucceed fires a few hundred repo.brief calls at
// once at a repository with nested submodules (so every call also runs
// the submodule scan and the dirtiness probes). The runner queues git
// processes beyond its bound instead of starving them, so every call must
// succeed with the same answer.
func TestConcurrentBriefsAllSucceed(t *testing.T) {
	f := submoduleRepo(t)
	write(t, f.top, "modA/inner/new.txt", "x\n")
	write(t, f.top, "a.txt", "changed\n")
	want, _ := briefOf(t, f.top)
	const n = 200
	p := New()
	raw, err := json.Marshal(map[string]any{"repoPath": f.top})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]string, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := p.CallTool(t.Context(), &sdk.Call{Tool: "repo.brief", Arguments: raw})
			switch {
			case err != nil:
				errs[i] = err.Error()
			case res.Error != nil:
				errs[i] = res.Error.Message + " " + string(res.Error.Data)
			default:
				var d briefData
				if err := json.Unmarshal(res.Data, &d); err != nil {
					errs[i] = err.Error()
				} else if d.WorkingTree != want.WorkingTree || d.Submodules.Total != want.Submodules.Total {
					errs[i] = "different answer: " + string(res.Data)
				}
			}
		}()
	}
	wg.Wait()
	failed := 0
	for i, e := range errs {
		if e != "" {
			failed++
			if failed <= 5 {
				t.Errorf("call %d: %s", i, e)
			}
		}
	}
	if failed > 0 {
		t.Fatalf("%d of %d concurrent repo.brief calls failed", failed, n)
	}
}
