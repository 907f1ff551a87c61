package execute

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/fluxgit/fluxgit/internal/operation"
)

// destructive reports whether a plan step needs its own tick on the card:
// a discard and a hard reset throw work-tree changes away (into a safety
// stash, but a person should still see it).
func destructive(s operation.PlanStep) bool {
	switch b := s.Body.(type) {
	case *operation.DiscardStep:
		return true
	case *operation.ResetStep:
		return b.Mode == "hard"
	}
	return false
}

// Review describes a bound proposal for the approval card: a one-line
// summary, warnings, the merge summary, branchDelete verdicts, and the
// confirmations an approval must carry (CheckConfirmations).
func (e *Executor) Review(ctx context.Context, op string, body json.RawMessage, b Binding) (Review, error) {
	if !knownOp(op) {
		return Review{}, bindErr("unknown operation type %q", op)
	}
	req, err := parse(op, body)
	if err != nil {
		return Review{}, err
	}
	var rv Review
	repo := b.RepoPath
	switch req := req.(type) {
	case *operation.Merge:
		m, warn, err := e.mergeReview(ctx, repo, req.Step(), b)
		if err != nil {
			return Review{}, err
		}
		rv.Merge, rv.Warnings = m, warn
		verb := "Merge"
		if req.Strategy == "squash" {
			verb = "Squash-merge"
		}
		rv.Summary = fmt.Sprintf("%s %s into %s (%d commit(s), %d file(s))", verb, req.SourceRef, m.Target, m.Commits, m.FilesChanged)
	case *operation.Rebase:
		cur := req.CurrentRef
		if cur == "" || cur == "HEAD" {
			cur = orDetached(shortBranch(b.Branch))
		}
		rv.Summary = fmt.Sprintf("Rebase %s onto %s", cur, req.OntoRef)
		rv.Warnings = []string{"Rebasing rewrites the history of " + cur + "; on a conflict the rebase is aborted and nothing changes."}
	case *operation.Discard:
		rv.Summary = fmt.Sprintf("Discard the changes in %d path(s)", len(req.Paths))
		rv.Warnings = []string{"The changes (including untracked files under these paths) are moved into a safety stash entry first."}
	case *operation.Reset:
		mode := req.Mode
		if mode == "" {
			mode = "mixed"
		}
		rv.Summary = fmt.Sprintf("Reset %s to %s (%s)", orDetached(shortBranch(b.Branch)), req.TargetRef, mode)
		if mode == "hard" {
			rv.Requires.TypeBranch = confirmName(b.Branch)
			rv.Warnings = []string{"A hard reset overwrites the index and the work tree; uncommitted changes to tracked files are kept in a safety stash entry."}
		}
	case *operation.Patch:
		files := []string{}
		rv.Summary = "Apply a patch"
		if req.ApplyToIndex {
			rv.Summary += " to the work tree and the index"
		}
		for _, l := range strings.Split(req.PatchContent, "\n") {
			if f, ok := strings.CutPrefix(l, "+++ b/"); ok {
				files = append(files, f)
			}
		}
		if len(files) > 0 {
			rv.Summary += fmt.Sprintf(" (%d file(s))", len(files))
		}
	case *operation.Plan:
		rv.Summary = fmt.Sprintf("Run a plan of %d step(s)", len(req.Steps))
		for i, s := range req.Steps {
			if destructive(s) {
				rv.Requires.DestructiveSteps = append(rv.Requires.DestructiveSteps, i)
			}
			if ms, ok := s.Body.(*operation.MergeStep); ok && rv.Merge == nil {
				if m, _, err := e.mergeReview(ctx, repo, ms, b); err == nil {
					rv.Merge = m
				}
			}
		}
		rv.Warnings = []string{"The plan stops at the first failing step; later steps are skipped."}
	case *operation.Worktree:
		rv.WorktreePath = b.WorktreePath
		rv.Summary = "Create a worktree for " + req.Branch + " at " + b.WorktreePath
		if req.Path == "" {
			rv.Summary += " (the default location)"
		}
	case *operation.Commit:
		switch {
		case len(listed(req.Paths)) > 0:
			rv.Summary = fmt.Sprintf("Commit %d path(s)", len(listed(req.Paths)))
		case req.StageAll && req.Paths == nil:
			rv.Summary = "Stage every change and commit"
		default:
			rv.Summary = "Commit the staged changes"
		}
		c := e.commitReview(ctx, b)
		rv.Commit = c
		rv.Summary += fmt.Sprintf(": %d file(s), +%d −%d (tree %s)", c.FilesChanged, c.Insertions, c.Deletions, short(c.Tree))
		rv.Warnings = []string{"The repository's commit hooks and signing settings apply.",
			"Exactly this content is committed: if a file changes before the commit runs, the commit is refused."}
		if c.FilesChanged == 0 {
			rv.Warnings = append(rv.Warnings, "Nothing to commit: the tree is the same as HEAD's, so the commit will fail.")
		}
	case *operation.Push:
		remote := req.Remote
		if remote == "" {
			remote = "origin"
		}
		br := req.Branch
		if br == "" {
			br = shortBranch(b.Branch)
		}
		rv.Summary = "Push " + br + " to " + remote
		if req.SetUpstream {
			rv.Summary += " and set it as upstream"
		}
		if req.ForceWithLease {
			rv.Requires.ForcePush = true
			lease := b.Refs["refs/remotes/"+remote+"/"+shortBranch(br)]
			rv.Warnings = []string{fmt.Sprintf("Force push (with lease): the remote branch is overwritten if it is still at %s; commits there that are not in %s are lost on the remote.", orNone(lease), br)}
		}
	case *operation.Branch:
		sp := req.StartPoint
		if sp == "" {
			sp = "HEAD"
		}
		rv.Summary = "Create branch " + req.Name + " at " + sp
		if req.Checkout == nil || *req.Checkout {
			rv.Summary += " and check it out"
		}
	case *operation.BranchDelete:
		vs, err := e.verdicts(ctx, req, b)
		if err != nil {
			return Review{}, err
		}
		rv.Verdicts = vs
		n := 0
		for _, v := range vs {
			if v.Delete {
				n++
			}
		}
		rv.Summary = fmt.Sprintf("Delete %d of %d local branch(es); the others are kept", n, len(vs))
	case *operation.SubmodulePointer:
		if s := b.Submodule; s != nil {
			if req.Direction == "record" {
				rv.Summary = fmt.Sprintf("Record %s as the pointer of %s (was %s)", short(s.CheckedOut), s.RelativePath, short(s.Recorded))
				rv.Warnings = []string{"The commit runs the repository's hooks and signing; nothing is pushed."}
			} else {
				rv.Summary = fmt.Sprintf("Check out the recorded %s in %s, detached (now %s)", short(s.Recorded), s.RelativePath, short(s.CheckedOut))
			}
		}
	default:
		return Review{}, bindErr("unknown operation type %q", op)
	}
	return rv, nil
}

