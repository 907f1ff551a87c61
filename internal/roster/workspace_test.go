package roster

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func gitInit(t *testing.T, dir string) {
	t.Helper()
	cmd := exec.Command("git", "init", "-q", dir)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
}

func TestResolveDefaultWorkspace(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	base := realTempDir(t)
	repo := filepath.Join(base, "repo")
	sub := filepath.Join(repo, "src", "deep")
	plain := filepath.Join(base, "plain", "dir")
	for _, d := range []string{sub, plain} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	gitInit(t, repo)
	links := map[string]string{
		filepath.Join(base, "link-to-repo"):  repo,
		filepath.Join(base, "link-to-sub"):   sub,
		filepath.Join(base, "link-to-plain"): plain,
	}
	for l, target := range links {
		if err := os.Symlink(target, l); err != nil {
			t.Skipf("symlinks unavailable: %v", err)
		}
	}
	tests := []struct {
		name, env, start, want string
	}{
		{"SHIFT_WORKSPACE wins, verbatim", "my-project ", sub, "my-project "},
		{"work-tree root", "", repo, repo},
		{"subdirectory collapses to the root", "", sub, repo},
		{"symlink to the root", "", filepath.Join(base, "link-to-repo"), repo},
		{"symlink to a subdirectory", "", filepath.Join(base, "link-to-sub"), repo},
		{"path through a symlink", "", filepath.Join(base, "link-to-repo", "src"), repo},
		{"outside git: the directory itself", "", plain, plain},
		{"outside git, through a symlink: its real path", "", filepath.Join(base, "link-to-plain"), plain},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ResolveDefaultWorkspace(context.Background(), tc.env, tc.start, GitexecTopLevel)
			if got != tc.want {
				t.Errorf("ResolveDefaultWorkspace(%q, %q) = %q, want %q", tc.env, tc.start, got, tc.want)
			}
		})
	}
	// Inside .git there is no work tree: the directory itself.
	gitDir := filepath.Join(repo, ".git")
	if got := ResolveDefaultWorkspace(context.Background(), "", gitDir, GitexecTopLevel); got != gitDir && got != repo {
		t.Errorf("inside .git: %q", got)
	}
}
