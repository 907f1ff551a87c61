package repo

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/fluxgit/fluxgit/internal/gitexec"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

func TestRepoBrief(t *testing.T) {
	t.Run("behind upstream with stash", func(t *testing.T) {
		repo := upstreamRepo(t)
		write(t, repo, "a.txt", "stash me\n")
		git(t, repo, "stash", "push", "-q")
		write(t, repo, "a.txt", "edit\n")
		write(t, repo, "new.txt", "n\n")
		git(t, repo, "add", "new.txt")
		write(t, repo, "u.txt", "u\n")
		git(t, repo, "remote", "set-head", "origin", "main")
		d, raw := briefOf(t, repo)
		h := d.Head
		if *h.Branch != "main" || *h.Upstream != "origin/main" || h.Ahead != 1 || h.Behind != 1 || h.Sha == nil {
			t.Fatalf("%s", raw)
		}
		if d.WorkingTree != (briefTree{Staged: 1, Unstaged: 1, Untracked: 1}) || d.Stashes != 1 {
			t.Fatalf("%s", raw)
		}
		if *d.Conventions.DefaultBranch != "main" || *d.Conventions.ConventionalCommitRatio != 0 || len(d.RecentCommits) != 2 {
			t.Fatalf("%s", raw)
		}
		if len(d.Hints) != 1 || !strings.Contains(d.Hints[0], "behind") {
			t.Fatalf("%s", raw)
		}
		t.Logf("repo.brief data: %d characters", utf8.RuneCountInString(raw))
	})
	t.Run("merge conflict", func(t *testing.T) {
		d, raw := briefOf(t, conflictRepo(t, "merge"))
		if d.OperationInProgress == nil || *d.OperationInProgress != "merge" || d.WorkingTree.Conflicted != 3 || !strings.Contains(d.Hints[0], "conflict.read") {
			t.Fatal(raw)
		}
	})
	t.Run("submodules", func(t *testing.T) {
		d, raw := briefOf(t, submoduleRepo(t).top)
		s := d.Submodules
		if s.Total != 3 || s.Clean != 1 || s.Drifted != 1 || s.Uninitialized != 1 || s.Skipped != 1 || len(s.Attention) != 2 {
			t.Fatal(raw)
		}
	})
	t.Run("empty repository", func(t *testing.T) {
		d, raw := briefOf(t, emptyRepo(t))
		if *d.Head.Branch != "main" || d.Head.Sha != nil || d.Conventions.ConventionalCommitRatio != nil || !d.WorkingTree.Clean {
			t.Fatal(raw)
		}
	})
	t.Run("conventional commits and detached", func(t *testing.T) {
		repo := newRepo(t)
		for i, s := range []string{"feat(api)!: x", "fix: y", "chore", "Docs: no"} {
			write(t, repo, "a.txt", strconv.Itoa(i))
			commitAll(t, repo, s)
		}
		git(t, repo, "checkout", "-q", "--detach")
		d, raw := briefOf(t, repo)
		if *d.Conventions.ConventionalCommitRatio != 0.4 || !d.Head.Detached || d.Head.Branch != nil {
			t.Fatal(raw)
		}
	})
}

