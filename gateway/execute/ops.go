package execute

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fluxgit/fluxgit/internal/gitexec"
	"github.com/fluxgit/fluxgit/internal/operation"
	"github.com/fluxgit/fluxgit/internal/rundir"
)

// step runs one of the five operations a plan may contain. inPlan: the
// plan holds the restore point, so the step takes none of its own.
// s is the step's typed body (operation.PlanStep.Body, or
// operation.AsStep of a whole operation's body).
func (x *execution) step(ctx context.Context, op string, s any, inPlan bool) result {
	switch r := s.(type) {
	case *operation.MergeStep:
		return x.merge(ctx, r, inPlan)
	case *operation.RebaseStep:
		return x.rebase(ctx, r, inPlan)
	case *operation.DiscardStep:
		return x.discard(ctx, r, inPlan)
	case *operation.ResetStep:
		return x.reset(ctx, r, inPlan)
	case *operation.PatchStep:
		return x.patch(ctx, r, inPlan)
	}
	return failed("operation type %q cannot be a plan step", op)
}

// begin takes a restore point unless the step runs inside a plan.
func (x *execution) begin(inPlan bool, repo string, rec record) (*checkpoint, error) {
	if inPlan {
		return nil, nil
	}
	return x.e.begin(repo, rec)
}

// needClean refuses to start on a work tree an abort could not restore.
func (x *execution) needClean(ctx context.Context, what string) (result, bool) {
	clean, why, err := x.e.cleanTracked(ctx, x.repo)
	if err != nil {
		return failed("%s not started: %v", what, err), false
	}
	if !clean {
		return failed("%s not started: %s in %s; commit or stash first, so that a conflict can be undone exactly", what, why, x.repo), false
	}
	return nil, true
}

