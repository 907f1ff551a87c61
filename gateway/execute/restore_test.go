package execute

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fluxgit/fluxgit/plugins/gitread"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// latestRestorePoint reads the restore point through plugins/gitread's
// flux.latestRestorePoint, the code path agents use.
func latestRestorePoint(t *testing.T, repo, runDir string) *gitread.RestorePoint {
	t.Helper()
	args, _ := json.Marshal(map[string]any{"repoPath": repo, "runDir": runDir})
	res, err := gitread.New().CallTool(context.Background(), &sdk.Call{Tool: "flux.latestRestorePoint", Arguments: args})
	if err != nil || res.Error != nil {
		t.Fatalf("flux.latestRestorePoint: %v %+v", err, res.Error)
	}
	var d gitread.LatestRestorePointData
	if err := json.Unmarshal(res.Data, &d); err != nil {
		t.Fatal(err)
	}
	return d.LatestRestorePoint
}

// TestRestorePointReadByGitread writes a restore point with a real merge
// and reads it back through the flux.* tool: canUndo becomes true, the id
// is gitread's, and after Undo it turns into canRedo.
func TestRestorePointReadByGitread(t *testing.T) {
	for _, v := range []string{"FLUXGIT_MCP_HANDSHAKE_ADDR", "FLUXGIT_GATEWAY_URL"} {
		t.Setenv(v, "")
	}
	t.Setenv("FLUXGIT_GATEWAY_ADDR", "127.0.0.1:4000") // the flux.* tools are gated on a gateway address
	runDir := isolate(t)
	repo := newRepo(t)
	feature(t, repo)
	mainBefore := head(t, repo)
	now := time.Date(2026, 11, 30, 21, 0, 0, 123e6, time.UTC)
	e := New(Options{RunDir: runDir, Now: func() time.Time { return now }})

	if rp := latestRestorePoint(t, repo, runDir); rp != nil {
		t.Fatalf("restore point before any operation: %+v", rp)
	}
	res, out := run(t, e, "merge", body(repo, map[string]any{"sourceRef": "feature", "targetRef": "main", "strategy": "merge"}))
	if out.Status != "completed" {
		t.Fatal(string(out.Result))
	}
	after := head(t, repo)

	// The registry: one <id>.path naming the canonical repository.
	des, err := os.ReadDir(filepath.Join(runDir, "repos"))
	if err != nil || len(des) != 1 {
		t.Fatalf("registry: %v %v", des, err)
	}
	id := strings.TrimSuffix(des[0].Name(), ".path")
	if !regexp.MustCompile(`^[A-Za-z0-9._-]+-[0-9a-f]{8}$`).MatchString(id) {
		t.Fatalf("repo id %q", id)
	}
	if b, _ := os.ReadFile(filepath.Join(runDir, "repos", des[0].Name())); string(b) != repo+"\n" {
		t.Fatalf("registry entry %q", b)
	}
	// The record: exactly the keys gitread parses, with their types.
	raw, err := os.ReadFile(filepath.Join(runDir, "rebase", id+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(rec))
	for k := range rec {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := []string{"after_commit", "after_ref", "before_commit", "before_ref", "branch_ref", "created_at", "operation", "plan", "reset_mode", "undone", "upstream_ref"}
	if !slices.Equal(keys, want) {
		t.Fatalf("record keys %v, want %v", keys, want)
	}
	if rec["operation"] != "merge" || rec["before_commit"] != mainBefore || rec["after_commit"] != after ||
		rec["branch_ref"] != "refs/heads/main" || rec["undone"] != false || rec["created_at"] != "2026-11-30T21:00:00.123Z" {
		t.Fatalf("record %s", raw)
	}
	if fi, _ := os.Stat(filepath.Join(runDir, "rebase", id+".json")); fi.Mode().Perm() != 0o600 {
		t.Fatalf("record mode %v", fi.Mode())
	}

	rp := latestRestorePoint(t, repo, runDir)
	if rp == nil || !rp.CanUndo || rp.CanRedo || rp.ID != "restore:"+id+":2026-11-30T21:00:00.123Z" ||
		*rp.Before != mainBefore || *rp.After != after || *rp.Operation != "merge" {
		t.Fatalf("gitread restore point %+v", rp)
	}
	if got := restorePoint(t, res); got["id"] != rp.ID || got["canUndo"] != true || got["beforeCommit"] != mainBefore {
		t.Fatalf("result restorePoint %v vs gitread %s", got, rp.ID)
	}

	rps, err := e.RestorePoints(context.Background())
	if err != nil || len(rps) != 1 || rps[0].ID != rp.ID || !rps[0].CanUndo || rps[0].RepoPath != repo || rps[0].After != after {
		t.Fatalf("RestorePoints %+v %v", rps, err)
	}
	u, err := e.Undo(context.Background(), repo)
	if err != nil {
		t.Fatal(err)
	}
	if u.Before != mainBefore || u.After != after || u.RepoID != id || u.Branch != "refs/heads/main" || head(t, repo) != mainBefore {
		t.Fatalf("undo %+v, HEAD %s", u, head(t, repo))
	}
	if read(t, repo, "b.txt") != "<missing>" || git(t, repo, "status", "--porcelain") != "" {
		t.Fatal("work tree not restored")
	}
	rp = latestRestorePoint(t, repo, runDir)
	if rp.CanUndo || !rp.CanRedo || !rp.Metadata.Undone {
		t.Fatalf("after undo %+v", rp)
	}
	if rps, _ := e.RestorePoints(context.Background()); len(rps) != 1 || rps[0].CanUndo || !rps[0].Undone || rps[0].Why == "" {
		t.Fatalf("RestorePoints after undo %+v", rps)
	}
	if _, err := e.Undo(context.Background(), repo); err == nil || !strings.Contains(err.Error(), "nothing left to undo") {
		t.Fatalf("second undo: %v", err)
	}
}

func TestUndo(t *testing.T) {
	tests := []struct {
		name   string
		op     string
		setup  func(t *testing.T, repo string) map[string]any
		mess   func(t *testing.T, repo string) // after the operation, before Undo
		errSub string                          // "" = Undo succeeds
		check  func(t *testing.T, repo, before string)
	}{
		{name: "commit", op: "commit",
			setup: func(t *testing.T, repo string) map[string]any {
				write(t, repo, "x.txt", "x\n")
				return map[string]any{"message": "x", "stageAll": true}
			},
			check: func(t *testing.T, repo, before string) {
				if head(t, repo) != before {
					t.Fatal("commit not undone")
				}
			}},
		{name: "discard applies the safety stash", op: "discard",
			setup: func(t *testing.T, repo string) map[string]any {
				write(t, repo, "a.txt", "changed\n")
				return map[string]any{"paths": []string{"a.txt"}}
			},
			check: func(t *testing.T, repo, before string) {
				if read(t, repo, "a.txt") != "changed\n" {
					t.Fatal("discarded change not restored")
				}
			}},
		{name: "reset hard", op: "reset",
			setup: func(t *testing.T, repo string) map[string]any {
				commit(t, repo, "b.txt", "b\n", "second")
				return map[string]any{"targetRef": "HEAD~1", "mode": "hard"}
			},
			check: func(t *testing.T, repo, before string) {
				if head(t, repo) != before || read(t, repo, "b.txt") != "b\n" {
					t.Fatal("reset not undone")
				}
			}},
		{name: "refused when HEAD moved on", op: "commit",
			setup: func(t *testing.T, repo string) map[string]any {
				write(t, repo, "x.txt", "x\n")
				return map[string]any{"message": "x", "stageAll": true}
			},
			mess:   func(t *testing.T, repo string) { commit(t, repo, "later.txt", "l\n", "later") },
			errSub: "no longer"},
		{name: "refused on another branch", op: "commit",
			setup: func(t *testing.T, repo string) map[string]any {
				write(t, repo, "x.txt", "x\n")
				return map[string]any{"message": "x", "stageAll": true}
			},
			mess:   func(t *testing.T, repo string) { git(t, repo, "checkout", "-q", "-b", "other") },
			errSub: "checked-out branch"},
		{name: "reset --keep refuses to lose local changes", op: "merge",
			setup: func(t *testing.T, repo string) map[string]any {
				git(t, repo, "checkout", "-q", "-b", "feature")
				commit(t, repo, "a.txt", "from feature\n", "feature")
				git(t, repo, "checkout", "-q", "main")
				return map[string]any{"sourceRef": "feature", "targetRef": "main"}
			},
			mess:   func(t *testing.T, repo string) { write(t, repo, "a.txt", "local edit\n") },
			errSub: "reset --keep"},
		// The undo of a commit is a soft reset: the commit leaves the
		// branch, and what it committed (a file it added, local edits made
		// since) stays in the work tree, staged.
		{name: "commit undone keeps its changes staged", op: "commit",
			setup: func(t *testing.T, repo string) map[string]any {
				write(t, repo, "new.txt", "new file\n")
				write(t, repo, "a.txt", "committed\n")
				return map[string]any{"message": "x", "stageAll": true}
			},
			mess: func(t *testing.T, repo string) { write(t, repo, "a.txt", "local edit\n") },
			check: func(t *testing.T, repo, before string) {
				if head(t, repo) != before || read(t, repo, "new.txt") != "new file\n" || read(t, repo, "a.txt") != "local edit\n" {
					t.Fatalf("HEAD %s (want %s), new.txt %q, a.txt %q", head(t, repo), before, read(t, repo, "new.txt"), read(t, repo, "a.txt"))
				}
				if st := git(t, repo, "status", "--porcelain"); !strings.Contains(st, "A  new.txt") || !strings.Contains(st, "MM a.txt") {
					t.Fatalf("status %q: the committed changes are not staged", st)
				}
			}},
		{name: "patch is reversed", op: "patch",
			setup: func(t *testing.T, repo string) map[string]any {
				return map[string]any{"patchContent": "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-alpha\n+beta\n", "applyToIndex": true}
			},
			check: func(t *testing.T, repo, before string) {
				if read(t, repo, "a.txt") != "alpha\n" || git(t, repo, "status", "--porcelain") != "" {
					t.Fatal("patch not reversed in the work tree and index")
				}
			}},
		{name: "patch edited since is not reversed", op: "patch",
			setup: func(t *testing.T, repo string) map[string]any {
				return map[string]any{"patchContent": "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-alpha\n+beta\n"}
			},
			mess:   func(t *testing.T, repo string) { write(t, repo, "a.txt", "edited by hand\n") },
			errSub: "cannot be reversed"},
		{name: "a plan that did not move HEAD", op: "plan",
			setup: func(t *testing.T, repo string) map[string]any {
				write(t, repo, "a.txt", "changed\n")
				return map[string]any{"steps": []map[string]any{{"operationType": "discard", "paths": []string{"a.txt"}}}}
			},
			errSub: "did not move HEAD"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			runDir := isolate(t)
			repo := newRepo(t)
			fields := tt.setup(t, repo)
			before := head(t, repo)
			e := New(Options{RunDir: runDir})
			if _, out := run(t, e, tt.op, body(repo, fields)); out.Status != "completed" {
				t.Fatal(string(out.Result))
			}
			if tt.mess != nil {
				tt.mess(t, repo)
			}
			snap := snapshot(t, repo)
			_, err := e.Undo(context.Background(), repo)
			if tt.errSub != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errSub) {
					t.Fatalf("want error with %q, got %v", tt.errSub, err)
				}
				if snapshot(t, repo) != snap {
					t.Fatal("a refused undo changed the repository")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, repo, before)
		})
	}
	t.Run("no restore point", func(t *testing.T) {
		e := New(Options{RunDir: isolate(t)})
		if _, err := e.Undo(context.Background(), newRepo(t)); err == nil || !strings.Contains(err.Error(), "no restore point") {
			t.Fatalf("%v", err)
		}
	})
}

