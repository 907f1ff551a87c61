//go:build unix

package repo

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// TestConfineRepo drives the one containment decision directly: each
// hostile layout is refused as outside the roots (-32011 at the host) naming the location in repository
// terms (never the outside path), in-root links pass, and a FIFO where an
// alternates file belongs is refused instead of blocking the check.
func TestConfineRepo(t *testing.T) {
	base := tempDir(t)
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{root, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mk := func(name string) string {
		dir := filepath.Join(root, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		git(t, dir, "init", "-q", "-b", "main")
		return dir
	}
	link := func(target, at string) {
		if err := os.RemoveAll(at); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, at); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name  string
		setup func(repo string)
		want  string // "" means allowed
	}{
		{"plain", func(string) {}, ""},
		{"objects out", func(r string) { link(outside, filepath.Join(r, ".git", "objects")) }, "the repository's .git/objects is a symlink"},
		{"one pack out", func(r string) {
			write(filepath.Join(outside, "x.pack"), "PACK")
			link(filepath.Join(outside, "x.pack"), filepath.Join(r, ".git", "objects", "pack", "pack-1.pack"))
		}, ".git/objects/pack/pack-1.pack"},
		{"dangling HEAD out", func(r string) { link(filepath.Join(outside, "HEAD"), filepath.Join(r, ".git", "HEAD")) }, ".git/HEAD"},
		{"relative alternate out", func(r string) {
			write(filepath.Join(r, ".git", "objects", "info", "alternates"), "../../../../outside\n")
		}, "entry 1 of the repository's .git/objects/info/alternates"},
		{"quoted alternate out", func(r string) {
			write(filepath.Join(r, ".git", "objects", "info", "alternates"), "\n# c\n\""+outside+"\"\n")
		}, "entry 3 of the repository's .git/objects/info/alternates"},
		{"fifo alternates", func(r string) {
			if err := syscall.Mkfifo(filepath.Join(r, ".git", "objects", "info", "alternates"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, ".git/objects/info/alternates cannot be checked"},
		{"in-root link and alternate", func(r string) {
			other := mk("other-" + filepath.Base(r))
			link(filepath.Join(other, ".git", "info"), filepath.Join(r, ".git", "info"))
			write(filepath.Join(r, ".git", "objects", "info", "alternates"), filepath.Join(other, ".git", "objects")+"\n")
		}, ""},
		{"link out inside an in-root link target", func(r string) {
			other := mk("other-" + filepath.Base(r))
			link(outside, filepath.Join(other, ".git", "info", "grafts"))
			link(filepath.Join(other, ".git", "info"), filepath.Join(r, ".git", "info"))
		}, "(the target of .git/info)/grafts"},
		{"hooks are never read", func(r string) { link(outside, filepath.Join(r, ".git", "hooks")) }, ""},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := mk("r" + string(rune('a'+i)))
			tt.setup(repo)
			dotgit := filepath.Join(repo, ".git")
			err := confineRepo([]string{root}, repo, dotgit, dotgit, nil, nil)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if err := confineRepo(nil, repo, dotgit, dotgit, nil, nil); err != nil {
					t.Fatalf("unconfined: %v", err)
				}
				return
			}
			var re *sdk.Error
			if !errors.As(err, &re) || re.Kind != sdk.KindOutsideRoots || re.Message != "Repository path is outside the MCP allowed roots" {
				t.Fatalf("want an outside-roots refusal, got %v", err)
			}
			d, _ := re.Data["details"].(string)
			if !strings.Contains(d, tt.want) || !strings.Contains(d, "fix:") || strings.Contains(d, outside) {
				t.Fatalf("details %q, want %q and a fix, without the outside path", d, tt.want)
			}
			if err := confineRepo(nil, repo, dotgit, dotgit, nil, nil); err != nil {
				t.Fatalf("unconfined must allow everything: %v", err)
			}
		})
	}
}

// TestConfineWalkCache: a clean walk is reused only while nothing it
// depended on changed. Each step lets the git directories settle past the
// clock-granularity window, proves the walk was cached, then changes one
// thing the walk relied on and expects the refusal at once: a symlink out
// planted in a listed directory, and a symlink elsewhere (outside the git
// directory, not listed) on the way to an in-root link target.
func TestConfineWalkCache(t *testing.T) {
	base := tempDir(t)
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{root, outside, filepath.Join(root, "shared", "info"), filepath.Join(outside, "info")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	repo := filepath.Join(root, "repo")
	if err := os.Mkdir(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, repo, "init", "-q", "-b", "main")
	dotgit := filepath.Join(repo, ".git")
	// .git/info -> root/hop/info, where root/hop -> root/shared (in root).
	hop := filepath.Join(root, "hop")
	if err := os.Symlink(filepath.Join(root, "shared"), hop); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dotgit, "info")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(hop, "info"), filepath.Join(dotgit, "info")); err != nil {
		t.Fatal(err)
	}
	roots := []string{root}
	cache := &walkCache{}
	key := strings.Join(roots, "\x00") + "\x00" + dotgit + "\x00" + dotgit
	settledAndCached := func() {
		t.Helper()
		time.Sleep(1100 * time.Millisecond) // past the clock-granularity window
		for i := 0; i < 2; i++ {
			if err := confineRepo(roots, repo, dotgit, dotgit, nil, cache); err != nil {
				t.Fatalf("clean repository refused: %v", err)
			}
		}
		if _, ok := cache.get(key); !ok {
			t.Fatal("a settled clean walk was not cached")
		}
	}
	refused := func(what string) {
		t.Helper()
		var re *sdk.Error
		if err := confineRepo(roots, repo, dotgit, dotgit, nil, cache); !errors.As(err, &re) || re.Kind != sdk.KindOutsideRoots {
			t.Fatalf("%s: want an outside-roots refusal at once, got %v", what, err)
		}
	}

	settledAndCached()
	if err := os.Remove(hop); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, hop); err != nil {
		t.Fatal(err)
	}
	refused("a symlink on the way to an in-root link target now leads out")
	if err := os.Remove(hop); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "shared"), hop); err != nil {
		t.Fatal(err)
	}

	settledAndCached()
	objDir := filepath.Join(dotgit, "objects", "ab")
	if err := os.MkdirAll(objDir, 0o755); err != nil {
		t.Fatal(err)
	}
	settledAndCached()
	if err := os.Symlink(filepath.Join(outside, "info"), filepath.Join(objDir, "cdef")); err != nil {
		t.Fatal(err)
	}
	refused("a symlink out planted in a listed directory")
}