// merge merges sourceRef into the local branch targetRef.
//
// Semantics: targetRef must be a local branch. When it is not the
// checked-out branch, it is checked out first, and only when the work tree
// has no uncommitted changes to tracked files (a merge always needs that,
// so an abort can restore it exactly). strategy "merge" fast-forwards when
// possible and otherwise creates a merge commit; "squash" stages the
// combined change and commits it as one ordinary commit on targetRef. On a
// conflict or any other failure the merge is aborted and, when targetRef
// was checked out for the merge, the original branch is checked out again:
// the repository is as it was. On success targetRef stays checked out.
// Hooks do not run (the person approved this exact merge).
func (x *execution) merge(ctx context.Context, r *operation.MergeStep, inPlan bool) result {
	e, repo := x.e, x.repo
	target, ok := localBranch(r.TargetRef)
	if !ok && r.TargetRef == "HEAD" {
		_, target, _ = e.headState(ctx, repo)
		ok = target != ""
	}
	if !ok {
		return failed("targetRef %q is not a local branch", r.TargetRef)
	}
	source, err := e.resolve(ctx, repo, r.SourceRef)
	if err != nil || source == "" {
		return failed("sourceRef %q does not name a commit", r.SourceRef)
	}
	targetOid, err := e.resolve(ctx, repo, target)
	if err != nil || targetOid == "" {
		return failed("targetRef %s is not an existing local branch", shortBranch(target))
	}
	squash := r.Strategy == "squash"
	if up, _ := e.isAncestor(ctx, repo, source, targetOid); up {
		return result{"status": "completed", "message": fmt.Sprintf("%s is already merged into %s; nothing changed", r.SourceRef, shortBranch(target)),
			"mergeCommit": targetOid, "summary": "already up to date"}
	}
	if res, ok := x.needClean(ctx, "merge"); !ok {
		return res
	}
	head, original, err := e.headState(ctx, repo)
	if err != nil {
		return failed("merge not started: %v", err)
	}
	commits, _ := e.run(ctx, repo, "rev-list", "--count", targetOid+".."+source)
	ff, _ := e.isAncestor(ctx, repo, targetOid, source)
	cp, err := x.begin(inPlan, repo, record{Operation: "merge", BeforeCommit: strp(targetOid), BranchRef: strp(target),
		BeforeRef: strp(original), AfterRef: strp(target)})
	if err != nil {
		return failed("merge not started: %v", err)
	}
	switched := original != target
	restore := func(why string) result {
		if files := e.conflicted(ctx, repo); len(files) > 0 {
			why += "; conflicting paths: " + strings.Join(limit(files, 20), ", ")
		}
		if oid, _ := e.resolve(ctx, repo, "MERGE_HEAD"); oid != "" {
			_, _ = e.run(ctx, repo, "merge", "--abort")
		} else {
			_, _ = e.run(ctx, repo, "reset", "--merge")
		}
		if switched {
			if original != "" {
				_, _ = e.run(ctx, repo, "checkout", "-q", shortBranch(original), "--")
			} else {
				_, _ = e.run(ctx, repo, "checkout", "-q", "--detach", head)
			}
		}
		cp.abandon()
		return failed("merge of %s into %s failed and was aborted; the repository is as it was: %s", r.SourceRef, shortBranch(target), why)
	}
	if switched {
		if _, err := e.run(ctx, repo, "checkout", "-q", shortBranch(target), "--"); err != nil {
			cp.abandon()
			return failed("merge not started: cannot check out %s: %s", shortBranch(target), details(err))
		}
	}
	kind := "merge commit"
	if squash {
		if _, err := e.run(ctx, repo, "merge", "--squash", "--no-verify", "--no-stat", "--end-of-options", source); err != nil {
			return restore(details(err))
		}
		if _, err := e.run(ctx, repo, "diff", "--cached", "--quiet"); err == nil {
			restore("")
			return result{"status": "completed", "message": fmt.Sprintf("squashing %s into %s changes no file; nothing was committed", r.SourceRef, shortBranch(target)),
				"mergeCommit": targetOid, "summary": "nothing to squash"}
		}
		msg := fmt.Sprintf("Squash merge %s into %s", r.SourceRef, shortBranch(target))
		if _, err := e.run(ctx, repo, "commit", "-q", "--no-verify", "-m", msg); err != nil {
			return restore(details(err))
		}
		kind = "squash commit"
	} else {
		msg := fmt.Sprintf("Merge %s into %s", r.SourceRef, shortBranch(target))
		if _, err := e.run(ctx, repo, "merge", "--no-edit", "--no-verify", "--no-stat", "-m", msg, "--end-of-options", source); err != nil {
			return restore(details(err))
		}
		if ff {
			kind = "fast-forward"
		}
	}
	after, _ := e.resolve(ctx, repo, "HEAD")
	if err := cp.complete(after, nil); err != nil {
		return failed("the merge succeeded (%s) but its restore point could not be completed: %v", after, err)
	}
	summary := fmt.Sprintf("Merged %s into %s (%s, %s commit(s))", r.SourceRef, shortBranch(target), kind, commits)
	return cp.attach(ctx, result{"status": "completed", "message": summary, "mergeCommit": after, "summary": summary})
}

// capList keeps at most n entries: the result schema caps these arrays.
func capList(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// limit shortens a list for a message, saying how many were left out.
func limit(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], fmt.Sprintf("… %d more", len(s)-n))
	}
	return s
}

