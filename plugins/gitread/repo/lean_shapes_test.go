package repo

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/fluxgit/fluxgit/internal/resultshape"
)

// leanFixture is a repository with 25 tags (newest v1.24), branches main
// and side, a remote with a tracking branch, two stashes, a rename, a
// merge and a path that is not UTF-8, checked out on main with an
// unstaged edit.
func leanFixture(t *testing.T) string {
	t.Helper()
	repo := newRepo(t)
	for i := 0; i < 25; i++ {
		write(t, repo, "n.txt", strings.Repeat("line "+strconv.Itoa(i)+"\n", 20))
		commitAll(t, repo, "change "+strconv.Itoa(i))
		// Distinct creator dates, so newest first is v1.24 … v1.0.
		gitAs(t, repo, "Ada Author", "ada@example.com", int64(authorTime+i), "tag", "-a", "v1."+strconv.Itoa(i), "-m", "release")
	}
	git(t, repo, "branch", "side", "HEAD~2")
	git(t, repo, "remote", "add", "origin", "/nonexistent")
	git(t, repo, "update-ref", "refs/remotes/origin/main", "HEAD~1")
	git(t, repo, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main")
	for i := 0; i < 2; i++ {
		write(t, repo, "a.txt", "stashed "+strconv.Itoa(i)+"\n")
		git(t, repo, "stash", "-q")
	}
	git(t, repo, "mv", "a.txt", "renamed.txt")
	write(t, repo, "odd\xffname.txt", "x\n")
	write(t, repo, "n.txt", "rewritten\n")
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "-q", "-m", "rename, odd path\n\nWith a body.\n")
	write(t, repo, "n.txt", "unstaged\n")
	return repo
}

// leanCall calls a tool in the lean shape and returns its data as
// generic JSON, plus the raw bytes for absence checks.
func leanCall(t *testing.T, tool string, args map[string]any) (map[string]any, string) {
	t.Helper()
	t.Setenv(resultshape.Env, "")
	var d map[string]any
	raw := mustOK(t, tool, args, &d)
	return d, raw
}

func strList(v any) []string {
	var out []string
	for _, e := range v.([]any) {
		out = append(out, e.(string))
	}
	return out
}

