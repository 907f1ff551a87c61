package execute

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type opCase struct {
	name string
	op   string
	// setup prepares repo and returns the body fields.
	setup func(t *testing.T, repo string) map[string]any
	want  string // completed | failed
	// unchanged: a failure must leave the repository exactly as it was.
	unchanged bool
	check     func(t *testing.T, repo string, res map[string]any)
}

func TestOperations(t *testing.T) {
	const patchAB = "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-alpha\n+alpha patched\n"
	cases := []opCase{
		{name: "merge commit", op: "merge", want: "completed",
			setup: func(t *testing.T, repo string) map[string]any {
				feature(t, repo)
				return map[string]any{"sourceRef": "feature", "targetRef": "main", "strategy": "merge"}
			},
			check: func(t *testing.T, repo string, res map[string]any) {
				if parents := strings.Fields(git(t, repo, "rev-list", "--parents", "-n1", "HEAD")); len(parents) != 3 {
					t.Fatalf("not a merge commit: %v", parents)
				}
				if res["mergeCommit"] != head(t, repo) || read(t, repo, "b.txt") != "bravo\n" {
					t.Fatalf("result %v, b.txt %q", res, read(t, repo, "b.txt"))
				}
				if rp := restorePoint(t, res); rp["canUndo"] != true || rp["afterCommit"] != head(t, repo) || rp["branchRef"] != "refs/heads/main" {
					t.Fatalf("restorePoint %v", rp)
				}
			}},
		{name: "merge squash", op: "merge", want: "completed",
			setup: func(t *testing.T, repo string) map[string]any {
				feature(t, repo)
				return map[string]any{"sourceRef": "feature", "targetRef": "main", "strategy": "squash"}
			},
			check: func(t *testing.T, repo string, res map[string]any) {
				if parents := strings.Fields(git(t, repo, "rev-list", "--parents", "-n1", "HEAD")); len(parents) != 2 {
					t.Fatalf("squash made a merge commit: %v", parents)
				}
				if read(t, repo, "b.txt") != "bravo\n" || !strings.HasPrefix(git(t, repo, "log", "-1", "--format=%s"), "Squash merge feature into main") {
					t.Fatal("squash commit content or message wrong")
				}
				if git(t, repo, "status", "--porcelain") != "" {
					t.Fatal("squash left changes behind")
				}
			}},
		{name: "merge into a branch not checked out", op: "merge", want: "completed",
			setup: func(t *testing.T, repo string) map[string]any {
				feature(t, repo)
				git(t, repo, "checkout", "-q", "-b", "elsewhere")
				return map[string]any{"sourceRef": "feature", "targetRef": "main", "strategy": "merge"}
			},
			check: func(t *testing.T, repo string, res map[string]any) {
				if b := git(t, repo, "symbolic-ref", "HEAD"); b != "refs/heads/main" {
					t.Fatalf("HEAD on %s, want main after the merge", b)
				}
				if git(t, repo, "rev-parse", "main") != res["mergeCommit"] {
					t.Fatal("main is not the merge commit")
				}
			}},
		{name: "merge conflict leaves the repository as it was", op: "merge", want: "failed", unchanged: true,
			setup: func(t *testing.T, repo string) map[string]any {
				conflicting(t, repo)
				write(t, repo, "untracked.txt", "keep me\n")
				return map[string]any{"sourceRef": "feature", "targetRef": "main", "strategy": "merge"}
			},
			check: func(t *testing.T, repo string, res map[string]any) {
				if !strings.Contains(res["message"].(string), "a.txt") {
					t.Fatalf("message does not name the conflict: %v", res["message"])
				}
			}},
		{name: "merge conflict into a branch not checked out returns to the original branch", op: "merge", want: "failed", unchanged: true,
			setup: func(t *testing.T, repo string) map[string]any {
				conflicting(t, repo)
				git(t, repo, "checkout", "-q", "-b", "elsewhere")
				return map[string]any{"sourceRef": "feature", "targetRef": "main", "strategy": "merge"}
			}},
		{name: "squash conflict leaves the repository as it was", op: "merge", want: "failed", unchanged: true,
			setup: func(t *testing.T, repo string) map[string]any {
				conflicting(t, repo)
				return map[string]any{"sourceRef": "feature", "targetRef": "main", "strategy": "squash"}
			}},
		{name: "merge refuses a dirty work tree", op: "merge", want: "failed", unchanged: true,
			setup: func(t *testing.T, repo string) map[string]any {
				feature(t, repo)
				write(t, repo, "a.txt", "dirty\n")
				return map[string]any{"sourceRef": "feature", "targetRef": "main", "strategy": "merge"}
			}},
		{name: "rebase", op: "rebase", want: "completed",
			setup: func(t *testing.T, repo string) map[string]any {
				feature(t, repo)
				git(t, repo, "checkout", "-q", "feature")
				return map[string]any{"currentRef": "HEAD", "ontoRef": "main", "interactive": false}
			},
			check: func(t *testing.T, repo string, res map[string]any) {
				if git(t, repo, "rev-parse", "HEAD~1") != git(t, repo, "rev-parse", "main") || res["newHeadSha"] != head(t, repo) {
					t.Fatal("feature is not on top of main")
				}
				if res["replayedCommits"] != float64(1) || res["restorePointId"] == nil {
					t.Fatalf("%v", res)
				}
			}},
		{name: "rebase of a named branch", op: "rebase", want: "completed",
			setup: func(t *testing.T, repo string) map[string]any {
				feature(t, repo)
				return map[string]any{"currentRef": "feature", "ontoRef": "main", "interactive": false}
			},
			check: func(t *testing.T, repo string, res map[string]any) {
				if git(t, repo, "symbolic-ref", "HEAD") != "refs/heads/feature" || git(t, repo, "rev-parse", "feature~1") != git(t, repo, "rev-parse", "main") {
					t.Fatal("feature was not rebased and checked out")
				}
			}},
		{name: "rebase conflict leaves the repository as it was", op: "rebase", want: "failed", unchanged: true,
			setup: func(t *testing.T, repo string) map[string]any {
				conflicting(t, repo)
				git(t, repo, "checkout", "-q", "feature")
				return map[string]any{"currentRef": "HEAD", "ontoRef": "main", "interactive": false}
			}},
		{name: "discard behind a safety stash", op: "discard", want: "completed",
			setup: func(t *testing.T, repo string) map[string]any {
				write(t, repo, "a.txt", "changed\n")
				write(t, repo, "new.txt", "untracked\n")
				write(t, repo, "other.txt", "not discarded\n")
				return map[string]any{"paths": []string{"a.txt", "new.txt"}}
			},
			check: func(t *testing.T, repo string, res map[string]any) {
				if read(t, repo, "a.txt") != "alpha\n" || read(t, repo, "new.txt") != "<missing>" || read(t, repo, "other.txt") != "not discarded\n" {
					t.Fatal("wrong files discarded")
				}
				stash := git(t, repo, "rev-parse", "refs/stash")
				if res["safetyStash"] != stash || !strings.Contains(git(t, repo, "stash", "list"), "fluxgit safety stash") {
					t.Fatalf("no safety stash: %v", res)
				}
				if got := git(t, repo, "show", stash+"^3:new.txt"); got != "untracked" {
					t.Fatalf("untracked file not in the stash: %q", got)
				}
				if p, _ := res["pathsDiscarded"].([]any); len(p) != 2 {
					t.Fatalf("pathsDiscarded %v", res["pathsDiscarded"])
				}
			}},
		{name: "discard of clean paths fails", op: "discard", want: "failed", unchanged: true,
			setup: func(t *testing.T, repo string) map[string]any {
				return map[string]any{"paths": []string{"a.txt"}}
			}},
		{name: "reset soft", op: "reset", want: "completed",
			setup: func(t *testing.T, repo string) map[string]any {
				commit(t, repo, "b.txt", "b\n", "second")
				return map[string]any{"targetRef": "HEAD~1", "mode": "soft"}
			},
			check: func(t *testing.T, repo string, res map[string]any) {
				if git(t, repo, "status", "--porcelain") != "A  b.txt" || res["mode"] != "soft" {
					t.Fatalf("soft reset: %q", git(t, repo, "status", "--porcelain"))
				}
			}},
		{name: "reset mixed", op: "reset", want: "completed",
			setup: func(t *testing.T, repo string) map[string]any {
				commit(t, repo, "b.txt", "b\n", "second")
				return map[string]any{"targetRef": "HEAD~1", "mode": "mixed"}
			},
			check: func(t *testing.T, repo string, res map[string]any) {
				if git(t, repo, "status", "--porcelain") != "?? b.txt" {
					t.Fatalf("mixed reset: %q", git(t, repo, "status", "--porcelain"))
				}
			}},
		{name: "reset hard keeps dirty changes in a safety stash", op: "reset", want: "completed",
			setup: func(t *testing.T, repo string) map[string]any {
				commit(t, repo, "b.txt", "b\n", "second")
				write(t, repo, "a.txt", "uncommitted\n")
				return map[string]any{"targetRef": "HEAD~1", "mode": "hard"}
			},
			check: func(t *testing.T, repo string, res map[string]any) {
				if git(t, repo, "status", "--porcelain") != "" || read(t, repo, "b.txt") != "<missing>" {
					t.Fatal("hard reset left changes")
				}
				if s, _ := res["safetyStash"].(string); s == "" || git(t, repo, "show", s+":a.txt") != "uncommitted" {
					t.Fatalf("safety stash missing: %v", res)
				}
				if res["newHeadSha"] != head(t, repo) {
					t.Fatal("newHeadSha")
				}
			}},
		{name: "patch to the work tree", op: "patch", want: "completed",
			setup: func(t *testing.T, repo string) map[string]any {
				return map[string]any{"patchContent": patchAB, "applyToIndex": false}
			},
			check: func(t *testing.T, repo string, res map[string]any) {
				if read(t, repo, "a.txt") != "alpha patched\n" || git(t, repo, "diff", "--cached") != "" {
					t.Fatal("patch not applied to the work tree only")
				}
				if f, _ := res["appliedFiles"].([]any); len(f) != 1 || f[0] != "a.txt" || res["stagedToIndex"] != false {
					t.Fatalf("%v", res)
				}
			}},
		{name: "patch to the index", op: "patch", want: "completed",
			setup: func(t *testing.T, repo string) map[string]any {
				return map[string]any{"patchContent": patchAB, "applyToIndex": true}
			},
			check: func(t *testing.T, repo string, res map[string]any) {
				if git(t, repo, "status", "--porcelain") != "M  a.txt" || res["stagedToIndex"] != true {
					t.Fatalf("not staged: %q", git(t, repo, "status", "--porcelain"))
				}
			}},
		{name: "patch that does not apply changes nothing", op: "patch", want: "failed", unchanged: true,
			setup: func(t *testing.T, repo string) map[string]any {
				bad := strings.Replace(patchAB, "-alpha", "-something else", 1)
				return map[string]any{"patchContent": bad, "applyToIndex": false}
			}},
		{name: "plan of two steps", op: "plan", want: "completed",
			setup: func(t *testing.T, repo string) map[string]any {
				feature(t, repo)
				return map[string]any{"steps": []map[string]any{
					{"operationType": "merge", "sourceRef": "feature", "targetRef": "main"},
					{"operationType": "patch", "patchContent": patchAB, "applyToIndex": true},
				}}
			},
			check: func(t *testing.T, repo string, res map[string]any) {
				steps := res["steps"].([]any)
				if len(steps) != 2 || steps[0].(map[string]any)["status"] != "completed" || steps[1].(map[string]any)["status"] != "completed" {
					t.Fatalf("%v", steps)
				}
				if read(t, repo, "b.txt") != "bravo\n" || read(t, repo, "a.txt") != "alpha patched\n" {
					t.Fatal("plan steps not applied")
				}
				if rp := restorePoint(t, res); rp["operation"] != "plan" || rp["canUndo"] != true {
					t.Fatalf("%v", rp)
				}
			}},
		{name: "plan stops at the first failure", op: "plan", want: "failed",
			setup: func(t *testing.T, repo string) map[string]any {
				conflicting(t, repo)
				git(t, repo, "branch", "side", "main~1")
				git(t, repo, "checkout", "-q", "side")
				commit(t, repo, "s.txt", "side\n", "side work")
				git(t, repo, "checkout", "-q", "main")
				return map[string]any{"steps": []map[string]any{
					{"operationType": "merge", "sourceRef": "side", "targetRef": "main"},
					{"operationType": "merge", "sourceRef": "feature", "targetRef": "main"},
					{"operationType": "reset", "targetRef": "HEAD~1", "mode": "hard"},
				}}
			},
			check: func(t *testing.T, repo string, res map[string]any) {
				steps := res["steps"].([]any)
				want := []string{"completed", "failed", "skipped"}
				for i, s := range steps {
					if s.(map[string]any)["status"] != want[i] {
						t.Fatalf("step %d: %v", i, s)
					}
				}
				// Step 1 stays applied, step 2 was aborted, step 3 never ran.
				if read(t, repo, "s.txt") != "side\n" || read(t, repo, "a.txt") != "main\n" || git(t, repo, "status", "--porcelain") != "" {
					t.Fatal("repository not at the state after step 1")
				}
				if !strings.Contains(res["message"].(string), "step 2") {
					t.Fatalf("message: %v", res["message"])
				}
			}},
		{name: "worktree with a new branch", op: "worktree", want: "completed",
			setup: func(t *testing.T, repo string) map[string]any {
				return map[string]any{"branch": "task/one", "path": filepath.Join(filepath.Dir(repo), filepath.Base(repo)+"-wt")}
			},
			check: func(t *testing.T, repo string, res map[string]any) {
				p := res["worktreePath"].(string)
				if git(t, p, "symbolic-ref", "HEAD") != "refs/heads/task/one" || read(t, p, "a.txt") != "alpha\n" || res["branch"] != "task/one" {
					t.Fatalf("%v", res)
				}
			}},
		{name: "worktree of an existing branch at the default path", op: "worktree", want: "completed",
			setup: func(t *testing.T, repo string) map[string]any {
				feature(t, repo)
				return map[string]any{"branch": "feature"}
			},
			check: func(t *testing.T, repo string, res map[string]any) {
				p := res["worktreePath"].(string)
				if p != filepath.Join(filepath.Dir(repo), filepath.Base(repo)+".worktrees", "feature") || read(t, p, "b.txt") != "bravo\n" {
					t.Fatalf("%v", res)
				}
			}},
		{name: "commit of chosen paths", op: "commit", want: "completed",
			setup: func(t *testing.T, repo string) map[string]any {
				write(t, repo, "x.txt", "x\n")
				write(t, repo, "y.txt", "y\n")
				return map[string]any{"message": "add x", "paths": []string{"x.txt"}, "stageAll": false}
			},
			check: func(t *testing.T, repo string, res map[string]any) {
				if res["commitSha"] != head(t, repo) || git(t, repo, "show", "--format=", "--name-only", "HEAD") != "x.txt" {
					t.Fatalf("%v", res)
				}
				if git(t, repo, "status", "--porcelain") != "?? y.txt" || git(t, repo, "log", "-1", "--format=%an %s") != "Repo User add x" {
					t.Fatal("commit content or identity wrong")
				}
				if rp := restorePoint(t, res); rp["canUndo"] != true {
					t.Fatalf("%v", rp)
				}
			}},
		{name: "commit stageAll runs the user's hooks", op: "commit", want: "completed",
			setup: func(t *testing.T, repo string) map[string]any {
				write(t, repo, "x.txt", "x\n")
				write(t, repo, "a.txt", "changed\n")
				write(t, repo, ".git/hooks/commit-msg", "#!/bin/sh\necho 'Signed-off-by: hook' >> \"$1\"\n")
				os.Chmod(filepath.Join(repo, ".git/hooks/commit-msg"), 0o755)
				return map[string]any{"message": "everything", "stageAll": true}
			},
			check: func(t *testing.T, repo string, res map[string]any) {
				if git(t, repo, "status", "--porcelain") != "" || !strings.Contains(git(t, repo, "log", "-1", "--format=%B"), "Signed-off-by: hook") {
					t.Fatal("stageAll commit incomplete or hook did not run")
				}
			}},
		{name: "commit with an empty paths list ignores stageAll", op: "commit", want: "completed",
			setup: func(t *testing.T, repo string) map[string]any {
				write(t, repo, "staged.txt", "s\n")
				git(t, repo, "add", "staged.txt")
				write(t, repo, "loose.txt", "l\n")
				return map[string]any{"message": "index only", "paths": []string{}, "stageAll": true}
			},
			check: func(t *testing.T, repo string, res map[string]any) {
				if git(t, repo, "show", "--format=", "--name-only", "HEAD") != "staged.txt" || git(t, repo, "status", "--porcelain") != "?? loose.txt" {
					t.Fatal("an empty paths list must commit the index as it is")
				}
			}},
		{name: "commit rejected by a hook changes nothing", op: "commit", want: "failed", unchanged: true,
			setup: func(t *testing.T, repo string) map[string]any {
				write(t, repo, "x.txt", "x\n")
				write(t, repo, ".git/hooks/pre-commit", "#!/bin/sh\necho no >&2\nexit 1\n")
				os.Chmod(filepath.Join(repo, ".git/hooks/pre-commit"), 0o755)
				return map[string]any{"message": "blocked", "paths": []string{"x.txt"}, "stageAll": false}
			}},
		{name: "push with set-upstream to a local bare remote", op: "push", want: "completed",
			setup: func(t *testing.T, repo string) map[string]any {
				bare := tmp(t)
				git(t, bare, "init", "-q", "--bare")
				git(t, repo, "remote", "add", "origin", bare)
				return map[string]any{"remote": "origin", "setUpstream": true, "forceWithLease": false}
			},
			check: func(t *testing.T, repo string, res map[string]any) {
				bare := git(t, repo, "remote", "get-url", "origin")
				if git(t, bare, "rev-parse", "refs/heads/main") != head(t, repo) || res["pushedRef"] != "refs/heads/main" || res["remote"] != "origin" {
					t.Fatalf("%v", res)
				}
				if git(t, repo, "rev-parse", "--symbolic-full-name", "main@{upstream}") != "refs/remotes/origin/main" {
					t.Fatal("upstream not set")
				}
			}},
		{name: "push force-with-lease", op: "push", want: "completed",
			setup: func(t *testing.T, repo string) map[string]any {
				bare := tmp(t)
				git(t, bare, "init", "-q", "--bare")
				git(t, repo, "remote", "add", "origin", bare)
				commit(t, repo, "b.txt", "b\n", "to be rewritten")
				git(t, repo, "push", "-q", "origin", "main")
				git(t, repo, "reset", "-q", "--hard", "HEAD~1")
				commit(t, repo, "c.txt", "c\n", "rewritten")
				return map[string]any{"remote": "origin", "branch": "main", "setUpstream": false, "forceWithLease": true}
			},
			check: func(t *testing.T, repo string, res map[string]any) {
				bare := git(t, repo, "remote", "get-url", "origin")
				if git(t, bare, "rev-parse", "refs/heads/main") != head(t, repo) {
					t.Fatal("force push did not update the remote")
				}
			}},
		{name: "push without force is refused for a rewritten branch", op: "push", want: "failed",
			setup: func(t *testing.T, repo string) map[string]any {
				bare := tmp(t)
				git(t, bare, "init", "-q", "--bare")
				git(t, repo, "remote", "add", "origin", bare)
				commit(t, repo, "b.txt", "b\n", "to be rewritten")
				git(t, repo, "push", "-q", "origin", "main")
				git(t, repo, "reset", "-q", "--hard", "HEAD~1")
				return map[string]any{"remote": "origin", "setUpstream": false, "forceWithLease": false}
			},
			check: func(t *testing.T, repo string, res map[string]any) {
				bare := git(t, repo, "remote", "get-url", "origin")
				if git(t, bare, "rev-parse", "refs/heads/main") == head(t, repo) {
					t.Fatal("non-fast-forward push went through")
				}
			}},
		{name: "branch with checkout", op: "branch", want: "completed",
			setup: func(t *testing.T, repo string) map[string]any {
				first := head(t, repo)
				commit(t, repo, "b.txt", "b\n", "second")
				return map[string]any{"name": "topic", "startPoint": first, "checkout": true}
			},
			check: func(t *testing.T, repo string, res map[string]any) {
				if git(t, repo, "symbolic-ref", "HEAD") != "refs/heads/topic" || git(t, repo, "rev-parse", "topic") != git(t, repo, "rev-parse", "main~1") {
					t.Fatalf("%v", res)
				}
				if res["checkedOut"] != true || res["branch"] != "topic" {
					t.Fatalf("%v", res)
				}
			}},
		{name: "branch without checkout", op: "branch", want: "completed",
			setup: func(t *testing.T, repo string) map[string]any {
				return map[string]any{"name": "topic", "checkout": false}
			},
			check: func(t *testing.T, repo string, res map[string]any) {
				if git(t, repo, "symbolic-ref", "HEAD") != "refs/heads/main" || git(t, repo, "rev-parse", "topic") != head(t, repo) || res["checkedOut"] != false {
					t.Fatalf("%v", res)
				}
			}},
		{name: "submodule pointer record", op: "submodulePointer", want: "completed",
			setup: func(t *testing.T, repo string) map[string]any {
				sub := withSubmodule(t, repo)
				commit(t, sub, "s2.txt", "two\n", "sub second")
				return map[string]any{"parentPath": "", "relativePath": "lib", "direction": "record", "message": "bump lib",
					"expectedCheckedOutOid": head(t, sub)}
			},
			check: func(t *testing.T, repo string, res map[string]any) {
				sub := filepath.Join(repo, "lib")
				if git(t, repo, "rev-parse", "HEAD:lib") != head(t, sub) || res["commitSha"] != head(t, repo) {
					t.Fatalf("pointer not recorded: %v", res)
				}
				if git(t, repo, "show", "--format=", "--name-only", "HEAD") != "lib" || git(t, repo, "log", "-1", "--format=%s") != "bump lib" {
					t.Fatal("the commit holds more than the gitlink")
				}
				sp := res["submodulePointer"].(map[string]any)
				if sp["pointerOid"] != head(t, sub) || sp["direction"] != "record" {
					t.Fatalf("%v", sp)
				}
			}},
		{name: "submodule pointer return", op: "submodulePointer", want: "completed",
			setup: func(t *testing.T, repo string) map[string]any {
				sub := withSubmodule(t, repo)
				git(t, sub, "checkout", "-q", "-b", "work")
				commit(t, sub, "s2.txt", "two\n", "sub second")
				return map[string]any{"parentPath": "", "relativePath": "lib", "direction": "return",
					"expectedRecordedOid": git(t, repo, "rev-parse", "HEAD:lib")}
			},
			check: func(t *testing.T, repo string, res map[string]any) {
				sub := filepath.Join(repo, "lib")
				if head(t, sub) != git(t, repo, "rev-parse", "HEAD:lib") {
					t.Fatal("recorded commit not checked out")
				}
				if _, err := gitErr(sub, "symbolic-ref", "-q", "HEAD"); err == nil {
					t.Fatal("submodule HEAD is not detached")
				}
				rp := res["submodulePointer"].(map[string]any)["restorePoint"].(map[string]any)
				if rp["previousRef"] != "refs/heads/work" || rp["previousOid"] != git(t, sub, "rev-parse", "work") {
					t.Fatalf("%v", rp)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			runDir := isolate(t)
			repo := newRepo(t)
			fields := tc.setup(t, repo)
			e := New(Options{RunDir: runDir})
			before := snapshot(t, repo)
			res, out := run(t, e, tc.op, body(repo, fields))
			if out.Status != tc.want {
				t.Fatalf("status %s, want %s: %s", out.Status, tc.want, out.Result)
			}
			if tc.unchanged {
				if after := snapshot(t, repo); after != before {
					t.Fatalf("repository changed by a failed %s:\nbefore:\n%s\nafter:\n%s", tc.op, before, after)
				}
				if _, err := os.Stat(filepath.Join(runDir, "rebase")); err == nil {
					if des, _ := os.ReadDir(filepath.Join(runDir, "rebase")); len(des) > 0 {
						t.Fatalf("a failed operation that changed nothing left a restore record")
					}
				}
			}
			if tc.check != nil {
				tc.check(t, repo, res)
			}
		})
	}
}

// withSubmodule adds a submodule "lib" to repo and returns its path.
func withSubmodule(t *testing.T, repo string) string {
	t.Helper()
	src := newRepo(t)
	commit(t, src, "s.txt", "one\n", "sub first")
	git(t, repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", src, "lib")
	git(t, repo, "commit", "-q", "-m", "add lib")
	sub := filepath.Join(repo, "lib")
	git(t, sub, "config", "user.name", "Repo User")
	git(t, sub, "config", "user.email", "repo@example.com")
	return sub
}

func TestBranchDeleteVerdicts(t *testing.T) {
	runDir := isolate(t)
	repo := newRepo(t)
	git(t, repo, "branch", "merged")
	git(t, repo, "checkout", "-q", "-b", "unmerged")
	commit(t, repo, "u.txt", "u\n", "unmerged work")
	git(t, repo, "checkout", "-q", "main")
	git(t, repo, "branch", "busy")
	git(t, repo, "worktree", "add", "-q", filepath.Join(tmp(t), "busy"), "busy")
	git(t, repo, "branch", "moving")
	other := newRepo(t)
	git(t, other, "branch", "done")

	e := New(Options{RunDir: runDir})
	b := body(repo, map[string]any{"targets": []map[string]any{
		{"repoPath": repo, "branches": []string{"merged", "unmerged", "busy", "moving", "ghost"}},
		{"repoPath": other, "branches": []string{"done"}},
	}})
	ctx := t.Context()
	bd, err := e.Bind(ctx, "branchDelete", b)
	if err != nil {
		t.Fatal(err)
	}
	rv, err := e.Review(ctx, "branchDelete", b, bd)
	if err != nil || len(rv.Verdicts) != 6 || !rv.Verdicts[0].Delete || rv.Verdicts[1].Delete {
		t.Fatalf("review verdicts %+v %v", rv.Verdicts, err)
	}
	mergedTip := git(t, repo, "rev-parse", "merged")
	commitOn(t, repo, "moving") // the tip moves after the proposal
	out := e.Execute(ctx, Job{ID: "batch-7", OperationType: "branchDelete", Body: b, Binding: bd})
	var res struct {
		Status       string `json:"status"`
		BranchDelete struct {
			Deleted, Failed, Skipped int
			Repositories             []struct {
				RepoPath string
				Branches []struct {
					Branch, Status, Reason string
					TipOid, RestoreOid     *string
					FleetBatchID           string `json:"fleetBatchId"`
				}
			}
		} `json:"branchDelete"`
	}
	if err := json.Unmarshal(out.Result, &res); err != nil {
		t.Fatal(err)
	}
	bdr := res.BranchDelete
	if res.Status != "completed" || bdr.Deleted != 2 || bdr.Skipped != 4 || bdr.Failed != 0 || len(bdr.Repositories) != 2 {
		t.Fatalf("%s", out.Result)
	}
	want := map[string]string{"merged": "deleted", "unmerged": "skipped", "busy": "skipped", "moving": "skipped", "ghost": "skipped"}
	for _, br := range bdr.Repositories[0].Branches {
		if br.Status != want[br.Branch] || br.Reason == "" || br.FleetBatchID != "batch-7" {
			t.Errorf("%s: %+v", br.Branch, br)
		}
		if br.Branch == "merged" && (br.TipOid == nil || *br.TipOid != mergedTip || br.RestoreOid == nil || *br.RestoreOid != mergedTip) {
			t.Errorf("deleted tip not recorded: %+v", br)
		}
	}
	if !strings.Contains(bdr.Repositories[0].Branches[3].Reason, "moved") {
		t.Errorf("moving: %+v", bdr.Repositories[0].Branches[3])
	}
	for _, gone := range []string{"merged"} {
		if _, err := gitErr(repo, "rev-parse", "--verify", "refs/heads/"+gone); err == nil {
			t.Errorf("%s not deleted", gone)
		}
	}
	for _, kept := range []string{"unmerged", "busy", "moving"} {
		git(t, repo, "rev-parse", "--verify", "refs/heads/"+kept)
	}
	if _, err := gitErr(other, "rev-parse", "--verify", "refs/heads/done"); err == nil {
		t.Error("done not deleted in the second repository")
	}
}

// commitOn adds a commit to branch without checking it out.
func commitOn(t *testing.T, repo, branch string) {
	t.Helper()
	tree := git(t, repo, "rev-parse", branch+"^{tree}")
	c := git(t, repo, "commit-tree", tree, "-p", branch, "-m", "moved")
	git(t, repo, "update-ref", "refs/heads/"+branch, c)
}
