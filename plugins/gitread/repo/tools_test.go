package repo

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/fluxgit/fluxgit/plugins/sdk"
)

func TestRepoRefs(t *testing.T) {
	referenceShape(t) // the reference shape; the lean one: lean_shapes_test.go
	tests := []struct {
		name  string
		setup func(t *testing.T) string
		want  refsData
	}{
		{
			name:  "empty repository",
			setup: emptyRepo,
			want:  refsData{Head: "main", Branches: []string{}, Tags: []string{}, Remotes: []string{}, Stashes: []string{}},
		},
		{
			name: "branches, remotes, tags, stashes",
			setup: func(t *testing.T) string {
				remote := tempDir(t)
				git(t, remote, "init", "-q", "--bare", "-b", "main")
				seed := newRepo(t)
				git(t, seed, "branch", "feature")
				git(t, seed, "push", "-q", remote, "main", "feature")
				work := filepath.Join(tempDir(t), "work")
				git(t, filepath.Dir(work), "clone", "-q", remote, work)
				git(t, work, "remote", "add", "backup", "https://user:secret@example.com/x.git")
				git(t, work, "branch", "topic/one")
				git(t, work, "tag", "v1.0")
				git(t, work, "tag", "-a", "-m", "annotated", "v2.0")
				// Refs whose names look like options must come back verbatim.
				git(t, work, "update-ref", "refs/heads/--output=pwned", "HEAD")
				git(t, work, "update-ref", "refs/tags/--output=pwned-tag", "HEAD")
				write(t, work, "a.txt", "stash me\n")
				git(t, work, "stash", "push", "-q", "-m", "first stash")
				write(t, work, "a.txt", "stash me too\n")
				git(t, work, "stash", "push", "-q", "-m", "second stash")
				return work
			},
			want: refsData{
				Head:     "main",
				Branches: []string{"--output=pwned", "main", "topic/one", "origin/feature", "origin/main"},
				Tags:     []string{"--output=pwned-tag", "v1.0", "v2.0"},
				Remotes:  []string{"backup", "origin"},
				Stashes:  []string{"stash@{0}: On main: second stash", "stash@{1}: On main: first stash"},
			},
		},
		{
			name: "detached HEAD",
			setup: func(t *testing.T) string {
				repo := newRepo(t)
				git(t, repo, "checkout", "-q", "--detach")
				return repo
			},
			want: refsData{Head: "HEAD", Detached: true, Branches: []string{"main"}, Tags: []string{}, Remotes: []string{}, Stashes: []string{}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := tt.setup(t)
			cwd, _ := os.Getwd()
			var d refsData
			raw := mustOK(t, "repo.refs", map[string]any{"repoPath": repo}, &d)
			if !reflect.DeepEqual(d, tt.want) {
				t.Fatalf("got  %+v\nwant %+v", d, tt.want)
			}
			if strings.Contains(raw, "example.com") || strings.Contains(raw, "secret") {
				t.Fatalf("remote URL leaked: %s", raw)
			}
			assertNoPwned(t, repo, cwd, filepath.Dir(repo))
		})
	}
}

