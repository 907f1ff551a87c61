package repo

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// refsFixture has branches, remote-tracking branches and tags whose name
// order and date order differ:
//
//	c1 (t)      old, tag v1.0, origin/dev, annotated v0.9-late tagged at t+5d
//	c2 (t+1d)   feature/x, feature/y/z, tag v1.2
//	c3 (t+2d)   main, tag v1.10, origin/main
func refsFixture(t *testing.T) string {
	t.Helper()
	dir := emptyRepo(t)
	const ada, mail = "Ada Author", "ada@example.com"
	t0 := int64(authorTime)
	var c []string
	for i := 0; i < 3; i++ {
		write(t, dir, "f.txt", fmt.Sprint(i))
		gitAs(t, dir, ada, mail, t0+int64(i)*day, "add", "-A")
		gitAs(t, dir, ada, mail, t0+int64(i)*day, "commit", "-q", "-m", fmt.Sprint("c", i+1))
		c = append(c, git(t, dir, "rev-parse", "HEAD"))
	}
	git(t, dir, "branch", "old", c[0])
	git(t, dir, "branch", "feature/x", c[1])
	git(t, dir, "branch", "feature/y/z", c[1])
	git(t, dir, "tag", "v1.0", c[0])
	git(t, dir, "tag", "v1.2", c[1])
	git(t, dir, "tag", "v1.10", c[2])
	gitAs(t, dir, ada, mail, t0+5*day, "tag", "-a", "-m", "late", "v0.9-late", c[0])
	git(t, dir, "update-ref", "refs/remotes/origin/main", c[2])
	git(t, dir, "update-ref", "refs/remotes/origin/dev", c[0])
	git(t, dir, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main")
	git(t, dir, "remote", "add", "origin", "https://user:secret@example.com/x.git")
	write(t, dir, "f.txt", "stash me\n")
	git(t, dir, "stash", "push", "-q", "-m", "wip")
	return dir
}

func TestRepoRefsOrderAndFilters(t *testing.T) {
	referenceShape(t) // the reference shape; the lean one: lean_shapes_test.go
	repo := refsFixture(t)
	stash := []string{"stash@{0}: On main: wip"}
	tests := []struct {
		name string
		args map[string]any
		want refsData
	}{
		{"default: branches by name, tags newest first", nil, refsData{Head: "main",
			Branches: []string{"feature/x", "feature/y/z", "main", "old", "origin/dev", "origin/main"},
			Tags:     []string{"v0.9-late", "v1.10", "v1.2", "v1.0"}, Remotes: []string{"origin"}, Stashes: stash}},
		{"sort name", map[string]any{"sort": "name"}, refsData{Head: "main",
			Branches: []string{"feature/x", "feature/y/z", "main", "old", "origin/dev", "origin/main"},
			Tags:     []string{"v0.9-late", "v1.0", "v1.10", "v1.2"}, Remotes: []string{"origin"}, Stashes: stash}},
		{"sort recency, ties by name", map[string]any{"sort": "recency"}, refsData{Head: "main",
			Branches: []string{"main", "feature/x", "feature/y/z", "old", "origin/main", "origin/dev"},
			Tags:     []string{"v0.9-late", "v1.10", "v1.2", "v1.0"}, Remotes: []string{"origin"}, Stashes: stash}},
		{"pattern star crosses slashes", map[string]any{"pattern": "feature/*"}, refsData{Head: "main",
			Branches: []string{"feature/x", "feature/y/z"}, Tags: []string{}, Remotes: []string{"origin"}, Stashes: stash}},
		{"pattern question mark", map[string]any{"pattern": "v1.?"}, refsData{Head: "main",
			Branches: []string{}, Tags: []string{"v1.2", "v1.0"}, Remotes: []string{"origin"}, Stashes: stash}},
		{"pattern class", map[string]any{"pattern": "v1.[!2]*", "sort": "name"}, refsData{Head: "main",
			Branches: []string{}, Tags: []string{"v1.0", "v1.10"}, Remotes: []string{"origin"}, Stashes: stash}},
		{"pattern on remote short names", map[string]any{"pattern": "*main"}, refsData{Head: "main",
			Branches: []string{"main", "origin/main"}, Tags: []string{}, Remotes: []string{"origin"}, Stashes: stash}},
		{"pattern without wildcards is exact", map[string]any{"pattern": "old"}, refsData{Head: "main",
			Branches: []string{"old"}, Tags: []string{}, Remotes: []string{"origin"}, Stashes: stash}},
		{"kinds tags", map[string]any{"kinds": []string{"tags"}}, refsData{Head: "main",
			Branches: []string{}, Tags: []string{"v0.9-late", "v1.10", "v1.2", "v1.0"}, Remotes: []string{}, Stashes: []string{}}},
		{"kinds remote branches by recency", map[string]any{"kinds": []string{"remoteBranches"}, "sort": "recency"}, refsData{Head: "main",
			Branches: []string{"origin/main", "origin/dev"}, Tags: []string{}, Remotes: []string{}, Stashes: []string{}}},
		{"kinds branches and stashes", map[string]any{"kinds": []string{"branches", "stashes"}, "pattern": "o*"}, refsData{Head: "main",
			Branches: []string{"old"}, Tags: []string{}, Remotes: []string{}, Stashes: stash}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := map[string]any{"repoPath": repo}
			for k, v := range tt.args {
				args[k] = v
			}
			var d refsData
			raw := mustOK(t, "repo.refs", args, &d)
			if !reflect.DeepEqual(d, tt.want) {
				t.Fatalf("got  %+v\nwant %+v", d, tt.want)
			}
			if strings.Contains(raw, "secret") {
				t.Fatalf("remote URL leaked: %s", raw)
			}
		})
	}

	refused := []struct {
		name string
		args map[string]any
		want string
	}{
		{"sort", map[string]any{"sort": "date"}, "arguments.sort must be recency or name"},
		{"empty kinds", map[string]any{"kinds": []string{}}, "arguments.kinds is empty"},
		{"unknown kind", map[string]any{"kinds": []string{"tags", "heads"}}, `arguments.kinds[1] must be one of`},
		{"unclosed class", map[string]any{"pattern": "v[12"}, "arguments.pattern has a '[' without its closing ']'"},
		{"empty pattern", map[string]any{"pattern": ""}, "arguments.pattern must not be empty"},
		{"lone backslash", map[string]any{"pattern": `v1\`}, "arguments.pattern ends with a lone backslash"},
	}
	for _, tt := range refused {
		t.Run("refused "+tt.name, func(t *testing.T) {
			tt.args["repoPath"] = repo
			mustArgError(t, "repo.refs", tt.args, tt.want)
		})
	}
}

// TestRepoRefsPatternIsNotAnOption: a pattern that looks like an option is
// matched against names in Go and never reaches git; it finds the hostile
// refs by name and writes nothing.
func TestRepoRefsPatternIsNotAnOption(t *testing.T) {
	referenceShape(t) // the reference shape; the lean one: lean_shapes_test.go
	repo := newRepo(t)
	cwd, _ := os.Getwd()
	git(t, repo, "update-ref", "refs/heads/--output=pwned", "HEAD")
	git(t, repo, "update-ref", "refs/tags/--upload-pack=pwned", "HEAD")
	for _, tt := range []struct {
		pattern        string
		branches, tags []string
	}{
		{"--output=*", []string{"--output=pwned"}, []string{}},
		{"--upload-pack=pwned", []string{}, []string{"--upload-pack=pwned"}},
		{"-c core.pager=touch pwned", []string{}, []string{}},
	} {
		var d refsData
		mustOK(t, "repo.refs", map[string]any{"repoPath": repo, "pattern": tt.pattern}, &d)
		if !reflect.DeepEqual(d.Branches, tt.branches) || !reflect.DeepEqual(d.Tags, tt.tags) {
			t.Errorf("%q: branches %q tags %q", tt.pattern, d.Branches, d.Tags)
		}
	}
	assertNoPwned(t, repo, cwd, filepath.Dir(repo))
}

// TestRepoRefsRecencyKeepsNewestTags: with more tags than the cap, the
// default order keeps the newest ones (the complaint: cutting by
// name dropped the latest releases); sort "name" keeps the first names.
func TestRepoRefsRecencyKeepsNewestTags(t *testing.T) {
	referenceShape(t) // the reference shape; the lean one: lean_shapes_test.go
	repo := emptyRepo(t)
	n := maxRefs + 5
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "commit refs/heads/main\nmark :%d\ncommitter A <a@example.com> %d +0000\ndata 2\nc\n", i+1, authorTime+i*60)
		if i > 0 {
			fmt.Fprintf(&b, "from :%d\n", i)
		}
		fmt.Fprintf(&b, "\nreset refs/tags/t%d\nfrom :%d\n\n", 10000+i, i+1)
	}
	cmd := execGit(repo, "fast-import", "--quiet")
	cmd.Stdin = strings.NewReader(b.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	for _, tt := range []struct {
		sort        any
		first, last string
	}{
		{nil, fmt.Sprint("t", 10000+n-1), "t10005"},
		{"recency", fmt.Sprint("t", 10000+n-1), "t10005"},
		{"name", "t10000", fmt.Sprint("t", 10000+maxRefs-1)},
	} {
		args := map[string]any{"repoPath": repo, "kinds": []string{"tags"}}
		if tt.sort != nil {
			args["sort"] = tt.sort
		}
		var d refsData
		mustOK(t, "repo.refs", args, &d)
		if len(d.Tags) != maxRefs || !d.Truncated || d.Tags[0] != tt.first || d.Tags[maxRefs-1] != tt.last {
			t.Errorf("sort %v: %d tags, truncated=%v, first %q last %q; want %q..%q", tt.sort, len(d.Tags), d.Truncated, d.Tags[0], d.Tags[len(d.Tags)-1], tt.first, tt.last)
		}
	}
}

func TestGlob(t *testing.T) {
	tests := []struct {
		pat, name string
		want      bool
	}{
		{"*", "a/b/c", true},
		{"a*c", "a/b/c", true},
		{"a*c", "a/b/d", false},
		{"v?.0", "v1.0", true},
		{"v?.0", "v10.0", false},
		{"v[0-9].*", "v3.x", true},
		{"v[!0-9]*", "v3", false},
		{"v[^0-9]*", "vx", true},
		{"[]]x", "]x", true},
		{`a\*b`, "a*b", true},
		{`a\*b`, "axb", false},
		{"ü*", "über", true},
		{"*.*.*", "1.2.3", true},
		{"*.*.*", "1.2", false},
		{"feat", "feature", false},
		{"**", "", true},
	}
	for _, tt := range tests {
		g, err := compileGlob(tt.pat)
		if err != nil {
			t.Fatalf("%q: %v", tt.pat, err)
		}
		if got := g.match(tt.name); got != tt.want {
			t.Errorf("%q ~ %q = %v, want %v", tt.pat, tt.name, got, tt.want)
		}
	}
}