// rebase replays currentRef (default: the checked-out branch) onto ontoRef
// without interaction. A named currentRef is checked out by git and stays
// checked out. On a conflict the rebase is aborted, which puts back the
// original branch, HEAD and work tree.
func (x *execution) rebase(ctx context.Context, r *operation.RebaseStep, inPlan bool) result {
	e, repo := x.e, x.repo
	if r.Interactive {
		return failed("interactive rebase is not supported")
	}
	onto, err := e.resolve(ctx, repo, r.OntoRef)
	if err != nil || onto == "" {
		return failed("ontoRef %q does not name a commit", r.OntoRef)
	}
	head, branch, err := e.headState(ctx, repo)
	if err != nil {
		return failed("rebase not started: %v", err)
	}
	args := []string{"rebase", "--no-verify", "--no-autostash", "--no-autosquash", "--no-update-refs", "--end-of-options", onto}
	before := head
	if cur := r.CurrentRef; cur != "" && cur != "HEAD" {
		full, ok := localBranch(cur)
		if !ok {
			return failed("currentRef %q is not a local branch", cur)
		}
		if full != branch {
			if before, _ = e.resolve(ctx, repo, full); before == "" {
				return failed("currentRef %s is not a local branch", cur)
			}
			branch = full
			args = append(args, shortBranch(full))
		}
	}
	if res, ok := x.needClean(ctx, "rebase"); !ok {
		return res
	}
	var upstream string
	if branch != "" {
		upstream, _ = e.run(ctx, repo, "for-each-ref", "--format=%(upstream)", branch)
	}
	cp, err := x.begin(inPlan, repo, record{Operation: "rebase", BeforeCommit: strp(before), BranchRef: strp(branch),
		BeforeRef: strp(branch), AfterRef: strp(branch), UpstreamRef: strp(upstream)})
	if err != nil {
		return failed("rebase not started: %v", err)
	}
	if _, err := e.run(ctx, repo, args...); err != nil {
		why := details(err)
		if files := e.conflicted(ctx, repo); len(files) > 0 {
			why = "conflicting paths: " + strings.Join(limit(files, 20), ", ")
		}
		_, _ = e.run(ctx, repo, "rebase", "--abort")
		cp.abandon()
		return failed("rebase onto %s failed and was aborted; the repository is as it was: %s", r.OntoRef, why)
	}
	after, _ := e.resolve(ctx, repo, "HEAD")
	if after == before {
		cp.abandon()
		return result{"status": "completed", "message": "already up to date with " + r.OntoRef + "; nothing was replayed",
			"newHeadSha": after, "replayedCommits": 0}
	}
	n, _ := e.run(ctx, repo, "rev-list", "--count", onto+".."+after)
	replayed, _ := strconv.Atoi(n)
	if err := cp.complete(after, nil); err != nil {
		return failed("the rebase succeeded (%s) but its restore point could not be completed: %v", after, err)
	}
	return cp.attach(ctx, result{"status": "completed", "message": fmt.Sprintf("rebased %s onto %s: %d commit(s) replayed", orDetached(branch), r.OntoRef, replayed),
		"newHeadSha": after, "replayedCommits": replayed})
}

// safetyStash stores the work tree's tracked changes (and, with paths, the
// untracked ones there too) as a stash entry before they are thrown away.
// It returns "" when there was nothing to keep.
func (x *execution) safetyStash(ctx context.Context, why string) (string, error) {
	oid, err := x.e.run(ctx, x.repo, "stash", "create", why)
	if err != nil || oid == "" {
		return "", err
	}
	if _, err := x.e.run(ctx, x.repo, "stash", "store", "-m", why, oid); err != nil {
		return "", err
	}
	return oid, nil
}

// discard throws away the changes (staged, unstaged and untracked) under
// paths. They are not lost: `git stash push --include-untracked -- paths`
// moves exactly them into a safety stash entry, whose id the result and
// the restore record carry; Undo applies it back.
func (x *execution) discard(ctx context.Context, r *operation.DiscardStep, inPlan bool) result {
	e, repo := x.e, x.repo
	paths := r.Paths
	if len(paths) == 0 {
		return failed("paths must list at least one path")
	}
	head, branch, err := e.headState(ctx, repo)
	if err != nil || head == "" {
		return failed("discard needs a commit to discard changes against")
	}
	st, err := e.run(ctx, repo, append([]string{"status", "--porcelain=v1", "--untracked-files=normal", "--"}, paths...)...)
	if err != nil {
		return failed("discard not started: %s", details(err))
	}
	if st == "" {
		return failed("nothing to discard: the paths %s have no changes", strings.Join(limit(paths, 10), ", "))
	}
	cp, err := x.begin(inPlan, repo, record{Operation: "discard", BeforeCommit: strp(head), BranchRef: strp(branch)})
	if err != nil {
		return failed("discard not started: %v", err)
	}
	before, _ := e.resolve(ctx, repo, "refs/stash")
	msg := "fluxgit safety stash before discard (" + x.job.ID + ")"
	if _, err := e.run(ctx, repo, append([]string{"stash", "push", "--include-untracked", "-q", "-m", msg, "--"}, paths...)...); err != nil {
		cp.abandon()
		return failed("discard failed, nothing was discarded: %s", details(err))
	}
	stash, _ := e.resolve(ctx, repo, "refs/stash")
	if stash == "" || stash == before {
		cp.abandon()
		return failed("discard: git created no safety stash, so nothing was discarded")
	}
	pd, _ := json.Marshal(planDetails{SafetyStash: stash, Paths: paths})
	if err := cp.complete(head, func(rec *record) { rec.Plan = pd }); err != nil {
		return failed("the changes were moved to the safety stash %s but the restore point could not be completed: %v", stash, err)
	}
	return cp.attach(ctx, result{"status": "completed",
		"message":        fmt.Sprintf("discarded the changes in %d path(s); they are kept in the safety stash %s (git stash list)", len(paths), stash),
		"pathsDiscarded": capList(paths, 10000), "safetyStash": stash})
}