func TestRepoRefsTruncation(t *testing.T) {
	referenceShape(t) // the reference shape; the lean one: lean_shapes_test.go
	repo := newRepo(t)
	var b strings.Builder
	head := git(t, repo, "rev-parse", "HEAD")
	for i := 0; i < maxRefs+5; i++ {
		b.WriteString("create refs/tags/t" + strconv.Itoa(10000+i) + " " + head + "\n")
	}
	cmd := execGit(repo, "update-ref", "--stdin")
	cmd.Stdin = strings.NewReader(b.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	var d refsData
	mustOK(t, "repo.refs", map[string]any{"repoPath": repo}, &d)
	if len(d.Tags) != maxRefs || !d.Truncated || d.Tags[0] != "t10000" || len(d.Branches) != 1 {
		t.Fatalf("tags=%d truncated=%v first=%q", len(d.Tags), d.Truncated, d.Tags[0])
	}
}

func TestRepoHistory(t *testing.T) {
	referenceShape(t) // the reference shape; the lean one: lean_shapes_test.go
	repo := newRepo(t)
	var hashes []string
	for i := 2; i <= 5; i++ {
		write(t, repo, "a.txt", strconv.Itoa(i))
		hashes = append(hashes, commitAll(t, repo, "commit "+strconv.Itoa(i)))
	}
	hashes = append(hashes, git(t, repo, "rev-parse", "HEAD~4"))
	// newest first: 5,4,3,2,first
	order := []string{hashes[3], hashes[2], hashes[1], hashes[0], hashes[4]}

	tests := []struct {
		name     string
		args     map[string]any
		wantHash []string
		wantNext any
	}{
		{"default page", nil, order, nil},
		{"first page", map[string]any{"limit": 2}, order[:2], "2"},
		{"second page", map[string]any{"limit": 2, "cursor": "2"}, order[2:4], "4"},
		{"last page", map[string]any{"limit": 2, "cursor": "4"}, order[4:], nil},
		{"past the end", map[string]any{"limit": 2, "cursor": "40"}, []string{}, nil},
		{"exact fit still offers a cursor", map[string]any{"limit": 5}, order, "5"},
		{"integral float limit", map[string]any{"limit": 1.0}, order[:1], "1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := map[string]any{"repoPath": repo}
			for k, v := range tt.args {
				args[k] = v
			}
			var d historyData
			raw := mustOK(t, "repo.history", args, &d)
			got := []string{}
			for _, c := range d.Commits {
				got = append(got, c.Hash)
			}
			if !reflect.DeepEqual(got, tt.wantHash) {
				t.Fatalf("hashes %q, want %q", got, tt.wantHash)
			}
			if tt.wantNext == nil {
				if d.NextCursor != nil || !strings.Contains(raw, `"nextCursor":null`) {
					t.Fatalf("nextCursor = %v", *d.NextCursor)
				}
			} else if d.NextCursor == nil || *d.NextCursor != tt.wantNext {
				t.Fatalf("nextCursor = %v, want %v", d.NextCursor, tt.wantNext)
			}
		})
	}

	t.Run("fields", func(t *testing.T) {
		var d historyData
		mustOK(t, "repo.history", map[string]any{"repoPath": repo, "limit": 1}, &d)
		want := historyCommit{Hash: order[0], ShortHash: order[0][:7], AuthorName: "Ada Author",
			AuthorEmail: "ada@example.com", AuthorTime: authorTime, Subject: "commit 5"}
		if d.Commits[0] != want {
			t.Fatalf("got %+v\nwant %+v", d.Commits[0], want)
		}
	})

	t.Run("empty repository", func(t *testing.T) {
		var d historyData
		raw := mustOK(t, "repo.history", map[string]any{"repoPath": emptyRepo(t)}, &d)
		if raw != `{"commits":[],"nextCursor":null}` {
			t.Fatalf("got %s", raw)
		}
	})

	for _, bad := range []string{"abc", "-1", "1.5", " 1", ""} {
		t.Run("cursor "+strconv.Quote(bad), func(t *testing.T) {
			mustArgError(t, "repo.history", map[string]any{"repoPath": repo, "cursor": bad}, "arguments.cursor must be a decimal offset")
		})
	}
	// git parses --skip into a C int: larger values wrap and a client
	// following nextCursor would loop forever.
	for _, big := range []string{"2147483648", "4294967296", "99999999999999999999999"} {
		t.Run("cursor "+big, func(t *testing.T) {
			mustArgError(t, "repo.history", map[string]any{"repoPath": repo, "cursor": big}, "arguments.cursor must be at most 2147483647")
		})
	}
}

