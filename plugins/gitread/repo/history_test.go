package repo

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fluxgit/fluxgit/internal/gitexec"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// day is one day in seconds; the fixture's commits are one day apart.
const day = 86400

// gitAs runs git for fixture setup with the author and both dates set, so
// each commit has a known author and time.
func gitAs(t *testing.T, dir, name, email string, when int64, args ...string) {
	t.Helper()
	date := strconv.FormatInt(when, 10) + " +0000"
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(gitEnv(), "GIT_AUTHOR_NAME="+name, "GIT_AUTHOR_EMAIL="+email,
		"GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %q: %v\n%s", args, err, out)
	}
}

// histFixture is a repository whose history has every shape the issue
// names, with known answers:
//
//	c1  Ada   add a.txt, README.md                      (t)
//	c2  Zoë   add lib/util.go "feat(lib): add helper"   (t+1d)
//	c3  Ada   rename lib/util.go -> lib/helpers.go      (t+2d)  tag v1
//	c4  Ada   delete a.txt                              (t+3d)
//	c5  Ada   re-add a.txt                              (t+4d)
//	c6  Ada   side: binary bin.dat and a Latin-1 name   (t+5d)  branch side (from c5)
//	c7  Ada   README mentions --output=/tmp/x           (t+6d)  tag v2 (annotated)
//	m   Ada   merge side into main                      (t+7d)
//
// The returned map names each commit's full hash.
func histFixture(t *testing.T) (string, map[string]string) {
	t.Helper()
	dir := emptyRepo(t)
	const ada, adaMail = "Ada Author", "ada@example.com"
	c := map[string]string{}
	commit := func(key, name, email string, when int64, msg string) {
		t.Helper()
		gitAs(t, dir, name, email, when, "add", "-A")
		gitAs(t, dir, name, email, when, "commit", "-q", "-m", msg)
		c[key] = git(t, dir, "rev-parse", "HEAD")
	}
	t0 := int64(authorTime)
	write(t, dir, "a.txt", "alpha\n")
	write(t, dir, "README.md", "hello\n")
	commit("c1", ada, adaMail, t0, "initial import")
	write(t, dir, "lib/util.go", "package lib\n\nfunc Helper() int { return 42 }\n")
	commit("c2", "Zoë Ünïcode", "zoe@example.com", t0+day, "feat(lib): add helper")
	gitAs(t, dir, ada, adaMail, t0+2*day, "mv", "lib/util.go", "lib/helpers.go")
	commit("c3", ada, adaMail, t0+2*day, "refactor: rename util to helpers")
	git(t, dir, "tag", "v1")
	if err := os.Remove(filepath.Join(dir, "a.txt")); err != nil {
		t.Fatal(err)
	}
	commit("c4", ada, adaMail, t0+3*day, "remove a.txt")
	write(t, dir, "a.txt", "alpha again\n")
	commit("c5", ada, adaMail, t0+4*day, "re-add a.txt")
	git(t, dir, "checkout", "-q", "-b", "side")
	write(t, dir, "bin.dat", "\x00\x01needle\x00\xff")
	write(t, dir, "caf\xe9.txt", "needle in latin-1 land\n")
	commit("c6", ada, adaMail, t0+5*day, "side: binary and latin-1 name")
	git(t, dir, "checkout", "-q", "main")
	write(t, dir, "README.md", "hello\nrun with --output=/tmp/x\n")
	commit("c7", ada, adaMail, t0+6*day, "docs: mention --output=/tmp/x")
	gitAs(t, dir, ada, adaMail, t0+6*day, "tag", "-a", "-m", "release two", "v2")
	gitAs(t, dir, ada, adaMail, t0+7*day, "merge", "-q", "--no-ff", "-m", "Merge branch 'side'", "side")
	c["m"] = git(t, dir, "rev-parse", "HEAD")
	return dir, c
}

func historyHashes(t *testing.T, args map[string]any) []string {
	t.Helper()
	var d historyData
	mustOK(t, "repo.history", args, &d)
	got := []string{}
	for _, c := range d.Commits {
		got = append(got, c.Hash)
	}
	return got
}