func short(oid string) string {
	if len(oid) > 12 {
		return oid[:12]
	}
	return oid
}

// confirmName is what a person types to confirm a hard reset: the short
// branch name, or HEAD when detached.
func confirmName(branch string) string {
	if branch == "" {
		return "HEAD"
	}
	return shortBranch(branch)
}

// mergeReview computes what merging r.SourceRef into r.TargetRef brings in.
func (e *Executor) mergeReview(ctx context.Context, repo string, r *operation.MergeStep, b Binding) (*MergeReview, []string, error) {
	target, ok := localBranch(r.TargetRef)
	if !ok && r.TargetRef == "HEAD" {
		target = b.Branch
	}
	src, err := e.resolve(ctx, repo, r.SourceRef)
	if err != nil {
		return nil, nil, err
	}
	dst, err := e.resolve(ctx, repo, target)
	if err != nil {
		return nil, nil, err
	}
	m := &MergeReview{Source: r.SourceRef, Target: shortBranch(target), Log: []string{}}
	if src == "" || dst == "" {
		return m, []string{"the source or target does not resolve now"}, nil
	}
	n, _ := e.run(ctx, repo, "rev-list", "--count", dst+".."+src)
	m.Commits, _ = strconv.Atoi(n)
	if log, _ := e.run(ctx, repo, "log", "--no-decorate", "--format=%h %s", "-n", "20", dst+".."+src); log != "" {
		m.Log = strings.Split(log, "\n")
	}
	if stat, err := e.run(ctx, repo, "diff", "--numstat", "-z", dst+"..."+src); err == nil {
		for _, rec := range strings.Split(stat, "\x00") {
			f := strings.SplitN(rec, "\t", 3)
			if len(f) < 3 {
				continue
			}
			m.FilesChanged++
			a, _ := strconv.Atoi(f[0])
			d, _ := strconv.Atoi(f[1])
			m.Insertions += a
			m.Deletions += d
		}
	}
	m.FastForward, _ = e.isAncestor(ctx, repo, dst, src)
	var warn []string
	if r.Strategy != "squash" && !m.FastForward && m.Commits > 0 {
		if out, err := e.run(ctx, repo, "merge-tree", "--write-tree", "--name-only", "--no-messages", dst, src); exitCode(err) == 1 {
			files := strings.Split(out, "\n")[1:]
			files = slices.DeleteFunc(files, func(s string) bool { return s == "" })
			warn = append(warn, fmt.Sprintf("git predicts conflicts in %d file(s) (%s); the merge would be aborted and the repository left as it is", len(files), strings.Join(limit(files, 5), ", ")))
		}
	}
	if b.Branch != target {
		warn = append(warn, m.Target+" is not checked out; it is checked out for the merge (only if the work tree is clean) and stays checked out")
	}
	if m.Commits == 0 {
		warn = append(warn, "nothing to merge: "+r.SourceRef+" is already in "+m.Target)
	}
	return m, warn, nil
}

// CheckConfirmations returns an error naming what is missing when the
// person's confirmations do not cover what r requires: the typed branch
// name of a hard reset, every destructive plan step ticked, the force-push
// acknowledgement.
func CheckConfirmations(r Review, c Confirmations) error {
	var miss []string
	if want := r.Requires.TypeBranch; want != "" && c.TypedBranch != want {
		miss = append(miss, fmt.Sprintf("type the branch name %q to confirm the hard reset", want))
	}
	for _, s := range r.Requires.DestructiveSteps {
		if !slices.Contains(c.Steps, s) {
			miss = append(miss, fmt.Sprintf("tick destructive plan step %d (index %d)", s+1, s))
		}
	}
	if r.Requires.ForcePush && !c.ForcePush {
		miss = append(miss, "acknowledge the force push")
	}
	if len(miss) > 0 {
		return fmt.Errorf("approval needs confirmation: %s", strings.Join(miss, "; "))
	}
	return nil
}
