package fleet

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fluxgit/fluxgit/plugins/sdk"
)

func TestFleetRadar(t *testing.T) {
	referenceShape(t) // asserts the reference shape; lean_fleet_test.go covers the lean one
	conflict := fxDiverged(t, map[string]string{"a.txt": fxLines},
		fxWriter(map[string]string{"a.txt": strings.Replace(fxLines, "two", "THEIRS", 1)}),
		fxWriter(map[string]string{"a.txt": strings.Replace(fxLines, "two", "MINE", 1)}))
	divergent := fxDiverged(t, map[string]string{"a.txt": fxLines},
		fxMv("a.txt", "moved.txt"),
		fxWriter(map[string]string{"a.txt": strings.Replace(fxLines, "nine", "NINE", 1)}))
	origin := newRepo(t)
	behind, _ := fxClone(t, origin)
	git(t, behind, "reset", "-q", "--hard", "HEAD") // in sync
	clean, _ := fxClone(t, newRepo(t))
	dirty := newRepo(t)
	write(t, dirty, "a.txt", "changed\n")
	merging := fxDiverged(t, map[string]string{"a.txt": fxLines},
		fxWriter(map[string]string{"a.txt": strings.Replace(fxLines, "two", "THEIRS", 1)}),
		fxWriter(map[string]string{"a.txt": strings.Replace(fxLines, "two", "MINE", 1)}))
	_ = execGit(merging, "merge", "-q", "origin/main").Run() // stops with a conflict

	before := map[string]map[string]string{}
	for _, r := range []string{conflict, divergent, clean} {
		before[r] = snapshot(t, r)
	}
	var d radarData
	fxOK(t, "fleet.radar", map[string]any{
		"repositories": []map[string]any{{"repoPath": conflict, "repoId": "c1", "label": "conflicting"}},
		"repoPaths":    []string{divergent, clean, dirty, merging, "/nonexistent/repo", conflict},
	}, &d)
	want := []struct{ status string }{{"potential_conflict"}, {"divergent"}, {"clean"}, {"local_changes"}, {"conflict"}, {"unknown"}}
	if len(d.Entries) != len(want) || d.RequestedCount != 7 || d.ScannedCount != 6 {
		t.Fatalf("entries %d requested %d scanned %d", len(d.Entries), d.RequestedCount, d.ScannedCount)
	}
	for i, w := range want {
		if d.Entries[i].Status != w.status {
			t.Errorf("entry %d (%s): status %s, want %s (err %q)", i, d.Entries[i].RepoPath, d.Entries[i].Status, w.status, d.Entries[i].Error)
		}
	}
	e := d.Entries[0]
	if *e.RepoID != "c1" || e.Label != "conflicting" || fmt.Sprint(e.PotentialConflictPaths) != "[a.txt]" || *e.PotentialConflictTarget != "origin/main" || e.Ahead != 1 || e.Behind != 1 {
		t.Errorf("conflict entry %+v", e)
	}
	if d.Entries[4].ConflictOperation == nil || *d.Entries[4].ConflictOperation != "merge" {
		t.Errorf("merging entry %+v", d.Entries[4])
	}
	if d.Entries[3].Dirty != true || d.DirtyCount < 1 || d.FailedCount != 1 || d.ConflictCount != 1 {
		t.Errorf("counts %+v", d)
	}
	if len(d.AttentionStack) != 5 || d.AttentionStack[0].Status != "conflict" || d.AttentionStack[1].Status != "potential_conflict" {
		t.Errorf("attention %+v", d.AttentionStack)
	}
	for r, snap := range before {
		if diff := diffSnapshots(snap, snapshot(t, r)); len(diff) > 0 {
			t.Fatalf("%s modified:\n%s", r, strings.Join(diff, "\n"))
		}
	}
	var lim radarData
	fxOK(t, "fleet.radar", map[string]any{"repoPaths": []string{clean, dirty}, "maxRepos": 1}, &lim)
	if len(lim.Entries) != 1 || lim.TruncatedCount != 1 || !lim.Truncated {
		t.Fatalf("%+v", lim)
	}
}

func BenchmarkFleetRadar20(b *testing.B) {
	var paths []string
	for i := 0; i < 20; i++ {
		dir := b.TempDir()
		for _, args := range [][]string{{"init", "-q", "-b", "main"}} {
			if err := execGit(dir, args...).Run(); err != nil {
				b.Fatal(err)
			}
		}
		_ = os.WriteFile(filepath.Join(dir, "a.txt"), []byte(fxLines), 0o644)
		for _, args := range [][]string{{"add", "-A"}, {"commit", "-q", "-m", "c"}} {
			if err := execGit(dir, args...).Run(); err != nil {
				b.Fatal(err)
			}
		}
		if i%2 == 0 {
			_ = os.WriteFile(filepath.Join(dir, "b.txt"), []byte("x\n"), 0o644)
		}
		paths = append(paths, dir)
	}
	raw, _ := json.Marshal(map[string]any{"repoPaths": paths})
	p := New()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := p.CallTool(b.Context(), &sdk.Call{Tool: "fleet.radar", Arguments: raw})
		if err != nil || res.Error != nil {
			b.Fatal(err, res)
		}
	}
}
