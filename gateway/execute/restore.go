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

// checkpoint is a restore point being taken: written before the mutation
// with after_commit null, completed after it, or put back to the previous
// record when the operation changed nothing. A nil checkpoint (plan steps
// run under the plan's own) does nothing.
type checkpoint struct {
	e       *Executor
	repo    string
	repoID  string
	rec     record
	prev    []byte // the record this one replaces; nil when none existed
	hadPrev bool
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

// begin writes the restore record of an operation about to mutate repo.
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
	c := &checkpoint{e: e, repo: repo, repoID: id, rec: rec}
	c.prev, err = rundir.ReadRecordFile(e.runDir, id, nil)
	c.hadPrev = err == nil
	if err := c.write(); err != nil {
		return nil, fmt.Errorf("write the restore point of %s: %w", repo, err)
	}
	return c, nil
}

func (c *checkpoint) write() error { return rundir.WriteRecord(c.e.runDir, c.repoID, c.rec) }

// complete records the commit the operation left (and, for a plan, the
// branch it ended on).
func (c *checkpoint) complete(after string, mut func(*record)) error {
	if c == nil {
		return nil
	}
	c.rec.AfterCommit = strp(after)
	if mut != nil {
		mut(&c.rec)
	}
	return c.write()
}

// abandon puts back the record this checkpoint replaced: the operation
// changed nothing, and the previous restore point stays the latest.
func (c *checkpoint) abandon() {
	if c == nil {
		return
	}
	if c.hadPrev {
		_ = rundir.WriteRecordFile(c.e.runDir, c.repoID, c.prev)
		return
	}
	_ = rundir.RemoveRecord(c.e.runDir, c.repoID)
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
	head, branch, err := e.headState(ctx, repo)
	if err != nil {
		return false, err.Error()
	}
	want := ""
	if rec.BranchRef != nil {
		want = *rec.BranchRef
	}
	if branch != want {
		return false, fmt.Sprintf("the checked-out branch is %s, the restore point is for %s", orDetached(branch), orDetached(want))
	}
	if head != *rec.AfterCommit {
		return false, fmt.Sprintf("HEAD is %s, no longer %s where the operation left it", orNone(head), *rec.AfterCommit)
	}
	return true, ""
}

// UndoResult describes an undone restore point.
type UndoResult struct {
	RepoPath, RepoID, Before, After, Branch string
	// Operation is the restore point's operation.
	Operation string
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

// Undo undoes the latest restore point of the repository at repoPath when
// it can be undone (not undone, same branch, HEAD where the operation left
// it): `git reset --keep <before>`, which refuses rather than overwrite
// local changes, then marks the record undone. A discard (HEAD did not
// move) is undone by applying its safety stash instead, and a submodule
// "return" by checking the previous commit (and branch) out again in the
// submodule; a patch is reversed with `git apply -R` (checked first) from
// the copy kept beside the record. Other operations that did not move HEAD
// (a plan of work-tree steps only) cannot be undone; the error says so.
func (e *Executor) Undo(ctx context.Context, repoPath string) (UndoResult, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	top, _, err := e.resolveRepo(ctx, "repoPath", repoPath)
	if err != nil {
		return UndoResult{}, err
	}
	id, err := e.registryID(top, false)
	if err != nil {
		return UndoResult{}, err
	}
	if id == "" {
		return UndoResult{}, fmt.Errorf("no restore point is registered for %s", top)
	}
	b, err := rundir.ReadRecordFile(e.runDir, id, nil)
	if err != nil {
		return UndoResult{}, fmt.Errorf("no restore point for %s: %w", top, err)
	}
	rec, err := rundir.ParseRecord(b)
	if err != nil {
		return UndoResult{}, fmt.Errorf("the restore record of %s is not valid JSON: %w", top, err)
	}
	if ok, why := e.canUndo(ctx, top, rec); !ok {
		return UndoResult{}, fmt.Errorf("the latest restore point of %s (%s) cannot be undone: %s", top, rec.Operation, why)
	}
	var pd planDetails
	_ = json.Unmarshal(rec.Plan, &pd)
	res := UndoResult{RepoPath: top, RepoID: id, After: *rec.AfterCommit, Operation: rec.Operation}
	if rec.BranchRef != nil {
		res.Branch = *rec.BranchRef
	}
	switch {
	case rec.Operation == "discard" && pd.SafetyStash != "":
		if _, err := e.run(ctx, top, "stash", "apply", "--index", pd.SafetyStash); err != nil {
			return UndoResult{}, fmt.Errorf("apply the safety stash %s: %s", pd.SafetyStash, details(err))
		}
		res.Before = *rec.AfterCommit
	case rec.Operation == "patch" && pd.PatchFile != "":
		if !rundir.ValidID(pd.PatchFile) {
			return UndoResult{}, fmt.Errorf("the restore record names an unsafe patch file %q", pd.PatchFile)
		}
		args := []string{"apply", "-R"}
		if pd.ApplyToIndex {
			args = append(args, "--index")
		}
		file := filepath.Join(e.runDir, rundir.RebaseDir, pd.PatchFile)
		// --check first: a file edited since the patch makes the reverse
		// not apply, and then nothing is touched.
		if _, err := e.run(ctx, top, append(args, "--check", "--end-of-options", file)...); err != nil {
			return UndoResult{}, fmt.Errorf("the patch cannot be reversed (the files changed since it was applied?); nothing was changed: %s", details(err))
		}
		if _, err := e.run(ctx, top, append(args, "--end-of-options", file)...); err != nil {
			return UndoResult{}, fmt.Errorf("reversing the patch failed: %s", details(err))
		}
		res.Before = *rec.AfterCommit
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
			return UndoResult{}, fmt.Errorf("cannot check out the previous commit %s: %s", *rec.BeforeCommit, details(err))
		}
		res.Before = *rec.BeforeCommit
	case rec.BeforeCommit == nil:
		return UndoResult{}, fmt.Errorf("the restore point of %s has no commit before the operation (the branch was unborn); nothing to reset to", top)
	case *rec.BeforeCommit == *rec.AfterCommit:
		return UndoResult{}, fmt.Errorf("the %s did not move HEAD, so resetting to %s would undo nothing; revert its work-tree changes by hand (git diff shows them)", rec.Operation, *rec.BeforeCommit)
	default:
		if _, err := e.run(ctx, top, "reset", "--keep", *rec.BeforeCommit); err != nil {
			return UndoResult{}, fmt.Errorf("git reset --keep %s refused (local changes would be lost?): %s", *rec.BeforeCommit, details(err))
		}
		res.Before = *rec.BeforeCommit
	}
	rec.Undone = true
	if err := rundir.WriteRecord(e.runDir, id, rec); err != nil {
		return res, fmt.Errorf("undone, but the restore record could not be marked undone: %w", err)
	}
	return res, nil
}

// RestorePoint is one repository's latest restore point, for the approval
// page's undo list.
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
}

// RestorePoints lists the restore point of every registered repository
// that has one (the registry may name repositories other writers
// registered), sorted by repository path. Entries whose path no longer
// resolves or whose record is unreadable are left out. It does not wait
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
		rec, err := rundir.ReadRecord(e.runDir, en.ID, nil)
		if err != nil {
			continue
		}
		rp := RestorePoint{RepoPath: en.Path, RepoID: en.ID, ID: rec.ID(en.ID), Operation: rec.Operation,
			CreatedAt: rec.CreatedAt.Text(), Undone: rec.Undone}
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
		out = append(out, rp)
	}
	slices.SortFunc(out, func(a, b RestorePoint) int { return strings.Compare(a.RepoPath, b.RepoPath) })
	return out, nil
}