// TestRegistryReusesExistingID: an entry some other writer (FluxGit
// desktop) registered for the same repository is reused, not duplicated.
func TestRegistryReusesExistingID(t *testing.T) {
	runDir := isolate(t)
	repo := newRepo(t)
	link := filepath.Join(tmp(t), "via-link")
	if err := os.Symlink(repo, link); err != nil {
		t.Fatal(err)
	}
	write(t, runDir, "repos/desk-42.path", link+"\n")
	write(t, runDir, "repos/unrelated.path", "/does/not/exist\n")
	e := New(Options{RunDir: runDir})
	write(t, repo, "x.txt", "x\n")
	if _, out := run(t, e, "commit", body(repo, map[string]any{"message": "x", "stageAll": true})); out.Status != "completed" {
		t.Fatal(string(out.Result))
	}
	if _, err := os.Stat(filepath.Join(runDir, "rebase", "desk-42.json")); err != nil {
		t.Fatalf("record not written under the existing id: %v", err)
	}
	if des, _ := os.ReadDir(filepath.Join(runDir, "repos")); len(des) != 2 {
		t.Fatalf("registry grew: %v", des)
	}
}

// TestFailedOperationKeepsPreviousRestorePoint: a conflict changes nothing,
// so the latest restore point stays the previous one and stays undoable.
func TestFailedOperationKeepsPreviousRestorePoint(t *testing.T) {
	runDir := isolate(t)
	repo := newRepo(t)
	conflicting(t, repo)
	e := New(Options{RunDir: runDir})
	write(t, repo, "x.txt", "x\n")
	if _, out := run(t, e, "commit", body(repo, map[string]any{"message": "x", "stageAll": true})); out.Status != "completed" {
		t.Fatal(string(out.Result))
	}
	id, _ := e.registryID(repo, false)
	prev, _ := os.ReadFile(filepath.Join(runDir, "rebase", id+".json"))
	if _, out := run(t, e, "merge", body(repo, map[string]any{"sourceRef": "feature", "targetRef": "main"})); out.Status != "failed" {
		t.Fatal(string(out.Result))
	}
	now, _ := os.ReadFile(filepath.Join(runDir, "rebase", id+".json"))
	if string(now) != string(prev) {
		t.Fatalf("restore record changed by a failed merge:\n%s\n%s", prev, now)
	}
}