func TestRepoHistoryFilters(t *testing.T) {
	referenceShape(t) // the reference shape; the lean one: lean_shapes_test.go
	repo, c := histFixture(t)
	t0 := int64(authorTime)
	all := []string{c["m"], c["c7"], c["c6"], c["c5"], c["c4"], c["c3"], c["c2"], c["c1"]}
	tests := []struct {
		name string
		args map[string]any
		want []string
	}{
		{"default is HEAD, everything", nil, all},
		{"rev tag", map[string]any{"rev": "v1"}, []string{c["c3"], c["c2"], c["c1"]}},
		{"rev abbreviated hash", map[string]any{"rev": c["c2"][:10]}, []string{c["c2"], c["c1"]}},
		{"rev expression", map[string]any{"rev": "main^2"}, []string{c["c6"], c["c5"], c["c4"], c["c3"], c["c2"], c["c1"]}},
		{"range", map[string]any{"rev": "v1..v2"}, []string{c["c7"], c["c5"], c["c4"]}},
		{"range open end is HEAD", map[string]any{"rev": "v2.."}, []string{c["m"], c["c6"]}},
		{"range open start is HEAD", map[string]any{"rev": "..v1"}, []string{}},
		{"symmetric range", map[string]any{"rev": "v2...side"}, []string{c["c7"], c["c6"]}},
		{"path of a deleted and re-added file", map[string]any{"paths": []string{"a.txt"}}, []string{c["c5"], c["c4"], c["c1"]}},
		{"renamed path without follow", map[string]any{"paths": []string{"lib/helpers.go"}}, []string{c["c3"]}},
		{"directory and second path", map[string]any{"paths": []string{"lib", "bin.dat"}}, []string{c["c6"], c["c3"], c["c2"]}},
		{"absolute path inside the repository", map[string]any{"paths": []string{filepath.Join(repo, "lib")}}, []string{c["c3"], c["c2"]}},
		{"dot is everything", map[string]any{"paths": []string{"."}}, all},
		{"non-ASCII author, case-insensitive", map[string]any{"author": "zoë"}, []string{c["c2"]}},
		{"author by e-mail", map[string]any{"author": "ZOE@EXAMPLE"}, []string{c["c2"]}},
		{"author is not a regular expression", map[string]any{"author": "Ada.*"}, []string{}},
		{"grep case-insensitive", map[string]any{"grep": "REFACTOR"}, []string{c["c3"]}},
		{"grep fixed string with parentheses", map[string]any{"grep": "feat(lib)"}, []string{c["c2"]}},
		{"grep value that looks like an option", map[string]any{"grep": "--output=/tmp/x"}, []string{c["c7"]}},
		{"author and grep both apply", map[string]any{"author": "Ada", "grep": "helper"}, []string{c["c3"]}},
		{"since unix seconds", map[string]any{"since": strconv.FormatInt(t0+5*day, 10)}, []string{c["m"], c["c7"], c["c6"]}},
		{"until unix seconds", map[string]any{"until": strconv.FormatInt(t0+day, 10)}, []string{c["c2"], c["c1"]}},
		{"since and until RFC 3339", map[string]any{"since": time.Unix(t0+2*day, 0).UTC().Format(time.RFC3339), "until": time.Unix(t0+3*day, 0).UTC().Format(time.RFC3339)}, []string{c["c4"], c["c3"]}},
		// t0 is 2023-11-14T22:13:20Z.
		{"until a day includes that day", map[string]any{"until": "2023-11-14"}, []string{c["c1"]}},
		{"since a day starts at midnight UTC", map[string]any{"since": "2023-11-20"}, []string{c["m"], c["c7"]}},
		{"since relative", map[string]any{"since": "1 year ago"}, []string{}},
		{"first parent", map[string]any{"firstParent": true}, []string{c["m"], c["c7"], c["c5"], c["c4"], c["c3"], c["c2"], c["c1"]}},
		{"merges only", map[string]any{"merges": "only"}, []string{c["m"]}},
		{"merges excluded", map[string]any{"merges": "exclude"}, all[1:]},
		{"merges included", map[string]any{"merges": "include"}, all},
		{"everything at once, paged", map[string]any{"rev": "side", "paths": []string{"a.txt"}, "author": "ada", "since": "0", "limit": 1, "cursor": "1"}, []string{c["c4"]}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := map[string]any{"repoPath": repo}
			for k, v := range tt.args {
				args[k] = v
			}
			if got := historyHashes(t, args); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("hashes\n got %q\nwant %q", got, tt.want)
			}
		})
	}

	t.Run("non-ASCII author is returned intact", func(t *testing.T) {
		var d historyData
		mustOK(t, "repo.history", map[string]any{"repoPath": repo, "author": "zoe@"}, &d)
		if len(d.Commits) != 1 || d.Commits[0].AuthorName != "Zoë Ünïcode" || d.Commits[0].AuthorTime != t0+day {
			t.Fatalf("got %+v", d.Commits)
		}
	})

	t.Run("filtered pages carry a cursor", func(t *testing.T) {
		var d historyData
		mustOK(t, "repo.history", map[string]any{"repoPath": repo, "paths": []string{"a.txt"}, "limit": 2}, &d)
		if len(d.Commits) != 2 || d.NextCursor == nil || *d.NextCursor != "2" {
			t.Fatalf("got %+v", d)
		}
	})
}

