package repo

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// referenceEntries is what git's own recursion (a plain status, run by
// the test, not by fluxgit) reports for the work tree.
func referenceEntries(t *testing.T, repo, untracked string) []statusEntry {
	t.Helper()
	ps := &statusParser{max: 1 << 20, data: statusData{Entries: []statusEntry{}}}
	for _, f := range strings.Split(git(t, repo, "status", "--porcelain=v2", "-z", "--untracked-files="+untracked), "\x00") {
		if f == "" {
			continue
		}
		if err := ps.field([]byte(f)); err != nil {
			t.Fatalf("%v on %q", err, f)
		}
	}
	return ps.data.Entries
}

// TestDirtySubmodulesMatchGit: git may not look inside submodules any
// more (the runner passes --ignore-submodules=dirty), so the dirtiness it
// used to report is recovered by fluxgit's own hardened runs. repo.status,
// worktree.changes and repo.brief must still say exactly what git's own
// recursion says, for work-tree changes at depth 1 and 2, untracked
// content, and a gitlink that is also staged or at new commits.
func TestDirtySubmodulesMatchGit(t *testing.T) {
	referenceShape(t) // asserts the reference shape
	cases := map[string]func(t *testing.T, top string){
		"clean submodules":            func(t *testing.T, top string) {},
		"modified file in submodule":  func(t *testing.T, top string) { write(t, top, "modA/a.txt", "changed\n") },
		"untracked file in submodule": func(t *testing.T, top string) { write(t, top, "modA/new.txt", "x\n") },
		"modified file at depth 2":    func(t *testing.T, top string) { write(t, top, "modA/inner/a.txt", "changed\n") },
		"untracked file at depth 2":   func(t *testing.T, top string) { write(t, top, "modA/inner/new.txt", "x\n") },
		"new commits in submodule": func(t *testing.T, top string) {
			git(t, filepath.Join(top, "modA"), "commit", "-q", "--allow-empty", "-m", "drift")
		},
		"new commits and dirty": func(t *testing.T, top string) {
			git(t, filepath.Join(top, "modA"), "commit", "-q", "--allow-empty", "-m", "drift")
			write(t, top, "modA/inner/new.txt", "x\n")
		},
		"staged gitlink and dirty": func(t *testing.T, top string) {
			git(t, top, "add", "modA")
			write(t, top, "modA/a.txt", "changed\n")
		},
		"second submodule dirty, top file changed": func(t *testing.T, top string) {
			write(t, top, "modB/a.txt", "changed\n")
			write(t, top, "a.txt", "top change\n")
			write(t, top, "zz-untracked", "x\n")
		},
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			f := submoduleRepo(t)
			top := f.top
			// No gitlink leading outside here: git's recursion would
			// follow it and fluxgit rightly would not.
			git(t, top, "update-index", "--force-remove", "evil")
			if err := os.RemoveAll(filepath.Join(top, "evil")); err != nil {
				t.Fatal(err)
			}
			git(t, top, "-c", "protocol.file.allow=always", "submodule", "update", "-q", "--init", "modB")
			// modA back at its recorded commit: only dirtiness can make
			// it show up now.
			git(t, filepath.Join(top, "modA"), "checkout", "-q", "--detach", f.libA2)
			mutate(t, top)

			want := referenceEntries(t, top, "all")
			var d statusData
			mustOK(t, "repo.status", map[string]any{"repoPath": top}, &d)
			if !reflect.DeepEqual(d.Entries, want) {
				t.Fatalf("repo.status entries\n got  %+v\n want %+v", d.Entries, want)
			}
			if d.Clean != (len(want) == 0) || d.ChangedFiles != int64(len(want)) {
				t.Fatalf("repo.status clean=%v changed=%d, want %d entries", d.Clean, d.ChangedFiles, len(want))
			}
			var wc worktreeChangesData
			mustOK(t, "worktree.changes", map[string]any{"repoPath": top}, &wc)
			var unstaged []statusEntry
			for _, e := range want {
				if e.Status != "??" && e.Status[1] != ' ' {
					unstaged = append(unstaged, e)
				}
			}
			if len(unstaged) == 0 {
				unstaged = []statusEntry{}
			}
			if !reflect.DeepEqual(wc.Unstaged, unstaged) {
				t.Fatalf("worktree.changes unstaged\n got  %+v\n want %+v", wc.Unstaged, unstaged)
			}
			if b, _ := briefOf(t, top); b.WorkingTree != referenceTree(t, top) {
				t.Fatalf("repo.brief tree %+v, reference %+v", b.WorkingTree, referenceTree(t, top))
			}
		})
	}
}

// TestGitlinkCacheFollowsTheIndex: gitlinks read from an index that has
// settled are reused, and a new index (git renames one over the old) is
// read again, so a submodule added since is seen at once.
func TestGitlinkCacheFollowsTheIndex(t *testing.T) {
	repo := newRepo(t)
	gitDir := filepath.Join(repo, ".git")
	// Let the index age past the clock-granularity window, so the first
	// read may be cached.
	time.Sleep(1100 * time.Millisecond)
	p := New()
	for i := 0; i < 2; i++ {
		links, err := p.gitlinksOf(context.Background(), repo, gitDir)
		if err != nil || len(links) != 0 {
			t.Fatalf("read %d: %v %v", i, links, err)
		}
	}
	if _, ok := p.gitlinks.get(gitDir); !ok {
		t.Fatal("a settled index was not cached")
	}
	head := git(t, repo, "rev-parse", "HEAD")
	git(t, repo, "update-index", "--add", "--cacheinfo", "160000,"+head+",sub")
	links, err := p.gitlinksOf(context.Background(), repo, gitDir)
	if err != nil || len(links) != 1 || string(links[0].path) != "sub" {
		t.Fatalf("after adding a gitlink: %v %v", links, err)
	}
}
