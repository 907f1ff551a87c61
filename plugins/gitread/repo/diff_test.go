package repo

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// diffFixture is a repository with known answers for diff.text:
//
//	one:   keep.txt (1..100), old.txt, mid.txt (10 lines), bin.dat
//	       (binary), gone.txt, caf\xe9.txt (a non-UTF-8 name)
//	two:   old.txt renamed to new.txt unchanged; mid.txt renamed to
//	       mid2.txt with 3 of 10 lines changed (70% similar); bin.dat
//	       changed; gone.txt deleted; keep.txt line 50 -> fifty;
//	       caf\xe9.txt changed
//	three: gone.txt added again
//
// and, uncommitted, keep.txt line 10 -> ten staged and line 90 -> ninety
// in the work tree only.
func diffFixture(t *testing.T) string {
	t.Helper()
	repo := emptyRepo(t)
	seq := func(prefix string, from, to int) string {
		var b strings.Builder
		for i := from; i <= to; i++ {
			b.WriteString(prefix + strconv.Itoa(i) + "\n")
		}
		return b.String()
	}
	keep := seq("", 1, 100)
	write(t, repo, "keep.txt", keep)
	write(t, repo, "old.txt", seq("old line ", 1, 50))
	write(t, repo, "mid.txt", seq("mid line ", 0, 9))
	write(t, repo, "bin.dat", "\x00\x01bin")
	write(t, repo, "gone.txt", "x\n")
	write(t, repo, "caf\xe9.txt", "caf\xe9\n")
	commitAll(t, repo, "one")

	git(t, repo, "mv", "old.txt", "new.txt")
	git(t, repo, "mv", "mid.txt", "mid2.txt")
	write(t, repo, "mid2.txt", "changed\nchanged\nchanged\n"+seq("mid line ", 3, 9))
	write(t, repo, "bin.dat", "\x00\x02bin")
	git(t, repo, "rm", "-q", "gone.txt")
	keep = strings.Replace(keep, "\n50\n", "\nfifty\n", 1)
	write(t, repo, "keep.txt", keep)
	write(t, repo, "caf\xe9.txt", "caf\xe9 2\n")
	commitAll(t, repo, "two")

	write(t, repo, "gone.txt", "x2\n")
	commitAll(t, repo, "three")

	keep = strings.Replace(keep, "\n10\n", "\nten\n", 1)
	write(t, repo, "keep.txt", keep)
	git(t, repo, "add", "keep.txt")
	write(t, repo, "keep.txt", strings.Replace(keep, "\n90\n", "\nninety\n", 1))
	return repo
}

