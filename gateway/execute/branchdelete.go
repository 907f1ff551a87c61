package execute

import (
	"context"
	"fmt"
	"strings"
)

// verdict decides whether branch may be deleted from repo. recorded is the
// tip at proposal time ("" when the branch did not exist then). A branch
// is kept when it does not exist, its tip moved since the proposal, it is
// checked out in any worktree, or it has commits that are neither in HEAD
// nor in the branch's own upstream.
func (e *Executor) verdict(ctx context.Context, repo, branch, recorded string, checkedOut map[string]string) BranchVerdict {
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
	heads := []string{}
	if h, _ := e.resolve(ctx, repo, "HEAD"); h != "" {
		heads = append(heads, h)
	}
	upstream, _ := e.run(ctx, repo, "for-each-ref", "--format=%(upstream)", full)
	if upstream != "" {
		if u, _ := e.resolve(ctx, repo, upstream); u != "" {
			heads = append(heads, u)
		}
	}
	if len(heads) == 0 {
		v.Reason = "HEAD is unborn and the branch has no upstream to compare with"
		return v
	}
	n, err := e.run(ctx, repo, append([]string{"rev-list", "--count", tip, "--not"}, heads...)...)
	if err != nil {
		v.Reason = "cannot compare the branch with HEAD: " + details(err)
		return v
	}
	if n != "0" {
		v.Reason = fmt.Sprintf("it has %s commit(s) that are neither in HEAD nor in its upstream", n)
		return v
	}
	v.Delete = true
	v.Reason = "fully merged into HEAD"
	if upstream != "" {
		v.Reason = "fully merged into HEAD or its upstream " + upstream
	}
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
func (e *Executor) verdicts(ctx context.Context, req *request, b Binding) ([]BranchVerdict, error) {
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
		for _, br := range t.Branches {
			out = append(out, e.verdict(ctx, tb.RepoPath, br, tb.Refs["refs/heads/"+br], wts))
		}
	}
	return out, nil
}

// branchDelete deletes the target branches whose verdict allows it, with
// `git branch -D` (the merge check is the verdict's, which also accepts the
// branch's upstream, where `branch -d` would look at HEAD only). Each
// deleted tip is reported as tipOid and restoreOid, so the branch can be
// recreated; fleetBatchId is the proposal id. Remote branches are never
// touched.
func (x *execution) branchDelete(ctx context.Context, r *request) result {
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