func TestCommitDetails(t *testing.T) {
	referenceShape(t) // the reference shape; the lean one: lean_shapes_test.go
	repo := newRepo(t)
	root := git(t, repo, "rev-parse", "HEAD")
	write(t, repo, "b.txt", "b\n")
	write(t, repo, "a.txt", "alpha2\n")
	write(t, repo, "bad\xffname.txt", "x\n")
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "-q", "-m", "second subject\n\nbody line\n\n  \n")
	second := git(t, repo, "rev-parse", "HEAD")
	git(t, repo, "rm", "-q", "b.txt")
	git(t, repo, "commit", "-q", "-m", "remove b")
	third := git(t, repo, "rev-parse", "HEAD")
	git(t, repo, "checkout", "-q", "-b", "side", root)
	write(t, repo, "side.txt", "s\n")
	commitAll(t, repo, "side")
	git(t, repo, "checkout", "-q", "main")
	git(t, repo, "merge", "-q", "--no-ff", "-m", "merge side", "side")
	merge := git(t, repo, "rev-parse", "HEAD")
	git(t, repo, "tag", "v1", second)

	badB64 := base64.StdEncoding.EncodeToString([]byte("bad\xffname.txt"))
	tests := []struct {
		name     string
		commit   string
		hash     string
		parents  []string
		message  string
		files    []commitFile
		rawCheck string
	}{
		{"root commit", root, root, []string{}, "first", []commitFile{{Status: "A", Path: "a.txt"}}, `"parents":[]`},
		{"by tag, message trimmed, odd path", "v1", second, []string{root}, "second subject\n\nbody line", []commitFile{
			{Status: "M", Path: "a.txt"}, {Status: "A", Path: "b.txt"}, {Status: "A", Path: "bad\uFFFDname.txt", PathBase64: badB64},
		}, `"pathBase64":"` + badB64 + `"`},
		{"deletion by short hash", third[:10], third, []string{second}, "remove b", []commitFile{{Status: "D", Path: "b.txt"}}, ""},
		{"merge against first parent", "HEAD", merge, nil, "merge side", []commitFile{{Status: "A", Path: "side.txt"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d commitData
			raw := mustOK(t, "commit.details", map[string]any{"repoPath": repo, "commit": tt.commit}, &d)
			c := d.Commit
			if c.Hash != tt.hash || c.ShortHash != tt.hash[:7] || c.AuthorName != "Ada Author" ||
				c.AuthorEmail != "ada@example.com" || c.AuthorTime != authorTime || c.Message != tt.message {
				t.Fatalf("commit %+v", c)
			}
			if tt.parents != nil && !reflect.DeepEqual(c.Parents, tt.parents) {
				t.Fatalf("parents %q, want %q", c.Parents, tt.parents)
			}
			if tt.parents == nil && (len(c.Parents) != 2 || c.Parents[0] != third) {
				t.Fatalf("merge parents %q", c.Parents)
			}
			if !reflect.DeepEqual(d.Files, tt.files) || d.Truncated {
				t.Fatalf("files %+v, want %+v", d.Files, tt.files)
			}
			if tt.rawCheck != "" && !strings.Contains(raw, tt.rawCheck) {
				t.Fatalf("raw lacks %s: %s", tt.rawCheck, raw)
			}
		})
	}

	t.Run("unknown commit is 10010", func(t *testing.T) {
		for _, c := range []string{"deadbeef", "no-such-branch", "HEAD:a.txt"} {
			fd := mustFail(t, "commit.details", map[string]any{"repoPath": repo, "commit": c})
			if fd.Command[3] != "rev-parse" || !strings.Contains(fd.Details, "does not name a commit") {
				t.Fatalf("%q: %+v", c, fd)
			}
		}
	})
	t.Run("option-like commit refused", func(t *testing.T) {
		cwd, _ := os.Getwd()
		for _, c := range []string{"-h", "--output=pwned", "--all"} {
			mustArgError(t, "commit.details", map[string]any{"repoPath": repo, "commit": c}, "arguments.commit must not start with '-'")
		}
		assertNoPwned(t, repo, cwd)
	})
}

func TestCommitFilesTruncated(t *testing.T) {
	referenceShape(t) // the reference shape; the lean one: lean_shapes_test.go
	repo := newRepo(t)
	for i := 0; i < maxCommitFiles+3; i++ {
		write(t, repo, filepath.Join("many", strconv.Itoa(i)), "x")
	}
	commitAll(t, repo, "many files")
	var d commitData
	mustOK(t, "commit.details", map[string]any{"repoPath": repo, "commit": "HEAD"}, &d)
	if len(d.Files) != maxCommitFiles || !d.Truncated {
		t.Fatalf("files=%d truncated=%v", len(d.Files), d.Truncated)
	}
}

