package repo

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// gitLinksByGit lists gitlinks the way the submodule scan does.
func gitLinksByGit(t *testing.T, repo string) []gitlink {
	t.Helper()
	var set gitlinkSet
	for _, f := range strings.Split(git(t, repo, "ls-files", "--stage", "-z"), "\x00") {
		if f == "" {
			continue
		}
		if err := set.add([]byte(f)); err != nil {
			t.Fatal(err)
		}
	}
	return set.links
}

// linkRepo has gitlinks (one conflicted, one under a very long path, one
// without .gitmodules), an intent-to-add entry (extended flags, so index
// v3) and a skip-worktree entry.
func linkRepo(t *testing.T, objectFormat string) string {
	t.Helper()
	dir := tempDir(t)
	git(t, dir, "init", "-q", "-b", "main", "--object-format="+objectFormat)
	hex := strings.Repeat("1", 40)
	if objectFormat == "sha256" {
		hex = strings.Repeat("1", 64)
	}
	for i := 0; i < 40; i++ {
		write(t, dir, filepath.Join("d", strings.Repeat("x", i%7), "f"+strings.Repeat("y", i)), "x")
	}
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "files")
	long := strings.Repeat("long-directory-name/", 230) + "link" // > 4095 bytes
	for _, p := range []string{"a-link", "d/x/inner-link", long} {
		git(t, dir, "update-index", "--add", "--cacheinfo", "160000,"+hex+","+p)
	}
	// A conflicted gitlink: stages 1-3.
	info := ""
	for st := 1; st <= 3; st++ {
		info += "160000 " + strings.Repeat(string(rune('a'+st)), len(hex)) + " " + string(rune('0'+st)) + "\tconflicted-link\n"
	}
	cmd := execGit(dir, "update-index", "--index-info")
	cmd.Stdin = strings.NewReader(info)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	write(t, dir, "ita.txt", "x")
	git(t, dir, "add", "-N", "ita.txt")
	git(t, dir, "update-index", "--skip-worktree", "d/f")
	return dir
}

func TestReadIndexGitlinks(t *testing.T) {
	for _, format := range []string{"sha1", "sha256"} {
		for _, version := range []string{"2", "3", "4"} {
			t.Run(format+"/v"+version, func(t *testing.T) {
				repo := linkRepo(t, format)
				if version == "2" {
					// v2 cannot hold intent-to-add; drop it.
					git(t, repo, "rm", "-q", "--cached", "ita.txt")
					git(t, repo, "update-index", "--no-skip-worktree", "d/f")
				}
				git(t, repo, "update-index", "--index-version", version)
				want := gitLinksByGit(t, repo)
				if len(want) != 4 {
					t.Fatalf("setup: %d gitlinks", len(want))
				}
				got, ok := readIndexGitlinks(filepath.Join(repo, ".git"))
				if !ok {
					t.Fatal("parser declined a plain index")
				}
				if !reflect.DeepEqual(got.links, want) {
					t.Fatalf("got %+v\nwant %+v", got.links, want)
				}
			})
		}
	}
	t.Run("no gitlinks", func(t *testing.T) {
		repo := newRepo(t)
		got, ok := readIndexGitlinks(filepath.Join(repo, ".git"))
		if !ok || len(got.links) != 0 {
			t.Fatalf("%v %+v", ok, got)
		}
	})
	t.Run("no index", func(t *testing.T) {
		if _, ok := readIndexGitlinks(filepath.Join(emptyRepo(t), ".git")); ok {
			t.Fatal("answered without an index")
		}
	})
	t.Run("split index declines", func(t *testing.T) {
		repo := linkRepo(t, "sha1")
		git(t, repo, "update-index", "--split-index")
		if _, ok := readIndexGitlinks(filepath.Join(repo, ".git")); ok {
			t.Fatal("split index parsed")
		}
	})
	t.Run("sparse index declines", func(t *testing.T) {
		repo := linkRepo(t, "sha1")
		git(t, repo, "rm", "-q", "--cached", "-r", ".")
		git(t, repo, "reset", "-q", "--hard")
		git(t, repo, "sparse-checkout", "set", "--cone", "--sparse-index", "d/x")
		if _, ok := readIndexGitlinks(filepath.Join(repo, ".git")); ok {
			t.Fatal("sparse index parsed")
		}
	})
	t.Run("damaged declines", func(t *testing.T) {
		repo := linkRepo(t, "sha1")
		idx := filepath.Join(repo, ".git", "index")
		b, err := os.ReadFile(idx)
		if err != nil {
			t.Fatal(err)
		}
		for _, cut := range []int{13, len(b) / 2, len(b) - 21} {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "index"), b[:cut], 0o644); err != nil {
				t.Fatal(err)
			}
			if _, ok := readIndexGitlinks(dir); ok {
				t.Fatalf("truncated index (%d of %d bytes) parsed", cut, len(b))
			}
		}
	})
}

// TestRepoBriefSubmodulesWithFallback: with a split index the brief falls
// back to ls-files and still reports the gitlinks.
func TestRepoBriefSubmodulesWithFallback(t *testing.T) {
	repo := linkRepo(t, "sha1")
	d1, raw1 := briefOf(t, repo)
	git(t, repo, "update-index", "--split-index")
	d2, raw2 := briefOf(t, repo)
	if d1.Submodules.Total != 4 || !reflect.DeepEqual(d1.Submodules, d2.Submodules) {
		t.Fatalf("%s\n%s", raw1, raw2)
	}
}