// reset moves the checked-out branch (or a detached HEAD) to targetRef.
// Before a hard reset the uncommitted changes to tracked files are kept in
// a safety stash entry.
func (x *execution) reset(ctx context.Context, r *operation.ResetStep, inPlan bool) result {
	e, repo := x.e, x.repo
	mode := r.Mode
	if mode == "" {
		mode = "mixed"
	}
	if mode != "soft" && mode != "mixed" && mode != "hard" {
		return failed("mode %q is not soft, mixed or hard", mode)
	}
	target, err := e.resolve(ctx, repo, r.TargetRef)
	if err != nil || target == "" {
		return failed("targetRef %q does not name a commit", r.TargetRef)
	}
	head, branch, err := e.headState(ctx, repo)
	if err != nil {
		return failed("reset not started: %v", err)
	}
	var pd json.RawMessage
	var stash string
	if mode == "hard" {
		if stash, err = x.safetyStash(ctx, "fluxgit safety stash before reset --hard ("+x.job.ID+")"); err != nil {
			return failed("reset not started: cannot save the uncommitted changes in a safety stash: %s", details(err))
		}
		if stash != "" {
			pd, _ = json.Marshal(planDetails{SafetyStash: stash})
		}
	}
	cp, err := x.begin(inPlan, repo, record{Operation: "reset", BeforeCommit: strp(head), BranchRef: strp(branch),
		BeforeRef: strp(branch), AfterRef: strp(branch), ResetMode: strp(mode), Plan: pd})
	if err != nil {
		return failed("reset not started: %v", err)
	}
	if _, err := e.run(ctx, repo, "reset", "-q", "--"+mode, target); err != nil {
		cp.abandon()
		return failed("git reset --%s failed: %s", mode, details(err))
	}
	after, _ := e.resolve(ctx, repo, "HEAD")
	if err := cp.complete(after, nil); err != nil {
		return failed("reset done (%s) but its restore point could not be completed: %v", after, err)
	}
	res := result{"status": "completed", "message": fmt.Sprintf("reset %s to %s (%s)", orDetached(branch), after, mode), "newHeadSha": after, "mode": mode}
	if stash != "" {
		res["safetyStash"] = stash
		res["message"] = res["message"].(string) + "; uncommitted changes kept in the safety stash " + stash
	}
	return cp.attach(ctx, res)
}