// TestRepoBriefBudget: a busy repository (long branch name and subjects
// full of characters JSON escapes, thousands of changes, many submodules
// needing attention) stays under the character budget.
func TestRepoBriefBudget(t *testing.T) {
	referenceShape(t) // asserts the reference shape
	repo := newRepo(t)
	long := strings.Repeat("<&>", 300)
	for i := 0; i < 20; i++ {
		write(t, repo, "a.txt", strconv.Itoa(i))
		commitAll(t, repo, "feat(x): "+long+strconv.Itoa(i))
	}
	git(t, repo, "checkout", "-q", "-b", "topic/"+strings.Repeat("<long>-branch-", 17))
	var b strings.Builder
	for i := 0; i < 200; i++ {
		b.WriteString("160000 " + strings.Repeat("0", 39) + "1 0\tvendor/" + strings.Repeat("<deep>/", 30) + strconv.Itoa(i) + "\n")
	}
	cmd := execGit(repo, "update-index", "--index-info")
	cmd.Stdin = strings.NewReader(b.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	for i := 0; i < 3000; i++ {
		if err := os.WriteFile(filepath.Join(repo, "u"+strconv.Itoa(i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var d briefData
	res, err := call(t, "repo.brief", map[string]any{"repoPath": repo, "recentCommits": 20})
	if err != nil || res.Error != nil {
		t.Fatalf("%v %+v", err, res)
	}
	raw := string(res.Data)
	n := utf8.RuneCountInString(raw)
	t.Logf("repo.brief data on a busy repository: %d characters", n)
	if n >= briefBudget {
		t.Fatalf("%d characters: %s", n, raw)
	}
	_ = d
}

// benchRepo builds the large generated repository once (kept in the OS
// temp directory between runs).
func benchRepo(b *testing.B) string {
	b.Helper()
	if testing.Short() {
		b.Skip("needs the generated 20,000-file repository")
	}
	dir := filepath.Join(os.TempDir(), "fluxgit-bench-brief-20000x5000")
	if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
		return dir
	}
	cmd := exec.Command("go", "run", "./tests/genrepo", "-dir", dir, "-files", "20000", "-commits", "5000")
	cmd.Dir = filepath.Join("..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		b.Fatalf("genrepo: %v\n%s", err, out)
	}
	// The generator writes files and index in the same second, so every
	// entry is racily clean and each status would rehash all 20,000 files.
	// One ordinary status after a pause refreshes the index once (setup
	// only; the tools never write).
	time.Sleep(1100 * time.Millisecond)
	if out, err := execGit(dir, "status", "--porcelain").CombinedOutput(); err != nil {
		b.Fatalf("refresh: %v\n%s", err, out)
	}
	return dir
}

// BenchmarkRepoBrief measures one repo.brief call on the large repository
// and reports the size of its data.
func BenchmarkRepoBrief(b *testing.B) {
	referenceShape(b)
	repo := benchRepo(b)
	p := New()
	raw := []byte(`{"repoPath":` + strconv.Quote(repo) + `}`)
	var size int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := p.CallTool(context.Background(), &sdk.Call{Tool: "repo.brief", Arguments: raw})
		if err != nil || res.Error != nil {
			b.Fatalf("%v %+v", err, res)
		}
		size = utf8.RuneCount(res.Data)
	}
	b.ReportMetric(float64(size), "data-chars")
}

// BenchmarkRepoBriefSequentialBaseline runs, one after the other through
// the same hardened runner, the eight git processes the reference
// implementation of repo.brief starts; compare its ns/op with
// BenchmarkRepoBrief's.
func BenchmarkRepoBriefSequentialBaseline(b *testing.B) {
	repo := benchRepo(b)
	ctx := context.Background()
	calls := [][]string{
		{"status", "--porcelain=v1", "-b"},
		{"rev-parse", "--short", "HEAD"},
		{"rev-parse", "--git-dir"},
		{"stash", "list", "--format=%H"},
		{"ls-files", "--stage", "-z"},
		{"log", "--pretty=format:%h%x1f%s", "-n10"},
		{"log", "--pretty=format:%s", "-n50"},
		{"symbolic-ref", "--short", "refs/remotes/origin/HEAD"},
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, c := range calls {
			_, _ = gitexec.Capture(ctx, repo, 1<<20, c...)
		}
	}
}

// referenceTree counts a work tree the way repo.brief did with a single
// `git status --porcelain=v2 -z --untracked-files=all`.
func referenceTree(t *testing.T, repo string) briefTree {
	t.Helper()
	var tree briefTree
	ps := &statusParser{max: 1 << 20}
	out := git(t, repo, "status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all")
	for _, f := range strings.Split(out, "\x00") {
		if f == "" {
			continue
		}
		if err := ps.field([]byte(f)); err != nil {
			t.Fatalf("%v on %q", err, f)
		}
	}
	for _, e := range ps.data.Entries {
		switch {
		case e.Status == "??":
			tree.Untracked++
		case isConflict(e.Status):
			tree.Conflicted++
		default:
			if e.Status[0] != ' ' {
				tree.Staged++
			}
			if e.Status[1] != ' ' {
				tree.Unstaged++
			}
		}
	}
	tree.Clean = tree == briefTree{}
	return tree
}

// TestRepoBriefTreeParity: the untracked count now comes from ls-files
// (in parallel with a status that skips the walk) and the gitlinks from
// the index file; both must match the single-status reference and
// submodule.status in awkward cases: nested repositories, ignored files,
// untracked names that mimic an index record, gitlinks without
// .gitmodules, skip-worktree entries and conflicts.
func TestRepoBriefTreeParity(t *testing.T) {
	cases := map[string]func(t *testing.T) string{
		"mixed": func(t *testing.T) string {
			repo := newRepo(t)
			write(t, repo, ".gitignore", "*.log\nbuild/\n")
			write(t, repo, "d/e/f.txt", "x\n")
			write(t, repo, "s/skip.txt", "x\n")
			commitAll(t, repo, "more")
			git(t, repo, "update-index", "--skip-worktree", "s/skip.txt")
			write(t, repo, "a.txt", "changed\n")
			write(t, repo, "staged.txt", "s\n")
			git(t, repo, "add", "staged.txt")
			write(t, repo, "u1", "")
			write(t, repo, "deep/er/u2", "")
			write(t, repo, "d/e/u3", "")
			write(t, repo, "x.log", "ignored")
			write(t, repo, "build/out", "ignored")
			write(t, repo, "160000 "+strings.Repeat("1", 40)+" 0\tfake", "mimic")
			write(t, repo, "H 160000 "+strings.Repeat("2", 40)+" 0\tfake2", "mimic")
			write(t, repo, "empty-dir/.keep", "")
			if err := os.Remove(filepath.Join(repo, "empty-dir/.keep")); err != nil {
				t.Fatal(err)
			}
			nested := filepath.Join(repo, "nested")
			if err := os.MkdirAll(nested, 0o755); err != nil {
				t.Fatal(err)
			}
			git(t, nested, "init", "-q")
			write(t, nested, "inside", "x")
			// A gitlink with no .gitmodules at all.
			git(t, repo, "update-index", "--add", "--cacheinfo", "160000,"+strings.Repeat("3", 40)+",bare-link")
			return repo
		},
		"conflict": func(t *testing.T) string {
			repo := conflictRepo(t, "merge")
			write(t, repo, "untracked/one", "")
			return repo
		},
		"submodules": func(t *testing.T) string {
			repo := submoduleRepo(t).top
			write(t, repo, "modA/untracked-in-sub", "")
			write(t, repo, "top-untracked", "")
			return repo
		},
		"clean": func(t *testing.T) string { return newRepo(t) },
		"empty": func(t *testing.T) string {
			repo := emptyRepo(t)
			write(t, repo, "only-untracked", "")
			return repo
		},
	}
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			repo := mk(t)
			want := referenceTree(t, repo)
			if name == "submodules" {
				// The reference is git's own recursion, which also ran
				// status in "evil", whose git directory lies outside the
				// repository. fluxgit never enters it, so it cannot say
				// whether it is dirty and does not report it.
				want.Unstaged--
			}
			d, raw := briefOf(t, repo)
			if d.WorkingTree != want {
				t.Fatalf("brief %+v, reference %+v\n%s", d.WorkingTree, want, raw)
			}
			var sd submoduleData
			mustOK(t, "submodule.status", map[string]any{"repoPath": repo}, &sd)
			if s := d.Submodules; s.Total != sd.Total || s.Skipped != sd.Skipped {
				t.Fatalf("brief submodules %+v, submodule.status %+v", s, sd)
			}
			t.Logf("%+v", d.WorkingTree)
		})
	}
}