// TestDiffTextKnownAnswers drives every new argument of diff.text against
// diffFixture and compares with answers worked out by hand.
func TestDiffTextKnownAnswers(t *testing.T) {
	referenceShape(t) // the reference shape; the lean one: lean_shapes_test.go
	repo := diffFixture(t)
	r01 := map[string]any{"base": "HEAD~2", "head": "HEAD~1"}
	with := func(m map[string]any, kv ...any) map[string]any {
		out := map[string]any{}
		for k, v := range m {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i].(string)] = kv[i+1]
		}
		return out
	}
	tests := []struct {
		name     string
		args     map[string]any
		want     string   // whole diff, when set
		contains []string // otherwise these lines
		absent   []string
		mode     string
		staged   bool
		paths    []string
	}{
		{name: "nameStatus: rename, binary, deletion, non-UTF-8 path (quoted)", args: with(r01, "mode", "nameStatus"),
			want: "M\tbin.dat\nM\t\"caf\\351.txt\"\nD\tgone.txt\nM\tkeep.txt\nR070\tmid.txt\tmid2.txt\nR100\told.txt\tnew.txt\n", mode: "nameStatus"},
		{name: "nameStatus without rename detection", args: with(r01, "mode", "nameStatus", "findRenames", false),
			want: "M\tbin.dat\nM\t\"caf\\351.txt\"\nD\tgone.txt\nM\tkeep.txt\nD\tmid.txt\nA\tmid2.txt\nA\tnew.txt\nD\told.txt\n", mode: "nameStatus"},
		{name: "similarity above the 70% rename", args: with(r01, "mode", "nameStatus", "renameSimilarity", 90),
			want: "M\tbin.dat\nM\t\"caf\\351.txt\"\nD\tgone.txt\nM\tkeep.txt\nD\tmid.txt\nA\tmid2.txt\nR100\told.txt\tnew.txt\n", mode: "nameStatus"},
		{name: "similarity below the 70% rename", args: with(r01, "mode", "nameStatus", "findRenames", true, "renameSimilarity", 60),
			want: "M\tbin.dat\nM\t\"caf\\351.txt\"\nD\tgone.txt\nM\tkeep.txt\nR070\tmid.txt\tmid2.txt\nR100\told.txt\tnew.txt\n", mode: "nameStatus"},
		{name: "re-added file", args: map[string]any{"base": "HEAD~1", "head": "HEAD", "mode": "nameStatus"},
			want: "A\tgone.txt\n", mode: "nameStatus"},
		{name: "deleted and re-added across both commits is a modification", args: map[string]any{"base": "HEAD~2", "head": "HEAD", "mode": "nameStatus", "paths": []string{"gone.txt"}},
			want: "M\tgone.txt\n", mode: "nameStatus", paths: []string{"gone.txt"}},
		{name: "stat: counts, binary as -, summary line", args: with(r01, "mode", "stat"),
			want: "-\t-\tbin.dat\n1\t1\t\"caf\\351.txt\"\n0\t1\tgone.txt\n1\t1\tkeep.txt\n3\t3\tmid.txt => mid2.txt\n0\t0\told.txt => new.txt\n" +
				" 6 files changed, 5 insertions(+), 6 deletions(-)\n", mode: "stat"},
		{name: "patch: binary and rename headers", args: r01, mode: "patch",
			contains: []string{"Binary files a/bin.dat and b/bin.dat differ\n", "diff --git \"a/caf\\351.txt\" \"b/caf\\351.txt\"\n",
				"similarity index 70%\nrename from mid.txt\nrename to mid2.txt\n", "similarity index 100%\nrename from old.txt\nrename to new.txt\n",
				"deleted file mode 100644\n"}},
		{name: "contextLines 0", args: with(r01, "paths", []string{"keep.txt"}, "contextLines", 0), mode: "patch", paths: []string{"keep.txt"},
			contains: []string{"@@ -50 +50 @@\n-50\n+fifty\n"}, absent: []string{" 49\n"}},
		{name: "contextLines 1", args: with(r01, "paths", []string{"keep.txt"}, "contextLines", 1), mode: "patch", paths: []string{"keep.txt"},
			contains: []string{"@@ -49,3 +49,3 @@\n 49\n-50\n+fifty\n 51\n"}, absent: []string{" 48\n"}},
		{name: "paths are literal and each filters on its own (no rename partner)", args: with(r01, "mode", "nameStatus", "paths", []string{"new.txt", "keep.txt"}),
			want: "M\tkeep.txt\nA\tnew.txt\n", mode: "nameStatus", paths: []string{"new.txt", "keep.txt"}},
		{name: "path and paths are a union", args: with(r01, "mode", "nameStatus", "path", "gone.txt", "paths", []string{"keep.txt"}),
			want: "D\tgone.txt\nM\tkeep.txt\n", mode: "nameStatus", paths: []string{"keep.txt"}},
		{name: "a path naming the repository lifts the filter", args: with(r01, "mode", "nameStatus", "findRenames", false, "paths", []string{"keep.txt", "."}),
			want: "M\tbin.dat\nM\t\"caf\\351.txt\"\nD\tgone.txt\nM\tkeep.txt\nD\tmid.txt\nA\tmid2.txt\nA\tnew.txt\nD\told.txt\n", mode: "nameStatus", paths: []string{"keep.txt", "."}},
		{name: "staged: index against HEAD", args: map[string]any{"staged": true}, mode: "patch", staged: true,
			contains: []string{"-10\n+ten\n"}, absent: []string{"ninety"}},
		{name: "staged nameStatus", args: map[string]any{"staged": true, "mode": "nameStatus"}, want: "M\tkeep.txt\n", mode: "nameStatus", staged: true},
		{name: "staged against base", args: map[string]any{"staged": true, "base": "HEAD~1", "mode": "nameStatus"}, want: "A\tgone.txt\nM\tkeep.txt\n", mode: "nameStatus", staged: true},
		{name: "empty paths: no filter", args: map[string]any{"paths": []string{}, "staged": true, "mode": "nameStatus"}, want: "M\tkeep.txt\n", mode: "nameStatus", staged: true, paths: []string{}},
		{name: "unstaged (default): work tree against the index", args: nil, mode: "patch",
			contains: []string{"-90\n+ninety\n"}, absent: []string{"+ten"}},
		{name: "work tree against HEAD: staged and unstaged", args: map[string]any{"base": "HEAD"}, mode: "patch",
			contains: []string{"-10\n+ten\n", "-90\n+ninety\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := with(tt.args, "repoPath", repo)
			var d diffData
			raw := mustOK(t, "diff.text", args, &d)
			if tt.want != "" && d.Diff != tt.want {
				t.Fatalf("diff\n got %q\nwant %q", d.Diff, tt.want)
			}
			for _, c := range tt.contains {
				if !strings.Contains(d.Diff, c) {
					t.Errorf("diff lacks %q:\n%s", c, d.Diff)
				}
			}
			for _, c := range tt.absent {
				if strings.Contains(d.Diff, c) {
					t.Errorf("diff has %q:\n%s", c, d.Diff)
				}
			}
			if d.Mode != tt.mode || d.Staged != tt.staged || d.Format != "text" || !d.TotalsExact || d.Truncated {
				t.Fatalf("mode=%q staged=%v format=%q exact=%v truncated=%v", d.Mode, d.Staged, d.Format, d.TotalsExact, d.Truncated)
			}
			// The JSON text shows a byte that is not UTF-8 (caf\xe9's
			// content) as U+FFFD, three bytes; totals count git's bytes.
			shown := int64(len(d.Diff) - 2*strings.Count(d.Diff, "\uFFFD"))
			if d.TotalBytes != shown || d.TotalLines != int64(strings.Count(d.Diff, "\n")) {
				t.Fatalf("totals %d/%d for %d bytes", d.TotalBytes, d.TotalLines, len(d.Diff))
			}
			if strings.Join(d.Paths, "|") != strings.Join(tt.paths, "|") || (tt.paths == nil) != strings.Contains(raw, `"paths":null`) {
				t.Fatalf("paths echoed as %q (%s)", d.Paths, raw)
			}
		})
	}
}

