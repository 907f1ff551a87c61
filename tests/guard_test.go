package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fluxgit/fluxgit/internal/roster/pgtest"
)

// gitIn runs git in dir with env and returns its combined output and
// whether it succeeded.
func gitIn(t *testing.T, dir string, env []string, args ...string) (string, bool) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(env, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return string(out), err == nil
}

func mustGit(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	out, ok := gitIn(t, dir, env, args...)
	if !ok {
		t.Fatalf("git %v: %s", args, out)
	}
	return out
}

// The guard in a real repository, on both roster stores: `fluxgit guard
// install` chains the existing pre-commit hook; a commit touching a file
// another agent holds exclusively is refused, naming the worker and its
// gist and saying how to override; the holder itself (SHIFT_WORKER_ID)
// and the override pass; after the release the commit goes through. A
// managed core.hooksPath is left alone.
func TestGuardRefusesThenPasses(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			repo := canonicalTempDir(t)
			env := baseEnv(t)
			if backend == "postgres" {
				env = append(env, "SHIFT_DATABASE_URL="+pgtest.Start(t).NewDatabase(t))
			}
			mustGit(t, repo, env, "init", "-q", "-b", "main")
			if err := os.MkdirAll(filepath.Join(repo, "src"), 0o755); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(repo, "src", "cart.ts"), "v1\n")
			writeFile(t, filepath.Join(repo, "README"), "r\n")
			mustGit(t, repo, env, "add", ".")
			mustGit(t, repo, env, "commit", "-q", "-m", "init")
			// The person's own hook, which must keep running.
			marker := filepath.Join(repo, ".git", "own-hook-ran")
			writeFile(t, filepath.Join(repo, ".git", "hooks", "pre-commit"), "#!/bin/sh\necho ran >> "+marker+"\n")
			if err := os.Chmod(filepath.Join(repo, ".git", "hooks", "pre-commit"), 0o755); err != nil {
				t.Fatal(err)
			}
			install := exec.Command(fluxgitBin, "guard", "install")
			install.Dir, install.Env = repo, env
			if out, err := install.CombinedOutput(); err != nil || !strings.Contains(string(out), "pre-commit.pre-fluxgit") {
				t.Fatalf("guard install: %v\n%s", err, out)
			}
			again := exec.Command(fluxgitBin, "guard", "install")
			again.Dir, again.Env = repo, env
			if out, err := again.CombinedOutput(); err != nil || !strings.Contains(string(out), "already installed") {
				t.Fatalf("second install: %v\n%s", err, out)
			}

			// Another agent claims src/cart.ts exclusively.
			s := startServer(t, env)
			initialize(t, s)
			p, _ := rosterCall(t, s, 1, "shift_check_in", map[string]any{"gist": "Cart totals", "workspace": repo,
				"files": []string{"src/cart.ts", "README"}, "claims": map[string]string{"src/cart.ts": "exclusive", "README": "shared"}})
			holder := dataOf(t, p)["workerId"].(string)

			writeFile(t, filepath.Join(repo, "src", "cart.ts"), "v2\n")
			writeFile(t, filepath.Join(repo, "README"), "r2\n")
			mustGit(t, repo, env, "add", ".")
			out, ok := gitIn(t, repo, env, "commit", "-q", "-m", "mine")
			if ok || !strings.Contains(out, "src/cart.ts: worker "+holder) || !strings.Contains(out, `"Cart totals"`) ||
				!strings.Contains(out, "FLUXGIT_GUARD_OVERRIDE=1") || strings.Contains(out, "README:") {
				t.Fatalf("commit into a held file: ok=%v\n%s", ok, out)
			}
			if b, _ := os.ReadFile(marker); strings.Count(string(b), "ran") != 1 {
				t.Fatalf("the chained hook ran %q times", b)
			}
			// The holder itself, and the person's override, pass the check.
			for _, extra := range [][]string{{"SHIFT_WORKER_ID=" + strings.ToLower(holder)}, {"FLUXGIT_GUARD_OVERRIDE=1"}} {
				chk := exec.Command(fluxgitBin, "guard", "check")
				chk.Dir, chk.Env = repo, append(append([]string{}, env...), extra...)
				if o, err := chk.CombinedOutput(); err != nil {
					t.Fatalf("guard check with %v: %v\n%s", extra, err, o)
				}
			}
			// CI form: a range of commits.
			chk := exec.Command(fluxgitBin, "guard", "check", "--range", "HEAD")
			chk.Dir, chk.Env = repo, env
			if o, err := chk.CombinedOutput(); err == nil || !strings.Contains(string(o), holder) {
				t.Fatalf("guard check --range HEAD (the work tree against HEAD): %v\n%s", err, o)
			}

			// Released: the commit goes through.
			rosterCall(t, s, 2, "shift_check_in", map[string]any{"gist": "Cart totals", "workspace": repo, "workerId": holder, "claims": map[string]string{}})
			if out, ok := gitIn(t, repo, env, "commit", "-q", "-m", "mine"); !ok {
				t.Fatalf("commit after the release: %s", out)
			}

			// A managed hooks path is left alone; the line to add is printed.
			mustGit(t, repo, env, "config", "core.hooksPath", ".husky")
			husky := exec.Command(fluxgitBin, "guard", "install")
			husky.Dir, husky.Env = repo, env
			o, err := husky.CombinedOutput()
			if err != nil || !strings.Contains(string(o), "guard check || exit $?") {
				t.Fatalf("husky: %v\n%s", err, o)
			}
			if _, err := os.Stat(filepath.Join(repo, ".husky")); !os.IsNotExist(err) {
				t.Fatalf("guard install wrote into the managed hooks path: %v", err)
			}
		})
	}
}