// patch applies patchContent to the work tree (applyToIndex: to the index
// too) after `git apply --check` proved it applies; a patch that does not
// apply changes nothing.
func (x *execution) patch(ctx context.Context, r *operation.PatchStep, inPlan bool) result {
	e, repo := x.e, x.repo
	f, err := os.CreateTemp("", "fluxgit-patch-*.diff")
	if err != nil {
		return failed("patch not started: %v", err)
	}
	defer os.Remove(f.Name())
	_, werr := f.WriteString(r.PatchContent)
	if cerr := f.Close(); werr != nil || cerr != nil {
		return failed("patch not started: cannot write the patch to a temporary file")
	}
	mode := []string{"apply"}
	if r.ApplyToIndex {
		mode = append(mode, "--index")
	}
	if _, err := e.run(ctx, repo, append(mode, "--check", "--end-of-options", f.Name())...); err != nil {
		return failed("the patch does not apply (git apply --check); nothing was changed: %s", details(err))
	}
	files := []string{}
	if out, err := e.run(ctx, repo, "apply", "--numstat", "-z", "--end-of-options", f.Name()); err == nil {
		files = numstatPaths(out)
	}
	head, branch, err := e.headState(ctx, repo)
	if err != nil {
		return failed("patch not started: %v", err)
	}
	cp, err := x.begin(inPlan, repo, record{Operation: "patch", BeforeCommit: strp(head), BranchRef: strp(branch)})
	if err != nil {
		return failed("patch not started: %v", err)
	}
	var pd json.RawMessage
	if cp != nil {
		// Keep the patch beside the record, so Undo can reverse it.
		name := rundir.PointPatchName(cp.repoID)
		if err := rundir.WritePatchFile(e.runDir, name, []byte(r.PatchContent)); err != nil {
			cp.abandon()
			return failed("patch not started: cannot keep a copy for undo: %v", err)
		}
		pd, _ = json.Marshal(planDetails{PatchFile: name, ApplyToIndex: r.ApplyToIndex})
	}
	if _, err := e.run(ctx, repo, append(mode, "--end-of-options", f.Name())...); err != nil {
		cp.abandon()
		if cp != nil {
			_ = rundir.RemoveFile(e.runDir, planOf(record{Plan: pd}).PatchFile)
		}
		return failed("git apply failed after its check passed: %s", details(err))
	}
	if err := cp.complete(head, func(rec *record) {
		if pd != nil {
			rec.Plan = pd
		}
	}); err != nil {
		return failed("patch applied but its restore point could not be completed: %v", err)
	}
	return cp.attach(ctx, result{"status": "completed", "message": fmt.Sprintf("applied the patch to %d file(s)", len(files)),
		"appliedFiles": capList(files, 10000), "stagedToIndex": r.ApplyToIndex})
}

// numstatPaths parses `git apply --numstat -z`: "a\td\tpath\0", or for a
// rename "a\td\t\0old\0new\0".
func numstatPaths(out string) []string {
	var files []string
	parts := strings.Split(out, "\x00")
	for i := 0; i < len(parts); i++ {
		f := strings.SplitN(parts[i], "\t", 3)
		if len(f) != 3 {
			continue
		}
		if f[2] != "" {
			files = append(files, f[2])
		} else if i+2 < len(parts) {
			files = append(files, parts[i+2])
			i += 2
		}
	}
	return files
}

