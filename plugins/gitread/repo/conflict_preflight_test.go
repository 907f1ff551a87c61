package repo

import (
	"fmt"
	"strings"
	"testing"
)

func TestConflictPreflight(t *testing.T) {
	conflict := fxDiverged(t, map[string]string{"a.txt": fxLines},
		fxWriter(map[string]string{"a.txt": strings.Replace(fxLines, "two", "THEIRS", 1)}),
		fxWriter(map[string]string{"a.txt": strings.Replace(fxLines, "two", "MINE", 1)}))
	clean := fxDiverged(t, map[string]string{"a.txt": fxLines, "b.txt": "b\n"},
		fxWriter(map[string]string{"b.txt": "b2\n"}),
		fxWriter(map[string]string{"a.txt": fxLines + "eleven\n"}))
	// Renamed on their side, modified on ours: merge-tree follows the rename.
	renameClean := fxDiverged(t, map[string]string{"a.txt": fxLines},
		fxMv("a.txt", "moved.txt"),
		fxWriter(map[string]string{"a.txt": strings.Replace(fxLines, "nine", "NINE", 1)}))
	renameConflict := fxDiverged(t, map[string]string{"a.txt": fxLines},
		func(d string) {
			fxMv("a.txt", "moved.txt")(d)
			fxWriter(map[string]string{"moved.txt": strings.Replace(fxLines, "two", "THEIRS", 1)})(d)
		},
		fxWriter(map[string]string{"a.txt": strings.Replace(fxLines, "two", "MINE", 1)}))
	unrelated := newRepo(t)
	git(t, unrelated, "checkout", "-q", "--orphan", "other")
	write(t, unrelated, "z.txt", "z\n")
	commitAll(t, unrelated, "orphan")
	git(t, unrelated, "checkout", "-q", "main")

	tests := []struct {
		name, repo, current, target, status string
		paths                               []string
	}{
		{"conflicts", conflict, "", "origin/main", "conflicts", []string{"a.txt"}},
		{"clean merge", clean, "HEAD", "origin/main", "clean-merge", nil},
		{"rename followed", renameClean, "", "origin/main", "clean-merge", nil},
		{"rename conflict", renameConflict, "", "origin/main", "conflicts", []string{"moved.txt"}},
		{"fast-forward", conflict, "HEAD~1", "origin/main", "fast-forward", nil},
		{"up to date", conflict, "HEAD", "HEAD~1", "already-up-to-date", nil},
		{"unrelated", unrelated, "main", "other", "unrelated-histories", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := snapshot(t, tt.repo)
			args := map[string]any{"repoPath": tt.repo, "targetRef": tt.target}
			if tt.current != "" {
				args["currentRef"] = tt.current
			}
			var d preflightData
			fxOK(t, "repo.conflictPreflight", args, &d)
			if d.Status != tt.status {
				t.Fatalf("status %s, want %s (%+v)", d.Status, tt.status, d)
			}
			if tt.paths == nil {
				tt.paths = []string{}
			}
			if fmt.Sprint(d.ConflictingPaths) != fmt.Sprint(tt.paths) || d.ConflictCount != len(tt.paths) {
				t.Fatalf("paths %v (%d), want %v", d.ConflictingPaths, d.ConflictCount, tt.paths)
			}
			if (d.MergeBaseOID == nil) != (tt.status == "unrelated-histories") || !isOID(d.CurrentOID) || !isOID(d.TargetOID) {
				t.Fatalf("oids %+v", d)
			}
			if diff := diffSnapshots(before, snapshot(t, tt.repo)); len(diff) > 0 {
				t.Fatalf("repository modified:\n%s", strings.Join(diff, "\n"))
			}
		})
	}
	t.Run("maxPaths", func(t *testing.T) {
		var d preflightData
		fxOK(t, "repo.conflictPreflight", map[string]any{"repoPath": conflict, "targetRef": "origin/main", "maxPaths": 1}, &d)
		if d.Truncated || len(d.ConflictingPaths) != 1 {
			t.Fatalf("%+v", d)
		}
	})
}
