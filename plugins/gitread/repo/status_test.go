package repo

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// oddNames are file names that break naive status parsing.
var oddNames = []string{
	"with space.txt",
	`quo"te's.txt`,
	"new\nline.txt",
	"tab\there.txt",
	"bad\xffbyte.txt",
	"ünï.txt",
}

func TestRepoStatus(t *testing.T) {
	referenceShape(t) // asserts the reference shape
	tests := []struct {
		name  string
		setup func(t *testing.T) string
		args  map[string]any
		check func(t *testing.T, repo string, d statusData, raw string)
	}{
		{
			name:  "clean",
			setup: newRepo,
			check: func(t *testing.T, repo string, d statusData, raw string) {
				head := git(t, repo, "rev-parse", "HEAD")
				if d.Branch == nil || *d.Branch != "main" || d.Detached || d.OID == nil || *d.OID != head ||
					d.Upstream != nil || !d.Clean || d.ChangedFiles != 0 || len(d.Entries) != 0 || d.Truncated {
					t.Fatalf("got %+v", d)
				}
				for _, want := range []string{`"entries":[]`, `"upstream":null`, `"ahead":0`, `"behind":0`} {
					if !strings.Contains(raw, want) {
						t.Fatalf("raw data lacks %s: %s", want, raw)
					}
				}
			},
		},
		{
			name: "every kind of change",
			setup: func(t *testing.T) string {
				repo := newRepo(t)
				write(t, repo, "mod-staged.txt", "1\n")
				write(t, repo, "mod-unstaged.txt", "1\n")
				write(t, repo, "deleted.txt", "1\n")
				write(t, repo, "old name.txt", "rename me, long enough to be detected\n")
				commitAll(t, repo, "base")
				write(t, repo, "mod-staged.txt", "2\n")
				git(t, repo, "add", "mod-staged.txt")
				write(t, repo, "mod-unstaged.txt", "2\n")
				if err := os.Remove(filepath.Join(repo, "deleted.txt")); err != nil {
					t.Fatal(err)
				}
				git(t, repo, "mv", "old name.txt", "new name.txt")
				write(t, repo, "added.txt", "new\n")
				git(t, repo, "add", "added.txt")
				write(t, repo, "untracked dir/u.txt", "u\n")
				write(t, repo, ".gitignore", "*.log\n")
				write(t, repo, "ignored.log", "x\n")
				return repo
			},
			check: func(t *testing.T, repo string, d statusData, raw string) {
				want := []statusEntry{
					{Status: "A ", Path: "added.txt"},
					{Status: " D", Path: "deleted.txt"},
					{Status: "M ", Path: "mod-staged.txt"},
					{Status: " M", Path: "mod-unstaged.txt"},
					{Status: "R ", Path: "new name.txt", OrigPath: "old name.txt"},
					{Status: "??", Path: ".gitignore"},
					{Status: "??", Path: "untracked dir/u.txt"},
				}
				if !reflect.DeepEqual(d.Entries, want) {
					t.Fatalf("entries\n got %+v\nwant %+v", d.Entries, want)
				}
				if d.Clean || d.ChangedFiles != int64(len(want)) || d.Truncated {
					t.Fatalf("got %+v", d)
				}
				if !strings.Contains(raw, `"origPath":"old name.txt"`) || strings.Count(raw, "origPath") != 1 {
					t.Fatalf("origPath must appear only on the rename: %s", raw)
				}
			},
		},
		{
			name: "odd file names round-trip",
			setup: func(t *testing.T) string {
				repo := newRepo(t)
				for i, n := range oddNames {
					write(t, repo, n, strings.Repeat("content line\n", 5+i))
				}
				git(t, repo, "add", "--", oddNames[0], oddNames[1], oddNames[2])
				git(t, repo, "commit", "-q", "-m", "odd")
				// Rename one odd name to another to cover origPath bytes.
				git(t, repo, "mv", "--", oddNames[2], "renamed\xfe\nname.txt")
				return repo
			},
			check: func(t *testing.T, repo string, d statusData, raw string) {
				got := map[string]statusEntry{}
				for _, e := range d.Entries {
					p := e.Path
					if e.PathBase64 != "" {
						b, err := base64.StdEncoding.DecodeString(e.PathBase64)
						if err != nil {
							t.Fatal(err)
						}
						p = string(b)
					}
					got[p] = e
				}
				for _, n := range oddNames[3:] {
					e, ok := got[n]
					if !ok || e.Status != "??" {
						t.Fatalf("missing untracked %q in %+v", n, d.Entries)
					}
				}
				bad := got["bad\xffbyte.txt"]
				if bad.Path != "bad\uFFFDbyte.txt" || bad.PathBase64 != base64.StdEncoding.EncodeToString([]byte("bad\xffbyte.txt")) {
					t.Fatalf("non-UTF-8 entry %+v", bad)
				}
				if e := got["ünï.txt"]; e.PathBase64 != "" {
					t.Fatalf("valid UTF-8 must not carry base64: %+v", e)
				}
				ren, ok := got["renamed\xfe\nname.txt"]
				if !ok || ren.Status != "R " || ren.OrigPath != "new\nline.txt" || ren.OrigPathBase64 != "" {
					t.Fatalf("rename entry %+v", ren)
				}
				if ren.PathBase64 != base64.StdEncoding.EncodeToString([]byte("renamed\xfe\nname.txt")) {
					t.Fatalf("rename pathBase64 %q", ren.PathBase64)
				}
			},
		},
		{
			name: "detached HEAD",
			setup: func(t *testing.T) string {
				repo := newRepo(t)
				git(t, repo, "checkout", "-q", "--detach")
				return repo
			},
			check: func(t *testing.T, repo string, d statusData, raw string) {
				if d.Branch != nil || !d.Detached || d.OID == nil || !strings.Contains(raw, `"branch":null`) {
					t.Fatalf("got %+v", d)
				}
			},
		},
		{
			name: "empty repository",
			setup: func(t *testing.T) string {
				repo := emptyRepo(t)
				write(t, repo, "first.txt", "x\n")
				return repo
			},
			check: func(t *testing.T, repo string, d statusData, raw string) {
				if d.Branch == nil || *d.Branch != "main" || d.Detached || d.OID != nil || !strings.Contains(raw, `"oid":null`) {
					t.Fatalf("got %+v", d)
				}
				if len(d.Entries) != 1 || d.Entries[0] != (statusEntry{Status: "??", Path: "first.txt"}) {
					t.Fatalf("entries %+v", d.Entries)
				}
			},
		},
		{
			name: "upstream ahead and behind",
			setup: func(t *testing.T) string {
				remote := tempDir(t)
				git(t, remote, "init", "-q", "--bare", "-b", "main")
				seed := newRepo(t)
				git(t, seed, "push", "-q", remote, "main")
				work := filepath.Join(tempDir(t), "work")
				git(t, filepath.Dir(work), "clone", "-q", remote, work)
				for i := 0; i < 2; i++ {
					write(t, seed, "seed.txt", strings.Repeat("s", i+1))
					commitAll(t, seed, "upstream change")
				}
				git(t, seed, "push", "-q", remote, "main")
				git(t, work, "fetch", "-q", "origin")
				write(t, work, "local.txt", "l\n")
				commitAll(t, work, "local change")
				return work
			},
			check: func(t *testing.T, repo string, d statusData, raw string) {
				if d.Upstream == nil || *d.Upstream != "origin/main" || d.Ahead != 1 || d.Behind != 2 || !d.Clean {
					t.Fatalf("got %+v (upstream %v)", d, d.Upstream)
				}
			},
		},
		{
			name: "unmerged paths keep their XY",
			setup: func(t *testing.T) string {
				repo := newRepo(t)
				git(t, repo, "checkout", "-q", "-b", "other")
				write(t, repo, "a.txt", "other\n")
				commitAll(t, repo, "other")
				git(t, repo, "checkout", "-q", "main")
				write(t, repo, "a.txt", "main\n")
				commitAll(t, repo, "main")
				// The merge is expected to stop with a conflict.
				runAllowFail(t, repo, "merge", "-q", "other")
				return repo
			},
			check: func(t *testing.T, repo string, d statusData, raw string) {
				if len(d.Entries) != 1 || d.Entries[0] != (statusEntry{Status: "UU", Path: "a.txt"}) {
					t.Fatalf("entries %+v", d.Entries)
				}
			},
		},
		{
			name: "maxEntries truncates but counts everything",
			setup: func(t *testing.T) string {
				repo := newRepo(t)
				for i := 0; i < 5; i++ {
					write(t, repo, "u"+string(rune('0'+i))+".txt", "x")
				}
				return repo
			},
			args: map[string]any{"maxEntries": 2},
			check: func(t *testing.T, repo string, d statusData, raw string) {
				if len(d.Entries) != 2 || d.ChangedFiles != 5 || !d.Truncated || d.Clean {
					t.Fatalf("got %+v", d)
				}
			},
		},
		{
			name: "repoPath may be a subdirectory",
			setup: func(t *testing.T) string {
				repo := newRepo(t)
				write(t, repo, "sub/dir/x.txt", "x")
				return filepath.Join(repo, "sub", "dir")
			},
			check: func(t *testing.T, repo string, d statusData, raw string) {
				if len(d.Entries) != 1 || d.Entries[0].Path != "sub/dir/x.txt" {
					t.Fatalf("entries %+v", d.Entries)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := tt.setup(t)
			args := map[string]any{"repoPath": repo, "repoId": "r1"}
			for k, v := range tt.args {
				args[k] = v
			}
			var d statusData
			raw := mustOK(t, "repo.status", args, &d)
			tt.check(t, repo, d, raw)
		})
	}
}

func runAllowFail(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := execGit(dir, args...)
	_ = cmd.Run()
}

func TestStatusParserRejectsGarbage(t *testing.T) {
	tests := [][]byte{
		[]byte("X what"),
		[]byte("1 M"),
		[]byte("?x"),
		[]byte("# branch.ab +x -1"),
	}
	for _, f := range tests {
		ps := &statusParser{max: 10}
		if err := ps.field(f); err == nil {
			t.Errorf("field %q accepted", f)
		}
	}
}
