package repo

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// lines is a test shorthand: "a b" is []string{"a", "b"}.
func lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Fields(s)
}

func TestMerge3(t *testing.T) {
	tests := []struct {
		name         string
		ours, theirs []change
		want         []conflictRegion
	}{
		{"one side only merges cleanly",
			[]change{{a0: 2, b0: 2, a: lines("c"), b: lines("C")}}, nil, nil},
		{"separate changes merge cleanly",
			[]change{{a0: 1, b0: 1, a: lines("b"), b: lines("B")}},
			[]change{{a0: 3, b0: 3, a: lines("d"), b: lines("D")}}, nil},
		{"same change on both sides is no conflict",
			[]change{{a0: 1, b0: 1, a: lines("b"), b: lines("X")}},
			[]change{{a0: 1, b0: 1, a: lines("b"), b: lines("X")}}, nil},
		{"overlap",
			[]change{{a0: 1, b0: 1, a: lines("b"), b: lines("O")}},
			[]change{{a0: 1, b0: 1, a: lines("b"), b: lines("T1 T2")}},
			[]conflictRegion{{ours: lines("O"), theirs: lines("T1 T2"), base: lines("b"), hasBase: true, at: [3]int64{2, 2, 2}}}},
		{"touching changes conflict, base lines filled from the other side",
			// ours rewrites base lines 2-3, theirs line 4 (touching); theirs'
			// clean insertion before line 1 shifts its numbers.
			[]change{{a0: 1, b0: 1, a: lines("b c"), b: lines("B")}},
			[]change{{a0: 0, b0: 0, a: nil, b: lines("new")}, {a0: 3, b0: 4, a: lines("d"), b: lines("D")}},
			[]conflictRegion{{ours: lines("B d"), theirs: lines("b c D"), base: lines("b c d"), hasBase: true, at: [3]int64{2, 2, 3}}}},
		{"deletion against an edit",
			[]change{{a0: 4, b0: 4, a: lines("e f"), b: nil}},
			[]change{{a0: 5, b0: 5, a: lines("f"), b: lines("F")}},
			[]conflictRegion{{ours: nil, theirs: lines("e F"), base: lines("e f"), hasBase: true, at: [3]int64{5, 5, 5}}}},
		{"line numbers shift by the earlier clean changes of each side",
			[]change{{a0: 0, b0: 0, a: nil, b: lines("x y")}, {a0: 9, b0: 11, a: lines("j"), b: lines("J1")}},
			[]change{{a0: 3, b0: 3, a: lines("d"), b: nil}, {a0: 9, b0: 8, a: lines("j"), b: lines("J2")}},
			[]conflictRegion{{ours: lines("J1"), theirs: lines("J2"), base: lines("j"), hasBase: true, at: [3]int64{12, 10, 9}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := merge3(tt.ours, tt.theirs)
			if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", tt.want) {
				t.Fatalf("merge3\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// TestConflictLeanMatchesGit merges random edits of a file with git
// (merge.conflictStyle=diff3, whose blocks are the unsimplified regions)
// and checks that every region computed from the index stages is one of
// git's marker blocks, with the same ours, base and theirs lines and the
// work-tree lines of that block.
func TestConflictLeanMatchesGit(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 2))
	checked := 0
	defer func() { t.Logf("%d conflicted merges compared with git", checked) }()
	for iter := 0; iter < 30; iter++ {
		base := make([]string, 120)
		for i := range base {
			base[i] = fmt.Sprintf("l%d", rng.IntN(40)) // repeats, as real files have
		}
		edit := func(tag string) []string {
			out := append([]string(nil), base...)
			for k := 0; k < 6; k++ {
				i := rng.IntN(len(out))
				switch rng.IntN(3) {
				case 0:
					out[i] = tag + fmt.Sprint(k)
				case 1:
					out = append(out[:i], out[min(len(out), i+1+rng.IntN(3)):]...)
				default:
					out = append(out[:i], append([]string{tag + "+" + fmt.Sprint(k)}, out[i:]...)...)
				}
			}
			return out
		}
		join := func(l []string) string { return strings.Join(l, "\n") + "\n" }
		repo := newRepo(t)
		git(t, repo, "config", "merge.conflictStyle", "diff3")
		write(t, repo, "f.txt", join(base))
		commitAll(t, repo, "base")
		git(t, repo, "checkout", "-q", "-b", "side")
		write(t, repo, "f.txt", join(edit("T")))
		commitAll(t, repo, "theirs")
		git(t, repo, "checkout", "-q", "main")
		write(t, repo, "f.txt", join(edit("O")))
		commitAll(t, repo, "ours")
		gitMayFail(t, repo, "merge", "-q", "side")
		if git(t, repo, "ls-files", "-u") == "" {
			continue // merged cleanly
		}
		// git's blocks, parsed independently of the provider.
		type block struct {
			start, end         int64
			ours, base, theirs []string
		}
		var want []block
		var cur *block
		sect := 0
		for n, l := range strings.Split(strings.TrimSuffix(readFileT(t, repo, "f.txt"), "\n"), "\n") {
			switch {
			case strings.HasPrefix(l, "<<<<<<< "):
				cur, sect = &block{start: int64(n + 1)}, 0
			case strings.HasPrefix(l, "||||||| "):
				sect = 1
			case l == "=======":
				sect = 2
			case strings.HasPrefix(l, ">>>>>>> "):
				cur.end = int64(n + 1)
				want = append(want, *cur)
				cur = nil
			case cur != nil:
				p := [...]*[]string{&cur.ours, &cur.base, &cur.theirs}[sect]
				*p = append(*p, l)
			}
		}
		var d leanConflict
		raw := mustOK(t, "conflict.read", map[string]any{"repoPath": repo}, &d)
		regions := d.Files[0].Regions
		if len(regions) != len(want) || len(d.Files[0].Markers) != 0 {
			t.Fatalf("iteration %d: %d regions, git wrote %d blocks\n%s\n%s", iter, len(regions), len(want), raw, readFileT(t, repo, "f.txt"))
		}
		checked++
		for k, rg := range regions {
			w := want[k]
			if rg.Lines == nil || rg.Lines[0] != w.start || rg.Lines[1] != w.end || rg.Ours != joinLines(w.ours) ||
				rg.Base == nil || *rg.Base != joinLines(w.base) || rg.Theirs != joinLines(w.theirs) {
				t.Fatalf("iteration %d region %d: %+v, git: %+v", iter, k, rg, w)
			}
		}
	}
}

func readFileT(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := (&Repo{dir: dir}).readFile(name, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestConflictLeanWorkTree covers the work-tree side: markers git
// simplified (shared lines moved out), resolved markers, a region git
// split, and the budget.
func TestConflictLeanWorkTree(t *testing.T) {
	t.Run("kinds and operations", func(t *testing.T) {
		for _, op := range []string{"merge", "rebase", "cherry-pick"} {
			repo := conflictRepo(t, op)
			var d leanConflict
			raw := mustOK(t, "conflict.read", map[string]any{"repoPath": repo}, &d)
			if d.Operation != op || len(d.Files) != 3 || d.Ours == "" || d.Theirs == "" {
				t.Fatalf("%s: %s", op, raw)
			}
			for _, f := range d.Files {
				switch f.Path {
				case "bin.dat":
					if !f.Binary || f.Regions != nil {
						t.Fatalf("%s binary: %s", op, raw)
					}
				case "gone.txt":
					if f.Regions != nil || !strings.HasPrefix(f.Kind, "deleted-by-") {
						t.Fatalf("%s delete/modify: %s", op, raw)
					}
				case "text.txt":
					if len(f.Regions) != 1 || *f.Regions[0].Lines != [2]int64{2, 6} || *f.Regions[0].Base != "two\n" ||
						f.Regions[0].Before != "one\n" || f.Regions[0].After != "three\n" || f.Regions[0].At != nil {
						t.Fatalf("%s text: %s", op, raw)
					}
				}
			}
		}
	})
	t.Run("shared lines outside the markers", func(t *testing.T) {
		// Both sides replace b c d; they agree on the first and last new
		// line, so git's markers hold only the middle.
		repo := mergeConflict(t, "a\nb\nc\nd\ne\n", "a\nS\nO\nE\ne\n", "a\nS\nT\nE\ne\n")
		var d leanConflict
		raw := mustOK(t, "conflict.read", map[string]any{"repoPath": repo}, &d)
		rg := d.Files[0].Regions
		// Work tree: a, S, <<<<<<< (3), O, =======, T, >>>>>>> (7), E, e.
		if len(rg) != 1 || *rg[0].Lines != [2]int64{2, 8} || rg[0].Ours != "S\nO\nE\n" || rg[0].Theirs != "S\nT\nE\n" ||
			*rg[0].Base != "b\nc\nd\n" || rg[0].Before != "a\n" || rg[0].After != "e\n" {
			t.Fatalf("%s\n%s", raw, readFileT(t, repo, "f.txt"))
		}
	})
	t.Run("CRLF lines", func(t *testing.T) {
		repo := mergeConflict(t, "a\r\nb\r\nc\r\n", "a\r\nO\r\nc\r\n", "a\r\nT\r\nc\r\n")
		var d leanConflict
		raw := mustOK(t, "conflict.read", map[string]any{"repoPath": repo}, &d)
		if rg := d.Files[0].Regions; len(rg) != 1 || rg[0].Lines == nil || *rg[0].Lines != [2]int64{2, 6} || rg[0].Ours != "O\r\n" {
			t.Fatalf("%s", raw)
		}
	})
	t.Run("in conflict: operation says it, no inConflict", func(t *testing.T) {
		repo := mergeConflict(t, "a\nb\nc\n", "a\nO\nc\n", "a\nT\nc\n")
		for _, args := range []map[string]any{{"repoPath": repo}, {"repoPath": repo, "path": "f.txt", "side": "ours"}} {
			var d map[string]any
			raw := mustOK(t, "conflict.read", args, &d)
			if _, ok := d["inConflict"]; ok || d["operation"] != "merge" {
				t.Fatalf("args %v: %s", args, raw)
			}
		}
	})
	t.Run("both added", func(t *testing.T) {
		repo := newRepo(t)
		git(t, repo, "checkout", "-q", "-b", "side")
		write(t, repo, "new.txt", "same\nT\nsame too\n")
		commitAll(t, repo, "theirs")
		git(t, repo, "checkout", "-q", "main")
		write(t, repo, "new.txt", "same\nO\nsame too\n")
		commitAll(t, repo, "ours")
		gitMayFail(t, repo, "merge", "-q", "side")
		var d leanConflict
		raw := mustOK(t, "conflict.read", map[string]any{"repoPath": repo}, &d)
		f := d.Files[0]
		if f.Kind != "both-added" || len(f.Regions) != 1 || f.Regions[0].Base != nil || f.Regions[0].Ours != "O\n" ||
			f.Regions[0].Theirs != "T\n" || *f.Regions[0].Lines != [2]int64{2, 6} || f.Regions[0].Before != "same\n" {
			t.Fatalf("%s", raw)
		}
	})
	t.Run("resolved in the work tree", func(t *testing.T) {
		repo := mergeConflict(t, "a\nb\nc\n", "a\nO\nc\n", "a\nT\nc\n")
		write(t, repo, "f.txt", "a\nresolved\nc\n")
		var d leanConflict
		raw := mustOK(t, "conflict.read", map[string]any{"repoPath": repo}, &d)
		rg := d.Files[0].Regions
		// No markers: no work-tree lines; context from ours.
		if len(rg) != 1 || rg[0].Lines != nil || *rg[0].At != [3]int64{2, 2, 2} || rg[0].Before != "a\n" || rg[0].After != "c\n" || rg[0].Ours != "O\n" {
			t.Fatalf("%s", raw)
		}
	})
	t.Run("budget", func(t *testing.T) {
		// 300 conflicting lines far apart: more than the region cap.
		var b, o, th strings.Builder
		for i := 0; i < 300; i++ {
			fmt.Fprintf(&b, "x%d\n-\n-\n-\n-\n-\n-\n-\n", i)
			fmt.Fprintf(&o, "O%d\n-\n-\n-\n-\n-\n-\n-\n", i)
			fmt.Fprintf(&th, "T%d\n-\n-\n-\n-\n-\n-\n-\n", i)
		}
		repo := mergeConflict(t, b.String(), o.String(), th.String())
		var d leanConflict
		raw := mustOK(t, "conflict.read", map[string]any{"repoPath": repo}, &d)
		f := d.Files[0]
		if !d.Truncated || len(f.Regions)+f.RegionsOmitted != 300 || len(f.Regions) > leanMaxRegions || f.RegionsOmitted == 0 {
			t.Fatalf("regions %d omitted %d truncated %v", len(f.Regions), f.RegionsOmitted, d.Truncated)
		}
		if len(raw) > leanBudget+64<<10 {
			t.Fatalf("answer of %d bytes", len(raw))
		}
		if last := f.Regions[len(f.Regions)-1]; last.Lines == nil || !strings.HasPrefix(last.Ours, "O") {
			t.Fatalf("last region %+v", last)
		}
	})
}

// mergeConflict commits base, then ours on main and theirs on side, as
// f.txt, and stops a merge on the conflict.
func mergeConflict(t *testing.T, base, ours, theirs string) string {
	t.Helper()
	repo := newRepo(t)
	write(t, repo, "f.txt", base)
	commitAll(t, repo, "base")
	git(t, repo, "checkout", "-q", "-b", "side")
	write(t, repo, "f.txt", theirs)
	commitAll(t, repo, "theirs")
	git(t, repo, "checkout", "-q", "main")
	write(t, repo, "f.txt", ours)
	commitAll(t, repo, "ours")
	gitMayFail(t, repo, "merge", "-q", "side")
	if git(t, repo, "ls-files", "-u") == "" {
		t.Fatal("the merge did not conflict")
	}
	return repo
}