func TestDiffText(t *testing.T) {
	referenceShape(t) // the reference shape; the lean one: lean_shapes_test.go
	repo := newRepo(t)
	base := git(t, repo, "rev-parse", "HEAD")
	var lines []string
	for i := 0; i < 40; i++ {
		lines = append(lines, "line number "+strconv.Itoa(i))
	}
	write(t, repo, "a.txt", strings.Join(lines, "\n")+"\n")
	write(t, repo, "dir/b.txt", "b\n")
	head := commitAll(t, repo, "grow")
	write(t, repo, "a.txt", "worktree change\n")

	full := git(t, repo, "diff", base, head) + "\n"
	fullLines := int64(strings.Count(full, "\n"))
	onlyB := git(t, repo, "diff", base, head, "--", "dir/b.txt") + "\n"
	wt := git(t, repo, "diff") + "\n"

	tests := []struct {
		name      string
		args      map[string]any
		want      string
		truncated bool
		total     int64
		lines     int64
		path      any
	}{
		{"worktree", nil, wt, false, int64(len(wt)), int64(strings.Count(wt, "\n")), nil},
		{"base..head", map[string]any{"base": base, "head": "main"}, full, false, int64(len(full)), fullLines, nil},
		{"path filter", map[string]any{"base": base, "head": head, "path": "dir/b.txt"}, onlyB, false, int64(len(onlyB)), 7, "dir/b.txt"},
		{"absolute path inside repo", map[string]any{"base": base, "head": head, "path": filepath.Join(repo, "dir", "b.txt")}, onlyB, false, int64(len(onlyB)), 7, "dir/b.txt"},
		{"path equal to repoPath means none", map[string]any{"base": base, "head": head, "path": repo}, full, false, int64(len(full)), fullLines, nil},
		{"dot means none", map[string]any{"base": base, "head": head, "path": "."}, full, false, int64(len(full)), fullLines, nil},
		{"line cap", map[string]any{"base": base, "head": head, "maxLines": 3}, firstLines(full, 3), true, int64(len(full)), fullLines, nil},
		{"byte cap cuts at a newline", map[string]any{"base": base, "head": head, "maxBytes": 100}, upToNewline(full, 100), true, int64(len(full)), fullLines, nil},
		{"line cap then byte cap", map[string]any{"base": base, "head": head, "maxLines": 10, "maxBytes": 100}, upToNewline(firstLines(full, 10), 100), true, int64(len(full)), fullLines, nil},
		{"caps larger than the diff", map[string]any{"base": base, "head": head, "maxLines": 100000, "maxBytes": 1048576}, full, false, int64(len(full)), fullLines, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := map[string]any{"repoPath": repo}
			for k, v := range tt.args {
				args[k] = v
			}
			var d diffData
			raw := mustOK(t, "diff.text", args, &d)
			if d.Diff != tt.want {
				t.Fatalf("diff\n got %q\nwant %q", d.Diff, tt.want)
			}
			if d.Truncated != tt.truncated || d.TotalBytes != tt.total || d.TotalLines != tt.lines || d.Format != "text" {
				t.Fatalf("truncated=%v total=%d lines=%d; want %v %d %d", d.Truncated, d.TotalBytes, d.TotalLines, tt.truncated, tt.total, tt.lines)
			}
			wantMax := int64(65536)
			if mb, ok := tt.args["maxBytes"]; ok {
				wantMax = int64(mb.(int))
			}
			if d.MaxBytes != wantMax {
				t.Fatalf("maxBytes = %d", d.MaxBytes)
			}
			if tt.path == nil {
				if d.Path != nil || !strings.Contains(raw, `"path":null`) {
					t.Fatalf("path = %v", *d.Path)
				}
			} else if d.Path == nil || *d.Path != tt.path {
				t.Fatalf("path = %v", d.Path)
			}
			if b, ok := tt.args["base"]; ok && (d.Base == nil || *d.Base != b) {
				t.Fatalf("base echoed as %v", d.Base)
			}
			if _, ok := tt.args["head"]; !ok && (d.Head != nil || !strings.Contains(raw, `"head":null`)) {
				t.Fatalf("head should be null: %s", raw)
			}
		})
	}

	refusals := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"base": "--output=pwned"}, "arguments.base must not start with '-'"},
		{map[string]any{"head": "-p"}, "arguments.head must not start with '-'"},
		{map[string]any{"path": "../outside"}, "arguments.path must be repository-relative without '..'"},
		{map[string]any{"path": "dir/../../x"}, "arguments.path must be repository-relative without '..'"},
		{map[string]any{"path": "/etc/passwd"}, "arguments.path must be repository-relative without '..'"},
		{map[string]any{"path": filepath.Join(repo, "..", "x")}, "arguments.path must be repository-relative without '..'"},
		{map[string]any{"maxBytes": 0}, "arguments.maxBytes must be between 1 and 1048576"},
	}
	for _, r := range refusals {
		t.Run("refuse "+strings.TrimPrefix(r.want, "arguments."), func(t *testing.T) {
			args := map[string]any{"repoPath": repo}
			for k, v := range r.args {
				args[k] = v
			}
			mustArgError(t, "diff.text", args, r.want)
		})
	}
	cwd, _ := os.Getwd()
	assertNoPwned(t, repo, cwd)

	t.Run("unknown base is 10010", func(t *testing.T) {
		fd := mustFail(t, "diff.text", map[string]any{"repoPath": repo, "base": "nope"})
		if !strings.Contains(fd.Details, "arguments.base") {
			t.Fatalf("%+v", fd)
		}
	})
}