func TestRepoHistoryRefusals(t *testing.T) {
	referenceShape(t) // the reference shape; the lean one: lean_shapes_test.go
	repo, _ := histFixture(t)
	cwd, _ := os.Getwd()
	refused := []struct {
		name string
		args map[string]any
		want string
	}{
		{"rev option", map[string]any{"rev": "--output=pwned"}, "arguments.rev must not start with '-'"},
		{"rev config option", map[string]any{"rev": "-c core.pager=touch pwned"}, "arguments.rev must not start with '-'"},
		{"range side option", map[string]any{"rev": "main..--output=pwned"}, "each side of the range"},
		{"symmetric range side option", map[string]any{"rev": "--upload-pack=touch pwned...main"}, "must not start with '-'"},
		{"three-dot then two-dot", map[string]any{"rev": "a...b..c"}, "must be one revision or a range"},
		{"bare dots", map[string]any{"rev": ".."}, "must be one revision or a range"},
		{"path escaping", map[string]any{"paths": []string{"lib", "../outside"}}, "arguments.paths[1] must be a path inside the repository"},
		{"absolute path outside", map[string]any{"paths": []string{"/etc/passwd"}}, "arguments.paths[0] must be a path inside the repository"},
		{"empty path", map[string]any{"paths": []string{""}}, "arguments.paths[0] is empty"},
		{"empty author", map[string]any{"author": ""}, "arguments.author must not be empty"},
		{"approximate date", map[string]any{"since": "last tuesday"}, "arguments.since must be a date"},
		{"date option", map[string]any{"until": "--output=pwned"}, "arguments.until must be a date"},
		{"since after until", map[string]any{"since": "2024-02-01", "until": "2024-01-01"}, "arguments.since is later than arguments.until"},
		{"merges value", map[string]any{"merges": "all"}, "arguments.merges must be include, only or exclude"},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			tt.args["repoPath"] = repo
			mustArgError(t, "repo.history", tt.args, tt.want)
		})
	}
	t.Run("unknown revision", func(t *testing.T) {
		fd := mustFail(t, "repo.history", map[string]any{"repoPath": repo, "rev": "no-such-branch"})
		if !strings.Contains(fd.Details, `arguments.rev "no-such-branch" does not name a commit`) {
			t.Fatalf("details %q", fd.Details)
		}
	})
	t.Run("unknown side of a range", func(t *testing.T) {
		fd := mustFail(t, "repo.history", map[string]any{"repoPath": repo, "rev": "v1..nope"})
		if !strings.Contains(fd.Details, `"nope" does not name a commit`) {
			t.Fatalf("details %q", fd.Details)
		}
	})
	t.Run("empty repository with filters", func(t *testing.T) {
		var d historyData
		raw := mustOK(t, "repo.history", map[string]any{"repoPath": emptyRepo(t), "author": "x", "paths": []string{"a"}}, &d)
		if raw != `{"commits":[],"nextCursor":null}` {
			t.Fatalf("got %s", raw)
		}
	})
	assertNoPwned(t, repo, cwd, filepath.Dir(repo))
}