// plan runs up to ten steps in order under one restore point taken before
// the first; it stops at the first failure and reports the later steps as
// skipped. A failed step leaves the repository as that step found it (the
// steps abort their own conflicts); steps before it stay applied.
func (x *execution) plan(ctx context.Context, r *operation.Plan) result {
	e, repo := x.e, x.repo
	if len(r.Steps) == 0 || len(r.Steps) > 10 {
		return failed("a plan has 1 to 10 steps, got %d", len(r.Steps))
	}
	head, branch, err := e.headState(ctx, repo)
	if err != nil {
		return failed("plan not started: %v", err)
	}
	tips := map[string]string{}
	if out, err := e.run(ctx, repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads"); err == nil {
		for _, l := range strings.Split(out, "\n") {
			if ref, oid, ok := strings.Cut(l, " "); ok {
				tips[ref] = oid
			}
		}
	}
	names := make([]string, len(r.Steps))
	for i, s := range r.Steps {
		names[i] = s.OperationType
	}
	pd, _ := json.Marshal(planDetails{Steps: names})
	cp, err := e.begin(repo, record{Operation: "plan", BeforeCommit: strp(head), BranchRef: strp(branch), BeforeRef: strp(branch), Plan: pd})
	if err != nil {
		return failed("plan not started: %v", err)
	}
	steps := make([]map[string]any, 0, len(r.Steps))
	failedAt := -1
	var failMsg string
	completed := 0
	for i := range r.Steps {
		s := &r.Steps[i]
		if failedAt >= 0 {
			steps = append(steps, map[string]any{"operationType": s.OperationType, "status": "skipped",
				"message": fmt.Sprintf("not run: step %d failed", failedAt+1), "restorePoint": nil})
			continue
		}
		h0, b0, _ := e.headState(ctx, repo)
		var res result
		res = x.step(ctx, s.OperationType, s.Body, true)
		h1, b1, _ := e.headState(ctx, repo)
		st := map[string]any{"operationType": s.OperationType, "status": res["status"], "message": res["message"]}
		if res.ok() {
			completed++
			st["restorePoint"] = map[string]any{"operation": s.OperationType, "branchRef": strp(b1), "beforeCommit": strp(h0), "afterCommit": strp(h1), "canUndo": false}
			if b0 != b1 {
				st["restorePoint"].(map[string]any)["beforeBranchRef"] = strp(b0)
			}
		} else {
			st["restorePoint"] = nil
			failedAt, failMsg = i, fmt.Sprint(res["message"])
		}
		for _, k := range []string{"mergeCommit", "newHeadSha", "replayedCommits", "pathsDiscarded", "appliedFiles", "stagedToIndex", "mode", "safetyStash"} {
			if v, ok := res[k]; ok {
				st[k] = v
			}
		}
		steps = append(steps, st)
	}
	res := result{"steps": steps}
	if completed == 0 {
		cp.abandon()
		res["status"] = "failed"
		res["message"] = fmt.Sprintf("plan stopped at step 1 (%s): %s; no step changed the repository", r.Steps[0].OperationType, failMsg)
		return res
	}
	after, endBranch, _ := e.headState(ctx, repo)
	err = cp.complete(after, func(rec *record) {
		if endBranch != branch {
			// A merge step checked out its target: the restore point is
			// for the branch the plan ended on, from its tip before the plan.
			rec.BranchRef, rec.AfterRef = strp(endBranch), strp(endBranch)
			rec.BeforeCommit = strp(tips[endBranch])
		}
	})
	if err != nil {
		return failed("plan ran but its restore point could not be completed: %v", err)
	}
	if failedAt >= 0 {
		res["status"] = "failed"
		res["message"] = fmt.Sprintf("plan stopped at step %d (%s): %s; %d step(s) before it stay applied and %d later step(s) were skipped",
			failedAt+1, r.Steps[failedAt].OperationType, failMsg, completed, len(r.Steps)-failedAt-1)
	} else {
		res["status"] = "completed"
		res["message"] = fmt.Sprintf("all %d plan steps completed", len(r.Steps))
	}
	return cp.attach(ctx, res)
}