func firstLines(s string, n int) string {
	idx := 0
	for i := 0; i < n; i++ {
		idx += strings.IndexByte(s[idx:], '\n') + 1
	}
	return s[:idx]
}

func upToNewline(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:strings.LastIndexByte(s[:n], '\n')+1]
}

func TestTruncateDiff(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		maxLines int64
		maxBytes int64
		want     string
	}{
		{"fits", "a\nb\n", 0, 10, "a\nb\n"},
		{"line cap", "a\nb\nc\n", 2, 10, "a\nb\n"},
		{"line cap on unterminated last line", "a\nb", 5, 10, "a\nb"},
		{"byte cut at newline", "aaa\nbbb\n", 0, 6, "aaa\n"},
		{"no newline: whole runes only", "ééé", 0, 3, "é"},
		{"no newline: exact rune end", "ééé", 0, 4, "éé"},
		{"no newline: ascii", "abcdef", 0, 4, "abcd"},
		{"four-byte rune never split", "a😀", 0, 4, "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(truncateDiff([]byte(tt.in), tt.maxLines, tt.maxBytes)); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestReadsLeaveRepositoryUntouched runs every tool on a repository whose
// index is stat-dirty (a plain `git status` would rewrite it) and compares
// the whole tree, .git included, byte for byte and by mtime.
func TestReadsLeaveRepositoryUntouched(t *testing.T) {
	repo := newRepo(t)
	write(t, repo, "b.txt", "b\n")
	commitAll(t, repo, "second")
	git(t, repo, "stash", "list")
	write(t, repo, "a.txt", "alpha\n") // same content, new mtime: index is stale
	write(t, repo, "b.txt", "changed\n")
	write(t, repo, "untracked.txt", "u\n")

	before := snapshot(t, repo)
	headBefore, _ := os.ReadFile(filepath.Join(repo, ".git", "HEAD"))
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"repo.status", nil},
		{"repo.refs", nil},
		{"repo.history", nil},
		{"commit.details", map[string]any{"commit": "HEAD~1"}},
		{"diff.text", nil},
		{"diff.text", map[string]any{"base": "HEAD~1", "head": "HEAD", "path": "b.txt"}},
	}
	for _, c := range calls {
		args := map[string]any{"repoPath": repo}
		for k, v := range c.args {
			args[k] = v
		}
		var anyData map[string]any
		mustOK(t, c.tool, args, &anyData)
	}
	if d := diffSnapshots(before, snapshot(t, repo)); len(d) > 0 {
		t.Fatalf("repository modified:\n%s", strings.Join(d, "\n"))
	}
	headAfter, _ := os.ReadFile(filepath.Join(repo, ".git", "HEAD"))
	if string(headBefore) != string(headAfter) {
		t.Fatal("HEAD changed")
	}
}