// TestDiffTextExactTotalsFalse: by default (exactTotals false) the text is
// the same prefix an exactTotals call returns; the totals are exact when the
// diff fits and lower bounds, flagged, when git was stopped at the budget.
func TestDiffTextExactTotalsFalse(t *testing.T) {
	referenceShape(t) // the reference shape; the lean one: lean_shapes_test.go
	repo := diffFixture(t)
	var lines []string
	for i := range 3000 {
		lines = append(lines, "generated line "+strconv.Itoa(i))
	}
	write(t, repo, "big.txt", strings.Join(lines, "\n")+"\n")
	commitAll(t, repo, "big")
	tests := []struct {
		name    string
		args    map[string]any
		stopped bool
	}{
		{"fits the budget", map[string]any{"base": "HEAD~2", "head": "HEAD~1", "mode": "nameStatus"}, false},
		{"byte budget", map[string]any{"base": "HEAD~1", "head": "HEAD", "maxBytes": 300}, true},
		{"line budget", map[string]any{"base": "HEAD~1", "head": "HEAD", "maxLines": 7}, true},
		{"both budgets", map[string]any{"base": "HEAD~1", "head": "HEAD", "maxLines": 50, "maxBytes": 200}, true},
		{"byte budget cutting inside a line", map[string]any{"base": "HEAD~1", "head": "HEAD", "maxBytes": 20}, true},
		{"stat over budget", map[string]any{"base": "HEAD~3", "head": "HEAD", "mode": "stat", "maxBytes": 30}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := map[string]any{"repoPath": repo}
			for k, v := range tt.args {
				args[k] = v
			}
			var exact, fast diffData
			mustOK(t, "diff.text", args, &fast)
			args["exactTotals"] = true
			mustOK(t, "diff.text", args, &exact)
			if fast.Diff != exact.Diff || fast.Truncated != exact.Truncated {
				t.Fatalf("text differs from the exact-totals call:\n%q (truncated %v)\n%q (truncated %v)", fast.Diff, fast.Truncated, exact.Diff, exact.Truncated)
			}
			if !exact.TotalsExact || fast.TotalsExact == tt.stopped {
				t.Fatalf("totalsExact exact=%v fast=%v, stopped %v", exact.TotalsExact, fast.TotalsExact, tt.stopped)
			}
			if tt.stopped {
				if !fast.Truncated || fast.TotalBytes > exact.TotalBytes || fast.TotalBytes < int64(len(fast.Diff)) || fast.TotalLines > exact.TotalLines {
					t.Fatalf("lower bounds %d/%d vs exact %d/%d, shown %d", fast.TotalBytes, fast.TotalLines, exact.TotalBytes, exact.TotalLines, len(fast.Diff))
				}
			} else if fast.TotalBytes != exact.TotalBytes || fast.TotalLines != exact.TotalLines {
				t.Fatalf("totals %d/%d, want exact %d/%d", fast.TotalBytes, fast.TotalLines, exact.TotalBytes, exact.TotalLines)
			}
		})
	}
}