// TestUndoSubmoduleReturn: the restore point of a "return" lives in the
// submodule; undoing it puts the previous branch checkout back.
func TestUndoSubmoduleReturn(t *testing.T) {
	runDir := isolate(t)
	repo := newRepo(t)
	sub := withSubmodule(t, repo)
	git(t, sub, "checkout", "-q", "-b", "work")
	work := commit(t, sub, "s2.txt", "two\n", "sub second")
	e := New(Options{RunDir: runDir})
	if _, out := run(t, e, "submodulePointer", body(repo, map[string]any{"relativePath": "lib", "direction": "return"})); out.Status != "completed" {
		t.Fatal(string(out.Result))
	}
	if head(t, sub) == work {
		t.Fatal("return did not move the submodule")
	}
	u, err := e.Undo(context.Background(), sub)
	if err != nil {
		t.Fatal(err)
	}
	if u.Before != work || head(t, sub) != work || git(t, sub, "symbolic-ref", "HEAD") != "refs/heads/work" {
		t.Fatalf("undo %+v; submodule at %s", u, head(t, sub))
	}
}

// TestRestoreRecordsOfOtherWriters pins where the gateway's reading of the
// run directory changed when it moved to internal/rundir (the flux.* tools'
// rules): a record another writer left with a numeric created_at is listed
// (it was skipped: the gateway decoded created_at as a string); a record
// or registry entry reached through a symbolic link, and a relative
// registry path, are not read (the gateway followed and resolved them).
func TestRestoreRecordsOfOtherWriters(t *testing.T) {
	tests := []struct {
		name   string
		build  func(t *testing.T, runDir, repo string)
		wantID string // "" = no restore point listed
	}{
		{"numeric created_at is listed", func(t *testing.T, runDir, repo string) {
			write(t, runDir, "repos/web.path", repo+"\n")
			write(t, runDir, "rebase/web.json", `{"operation":"merge","created_at":1700000100,"after_commit":null}`)
		}, "restore:web:1700000100"},
		{"gateway layout (control)", func(t *testing.T, runDir, repo string) {
			write(t, runDir, "repos/web.path", repo+"\n")
			write(t, runDir, "rebase/web.json", `{"operation":"merge","created_at":"2026-12-01T09:04:05.678Z"}`)
		}, "restore:web:2026-12-01T09:04:05.678Z"},
		{"record is a symlink", func(t *testing.T, runDir, repo string) {
			write(t, runDir, "repos/web.path", repo+"\n")
			other := tmp(t)
			write(t, other, "web.json", `{"operation":"merge","created_at":"x"}`)
			if err := os.MkdirAll(filepath.Join(runDir, "rebase"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(other, "web.json"), filepath.Join(runDir, "rebase", "web.json")); err != nil {
				t.Fatal(err)
			}
		}, ""},
		{"relative registry path", func(t *testing.T, runDir, repo string) {
			rel, err := filepath.Rel(mustGetwd(t), repo)
			if err != nil {
				t.Skip(err)
			}
			write(t, runDir, "repos/web.path", rel+"\n")
			write(t, runDir, "rebase/web.json", `{"operation":"merge","created_at":"x"}`)
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runDir, repo := isolate(t), newRepo(t)
			tt.build(t, runDir, repo)
			rps, err := New(Options{RunDir: runDir}).RestorePoints(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.wantID == "" && len(rps) != 0:
				t.Fatalf("listed %+v, want nothing", rps)
			case tt.wantID != "" && (len(rps) != 1 || rps[0].ID != tt.wantID || rps[0].RepoPath != repo):
				t.Fatalf("listed %+v, want one with id %s", rps, tt.wantID)
			}
		})
	}
}

func mustGetwd(t *testing.T) string {
	t.Helper()
	d, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestUndoStack takes three restore points in a row (a commit, a merge, a
// discard), undoes them one by one back to the start and redoes them in
// order; the stack file beside the latest record holds all three, the
// discard's safety stash is dropped by its undo, and what cannot be
// undone says why.
func TestUndoStack(t *testing.T) {
	for _, v := range []string{"FLUXGIT_MCP_HANDSHAKE_ADDR", "FLUXGIT_GATEWAY_URL"} {
		t.Setenv(v, "")
	}
	t.Setenv("FLUXGIT_GATEWAY_ADDR", "127.0.0.1:4000") // the flux.* tools are gated on a gateway address
	ctx := context.Background()
	runDir := isolate(t)
	repo := newRepo(t)
	e := New(Options{RunDir: runDir})
	feature(t, repo)
	start := head(t, repo)
	write(t, repo, "d.txt", "commit\n")
	if _, out := run(t, e, "commit", body(repo, map[string]any{"message": "c", "stageAll": true})); out.Status != "completed" {
		t.Fatal(string(out.Result))
	}
	afterCommit := head(t, repo)
	if _, out := run(t, e, "merge", body(repo, map[string]any{"sourceRef": "feature", "targetRef": "main"})); out.Status != "completed" {
		t.Fatal(string(out.Result))
	}
	afterMerge := head(t, repo)
	write(t, repo, "a.txt", "to discard\n")
	res, out := run(t, e, "discard", body(repo, map[string]any{"paths": []string{"a.txt"}}))
	if out.Status != "completed" {
		t.Fatal(string(out.Result))
	}
	stash := res["safetyStash"].(string)

	id := strings.TrimSuffix(res["restorePointId"].(string)[len("restore:"):], ":"+strings.SplitN(res["restorePointId"].(string), ":", 3)[2])
	var st struct {
		Version int              `json:"version"`
		Points  []map[string]any `json:"points"`
	}
	raw, err := os.ReadFile(filepath.Join(runDir, "rebase", id+".stack.json"))
	if err != nil || json.Unmarshal(raw, &st) != nil || st.Version != 1 || len(st.Points) != 3 {
		t.Fatalf("stack file %s %v", raw, err)
	}
	for i, op := range []string{"commit", "merge", "discard"} {
		if st.Points[i]["operation"] != op {
			t.Fatalf("point %d is %v, want %s", i, st.Points[i]["operation"], op)
		}
	}

	steps := []struct {
		redo       bool
		op, head   string
		a          string
		stashCount int
	}{
		{false, "discard", afterMerge, "to discard\n", 0},
		{false, "merge", afterCommit, "to discard\n", 0},
		{false, "commit", start, "to discard\n", 0},
		{true, "commit", afterCommit, "to discard\n", 0},
		{true, "merge", afterMerge, "to discard\n", 0},
		{true, "discard", afterMerge, "alpha\n", 1},
	}
	for i, s := range steps {
		f := e.Undo
		if s.redo {
			f = e.Redo
		}
		// The discarded change, back in the work tree, touches a.txt,
		// which neither the merge nor the commit changes: --keep and
		// --soft keep it.
		u, err := f(ctx, repo)
		if err != nil {
			t.Fatalf("step %d (%+v): %v", i, s, err)
		}
		if u.Operation != s.op || head(t, repo) != s.head || read(t, repo, "a.txt") != s.a {
			t.Fatalf("step %d: %+v, HEAD %s want %s, a.txt %q", i, u, head(t, repo), s.head, read(t, repo, "a.txt"))
		}
		if i == 0 && u.DroppedStash != stash {
			t.Fatalf("the discard's undo did not drop its safety stash %s: %+v", stash, u)
		}
		if list := git(t, repo, "stash", "list"); (list == "") != (s.stashCount == 0) {
			t.Fatalf("step %d: stash list %q, want %d entries", i, list, s.stashCount)
		}
		if i == 1 {
			checkFluxStack(t, repo, runDir)
		}
	}
	if _, err := e.Redo(ctx, repo); err == nil || !strings.Contains(err.Error(), "nothing to redo") {
		t.Fatalf("redo past the top: %v", err)
	}
	// A commit made by hand moves HEAD: the newest point cannot be undone,
	// and the reason says so.
	commit(t, repo, "later.txt", "l\n", "later")
	rps, err := e.RestorePoints(ctx)
	if err != nil || len(rps) != 1 || rps[0].CanUndo || !strings.Contains(rps[0].Why, "no longer") || rps[0].Depth != 3 {
		t.Fatalf("RestorePoints %+v %v", rps, err)
	}
	if _, err := e.Undo(ctx, repo); err == nil || !strings.Contains(err.Error(), "no longer") {
		t.Fatalf("undo after a manual commit: %v", err)
	}
}

// checkFluxStack: after two of three restore points are undone,
// flux.restorePoints lists all three newest first, and reports exactly
// what the gateway can do: redo the merge (not the discard above it), undo
// the commit, and why the discard can be neither.
func checkFluxStack(t *testing.T, repo, runDir string) {
	t.Helper()
	args, _ := json.Marshal(map[string]any{"repoPath": repo, "runDir": runDir})
	res, err := gitread.New().CallTool(context.Background(), &sdk.Call{Tool: "flux.restorePoints", Arguments: args})
	if err != nil || res.Error != nil {
		t.Fatalf("flux.restorePoints: %v %+v", err, res.Error)
	}
	var d struct {
		RestorePoints []gitread.RestorePoint `json:"restorePoints"`
	}
	if err := json.Unmarshal(res.Data, &d); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		op               string
		canUndo, canRedo bool
		why              string
	}{
		{"discard", false, false, "older undone restore points must be redone first"},
		{"merge", false, true, ""},
		{"commit", true, false, ""},
	}
	if len(d.RestorePoints) != len(tests) {
		t.Fatalf("flux.restorePoints: %s", res.Data)
	}
	for i, tt := range tests {
		rp := d.RestorePoints[i]
		if *rp.Operation != tt.op || rp.CanUndo != tt.canUndo || rp.CanRedo != tt.canRedo || !strings.Contains(rp.WhyNot, tt.why) || (tt.why == "") != (rp.WhyNot == "") {
			t.Fatalf("point %d: %+v, want %+v", i, rp, tt)
		}
	}
}