// TestLeanShapesCarryTheFacts: each lean shape still carries every fact an
// agent needs (the same as the raw git command would show), leaves out
// empty, default and echoed fields, and caps with a count of what it left
// out.
func TestLeanShapesCarryTheFacts(t *testing.T) {
	repo := leanFixture(t)
	head := git(t, repo, "rev-parse", "HEAD")
	oneline := func(args ...string) []string {
		return strings.Split(git(t, repo, append([]string{"log", "--oneline"}, args...)...), "\n")
	}
	tags := strings.Fields(git(t, repo, "tag", "--sort=-creatordate"))
	stashes := strings.Split(git(t, repo, "stash", "list", "--format=%gs"), "\n")

	cases := []struct {
		name  string
		tool  string
		args  map[string]any
		check func(t *testing.T, d map[string]any, raw string)
	}{
		{"refs default: newest 20 tags, count of the rest, separate remote branches", "repo.refs", nil, func(t *testing.T, d map[string]any, raw string) {
			want := map[string]any{
				"head": "main", "branches": []any{"main", "side"}, "remoteBranches": []any{"origin/main"},
				"stashes": []any{stashes[0], stashes[1]}, // remotes: origin/main already says origin
				"omitted": map[string]any{"tags": float64(5)},
			}
			gotTags := strList(d["tags"])
			delete(d, "tags")
			if !reflect.DeepEqual(d, want) {
				t.Fatalf("data %v\nwant %v", d, want)
			}
			if !reflect.DeepEqual(gotTags, tags[:20]) {
				t.Fatalf("tags %q, want the newest 20 of %q", gotTags, tags)
			}
			if strings.Contains(raw, "stash@{") || strings.Contains(raw, "truncated") || strings.Contains(raw, "detached") {
				t.Fatalf("label, truncated or detached:false in %s", raw)
			}
		}},
		{"refs limit and kinds", "repo.refs", map[string]any{"kinds": []string{"tags", "stashes"}, "limit": 1}, func(t *testing.T, d map[string]any, raw string) {
			want := map[string]any{"head": "main", "tags": []any{tags[0]}, "stashes": []any{stashes[0]},
				"omitted": map[string]any{"tags": float64(24), "stashes": float64(1)}}
			if !reflect.DeepEqual(d, want) {
				t.Fatalf("data %v\nwant %v", d, want)
			}
		}},
		{"refs pattern without a cut", "repo.refs", map[string]any{"kinds": []string{"tags"}, "pattern": "v1.1*"}, func(t *testing.T, d map[string]any, raw string) {
			if got := strings.Join(strList(d["tags"]), " "); got != "v1.19 v1.18 v1.17 v1.16 v1.15 v1.14 v1.13 v1.12 v1.11 v1.10 v1.1" || d["omitted"] != nil {
				t.Fatalf("tags %q omitted %v", got, d["omitted"])
			}
		}},
		{"history default: 20 oneline rows and a cursor", "repo.history", nil, func(t *testing.T, d map[string]any, raw string) {
			if got := strList(d["commits"]); !reflect.DeepEqual(got, oneline("-20")) {
				t.Fatalf("commits %q\nwant %q", got, oneline("-20"))
			}
			if d["nextCursor"] != "20" || strings.Contains(raw, head) {
				t.Fatalf("nextCursor %v, or a full id in %s", d["nextCursor"], raw)
			}
		}},
		{"history last page has no cursor", "repo.history", map[string]any{"cursor": "20"}, func(t *testing.T, d map[string]any, raw string) {
			if got := strList(d["commits"]); !reflect.DeepEqual(got, oneline("--skip=20")) || strings.Contains(raw, "nextCursor") {
				t.Fatalf("commits %q; %s", got, raw)
			}
		}},
		{"history fields author and time", "repo.history", map[string]any{"limit": 1, "fields": []string{"time", "author"}}, func(t *testing.T, d map[string]any, raw string) {
			row := d["commits"].([]any)[0]
			want := []any{git(t, repo, "log", "-1", "--format=%h"), "rename, odd path", "Ada Author <ada@example.com>", git(t, repo, "log", "-1", "--format=%aI")}
			if !reflect.DeepEqual(row, want) {
				t.Fatalf("row %v, want %v", row, want)
			}
		}},
		{"history field time alone", "repo.history", map[string]any{"limit": 1, "fields": []string{"time"}}, func(t *testing.T, d map[string]any, raw string) {
			if row := d["commits"].([]any)[0].([]any); len(row) != 3 || row[2] != git(t, repo, "log", "-1", "--format=%aI") {
				t.Fatalf("row %v", row)
			}
		}},
		{"commit details: full id, short parents, name-status with rename source and quoting", "commit.details", map[string]any{"commit": "HEAD"}, func(t *testing.T, d map[string]any, raw string) {
			want := map[string]any{
				"commit": head, "parents": []any{git(t, repo, "rev-parse", "--short", "HEAD^")},
				"author": "Ada Author <ada@example.com>", "time": strings.TrimSuffix(git(t, repo, "log", "-1", "--format=%aI"), "+00:00") + "Z", // the fixture commits at +0000
				"message": "rename, odd path\n\nWith a body.",
				"files":   []any{"M n.txt", `A "odd\377name.txt"`, "R100 a.txt -> renamed.txt"},
			}
			if !reflect.DeepEqual(d, want) {
				t.Fatalf("data %v\nwant %v", d, want)
			}
		}},
		{"commit details of a root commit: no parents field", "commit.details", map[string]any{"commit": git(t, repo, "rev-list", "--max-parents=0", "HEAD")}, func(t *testing.T, d map[string]any, raw string) {
			if _, ok := d["parents"]; ok || !reflect.DeepEqual(d["files"], []any{"A a.txt"}) || d["message"] != "first" {
				t.Fatalf("root %s", raw)
			}
		}},
		{"diff uncut: the diff alone", "diff.text", nil, func(t *testing.T, d map[string]any, raw string) {
			if want := withoutRepeatedHeaders(git(t, repo, "diff") + "\n"); !reflect.DeepEqual(d, map[string]any{"diff": want}) {
				t.Fatalf("data %s, want only the diff %q", raw, want)
			}
		}},
		{"diff empty", "diff.text", map[string]any{"staged": true}, func(t *testing.T, d map[string]any, raw string) {
			if !reflect.DeepEqual(d, map[string]any{"diff": ""}) {
				t.Fatalf("data %s", raw)
			}
		}},
		{"diff cut at the budget: lower-bound totals say so", "diff.text", map[string]any{"base": "HEAD~3", "maxBytes": 50}, func(t *testing.T, d map[string]any, raw string) {
			if d["truncated"] != true || d["totalsExact"] != false || d["totalBytes"].(float64) < 50 || d["totalLines"] == nil || len(d) != 5 {
				t.Fatalf("data %s", raw)
			}
		}},
		{"diff cut with exact totals: no totalsExact", "diff.text", map[string]any{"base": "HEAD~3", "maxLines": 2, "exactTotals": true}, func(t *testing.T, d map[string]any, raw string) {
			full := git(t, repo, "diff", "HEAD~3") + "\n"
			want := map[string]any{"diff": withoutRepeatedHeaders(firstLines(full, 2)), "truncated": true, "totalBytes": float64(len(full)), "totalLines": float64(strings.Count(full, "\n"))}
			if !reflect.DeepEqual(d, want) {
				t.Fatalf("data %s\nwant %v", raw, want)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := map[string]any{"repoPath": repo}
			for k, v := range c.args {
				args[k] = v
			}
			d, raw := leanCall(t, c.tool, args)
			c.check(t, d, raw)
		})
	}

	t.Run("detached head is named by its short id", func(t *testing.T) {
		clone := filepath.Join(tempDir(t), "c")
		git(t, repo, "worktree", "add", "-q", "--detach", clone, "HEAD~1")
		d, raw := leanCall(t, "repo.refs", map[string]any{"repoPath": clone, "kinds": []string{"branches"}})
		if want := git(t, repo, "rev-parse", "--short", "HEAD~1"); d["head"] != want || d["detached"] != true {
			t.Fatalf("%s, want head %s detached", raw, want)
		}
	})
	t.Run("merge files against the first parent", func(t *testing.T) {
		git(t, repo, "checkout", "-q", "-f", "-b", "m", "side")
		write(t, repo, "side.txt", "s\n")
		commitAll(t, repo, "side work")
		git(t, repo, "merge", "-q", "--no-ff", "-m", "merge main", "main")
		d, _ := leanCall(t, "commit.details", map[string]any{"repoPath": repo, "commit": "HEAD"})
		if len(d["parents"].([]any)) != 2 || !reflect.DeepEqual(d["files"], []any{"M n.txt", `A "odd\377name.txt"`, "R100 a.txt -> renamed.txt"}) {
			t.Fatalf("merge %v", d)
		}
	})
	t.Run("refused fields", func(t *testing.T) {
		t.Setenv(resultshape.Env, "")
		mustArgError(t, "repo.history", map[string]any{"repoPath": repo, "fields": []string{"subject"}}, "arguments.fields[0] must be author or time")
		mustArgError(t, "repo.history", map[string]any{"repoPath": repo, "fields": []string{}}, "arguments.fields is empty")
		mustArgError(t, "repo.refs", map[string]any{"repoPath": repo, "limit": 0}, "arguments.limit must be between 1 and 1000")
	})
}

// TestLeanCommitFilesCapCounts: past 1,000 files the lean list stops and
// says how many it left out (the reference stops git and says truncated).
func TestLeanCommitFilesCapCounts(t *testing.T) {
	repo := newRepo(t)
	for i := 0; i < leanCommitFiles+3; i++ {
		write(t, repo, filepath.Join("many", fmt.Sprintf("%04d", i)), "x")
	}
	commitAll(t, repo, "many files")
	d, _ := leanCall(t, "commit.details", map[string]any{"repoPath": repo, "commit": "HEAD"})
	if len(d["files"].([]any)) != leanCommitFiles || d["filesOmitted"] != float64(3) {
		t.Fatalf("files=%d filesOmitted=%v", len(d["files"].([]any)), d["filesOmitted"])
	}
}

// TestLeanHistoryEmpty: an unborn branch is an empty page, not an error.
func TestLeanHistoryEmpty(t *testing.T) {
	d, raw := leanCall(t, "repo.history", map[string]any{"repoPath": emptyRepo(t)})
	if !reflect.DeepEqual(d, map[string]any{"commits": []any{}}) {
		t.Fatalf("%s", raw)
	}
}

// TestQuotePath: lean name-status paths read back to their exact bytes.
func TestQuotePath(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"src/app.go", "src/app.go"},
		{"docs/café.md", "docs/café.md"},
		{"with space.txt", "with space.txt"},
		{"bad\xffname", `"bad\377name"`},
		{"tab\there", `"tab\there"`},
		{`quote"and\slash`, `"quote\"and\\slash"`},
		{"a -> b", `"a -> b"`},
		{"bell\x07del\x7f", `"bell\adel\177"`},
	} {
		if got := quotePath([]byte(c.in)); got != c.want {
			t.Errorf("quotePath(%q) = %s, want %s", c.in, got, c.want)
		}
		// Every quoted form is a Go/C string literal of the same bytes.
		if got := quotePath([]byte(c.in)); strings.HasPrefix(got, `"`) {
			if back, err := strconv.Unquote(strings.ReplaceAll(got, `\a`, `\x07`)); err != nil || back != c.in {
				t.Errorf("%s reads back as %q (%v), want %q", got, back, err, c.in)
			}
		}
	}
}

