package execute

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fluxgit/fluxgit/internal/rundir"
)

// record is the restore record <runDir>/rebase/<repoId>.json; its format,
// id and reading and writing live in internal/rundir, shared with the
// flux.* and safety.* tools of plugins/gitread.
type record = rundir.Record

func strp(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// checkpoint is a restore point being taken: pushed on the repository's
// restore stack before the mutation with after_commit null, completed
// after it, or the stack put back when the operation changed nothing. A
// nil checkpoint (plan steps run under the plan's own) does nothing.
type checkpoint struct {
	e      *Executor
	repo   string
	repoID string
	rec    record
	prev   rundir.Stack // the stack before this point was pushed
}

// registryID returns the repository's id in <runDir>/repos (the first
// entry naming the same canonical path), registering it when create is set
// and no entry names it.
func (e *Executor) registryID(repo string, create bool) (string, error) {
	if e.runDir == "" || !filepath.IsAbs(e.runDir) {
		return "", fmt.Errorf("no absolute run directory is configured for restore points (got %q)", e.runDir)
	}
	if create {
		return rundir.Register(e.runDir, repo)
	}
	id, err := rundir.LookupID(e.runDir, repo, nil)
	if err != nil {
		return "", fmt.Errorf("read the repository registry: %w", err)
	}
	return id, nil
}

// stack reads repository id's restore stack. A repository with no stack
// but a latest record (written by an older gateway or the FluxGit app)
// starts its stack with that record.
func (e *Executor) stack(id string) (rundir.Stack, error) {
	st, err := rundir.ReadStack(e.runDir, id, nil)
	if err != nil {
		return st, err
	}
	if len(st.Points) == 0 {
		if rec, err := rundir.ReadRecord(e.runDir, id, nil); err == nil {
			st.Points = []record{rec}
		}
	}
	return st, nil
}

// begin pushes the restore point of an operation about to mutate repo on
// its restore stack (and so into the latest record <id>.json).
func (e *Executor) begin(repo string, rec record) (*checkpoint, error) {
	id, err := e.registryID(repo, true)
	if err != nil {
		return nil, err
	}
	rec.CreatedAt = rundir.NewCreatedAt(e.now())
	rec.AfterCommit = nil
	if len(rec.Plan) == 0 {
		rec.Plan = json.RawMessage("null")
	}
	prev, err := e.stack(id)
	if err != nil {
		return nil, fmt.Errorf("read the restore stack of %s: %w", repo, err)
	}
	c := &checkpoint{e: e, repo: repo, repoID: id, rec: rec, prev: prev}
	if err := c.write(); err != nil {
		return nil, fmt.Errorf("write the restore point of %s: %w", repo, err)
	}
	return c, nil
}

// write puts the stack back as begin found it, minus its redo side (the
// undone points above the cursor: a new operation replaces what could be
// redone, as in an editor), plus this point on top.
func (c *checkpoint) write() error {
	pts := slices.Clone(c.prev.Points[:c.prev.Cursor()+1])
	pts = append(pts, c.rec)
	return rundir.WriteStack(c.e.runDir, c.repoID, rundir.Stack{Points: pts})
}

// complete records the commit the operation left (and, for a plan, the
// branch it ended on), and removes the patch copies of the points the new
// one pushed off the stack.
func (c *checkpoint) complete(after string, mut func(*record)) error {
	if c == nil {
		return nil
	}
	c.rec.AfterCommit = strp(after)
	if mut != nil {
		mut(&c.rec)
	}
	if err := c.write(); err != nil {
		return err
	}
	kept := map[string]bool{}
	if st, err := rundir.ReadStack(c.e.runDir, c.repoID, nil); err == nil {
		for _, p := range st.Points {
			kept[planOf(p).PatchFile] = true
		}
	}
	for _, p := range c.prev.Points {
		if f := planOf(p).PatchFile; f != "" && !kept[f] {
			_ = rundir.RemoveFile(c.e.runDir, f)
		}
	}
	return nil
}

// abandon puts back the stack this checkpoint was pushed on: the operation
// changed nothing, and the previous restore point stays the latest.
func (c *checkpoint) abandon() {
	if c == nil {
		return
	}
	_ = rundir.WriteStack(c.e.runDir, c.repoID, c.prev)
}

// planOf decodes a record's opaque plan details (zero when it has none).
func planOf(r record) planDetails {
	var pd planDetails
	_ = json.Unmarshal(r.Plan, &pd)
	return pd
}

// id is the restore point id gitread reports.
func (c *checkpoint) id() string { return c.rec.ID(c.repoID) }

// object is the result's restorePoint object after completion.
func (c *checkpoint) object(ctx context.Context) map[string]any {
	if c == nil {
		return nil
	}
	o := map[string]any{
		"operation": c.rec.Operation, "branchRef": c.rec.BranchRef,
		"beforeCommit": c.rec.BeforeCommit, "afterCommit": c.rec.AfterCommit, "canUndo": false,
		"id": c.id(), "repoId": c.repoID,
	}
	if ok, _ := c.e.canUndo(ctx, c.repo, c.rec); ok {
		o["canUndo"] = true
	}
	return o
}

// attach adds the restore point to a result.
func (c *checkpoint) attach(ctx context.Context, r result) result {
	if c != nil {
		r["restorePoint"] = c.object(ctx)
		r["restorePointId"] = c.id()
	}
	return r
}

// canUndo is gitread's rule: not undone, the branch matches, HEAD is the
// recorded after commit.
func (e *Executor) canUndo(ctx context.Context, repo string, rec record) (bool, string) {
	if rec.Undone {
		return false, "the restore point was already undone"
	}
	if rec.AfterCommit == nil {
		return false, "the operation of the restore point did not finish"
	}
	return e.refsAt(ctx, repo, rec, *rec.AfterCommit, "where the operation left it")
}

// canRedo is the mirror rule: undone, the branch matches, HEAD is the
// recorded before commit (where the undo left it).
func (e *Executor) canRedo(ctx context.Context, repo string, rec record) (bool, string) {
	if !rec.Undone {
		return false, "the restore point is not undone"
	}
	if rec.AfterCommit == nil {
		return false, "the operation of the restore point did not finish"
	}
	before := *rec.AfterCommit
	if rec.BeforeCommit != nil && movesHead(rec) {
		before = *rec.BeforeCommit
	}
	return e.refsAt(ctx, repo, rec, before, "where the undo left it")
}

// movesHead reports whether undoing rec moves HEAD (everything but a
// discard or a patch, which change only the work tree and index).
func movesHead(rec record) bool {
	pd := planOf(rec)
	switch {
	case rec.Operation == "discard" && pd.SafetyStash != "", rec.Operation == "patch" && pd.PatchFile != "":
		return false
	}
	return true
}

// refsAt checks that repo has rec's branch checked out at commit want.
func (e *Executor) refsAt(ctx context.Context, repo string, rec record, want, where string) (bool, string) {
	head, branch, err := e.headState(ctx, repo)
	if err != nil {
		return false, err.Error()
	}
	wantBranch := ""
	if rec.BranchRef != nil {
		wantBranch = *rec.BranchRef
	}
	if branch != wantBranch {
		return false, fmt.Sprintf("the checked-out branch is %s, the restore point is for %s", orDetached(branch), orDetached(wantBranch))
	}
	if head != want {
		return false, fmt.Sprintf("HEAD is %s, no longer %s %s (something else changed the branch since)", orNone(head), want, where)
	}
	return true, ""
}

// UndoResult describes an undone (or redone) restore point.
type UndoResult struct {
	RepoPath, RepoID, Before, After, Branch string
	// Operation is the restore point's operation, ID its restore point id.
	Operation, ID string
	// How is what was done, in git's words ("git reset --soft <oid>").
	How string
	// DroppedStash is a discard's safety stash dropped by its undo: the
	// changes are back in the work tree, so the stash is no longer needed.
	DroppedStash string
}

// planDetails is the opaque "plan" value of a record: plan steps, or the
// safety stash of a discard or a hard reset.
type planDetails struct {
	SafetyStash string `json:"safetyStash,omitempty"`
	// PatchFile names the applied patch, kept beside the record
	// (<runDir>/rebase/<repoId>.patch) so Undo can reverse it.
	PatchFile    string   `json:"patchFile,omitempty"`
	ApplyToIndex bool     `json:"applyToIndex,omitempty"`
	Paths        []string `json:"paths,omitempty"`
	Steps        []string `json:"steps,omitempty"`
}

// target finds the point Undo (redo false) or Redo takes next on
// repository repoPath's restore stack.
func (e *Executor) target(ctx context.Context, repoPath string, redo bool) (string, string, rundir.Stack, int, error) {
	top, _, err := e.resolveRepo(ctx, "repoPath", repoPath)
	if err != nil {
		return "", "", rundir.Stack{}, 0, err
	}
	id, err := e.registryID(top, false)
	if err != nil {
		return "", "", rundir.Stack{}, 0, err
	}
	if id == "" {
		return "", "", rundir.Stack{}, 0, fmt.Errorf("no restore point is registered for %s: the gateway has not changed it", top)
	}
	st, err := e.stack(id)
	if err != nil {
		return "", "", st, 0, err
	}
	if len(st.Points) == 0 {
		return "", "", st, 0, fmt.Errorf("no restore point for %s", top)
	}
	i := st.Cursor()
	if redo {
		i++
		if i >= len(st.Points) {
			return "", "", st, 0, fmt.Errorf("nothing to redo in %s: no restore point was undone since the last operation", top)
		}
		return top, id, st, i, nil
	}
	if i < 0 {
		return "", "", st, 0, fmt.Errorf("nothing left to undo in %s: every restore point the gateway keeps (%d) is undone", top, len(st.Points))
	}
	return top, id, st, i, nil
}

// Undo undoes the newest restore point of the repository at repoPath that
// is not undone yet, when its refs are still where the gateway left them
// (same branch, HEAD at its after commit); called again it undoes the one
// before, and Redo takes them back in order. How each operation is undone
// (none loses the person's work; each refuses rather than overwrite local
// changes):
//
//   - commit: `git reset --soft <before>`: the commit leaves the branch and
//     its changes stay staged, files it added included (a --keep reset
//     would delete them from the work tree).
//   - reset soft or mixed: the same mode back to <before> (neither touches
//     the work tree, which still holds what the branch had).
//   - discard: its safety stash applied back (`git stash apply --index`),
//     then dropped from the stash list: the changes are back.
//   - patch: reversed with `git apply -R`, checked first, from the copy kept
//     beside the stack.
//   - submodulePointer return: the previous commit (and branch) checked
//     out again in the submodule.
//   - every other (merge, rebase, hard reset, plan, submodule record):
//     `git reset --keep <before>`.
func (e *Executor) Undo(ctx context.Context, repoPath string) (UndoResult, error) {
	return e.step(ctx, repoPath, false)
}

// Redo redoes the restore point Undo undid last in repoPath, when HEAD and
// the branch are still where that undo left them.
func (e *Executor) Redo(ctx context.Context, repoPath string) (UndoResult, error) {
	return e.step(ctx, repoPath, true)
}

// step is Undo (redo false) or Redo: it takes the stack's next point,
// checks its refs, undoes or redoes it and marks it so on the stack.
func (e *Executor) step(ctx context.Context, repoPath string, redo bool) (UndoResult, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	top, id, st, i, err := e.target(ctx, repoPath, redo)
	if err != nil {
		return UndoResult{}, err
	}
	rec := st.Points[i]
	check, do, which, verb := e.canUndo, e.undoPoint, "the newest restore point", "undone"
	if redo {
		check, do, which, verb = e.canRedo, e.redoPoint, "the last undone restore point", "redone"
	}
	if ok, why := check(ctx, top, rec); !ok {
		return UndoResult{}, fmt.Errorf("%s of %s (%s, %s) cannot be %s: %s", which, top, rec.Operation, rec.ID(id), verb, why)
	}
	res, err := do(ctx, top, &rec)
	if err != nil {
		return UndoResult{}, err
	}
	res.RepoID, res.ID = id, rec.ID(id)
	rec.Undone = !redo
	st.Points[i] = rec
	if err := rundir.WriteStack(e.runDir, id, st); err != nil {
		return res, fmt.Errorf("%s, but the restore stack could not be updated: %w", verb, err)
	}
	return res, nil
}

// resetMode is the git reset mode that undoes or redoes rec by moving HEAD:
// soft for a commit, the reset's own mode for a soft or mixed reset, keep
// otherwise.
func resetMode(rec record) string {
	switch {
	case rec.Operation == "commit":
		return "soft"
	case rec.Operation == "reset" && rec.ResetMode != nil && (*rec.ResetMode == "soft" || *rec.ResetMode == "mixed"):
		return *rec.ResetMode
	}
	return "keep"
}

// undoPoint undoes rec in repo (see Undo); rec's plan may be updated.
func (e *Executor) undoPoint(ctx context.Context, top string, rec *record) (UndoResult, error) {
	pd := planOf(*rec)
	res := UndoResult{RepoPath: top, After: *rec.AfterCommit, Operation: rec.Operation}
	if rec.BranchRef != nil {
		res.Branch = *rec.BranchRef
	}
	switch {
	case rec.Operation == "discard" && pd.SafetyStash != "":
		if _, err := e.run(ctx, top, "stash", "apply", "--index", pd.SafetyStash); err != nil {
			return res, fmt.Errorf("apply the safety stash %s: %s", pd.SafetyStash, details(err))
		}
		res.Before, res.How = *rec.AfterCommit, "git stash apply --index "+pd.SafetyStash
		if e.dropStash(ctx, top, pd.SafetyStash) {
			res.DroppedStash = pd.SafetyStash
		}
	case rec.Operation == "patch" && pd.PatchFile != "":
		if err := e.applyKept(ctx, top, pd, true); err != nil {
			return res, err
		}
		res.Before, res.How = *rec.AfterCommit, "git apply -R"
	case rec.Operation == "submodulePointer" && rec.BranchRef == nil && rec.BeforeCommit != nil:
		// A "return" detached the submodule: put back the previous
		// checkout, on its branch when it was on one and that branch still
		// points where it did.
		target := []string{"checkout", "-q", "--detach", *rec.BeforeCommit}
		if rec.BeforeRef != nil {
			if tip, _ := e.resolve(ctx, top, *rec.BeforeRef); tip == *rec.BeforeCommit {
				target = []string{"checkout", "-q", shortBranch(*rec.BeforeRef), "--"}
			}
		}
		if _, err := e.run(ctx, top, target...); err != nil {
			return res, fmt.Errorf("cannot check out the previous commit %s: %s", *rec.BeforeCommit, details(err))
		}
		res.Before, res.How = *rec.BeforeCommit, "git "+strings.Join(target, " ")
	case rec.BeforeCommit == nil:
		return res, fmt.Errorf("the restore point of %s has no commit before the operation (the branch was unborn); nothing to reset to", top)
	case *rec.BeforeCommit == *rec.AfterCommit:
		return res, fmt.Errorf("the %s did not move HEAD, so resetting to %s would undo nothing; revert its work-tree changes by hand (git diff shows them)", rec.Operation, *rec.BeforeCommit)
	default:
		mode := resetMode(*rec)
		if _, err := e.run(ctx, top, "reset", "-q", "--"+mode, *rec.BeforeCommit); err != nil {
			return res, fmt.Errorf("git reset --%s %s refused (local changes would be lost?); nothing was changed: %s", mode, *rec.BeforeCommit, details(err))
		}
		res.Before, res.How = *rec.BeforeCommit, "git reset --"+mode+" "+*rec.BeforeCommit
	}
	return res, nil
}

// redoPoint does rec's operation again after its undo: the same git
// commands the other way round.
func (e *Executor) redoPoint(ctx context.Context, top string, rec *record) (UndoResult, error) {
	pd := planOf(*rec)
	res := UndoResult{RepoPath: top, After: *rec.AfterCommit, Operation: rec.Operation}
	if rec.BranchRef != nil {
		res.Branch = *rec.BranchRef
	}
	switch {
	case rec.Operation == "discard" && pd.SafetyStash != "":
		before, _ := e.resolve(ctx, top, "refs/stash")
		msg := "fluxgit safety stash before discard (redo of " + rec.CreatedAt.Text() + ")"
		if _, err := e.run(ctx, top, append([]string{"stash", "push", "--include-untracked", "-q", "-m", msg, "--"}, pd.Paths...)...); err != nil {
			return res, fmt.Errorf("discard again failed, nothing was discarded: %s", details(err))
		}
		stash, _ := e.resolve(ctx, top, "refs/stash")
		if stash == "" || stash == before {
			return res, fmt.Errorf("nothing to discard again: the paths %s have no changes", strings.Join(limit(pd.Paths, 10), ", "))
		}
		pd.SafetyStash = stash
		rec.Plan, _ = json.Marshal(pd)
		res.Before, res.How = *rec.AfterCommit, "git stash push --include-untracked (safety stash "+stash+")"
	case rec.Operation == "patch" && pd.PatchFile != "":
		if err := e.applyKept(ctx, top, pd, false); err != nil {
			return res, err
		}
		res.Before, res.How = *rec.AfterCommit, "git apply"
	case rec.Operation == "submodulePointer" && rec.BranchRef == nil:
		if _, err := e.run(ctx, top, "checkout", "-q", "--detach", *rec.AfterCommit); err != nil {
			return res, fmt.Errorf("cannot check out %s again: %s", *rec.AfterCommit, details(err))
		}
		res.How = "git checkout --detach " + *rec.AfterCommit
		if rec.BeforeCommit != nil {
			res.Before = *rec.BeforeCommit
		}
	case rec.BeforeCommit == nil:
		return res, fmt.Errorf("the restore point of %s has no commit before the operation; nothing to redo", top)
	default:
		mode := resetMode(*rec)
		if _, err := e.run(ctx, top, "reset", "-q", "--"+mode, *rec.AfterCommit); err != nil {
			return res, fmt.Errorf("git reset --%s %s refused (local changes would be lost?); nothing was changed: %s", mode, *rec.AfterCommit, details(err))
		}
		res.Before, res.How = *rec.BeforeCommit, "git reset --"+mode+" "+*rec.AfterCommit
	}
	return res, nil
}

// applyKept applies (reverse: reverses) the patch kept beside the stack,
// after a --check: a file edited since makes it not apply, and then
// nothing is touched.
func (e *Executor) applyKept(ctx context.Context, top string, pd planDetails, reverse bool) error {
	if !rundir.ValidID(pd.PatchFile) {
		return fmt.Errorf("the restore record names an unsafe patch file %q", pd.PatchFile)
	}
	args := []string{"apply"}
	if reverse {
		args = append(args, "-R")
	}
	if pd.ApplyToIndex {
		args = append(args, "--index")
	}
	file := filepath.Join(e.runDir, rundir.RebaseDir, pd.PatchFile)
	if _, err := e.run(ctx, top, append(args, "--check", "--end-of-options", file)...); err != nil {
		what := "applied again"
		if reverse {
			what = "reversed"
		}
		return fmt.Errorf("the patch cannot be %s (the files changed since?); nothing was changed: %s", what, details(err))
	}
	if _, err := e.run(ctx, top, append(args, "--end-of-options", file)...); err != nil {
		return fmt.Errorf("git %s failed: %s", strings.Join(args, " "), details(err))
	}
	return nil
}

// dropStash drops the stash entry whose commit is oid, if it is still in
// the stash list; it reports whether it did.
func (e *Executor) dropStash(ctx context.Context, repo, oid string) bool {
	out, err := e.run(ctx, repo, "reflog", "show", "--format=%H", "refs/stash", "--")
	if err != nil {
		return false
	}
	for n, l := range strings.Split(out, "\n") {
		if strings.TrimSpace(l) == oid {
			_, err := e.run(ctx, repo, "stash", "drop", "-q", fmt.Sprintf("stash@{%d}", n))
			return err == nil
		}
	}
	return false
}

// RestorePoint is one repository's restore stack as the approval page
// lists it: its newest point not undone (what Undo takes next) and the
// one Redo takes next.
type RestorePoint struct {
	RepoPath  string `json:"repoPath"`
	RepoID    string `json:"repoId"`
	ID        string `json:"id"`
	Operation string `json:"operation"`
	Before    string `json:"before"`
	After     string `json:"after"`
	Branch    string `json:"branch"`
	CreatedAt string `json:"createdAt"`
	Undone    bool   `json:"undone"`
	CanUndo   bool   `json:"canUndo"`
	// Why says why CanUndo is false ("" when it is true).
	Why string `json:"why,omitempty"`
	// Depth is how many points of the stack are not undone (Undo can go
	// back that many steps while the refs allow it).
	Depth int `json:"depth"`
	// Redo is the point Redo takes next (nil when none was undone).
	Redo *RedoPoint `json:"redo,omitempty"`
}

// RedoPoint is the undone restore point Redo takes next.
type RedoPoint struct {
	ID        string `json:"id"`
	Operation string `json:"operation"`
	CanRedo   bool   `json:"canRedo"`
	Why       string `json:"why,omitempty"`
}

// RestorePoints lists the restore stack of every registered repository
// that has one (the registry may name repositories other writers
// registered), sorted by repository path. Entries whose path no longer
// resolves or whose stack is unreadable are left out. It does not wait
// for a running execution, so a point read mid-operation may show
// CanUndo false for a moment.
func (e *Executor) RestorePoints(ctx context.Context) ([]RestorePoint, error) {
	if e.runDir == "" {
		return nil, nil
	}
	entries, err := rundir.ReadRegistry(e.runDir, nil)
	if err != nil {
		return nil, fmt.Errorf("read the repository registry: %w", err)
	}
	out := []RestorePoint{}
	for _, en := range entries {
		st, err := e.stack(en.ID)
		if err != nil || len(st.Points) == 0 {
			continue
		}
		c := st.Cursor()
		var rp RestorePoint
		if c >= 0 {
			rec := st.Points[c]
			rp = RestorePoint{ID: rec.ID(en.ID), Operation: rec.Operation, CreatedAt: rec.CreatedAt.Text(), Depth: c + 1}
			if rec.BeforeCommit != nil {
				rp.Before = *rec.BeforeCommit
			}
			if rec.AfterCommit != nil {
				rp.After = *rec.AfterCommit
			}
			if rec.BranchRef != nil {
				rp.Branch = *rec.BranchRef
			}
			rp.CanUndo, rp.Why = e.canUndo(ctx, en.Path, rec)
		} else {
			rec := st.Points[0]
			rp = RestorePoint{ID: rec.ID(en.ID), Operation: rec.Operation, CreatedAt: rec.CreatedAt.Text(), Undone: true,
				Why: fmt.Sprintf("every restore point the gateway keeps for this repository (%d) is undone", len(st.Points))}
			if rec.BranchRef != nil {
				rp.Branch = *rec.BranchRef
			}
		}
		rp.RepoPath, rp.RepoID = en.Path, en.ID
		if c+1 < len(st.Points) {
			r := st.Points[c+1]
			rd := &RedoPoint{ID: r.ID(en.ID), Operation: r.Operation}
			rd.CanRedo, rd.Why = e.canRedo(ctx, en.Path, r)
			rp.Redo = rd
		}
		out = append(out, rp)
	}
	slices.SortFunc(out, func(a, b RestorePoint) int { return strings.Compare(a.RepoPath, b.RepoPath) })
	return out, nil
}
