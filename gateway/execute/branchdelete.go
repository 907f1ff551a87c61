package execute

import (
	"context"
	"fmt"
	"strings"

	"github.com/fluxgit/fluxgit/internal/operation"
)

// mergeBase is what "merged" means for branchDelete: the branch the person
// works on, never a branch's own upstream (a branch that was only pushed
// is in its upstream, and deleting it loses the only local line of work
// nobody merged). It is HEAD's branch; with a detached or unborn HEAD the
// default branch: the one origin/HEAD points to, else main, else master.
type mergeBase struct {
	Ref   string // full ref compared with ("" when none)
	Label string // how the card names it, e.g. "main (HEAD's branch)"
	Oid   string
}

// baseFor finds repo's merge base for branchDelete verdicts.
func (e *Executor) baseFor(ctx context.Context, repo string) (mergeBase, error) {
	head, branch, err := e.headState(ctx, repo)
	if err != nil {
		return mergeBase{}, err
	}
	if branch != "" && head != "" {
		return mergeBase{Ref: branch, Label: shortBranch(branch) + " (HEAD's branch)", Oid: head}, nil
	}
	if target, err := e.run(ctx, repo, "symbolic-ref", "-q", "refs/remotes/origin/HEAD"); err == nil && target != "" {
		if oid, _ := e.resolve(ctx, repo, target); oid != "" {
			return mergeBase{Ref: target, Label: strings.TrimPrefix(target, "refs/remotes/") + " (origin/HEAD, the default branch)", Oid: oid}, nil
		}
	}
	for _, name := range []string{"main", "master"} {
		if oid, _ := e.resolve(ctx, repo, "refs/heads/"+name); oid != "" {
			return mergeBase{Ref: "refs/heads/" + name, Label: name + " (the default branch)", Oid: oid}, nil
		}
	}
	return mergeBase{}, nil
}

// verdict decides whether branch may be deleted from repo. recorded is the
// tip at proposal time ("" when the branch did not exist then). A branch
// is kept when it does not exist, its tip moved since the proposal, it is
// checked out in any worktree, it is the base itself, or it has commits
// that are not in the base (see mergeBase; its own upstream never counts).
func (e *Executor) verdict(ctx context.Context, repo, branch, recorded string, checkedOut map[string]string, base mergeBase) BranchVerdict {
	v := BranchVerdict{RepoPath: repo, Branch: branch}
	full := "refs/heads/" + branch
	tip, err := e.resolve(ctx, repo, full)
	switch {
	case err != nil:
		v.Reason = "cannot read the branch: " + details(err)
		return v
	case tip == "":
		v.Reason = "no such local branch"
		return v
	}
	v.TipOid = tip
	if recorded != "" && tip != recorded {
		v.Reason = fmt.Sprintf("its tip moved since the proposal (was %s, now %s)", recorded, tip)
		return v
	}
	if recorded == "" {
		v.Reason = "it did not exist when the proposal was made"
		return v
	}
	if wt, ok := checkedOut[full]; ok {
		v.Reason = "it is checked out in the worktree " + wt
		return v
	}
	if base.Ref == "" {
		v.Reason = "there is no branch to compare it with (HEAD is detached or unborn, and neither origin/HEAD, main nor master exists)"
		return v
	}
	if base.Ref == full {
		v.Reason = "it is the base branch the others are compared with, " + base.Label
		return v
	}
	n, err := e.run(ctx, repo, "rev-list", "--count", tip, "--not", base.Oid)
	if err != nil {
		v.Reason = "cannot compare the branch with " + base.Label + ": " + details(err)
		return v
	}
	if n != "0" {
		v.Reason = fmt.Sprintf("it has %s commit(s) that are not in %s (being pushed to its upstream does not count as merged)", n, base.Label)
		return v
	}
	v.Delete = true
	v.Reason = "fully merged into " + base.Label
	return v
}

// worktreeBranches maps each branch checked out in any worktree of repo to
// that worktree's path.
func (e *Executor) worktreeBranches(ctx context.Context, repo string) (map[string]string, error) {
	out, err := e.run(ctx, repo, "worktree", "list", "--porcelain", "-z")
	if err != nil {
		return nil, fmt.Errorf("list worktrees: %w", err)
	}
	m := map[string]string{}
	var wt string
	for _, f := range strings.Split(out, "\x00") {
		switch {
		case strings.HasPrefix(f, "worktree "):
			wt = strings.TrimPrefix(f, "worktree ")
		case strings.HasPrefix(f, "branch "):
			m[strings.TrimPrefix(f, "branch ")] = wt
		}
	}
	return m, nil
}

// verdicts computes every target branch's verdict against b's recorded tips.
func (e *Executor) verdicts(ctx context.Context, req *operation.BranchDelete, b Binding) ([]BranchVerdict, error) {
	var out []BranchVerdict
	for i, t := range req.Targets {
		if i >= len(b.Targets) {
			return nil, fmt.Errorf("the binding has no repository for targets[%d]", i)
		}
		tb := b.Targets[i]
		wts, err := e.worktreeBranches(ctx, tb.RepoPath)
		if err != nil {
			return nil, err
		}
		base, err := e.baseFor(ctx, tb.RepoPath)
		if err != nil {
			return nil, err
		}
		for _, br := range t.Branches {
			out = append(out, e.verdict(ctx, tb.RepoPath, br, tb.Refs["refs/heads/"+br], wts, base))
		}
	}
	return out, nil
}

// branchDelete deletes the target branches whose verdict allows it, with
// `git branch -D` (the merge check is the verdict's, against the base
// mergeBase names, where `branch -d` would also accept the branch's own
// upstream). Each
// deleted tip is reported as tipOid and restoreOid, so the branch can be
// recreated; fleetBatchId is the proposal id. Remote branches are never
// touched.
func (x *execution) branchDelete(ctx context.Context, r *operation.BranchDelete) result {
	e := x.e
	type brRes = map[string]any
	var deleted, failedN, skipped int
	repos := []map[string]any{}
	idx := map[string]int{}
	vs, err := e.verdicts(ctx, r, x.job.Binding)
	if err != nil {
		return failed("branchDelete not started: %v", err)
	}
	var errs []string
	for _, v := range vs {
		br := brRes{"branch": v.Branch, "status": "skipped", "tipOid": nilIfEmpty(v.TipOid), "restoreOid": nil,
			"fleetBatchId": x.job.ID, "reason": v.Reason}
		if v.Delete {
			if _, err := e.run(ctx, v.RepoPath, "branch", "-D", "--end-of-options", v.Branch); err != nil {
				br["status"], br["reason"] = "failed", "git branch -D failed: "+details(err)
				errs = append(errs, v.Branch+": "+details(err))
				failedN++
			} else {
				br["status"], br["restoreOid"] = "deleted", v.TipOid
				deleted++
			}
		} else {
			skipped++
		}
		i, ok := idx[v.RepoPath]
		if !ok {
			i = len(repos)
			idx[v.RepoPath] = i
			repos = append(repos, map[string]any{"repoPath": v.RepoPath, "branches": []brRes{}})
		}
		repos[i]["branches"] = append(repos[i]["branches"].([]brRes), br)
	}
	res := result{
		"status":  "completed",
		"message": fmt.Sprintf("deleted %d branch(es), kept %d, %d failed", deleted, skipped, failedN),
		"error":   nil,
		"branchDelete": map[string]any{"deleted": deleted, "failed": failedN, "skipped": skipped,
			"repositories": repos},
	}
	if failedN > 0 {
		res["status"] = "failed"
		res["error"] = strings.Join(errs, "; ")
	}
	return res
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
