package agentdetect

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestStoreRepoPaths(t *testing.T) {
	f := newStoreFixture(t)
	link := filepath.Join(f.tmp, "repo-link")
	f.link(f.repo, link)
	s := newStoreScan(f.q())
	cases := []struct {
		name, path, cwd string
		in              bool
		rel             string
	}{
		{"repository top level", f.repo, "", true, ""},
		{"file below the repository", filepath.Join(f.repo, "sub", "a.go"), "", true, "sub/a.go"},
		{"second worktree", filepath.Join(f.wt, "b.go"), "", true, "b.go"},
		{"through a link to the repository", filepath.Join(link, "sub", "c.go"), "", true, "sub/c.go"},
		{"deleted file below a link", filepath.Join(link, "gone", "d.go"), "", true, "gone/d.go"},
		{"relative to the cwd", "e.go", filepath.Join(f.repo, "sub"), true, "sub/e.go"},
		{"relative escaping the repository", "../../x", filepath.Join(f.repo, "sub"), false, ""},
		{"sibling sharing the prefix", filepath.Join(f.outside, "f.go"), "", false, ""},
		{"relative without a cwd", "g.go", "", false, ""},
		{"parent of the repository", f.tmp, "", false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.path
			if !filepath.IsAbs(p) {
				p = filepath.Join(tc.cwd, p)
			}
			if _, in := s.inRepo(p); in != tc.in {
				t.Fatalf("inRepo(%s) = %v, want %v", p, in, tc.in)
			}
			rel, ok := s.repoFile(tc.path, tc.cwd)
			if tc.rel != "" && (!ok || rel != tc.rel) {
				t.Fatalf("repoFile = %q, %v; want %q", rel, ok, tc.rel)
			}
			if tc.rel == "" && ok {
				t.Fatalf("repoFile = %q for a path that is not a repository file", rel)
			}
		})
	}
}

func TestStoreTimesAndNames(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, v := range []int64{at.Unix(), at.UnixMilli(), at.UnixMicro()} {
		if got := storeUnix(v); !got.Equal(at) {
			t.Errorf("storeUnix(%d) = %v, want %v", v, got, at)
		}
	}
	var n any
	_ = json.Unmarshal([]byte("1796068800000"), &n)
	if got := storeJSONTime(n); got.UnixMilli() != 1796068800000 {
		t.Errorf("storeJSONTime(ms) = %v", got)
	}
	names := map[string]string{
		"Edit":                      "Edit",
		"mcp__fluxgit__repo_status": "mcp__fluxgit__repo_status",
		"rm -rf /":                  "",
		strings.Repeat("n", 65):     "",
		"bad\x00name":               "",
		"  apply_patch ":            "apply_patch",
		"[1]":                       "",
		"functions.exec_command":    "functions.exec_command",
	}
	for in, want := range names {
		if got := storeToolName(in); got != want {
			t.Errorf("storeToolName(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"refs/heads/main": "main", "HEAD": "", "a b": "", "feat/x": "feat/x"} {
		if got := storeBranch(in); got != want {
			t.Errorf("storeBranch(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestStoreFilesCappedNewestFirst(t *testing.T) {
	f := newStoreFixture(t)
	s := newStoreScan(f.q())
	a := &storeSession{agent: "x", cwd: f.repo, last: f.now}
	for i := range 12 {
		a.file("f"+string(rune('a'+i)), f.now.Add(time.Duration(i)*time.Second))
	}
	a.file("fa", f.now.Add(time.Hour)) // touched again: newest
	got := a.finding(s).Files
	if len(got) != MaxFilesPerAgent || got[0] != "fa" || got[1] != "fl" {
		t.Fatalf("files %q, want %d newest first starting fa, fl", got, MaxFilesPerAgent)
	}
}

func TestStoreSourcesNamesAndMissingHome(t *testing.T) {
	seen := map[string]bool{}
	for _, src := range StoreSources() {
		if !strings.HasPrefix(src.Name(), "store:") || seen[src.Name()] {
			t.Errorf("source name %q is not a unique store: name", src.Name())
		}
		seen[src.Name()] = true
		// No home, no variables, a repository that does not exist:
		// nothing found, nothing failed.
		got, err := runStore(t, src, Query{Repo: filepath.Join(os.TempDir(), "no-such-repo-agentdetect"), Now: time.Now()})
		if err != nil || len(got) != 0 {
			t.Errorf("%s on an empty machine = %v, %v", src.Name(), sessionIDs(got), err)
		}
	}
	if len(seen) != 8 {
		t.Errorf("%d store sources, want 8", len(seen))
	}
}

func TestStoreProcStart(t *testing.T) {
	start := storeProcStart(os.Getpid())
	if runtime.GOOS != "linux" {
		if !start.IsZero() {
			t.Fatalf("start time %v where none is read", start)
		}
		return
	}
	now := time.Now()
	if start.IsZero() || start.After(now.Add(storePIDStartSlack)) || start.Before(now.Add(-24*time.Hour)) {
		t.Fatalf("own start time %v, want shortly before %v", start, now)
	}
	if storePIDAlive(os.Getpid(), start.Add(-time.Hour)) {
		t.Fatal("a process that started an hour after its session counts as the session's")
	}
	if !storePIDAlive(os.Getpid(), now) {
		t.Fatal("this process does not count as alive")
	}
	if storePIDAlive(1<<30, time.Time{}) {
		t.Fatal("a pid beyond pid_max counts as alive")
	}
}