// TestHistoryValuesAreValues: every caller value of repo.history and
// history.search reaches git either after --end-of-options / -- or inside
// a single --opt=value (or -S/-G value) element, never as an element of
// its own that git could parse as an option.
func TestHistoryValuesAreValues(t *testing.T) {
	referenceShape(t) // the reference shape; the lean one: lean_shapes_test.go
	repo, _ := histFixture(t)
	var mu sync.Mutex
	var argvs [][]string
	p := New()
	p.runner = &gitexec.Runner{Observe: func(_ string, args []string) {
		mu.Lock()
		argvs = append(argvs, args)
		mu.Unlock()
	}}
	const v = "userval-x"
	git(t, repo, "branch", v)
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"repo.history", map[string]any{"rev": v, "paths": []string{v}, "author": v, "grep": v}},
		{"repo.history", map[string]any{"rev": v + "..." + v}},
		{"history.search", map[string]any{"text": v, "rev": v + ".." + v, "paths": []string{v}}},
		{"history.search", map[string]any{"regex": v, "rev": v}},
		{"repo.refs", map[string]any{"pattern": v}},
	}
	allowed := []string{"--author=", "--grep=", "-S", "-G"}
	for _, c := range calls {
		c.args["repoPath"] = repo
		raw, _ := json.Marshal(c.args)
		mu.Lock()
		argvs = nil
		mu.Unlock()
		res, err := p.CallTool(context.Background(), &sdk.Call{Tool: c.tool, Arguments: raw})
		if err != nil || res.Error != nil {
			t.Fatalf("%s: %v %+v", c.tool, err, res)
		}
		mu.Lock()
		for _, argv := range argvs {
			guard := len(argv)
			for _, g := range []string{"--end-of-options", "--"} {
				if i := slices.Index(argv, g); i >= 0 && i < guard {
					guard = i
				}
			}
			for i, a := range argv {
				if !strings.Contains(a, v) || i > guard {
					continue
				}
				ok := false
				for _, pre := range allowed {
					ok = ok || strings.HasPrefix(a, pre)
				}
				if !ok {
					t.Errorf("%s: caller value %q passed as its own option element: %q", c.tool, a, argv)
				}
			}
		}
		mu.Unlock()
	}
}

func TestParseDate(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	tests := []struct {
		in     string
		end    bool
		want   int64
		reject bool
	}{
		{in: "1714521600", want: 1714521600},
		{in: "2024-05-01", want: 1714521600},
		{in: "2024-05-01", end: true, want: 1714521600 + day - 1},
		{in: "2024-05-01T12:00:00Z", want: 1714564800},
		{in: "2024-05-01T14:00:00+02:00", want: 1714564800},
		{in: "2024-05-01T12:00:00", want: 1714564800},
		{in: "2024-05-01 12:00", want: 1714564800},
		{in: "2 weeks ago", want: 1_800_000_000 - 14*day},
		{in: "1 day ago", want: 1_800_000_000 - day},
		{in: "3months ago", want: 1_800_000_000 - 90*day},
		{in: "yesterday", reject: true},
		{in: "2024-13-01", reject: true},
		{in: "-1", reject: true},
		{in: "@1714521600", reject: true},
		{in: "99999999999999999999", reject: true},
		{in: "", reject: true},
	}
	for _, tt := range tests {
		got, err := parseDate("since", tt.in, tt.end, now)
		if tt.reject {
			if err == nil {
				t.Errorf("%q: accepted as %d", tt.in, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%q: got %d %v, want %d", tt.in, got, err, tt.want)
		}
	}
}
