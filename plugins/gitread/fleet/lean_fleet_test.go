package fleet

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

func TestLeanFleetRadar(t *testing.T) {
	conflict := fxDiverged(t, map[string]string{"a.txt": fxLines},
		fxWriter(map[string]string{"a.txt": strings.Replace(fxLines, "two", "THEIRS", 1)}),
		fxWriter(map[string]string{"a.txt": strings.Replace(fxLines, "two", "MINE", 1)}))
	divergent := fxDiverged(t, map[string]string{"a.txt": fxLines},
		fxMv("a.txt", "moved.txt"),
		fxWriter(map[string]string{"a.txt": strings.Replace(fxLines, "nine", "NINE", 1)}))
	clean, _ := fxClone(t, newRepo(t))
	clean2, _ := fxClone(t, newRepo(t))
	dirty := newRepo(t)
	write(t, dirty, "a.txt", "changed\n")
	write(t, dirty, "new.txt", "new\n")
	merging := fxDiverged(t, map[string]string{"a.txt": fxLines},
		fxWriter(map[string]string{"a.txt": strings.Replace(fxLines, "two", "THEIRS", 1)}),
		fxWriter(map[string]string{"a.txt": strings.Replace(fxLines, "two", "MINE", 1)}))
	_ = execGit(merging, "merge", "-q", "origin/main").Run() // stops with a conflict
	paths := []string{clean, conflict, divergent, dirty, merging, clean2}

	var ref radarData
	var l leanRadarData
	fxBoth(t, "fleet.radar", map[string]any{"repoPaths": paths}, &ref, &l)
	if len(ref.Entries) != len(paths) || ref.Guidance == "" {
		t.Fatalf("reference payload changed: %+v", ref)
	}
	name := func(p string) string {
		r, err := filepath.Rel(l.Root, p)
		if err != nil || strings.HasPrefix(r, "..") {
			t.Fatalf("%s is not under root %s", p, l.Root)
		}
		return filepath.ToSlash(r)
	}
	// The facts of each repository needing attention, in urgency order.
	cases := []struct {
		repo string
		row  string
	}{
		{merging, "conflict: main...origin/main [ahead 1, behind 1], 1 changed, merge in progress, 1 would conflict"},
		{conflict, "potential_conflict: main...origin/main [ahead 1, behind 1], 1 would conflict"},
		{divergent, "divergent: main...origin/main [ahead 1, behind 1]"},
		{dirty, "local_changes: main, 2 changed"},
	}
	if len(l.Repos) != len(cases) {
		t.Fatalf("lean repos %v, want %d rows", l.Repos, len(cases))
	}
	for i, c := range cases {
		if want := name(c.repo) + " " + c.row; l.Repos[i] != want {
			t.Errorf("row %d: got %q, want %q", i, l.Repos[i], want)
		}
	}
	if got := fmt.Sprint(l.Predicted[name(conflict)]); got != "[a.txt]" {
		t.Errorf("predicted conflicts %v", l.Predicted)
	}
	if l.Clean != 2 || l.Truncated != 0 {
		t.Errorf("clean %d truncated %d, want 2 and 0", l.Clean, l.Truncated)
	}

	t.Run("maxRepos and a failure", func(t *testing.T) {
		var ref radarData
		var l leanRadarData
		fxBoth(t, "fleet.radar", map[string]any{"repoPaths": []string{clean, "/nonexistent/repo", dirty}, "maxRepos": 2}, &ref, &l)
		if ref.TruncatedCount != 1 || l.Truncated != 1 || l.Clean != 1 || len(l.Repos) != 1 {
			t.Fatalf("%+v", l)
		}
		if s, _ := l.Repos[0].(string); !strings.HasPrefix(s, "nonexistent/repo unknown: ") {
			t.Fatalf("failed repository row %q", l.Repos[0])
		}
	})
}

func TestLeanFleetDigest(t *testing.T) {
	fxNoGateway(t)
	repo := newRepo(t)
	first := git(t, repo, "rev-parse", "HEAD")
	write(t, repo, "b.txt", "b\n")
	second := commitAll(t, repo, "second")
	git(t, repo, "commit", "-q", "--amend", "-m", "second, amended")
	amended := git(t, repo, "rev-parse", "HEAD")
	git(t, repo, "reset", "-q", "--hard", "HEAD~1")
	other := newRepo(t)

	var ref digestData
	var l leanDigestData
	fxBoth(t, "fleet.digest", map[string]any{"repoPaths": []string{repo, other}, "sinceMs": 0}, &ref, &l)
	if ref.EventCount == 0 || ref.Guidance == "" {
		t.Fatalf("reference payload changed: %+v", ref)
	}
	if l.Identity != "Cy Committer <cy@example.com>" || l.Truncated || l.Errors != nil {
		t.Fatalf("lean digest %+v", l)
	}
	rel, _ := filepath.Rel(l.Root, repo)
	rows := l.Events[filepath.ToSlash(rel)]
	at := "2023-11-14T22:13:20Z "
	s := func(rev string) string { return shortID(t, repo, rev) }
	// Newest first; moves at the same second keep their reflog order.
	wants := []string{
		at + "main " + s(amended) + ".." + s(first) + " (rewrote) reset: moving to HEAD~1",
		at + "main " + s(second) + ".." + s(amended) + " (rewrote) commit (amend): second, amended",
		at + "main " + s(first) + ".." + s(second) + " commit: second",
	}
	for _, w := range wants {
		found := false
		for _, r := range rows {
			found = found || r == w
		}
		if !found {
			t.Errorf("missing row %q in %q", w, rows)
		}
	}
	if len(rows) != ref.Repos[0].EventCount {
		t.Errorf("lean rows %d, reference events %d", len(rows), ref.Repos[0].EventCount)
	}
	for _, r := range rows {
		if strings.Contains(r, first) || strings.Contains(r, amended) {
			t.Errorf("row carries a full id: %q", r)
		}
	}

	t.Run("nothing since", func(t *testing.T) {
		var ref digestData
		var l leanDigestData
		fxBoth(t, "fleet.digest", map[string]any{"repoPaths": []string{repo}, "sinceMs": authorTime*1000 + 1}, &ref, &l)
		if l.Events != nil || l.Identity != "" || l.Root == "" {
			t.Fatalf("%+v", l)
		}
	})
}
