package credpaths

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func realTemp(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func mkdir(t *testing.T, p string) string {
	t.Helper()
	if err := os.MkdirAll(p, 0o700); err != nil {
		t.Fatal(err)
	}
	return p
}

// Reachable: inside an allowed root, inside a work tree (a .git directory
// or file, at any height, with or without roots), through a symlink into
// either; outside all of them, not.
func TestReachable(t *testing.T) {
	base := realTemp(t)
	repo := mkdir(t, filepath.Join(base, "repo"))
	mkdir(t, filepath.Join(repo, ".git"))
	linked := mkdir(t, filepath.Join(base, "linked"))
	if err := os.WriteFile(filepath.Join(linked, ".git"), []byte("gitdir: /elsewhere\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	root := mkdir(t, filepath.Join(base, "root"))
	outside := mkdir(t, filepath.Join(base, "private"))
	link := filepath.Join(outside, "into-repo")
	if err := os.Symlink(filepath.Join(repo, "sub"), link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		path  string
		roots []string
		why   string // "" means unreachable
	}{
		{"run dir inside a work tree", filepath.Join(repo, ".fluxgit-run", "gateway"), nil, "inside git work tree " + repo},
		{"the work tree itself", repo, nil, "inside git work tree " + repo},
		{"inside .git", filepath.Join(repo, ".git", "fluxgit"), nil, "inside git work tree " + repo},
		{"linked worktree (.git file)", filepath.Join(linked, "x"), nil, "inside git work tree " + linked},
		{"work tree outside the roots", filepath.Join(repo, "x"), []string{root}, "inside git work tree " + repo},
		{"inside an allowed root", filepath.Join(root, "a", "b"), []string{root}, "inside allowed root " + root},
		{"the allowed root itself", root, []string{root}, "inside allowed root " + root},
		{"a sibling named like the root", root + "2", []string{root}, ""},
		{"through a symlink into a work tree", filepath.Join(link, "session.json"), nil, "inside git work tree " + repo},
		{"private, no roots", filepath.Join(outside, "secret"), nil, ""},
		{"private, roots elsewhere", filepath.Join(outside, "secret"), []string{root}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			why, reach := Reachable(tc.path, tc.roots)
			if reach != (tc.why != "") || why != tc.why {
				t.Fatalf("Reachable(%s) = %q, %v; want %q", tc.path, why, reach, tc.why)
			}
		})
	}
}

// ChooseSecretDir takes FLUXGIT_SECRET_DIR alone when set, refuses it
// inside a work tree with the fix, and otherwise skips candidates a read
// tool reaches (a $HOME that is a dotfiles repository) for the next.
func TestChooseSecretDir(t *testing.T) {
	base := realTemp(t)
	home := mkdir(t, filepath.Join(base, "home"))
	mkdir(t, filepath.Join(home, ".git")) // dotfiles
	runtimeDir := mkdir(t, filepath.Join(base, "run-user"))
	private := mkdir(t, filepath.Join(base, "private"))
	for _, tc := range []struct {
		name             string
		secret, xdg      string
		want, wantErrHas string
	}{
		{"explicit", private, "", private, ""},
		{"explicit inside a work tree", filepath.Join(home, "s"), runtimeDir, "", "inside git work tree " + home},
		{"runtime dir first", "", runtimeDir, filepath.Join(runtimeDir, "fluxgit"), ""},
		{"runtime dir inside the dotfiles", "", filepath.Join(home, "run"), "", EnvSecretDir},
		{"dotfiles home, no runtime dir", "", "", "", "nowhere private"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("HOME", home)
			t.Setenv("XDG_CACHE_HOME", "")
			t.Setenv("XDG_CONFIG_HOME", "")
			t.Setenv("TMPDIR", filepath.Join(home, "tmp")) // macOS' candidate, inside the dotfiles too
			t.Setenv(EnvSecretDir, tc.secret)
			t.Setenv("XDG_RUNTIME_DIR", tc.xdg)
			got, err := ChooseSecretDir(nil)
			if tc.wantErrHas != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErrHas) || !strings.Contains(err.Error(), "set "+EnvSecretDir) {
					t.Fatalf("ChooseSecretDir = %q, %v; want a refusal naming %q and the fix", got, err, tc.wantErrHas)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ChooseSecretDir = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// The session file's name is keyed by the canonical run directory.
func TestSessionFileName(t *testing.T) {
	a, b := realTemp(t), realTemp(t)
	link := filepath.Join(b, "link")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	if SessionFileName(a) != SessionFileName(link) {
		t.Fatal("a run directory named through a symlink has another session file")
	}
	if SessionFileName(a) == SessionFileName(b) {
		t.Fatal("two run directories share a session file")
	}
	if strings.Contains(SessionFileName(a), filepath.Base(a)) {
		t.Fatal("the session file name spells the run directory")
	}
}

// Protected lists every candidate secret directory and the run
// directory's gateway state, where the old session.json lived.
func TestProtectedHasGatewayState(t *testing.T) {
	run, secret := realTemp(t), realTemp(t)
	env := map[string]string{EnvRunDir: run, EnvSecretDir: secret}
	list := protected(func(k string) string { return env[k] })
	for _, p := range []string{filepath.Join(run, "gateway", "session.json"), filepath.Join(secret, SessionFileName(run))} {
		if _, ok := Contains(list, p); !ok {
			t.Errorf("%s is not protected: %+v", p, list)
		}
	}
}