// worktree adds a linked worktree for branch, creating the branch at HEAD
// when it does not exist, at the destination bound at proposal time
// (Binding.WorktreePath; by default <parent>/<repo name>.worktrees/<branch,
// '/' as '-'>). The destination is resolved again first: when a directory
// on the way was replaced (by a symbolic link to somewhere else, say) it
// now resolves elsewhere than the policy checked and the person saw, and
// nothing is created. git gets the canonical path, and the created
// worktree is checked once more and removed if it still ended up
// elsewhere. Hooks do not run.
func (x *execution) worktree(ctx context.Context, r *operation.Worktree) result {
	e, repo := x.e, x.repo
	full, ok := localBranch(r.Branch)
	if !ok {
		return failed("branch %q is not a valid branch name", r.Branch)
	}
	bound := x.job.Binding.WorktreePath
	if bound == "" {
		return failed("worktree not created: the proposal records no destination (it was made by an older gateway); propose it again")
	}
	path, err := worktreeDestination(repo, full, r.Path)
	if err != nil {
		return failed("worktree not created, nothing changed: %v", err)
	}
	if path != bound {
		return failed("worktree not created, nothing changed: its destination now resolves to %s, not to %s checked and shown at proposal time "+
			"(a directory on the way was replaced or became a symbolic link); propose it again", path, bound)
	}
	exists, err := e.resolve(ctx, repo, full)
	if err != nil {
		return failed("worktree not created: %v", err)
	}
	args := []string{"worktree", "add", "-q"}
	if exists == "" {
		args = append(args, "-b", shortBranch(full), "--end-of-options", bound)
	} else {
		args = append(args, "--end-of-options", bound, shortBranch(full))
	}
	if _, err := e.run(ctx, repo, args...); err != nil {
		return failed("git worktree add failed, nothing was created: %s", details(err))
	}
	if real, err := filepath.EvalSymlinks(bound); err != nil || real != bound {
		_, _ = e.run(ctx, repo, "worktree", "remove", "--force", "--end-of-options", bound)
		if exists == "" {
			_, _ = e.run(ctx, repo, "branch", "-D", "--end-of-options", shortBranch(full))
		}
		return failed("the worktree was removed again: while it was created its destination changed to %s, not %s checked at proposal time", real, bound)
	}
	msg := "created the worktree " + bound + " on " + shortBranch(full)
	if exists == "" {
		msg += " (new branch at HEAD)"
	}
	return result{"status": "completed", "message": msg, "worktreePath": bound, "branch": shortBranch(full)}
}

// commit commits through the user's normal pipeline: their hooks and
// signing configuration apply; --amend is never used. What is committed is
// the tree bound at proposal time (Binding.CommitTree, shown on the card):
// with paths, HEAD plus those paths as the work tree has them (other
// staged changes stay staged); with stageAll (only when paths is absent)
// every change; otherwise, and for an empty paths list, the index as it
// is. The tree is rebuilt in a private index, and when it differs from the
// bound one (a file changed after the card was shown) nothing is
// committed. git then commits that private index, as git itself does for
// `commit --only` and `commit -a` (the hooks see it through
// GIT_INDEX_FILE), so a file changed while the commit runs cannot slip in;
// the person's index is brought up to date afterwards.
func (x *execution) commit(ctx context.Context, r *operation.Commit) result {
	e, repo := x.e, x.repo
	bound := x.job.Binding.CommitTree
	if bound == "" {
		return failed("not committed: the proposal records no tree to commit (it was made by an older gateway); propose the commit again")
	}
	head, branch, err := e.headState(ctx, repo)
	if err != nil {
		return failed("commit not started: %v", err)
	}
	idx, err := e.buildIndex(ctx, x.job.Binding, r)
	if err != nil {
		return failed("commit not started, nothing changed: %v", err)
	}
	defer idx.Close()
	if idx.tree != bound {
		diff, _ := e.run(ctx, repo, "diff-tree", "-r", "--no-renames", "--name-only", "-z", bound, idx.tree)
		changed := strings.Split(strings.TrimRight(diff, "\x00"), "\x00")
		return failed("not committed, nothing changed: the content to commit changed since the proposal was shown "+
			"(tree %s, the card showed %s; changed: %s); propose the commit again so the person sees what is committed",
			idx.tree, bound, strings.Join(limit(changed, 10), ", "))
	}
	g := x.guard(ctx, head, idx.tree)
	if g.refusal != "" {
		return failed("%s", g.refusal)
	}
	cp, err := e.begin(repo, record{Operation: "commit", BeforeCommit: strp(head), BranchRef: strp(branch), BeforeRef: strp(branch), AfterRef: strp(branch)})
	if err != nil {
		return failed("commit not started: %v", err)
	}
	hooked := &gitexec.Writer{Hooks: true, IndexFile: idx.file, Env: g.env}
	if _, err := hooked.Run(ctx, repo, "commit", "-q", "-m", r.Message); err != nil {
		cp.abandon()
		return failed("git commit failed; nothing was committed and the index is as it was: %s", details(err))
	}
	after, _ := e.resolve(ctx, repo, "HEAD")
	// The person's index now follows the commit: the committed paths (or,
	// when everything staged was committed, the whole index) match HEAD.
	sync := []string{"reset", "-q"}
	if paths := listed(r.Paths); len(paths) > 0 {
		sync = append(append(sync, "--"), paths...)
	}
	msg := "committed " + after + " on " + orDetached(branch) + g.note
	if _, err := e.run(ctx, repo, sync...); err != nil {
		msg += "; the index could not be brought up to date (run git status): " + details(err)
	}
	if err := cp.complete(after, nil); err != nil {
		return failed("committed %s but the restore point could not be completed: %v", after, err)
	}
	return cp.attach(ctx, result{"status": "completed", "message": msg, "commitSha": after})
}

