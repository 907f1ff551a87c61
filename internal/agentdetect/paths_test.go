package agentdetect

import (
	"os"
	"path/filepath"
	"testing"
)

func TestInRepoAndRepoRelative(t *testing.T) {
	repo := newRepo(t, "repo")
	wt := filepath.Join(repo, ".worktrees", "w1") // a worktree nested in the main work tree
	if err := os.MkdirAll(filepath.Join(wt, "pkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	links := t.TempDir()
	link := filepath.Join(links, "repo-link")
	if err := os.Symlink(repo, link); err != nil {
		t.Skip(err)
	}
	q := Query{Repo: repo, Worktrees: []string{repo, wt}}
	viaLink := Query{Repo: link} // a repository spelled through a link
	tests := []struct {
		name  string
		q     Query
		path  string
		in    bool
		rel   string
		relOK bool
	}{
		{"top level", q, repo, true, "", false},
		{"file inside", q, filepath.Join(repo, "sub", "x.go"), true, "sub/x.go", true},
		{"sibling with the same prefix", q, repo + "-old", false, "", false},
		{"parent", q, filepath.Dir(repo), false, "", false},
		{"path through a symlink", q, filepath.Join(link, "sub"), true, "sub", true},
		{"repository through a symlink", viaLink, filepath.Join(repo, "sub"), true, "sub", true},
		{"nested worktree is relative to itself", q, filepath.Join(wt, "pkg", "a.go"), true, "pkg/a.go", true},
		{"relative path", q, "sub/../sub/y.go", false, "sub/y.go", true},
		{"relative path climbing out", q, "../etc/passwd", false, "", false},
		{"backslashes", q, `sub\z.go`, false, "sub/z.go", true},
		{"empty", q, "", false, "", false},
	}
	for _, tt := range tests {
		if got := InRepo(tt.path, tt.q); got != tt.in {
			t.Errorf("%s: InRepo = %v, want %v", tt.name, got, tt.in)
		}
		rel, ok := RepoRelative(tt.path, tt.q)
		if rel != tt.rel || ok != tt.relOK {
			t.Errorf("%s: RepoRelative = %q %v, want %q %v", tt.name, rel, ok, tt.rel, tt.relOK)
		}
	}
}