// TestDiffTextArgumentRefusals: bad values of the new arguments are refused
// with a message naming the argument and the fix, before git runs; values
// shaped like git options in paths stay literal paths and write nothing.
func TestDiffTextArgumentRefusals(t *testing.T) {
	repo := diffFixture(t)
	many := make([]string, maxDiffPaths+1)
	for i := range many {
		many[i] = "f" + strconv.Itoa(i)
	}
	refusals := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"mode": "full"}, `arguments.mode "full" is not supported`},
		{map[string]any{"mode": "stat", "contextLines": 3}, `arguments.contextLines applies to mode "patch" only`},
		{map[string]any{"contextLines": -1}, "arguments.contextLines must be between 0 and 1000"},
		{map[string]any{"contextLines": 1001}, "arguments.contextLines must be between 0 and 1000"},
		{map[string]any{"contextLines": 2.5}, "arguments.contextLines must be an integer"},
		{map[string]any{"renameSimilarity": 0}, "arguments.renameSimilarity must be between 1 and 100"},
		{map[string]any{"renameSimilarity": 101}, "arguments.renameSimilarity must be between 1 and 100"},
		{map[string]any{"renameSimilarity": 50, "findRenames": false}, "arguments.renameSimilarity needs rename detection"},
		{map[string]any{"staged": true, "head": "HEAD"}, "arguments.staged compares the index with base"},
		{map[string]any{"paths": many}, "arguments.paths has 101 items; at most 100"},
		{map[string]any{"paths": []string{"keep.txt", ""}}, "arguments.paths[1] is empty"},
		{map[string]any{"paths": []string{"keep.txt", "../outside"}}, "arguments.paths[1] must be repository-relative without '..'"},
		{map[string]any{"paths": []string{"/etc/passwd"}}, "arguments.paths[0] must be repository-relative without '..'"},
		{map[string]any{"paths": []string{filepath.Join(repo, "..", "x")}}, "arguments.paths[0] must be repository-relative without '..'"},
		{map[string]any{"base": "--output=pwned", "mode": "stat"}, "arguments.base must not start with '-'"},
		{map[string]any{"base": "-c", "staged": true}, "arguments.base must not start with '-'"},
	}
	for _, r := range refusals {
		t.Run("refuse "+r.want, func(t *testing.T) {
			args := map[string]any{"repoPath": repo}
			for k, v := range r.args {
				args[k] = v
			}
			mustArgError(t, "diff.text", args, r.want)
		})
	}

	work := tempDir(t)
	cwd, _ := os.Getwd()
	before := snapshot(t, repo)
	for _, evil := range []string{
		"--output=" + filepath.Join(work, "pwned"),
		"--output=pwned",
		"-c core.pager=touch " + filepath.Join(work, "pwned-pager"),
		"-ccore.pager=touch pwned",
		"--upload-pack=touch " + filepath.Join(work, "pwned-upload"),
		"--ext-diff",
	} {
		for _, mode := range []string{"patch", "stat", "nameStatus"} {
			t.Run("literal path "+mode+" "+evil, func(t *testing.T) {
				var d diffData
				mustOK(t, "diff.text", map[string]any{"repoPath": repo, "base": "HEAD~2", "mode": mode, "paths": []string{evil}, "path": evil}, &d)
				if d.Diff != "" || d.Truncated {
					t.Fatalf("an option-shaped path matched something: %q", d.Diff)
				}
			})
		}
	}
	assertNoPwned(t, repo, work, cwd)
	if d := diffSnapshots(before, snapshot(t, repo)); len(d) > 0 {
		t.Fatalf("diff.text changed the repository: %v", d)
	}
}