// push pushes a local branch to a remote the repository already names,
// under the same branch name. forceWithLease is bound to the remote-tracking
// commit recorded when the proposal arrived (none recorded: the remote
// branch must not exist), never to whatever a later fetch brought. Hooks do
// not run.
func (x *execution) push(ctx context.Context, r *operation.Push) result {
	e, repo := x.e, x.repo
	remote := r.Remote
	if remote == "" {
		remote = "origin"
	}
	if err := e.checkRemote(ctx, repo, remote); err != nil {
		return failed("push refused: %v", err)
	}
	br := r.Branch
	if br == "" {
		br = x.job.Binding.Branch
	}
	full, ok := localBranch(br)
	if !ok {
		return failed("branch %q is not a local branch (HEAD detached?)", br)
	}
	// --receive-pack outranks remote.<name>.receivepack, which the
	// repository's configuration may set to any program (for a remote on
	// this machine git runs it here, through the shell); the first value
	// of that key wins, so a -c override could not pin it.
	// --no-recurse-submodules: on-demand would push from inside each
	// submodule, with that submodule's configuration.
	args := []string{"push", "--porcelain", "--no-verify", "--receive-pack=git-receive-pack", "--no-recurse-submodules"}
	if r.SetUpstream {
		args = append(args, "--set-upstream")
	}
	if r.ForceWithLease {
		lease, ok := x.job.Binding.Refs["refs/remotes/"+remote+"/"+shortBranch(full)]
		if !ok {
			return failed("push refused: the proposal recorded no remote-tracking commit to bind force-with-lease to")
		}
		args = append(args, "--force-with-lease="+full+":"+lease)
	}
	args = append(args, "--end-of-options", remote, full+":"+full)
	if _, err := e.run(ctx, repo, args...); err != nil {
		return failed("git push to %s failed, the remote was not changed: %s", remote, details(err))
	}
	msg := "pushed " + full + " to " + remote
	if r.ForceWithLease {
		msg += " (force-with-lease)"
	}
	return result{"status": "completed", "message": msg, "pushedRef": full, "remote": remote}
}

// branch creates name at startPoint (default HEAD) without upstream
// tracking and, when checkout is true (the default), checks it out. When
// the checkout fails the new branch is deleted again.
func (x *execution) branch(ctx context.Context, r *operation.Branch) result {
	e, repo := x.e, x.repo
	full, ok := localBranch(r.Name)
	if !ok {
		return failed("name %q is not a valid branch name", r.Name)
	}
	sp := r.StartPoint
	if sp == "" {
		sp = "HEAD"
	}
	start, err := e.resolve(ctx, repo, sp)
	if err != nil || start == "" {
		return failed("startPoint %q does not name a commit", sp)
	}
	if _, err := e.run(ctx, repo, "branch", "--no-track", "--end-of-options", shortBranch(full), start); err != nil {
		return failed("git branch failed: %s", details(err))
	}
	checkout := r.Checkout == nil || *r.Checkout
	if checkout {
		if _, err := e.run(ctx, repo, "checkout", "-q", shortBranch(full), "--"); err != nil {
			_, _ = e.run(ctx, repo, "branch", "-D", "--end-of-options", shortBranch(full))
			return failed("cannot check out the new branch, so it was deleted again: %s", details(err))
		}
	}
	msg := "created " + shortBranch(full) + " at " + start
	if checkout {
		msg += " and checked it out"
	}
	return result{"status": "completed", "message": msg, "branch": shortBranch(full), "checkedOut": checkout}
}