func TestNotARepository(t *testing.T) {
	dir := tempDir(t)
	for _, tool := range []string{"repo.status", "repo.refs", "repo.history", "diff.text"} {
		t.Run(tool, func(t *testing.T) {
			fd := mustFail(t, tool, map[string]any{"repoPath": dir})
			want := append([]string{"git", "-C", dir}, discoveryArgs...)
			if !reflect.DeepEqual(fd.Command, want) || !strings.Contains(fd.Details, "not a git repository") {
				t.Fatalf("%+v", fd)
			}
		})
	}
}

func TestAllowedRoots(t *testing.T) {
	repo := newRepo(t)
	elsewhere := tempDir(t)
	// A linked worktree inside the allowed root whose git directory lives
	// in a repository outside it.
	wt := filepath.Join(elsewhere, "wt")
	git(t, repo, "worktree", "add", "-q", wt)

	tests := []struct {
		name    string
		repo    string
		roots   []string
		wantErr string
	}{
		{"inside", repo, []string{repo}, ""},
		{"inside a parent root", repo, []string{filepath.Dir(repo)}, ""},
		{"unconfined", wt, nil, ""},
		{"work tree outside", repo, []string{elsewhere}, "work tree resolves outside the allowed roots"},
		{"gitdir file leads outside", wt, []string{elsewhere}, "git directory resolves outside the allowed roots"},
		{"sibling prefix is not inside", repo, []string{repo + "x"}, "outside the allowed roots"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := map[string]any{"repoPath": tt.repo}
			if tt.wantErr == "" {
				res, err := call(t, "repo.status", args, tt.roots...)
				if err != nil || res.Error != nil {
					t.Fatalf("res %+v err %v", res, err)
				}
				return
			}
			_, err := call(t, "repo.status", args, tt.roots...)
			var re *sdk.Error
			if !errors.As(err, &re) || re.Kind != sdk.KindOutsideRoots {
				t.Fatalf("want an outside-roots refusal, got %v", err)
			}
			if d, _ := re.Data["details"].(string); !strings.Contains(d, tt.wantErr) {
				t.Fatalf("details %q, want %q", d, tt.wantErr)
			}
			if strings.Contains(fmt.Sprint(re.Data), elsewhere) {
				t.Fatalf("refusal discloses the path: %v", re.Data)
			}
		})
	}
}

func TestDispatchAndArguments(t *testing.T) {
	repo := newRepo(t)
	p := New()
	if _, err := p.CallTool(context.Background(), &sdk.Call{Tool: "repo.nope", Arguments: []byte(`{}`)}); !isArgErr(err) {
		t.Fatalf("unknown tool: %v", err)
	}
	tests := []struct {
		tool string
		args string
		want string
	}{
		{"repo.status", `{"repoPath":"relative/path"}`, "arguments.repoPath must be an absolute"},
		{"repo.status", `{}`, "arguments.repoPath is required"},
		{"repo.status", `[1,2]`, "input schema"},
		{"repo.status", `{"repoPath":"` + repo + `","maxEntries":0}`, "arguments.maxEntries must be between 1 and 10000"},
		{"repo.status", `{"repoPath":"` + repo + `","maxEntries":1.5}`, "arguments.maxEntries must be an integer"},
		{"repo.history", `{"repoPath":"` + repo + `","limit":201}`, "arguments.limit must be between 1 and 200"},
		{"commit.details", `{"repoPath":"` + repo + `"}`, "arguments.commit is required"},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.args, func(t *testing.T) {
			_, err := p.CallTool(context.Background(), &sdk.Call{Tool: tt.tool, Arguments: []byte(tt.args)})
			var ae *sdk.ArgumentError
			if !errors.As(err, &ae) || !strings.Contains(ae.Details, tt.want) {
				t.Fatalf("err %v, want details containing %q", err, tt.want)
			}
		})
	}
	if _, err := p.CallTool(context.Background(), nil); err == nil {
		t.Fatal("nil call accepted")
	}
}

func isArgErr(err error) bool {
	var ae *sdk.ArgumentError
	return errors.As(err, &ae)
}