// TestReferenceShapeUnchanged: with FLUXGIT_MCP_RESULT_SHAPE=reference the
// four tools answer byte for byte as before the lean shapes (golden file
// written from the code before the change; each line is one call).
func TestReferenceShapeUnchanged(t *testing.T) {
	referenceShape(t)
	repo := newRepo(t)
	for i := 0; i < 4; i++ {
		write(t, repo, "f.txt", strings.Repeat("v"+strconv.Itoa(i)+"\n", 5+i))
		commitAll(t, repo, "commit "+strconv.Itoa(i)+"\n\nbody")
		git(t, repo, "tag", "v"+strconv.Itoa(i))
	}
	git(t, repo, "mv", "a.txt", "b.txt")
	commitAll(t, repo, "rename")
	git(t, repo, "update-ref", "refs/remotes/origin/main", "HEAD~1")
	git(t, repo, "remote", "add", "origin", "/nonexistent")
	write(t, repo, "f.txt", "stash\n")
	git(t, repo, "stash", "-q")
	write(t, repo, "f.txt", "dirty\n")
	var got strings.Builder
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"repo.refs", nil}, {"repo.refs", map[string]any{"kinds": []string{"tags"}, "sort": "name"}},
		{"repo.history", nil}, {"repo.history", map[string]any{"limit": 2}},
		{"commit.details", map[string]any{"commit": "HEAD"}}, {"commit.details", map[string]any{"commit": "v0"}},
		{"diff.text", nil}, {"diff.text", map[string]any{"maxBytes": 30}}, {"diff.text", map[string]any{"base": "v0", "head": "HEAD", "mode": "stat", "paths": []string{"f.txt"}}},
	} {
		args := map[string]any{"repoPath": repo}
		for k, v := range c.args {
			args[k] = v
		}
		var d json.RawMessage
		raw := mustOK(t, c.tool, args, &d)
		fmt.Fprintf(&got, "%s %s\n", c.tool, raw)
	}
	path := filepath.Join("testdata", "reference_shapes.golden")
	text := strings.ReplaceAll(got.String(), repo, "$REPO")
	if *updateReference {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if text != string(want) {
		t.Fatalf("the reference shape changed (the golden file is the code's output before the lean shapes; -update-reference only after checking):\n got:\n%s\nwant:\n%s", text, want)
	}
}

// updateReference rewrites testdata/reference_shapes.golden. The reference
// shape is not meant to change: regenerate only from the code as it was.
var updateReference = flag.Bool("update-reference", false, "rewrite testdata/reference_shapes.golden")

// withoutRepeatedHeaders is git's patch minus exactly the header lines the
// lean diff.text leaves out, written independently of leanPatchHeaders: in
// each file's header (its "diff " line to its first "@@"), index lines with
// no mode or mode 100644, and ---/+++ lines (these fixtures' patches have no
// renames, new or deleted files, so those name the diff line's paths).
func withoutRepeatedHeaders(patch string) string {
	var b strings.Builder
	header := false
	for _, line := range strings.SplitAfter(patch, "\n") {
		switch {
		case strings.HasPrefix(line, "diff "):
			header = true
		case strings.HasPrefix(line, "@@"):
			header = false
		case header && (strings.HasPrefix(line, "--- ") || strings.HasPrefix(line, "+++ ")):
			continue
		case header && strings.HasPrefix(line, "index "):
			if f := strings.Fields(line); len(f) == 2 || (len(f) == 3 && f[2] == "100644") {
				continue
			}
		}
		b.WriteString(line)
	}
	return b.String()
}
