package repo

import (
	"strings"
	"testing"
)

// TestConflictRead checks the reference shape (FLUXGIT_MCP_RESULT_SHAPE=
// reference); TestConflictLean* check the default.
func TestConflictRead(t *testing.T) {
	t.Setenv("FLUXGIT_MCP_RESULT_SHAPE", "reference")
	tests := []struct {
		op       string
		wantOp   string
		theirs   string // subject of theirs
		kinds    map[string]string
		textOurs string
	}{
		{"merge", "merge", "side change", map[string]string{"bin.dat": "both-modified", "gone.txt": "deleted-by-us", "text.txt": "both-modified"}, "one\nMAIN\nthree\n"},
		// A rebase replays main's commit onto side: ours is side (the onto side).
		{"rebase", "rebase", "main change", map[string]string{"bin.dat": "both-modified", "gone.txt": "deleted-by-them", "text.txt": "both-modified"}, "one\nSIDE\nthree\n"},
		{"cherry-pick", "cherry-pick", "side change", map[string]string{"bin.dat": "both-modified", "gone.txt": "deleted-by-us", "text.txt": "both-modified"}, "one\nMAIN\nthree\n"},
	}
	for _, tt := range tests {
		t.Run(tt.op, func(t *testing.T) {
			repo := conflictRepo(t, tt.op)
			var d conflictData
			raw := mustOK(t, "conflict.read", map[string]any{"repoPath": repo}, &d)
			if !d.InConflict || d.Operation == nil || *d.Operation != tt.wantOp || d.ConflictedFileCount != 3 || len(d.Files) != 3 || d.FileListTruncated {
				t.Fatalf("%s", raw)
			}
			if d.Theirs == nil || d.Theirs.Subject != tt.theirs || d.Ours == nil {
				t.Fatalf("theirs %+v", d.Theirs)
			}
			for _, f := range d.Files {
				if f.Kind != tt.kinds[f.Path] {
					t.Fatalf("%s kind %s, want %s", f.Path, f.Kind, tt.kinds[f.Path])
				}
				switch f.Path {
				case "bin.dat":
					if f.Sides.Ours == nil || !f.Sides.Ours.Binary || f.Sides.Ours.Content != nil || *f.Sides.Ours.Size != 6 || f.RegionsSkipped != "binary" {
						t.Fatalf("binary side %+v", f)
					}
				case "text.txt":
					if *f.Sides.Ours.Content != tt.textOurs || *f.Sides.Base.Content != "one\ntwo\nthree\n" {
						t.Fatalf("sides %+v", f.Sides)
					}
					if len(f.Regions) != 1 || f.Regions[0].StartLine != 2 || f.Regions[0].SepLine != 4 || f.Regions[0].EndLine != 6 {
						t.Fatalf("regions %+v", f.Regions)
					}
				case "gone.txt":
					if (f.Sides.Ours == nil) == (f.Sides.Theirs == nil) || f.Sides.Base == nil {
						t.Fatalf("delete/modify sides %+v", f.Sides)
					}
				}
			}
			if tt.op == "rebase" && !strings.Contains(d.Guidance, "onto") {
				t.Fatal(d.Guidance)
			}
		})
	}

	t.Run("caps", func(t *testing.T) {
		repo := conflictRepo(t, "merge")
		var d conflictData
		mustOK(t, "conflict.read", map[string]any{"repoPath": repo, "maxFiles": 1, "maxBytesPerSide": 5}, &d)
		f := d.Files[0]
		if len(d.Files) != 1 || !d.FileListTruncated || d.ConflictedFileCount != 3 || d.MaxBytesPerSide != 5 || f.Path != "bin.dat" {
			t.Fatalf("%+v", d)
		}
		mustOK(t, "conflict.read", map[string]any{"repoPath": repo, "maxFiles": 3, "maxBytesPerSide": 5}, &d)
		s := d.Files[2].Sides.Ours
		if *s.Content != "one\nM" || !*s.Truncated || *s.Size != 15 {
			t.Fatalf("%+v", s)
		}
	})
	t.Run("no conflict", func(t *testing.T) {
		// Only inConflict and hint: the other fields would describe a
		// conflict that does not exist.
		var d map[string]any
		raw := mustOK(t, "conflict.read", map[string]any{"repoPath": newRepo(t)}, &d)
		if len(d) != 2 || d["inConflict"] != false || d["hint"] == "" || d["hint"] == nil {
			t.Fatal(raw)
		}
	})
	t.Run("symlinked work-tree file is not scanned", func(t *testing.T) {
		dir := conflictRepo(t, "merge")
		git(t, dir, "rm", "-q", "--cached", "--force", "--ignore-unmatch", "nothing")
		if regions, _, skipped := scanMarkers(&Repo{dir: dir}, "../etc/passwd"); len(regions) != 0 || skipped == "" {
			t.Fatal(skipped)
		}
	})
}
