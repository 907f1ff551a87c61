package execute

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fluxgit/fluxgit/internal/operation"
	"github.com/fluxgit/fluxgit/internal/roster"
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
		// The guard runs again at execution; the card says now what it
		// would refuse, so the person can ask the agents or override.
		if b.CommitTree == "" {
			break
		}
		if cs, _, err := e.guardConflicts(ctx, b.RepoPath, b.Head, b.CommitTree, b.Proposer); err == nil && len(cs) > 0 {
			rv.Warnings = append(rv.Warnings, fmt.Sprintf("Held by other agents (shift roster), so the commit will fail unless you override the guard: %s.",
				strings.Join(roster.ConflictLines(cs), "; ")))
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
	e.changes(ctx, req, b, &rv)
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

// changes adds what the operation changes to rv (issue 25): facts and
// sections computed from the repository with read-only git (log,
// rev-list, diff-tree over stored objects), bounded by ReviewMaxCommits,
// ReviewMaxFiles and the inline diff budget.
func (e *Executor) changes(ctx context.Context, req operation.Body, b Binding, rv *Review) {
	bud := &budget{left: ReviewInlineBytes}
	repo := b.RepoPath
	base := func() string {
		if b.Head != "" {
			return b.Head
		}
		return e.emptyTree(ctx, repo)
	}
	add := func(s ...Section) { rv.Sections = append(rv.Sections, s...) }
	fact := func(label, value string) { rv.Facts = append(rv.Facts, Fact{Label: label, Value: value}) }
	// first is true for the operation itself and a plan's first step:
	// only they see the work tree bound in b.WorkTree.
	var step func(s any, prefix string, first bool)
	step = func(s any, prefix string, first bool) {
		switch r := s.(type) {
		case *operation.MergeStep:
			target, ok := localBranch(r.TargetRef)
			if !ok {
				target = b.Branch
			}
			src, dst := b.Refs[r.SourceRef], b.Refs[target]
			if src == "" || dst == "" {
				return
			}
			fact(prefix+"Into", shortBranch(target)+" at "+e.describeCommit(ctx, repo, dst))
			fact(prefix+"From", r.SourceRef+" at "+e.describeCommit(ctx, repo, src))
			if r.Strategy == "squash" {
				fact(prefix+"Strategy", "squash: the commits below become one new commit on "+shortBranch(target))
			}
			add(e.commits(ctx, repo, prefix+"Commits coming in", "commits-in", dst+".."+src))
			from := e.mergeBaseOf(ctx, repo, dst, src)
			if from == "" {
				from = dst
			}
			add(e.files(ctx, repo, prefix+"Files changed by the merge", "incoming-files", from, src, bud))
		case *operation.RebaseStep:
			cur, curOid := b.Branch, b.Head
			if c := r.CurrentRef; c != "" && c != "HEAD" {
				cur, _ = localBranch(c)
				curOid = b.Refs[cur]
			}
			onto := b.Refs[r.OntoRef]
			if onto == "" || curOid == "" {
				return
			}
			fact(prefix+"Branch rewritten", orDetached(shortBranch(cur))+" at "+e.describeCommit(ctx, repo, curOid))
			fact(prefix+"Onto", r.OntoRef+" at "+e.describeCommit(ctx, repo, onto))
			c := e.commits(ctx, repo, prefix+"Commits replayed", "replayed", "--cherry-pick", "--right-only", "--no-merges", onto+"..."+curOid)
			c.Note = "each gets a new id on top of " + short(onto) + "; commits already in " + r.OntoRef + " are dropped"
			add(c)
			if mb := e.mergeBaseOf(ctx, repo, onto, curOid); mb != "" {
				add(e.files(ctx, repo, prefix+"Files the replayed commits change", "replayed-files", mb, curOid, bud))
			}
		case *operation.ResetStep:
			target := b.Refs[r.TargetRef]
			mode := r.Mode
			if mode == "" {
				mode = "mixed"
			}
			fact(prefix+"Branch moved", orDetached(shortBranch(b.Branch))+" from "+e.describeCommit(ctx, repo, b.Head))
			fact(prefix+"To", r.TargetRef+" at "+e.describeCommit(ctx, repo, target))
			if target == "" || b.Head == "" {
				return
			}
			leave := e.commits(ctx, repo, prefix+"Commits that leave the branch", "leaving", target+".."+b.Head)
			if leave.CommitsTotal > 0 {
				leave.Note = "still reachable from the restore point and the reflog"
			}
			add(leave)
			if gain := e.commits(ctx, repo, prefix+"Commits the branch gains", "gaining", b.Head+".."+target); gain.CommitsTotal > 0 {
				add(gain)
			}
			switch mode {
			case "hard":
				if b.WorkTree == "" && first {
					fact("Uncommitted changes", "cannot be listed (the index has unresolved conflicts?); they are kept in a safety stash entry")
				}
				if b.WorkTree != "" && first {
					lost := e.files(ctx, repo, prefix+"Uncommitted changes lost from the work tree", "lost", b.Head, b.WorkTree, bud)
					lost.Note = "kept in a safety stash entry; untracked files are not touched"
					add(lost)
				}
			default:
				kept := e.files(ctx, repo, prefix+"Changes of the leaving commits, kept uncommitted", "leaving-files", target, b.Head, bud)
				where := "the work tree"
				if mode == "soft" {
					where = "the index (staged)"
				}
				kept.Note = "a " + mode + " reset keeps them in " + where
				add(kept)
			}
		case *operation.DiscardStep:
			if b.WorkTree != "" && first {
				d := e.files(ctx, repo, prefix+"Changes thrown away", "discarded", b.Head, b.WorkTree, bud)
				d.Note = "moved into a safety stash entry first"
				add(d)
			}
		case *operation.PatchStep:
			add(patchSection(r.PatchContent, bud))
			if prefix != "" {
				rv.Sections[len(rv.Sections)-1].Title = prefix + rv.Sections[len(rv.Sections)-1].Title
			}
		}
	}
	switch r := req.(type) {
	case *operation.Merge, *operation.Rebase, *operation.Reset, *operation.Discard, *operation.Patch:
		step(operation.AsStep(r), "", true)
		if p, ok := r.(*operation.Patch); ok {
			where := "the work tree"
			if p.ApplyToIndex {
				where = "the work tree and the index"
			}
			fact("Applied to", where+" of "+orDetached(shortBranch(b.Branch)))
		}
	case *operation.Plan:
		for i := range r.Steps {
			step(r.Steps[i].Body, fmt.Sprintf("Step %d (%s): ", i+1, r.Steps[i].OperationType), i == 0)
		}
		if len(r.Steps) > 1 {
			fact("Note", "each step is shown against the repository as it is now; earlier steps change what later ones see")
		}
	case *operation.Commit:
		target := orDetached(shortBranch(b.Branch))
		if b.Head == "" {
			target += " (its first commit)"
		} else {
			target += " at " + e.describeCommit(ctx, repo, b.Head)
		}
		fact("Target branch", target)
		add(e.files(ctx, repo, "The change committed", "committed", base(), b.CommitTree, bud))
	case *operation.Push:
		remote := r.Remote
		if remote == "" {
			remote = "origin"
		}
		br := r.Branch
		if br == "" {
			br = b.Branch
		}
		full, _ := localBranch(br)
		local := b.Refs[full]
		tracking := "refs/remotes/" + remote + "/" + shortBranch(full)
		remoteOid := b.Refs[tracking]
		fact("Branch", shortBranch(full)+" at "+e.describeCommit(ctx, repo, local))
		seen := "no remote-tracking ref " + strings.TrimPrefix(tracking, "refs/remotes/") + " (the remote branch is new, as far as this repository knows)"
		if remoteOid != "" {
			seen = strings.TrimPrefix(tracking, "refs/remotes/") + " at " + e.describeCommit(ctx, repo, remoteOid)
			if t, ok := e.refAge(ctx, b, tracking); ok {
				seen += ", last updated here " + ago(e.now(), t) + " (" + t.UTC().Format(time.RFC3339) + "); nothing was fetched"
			}
		}
		fact("Remote as last seen", seen)
		// The restore point of a push covers only local refs; the gateway
		// never offers it for undo (restore.go), so the card says so
		// before the person decides (issue 25: what cannot be undone
		// locally says so on its card).
		fact("Undo", "not possible here: what is pushed stays on "+remote+" (Undo is never offered for a push)")
		if local == "" {
			return
		}
		if remoteOid != "" {
			add(e.commits(ctx, repo, "Commits sent", "sent", remoteOid+".."+local))
			if r.ForceWithLease {
				o := e.commits(ctx, repo, "Remote commits overwritten", "overwritten", local+".."+remoteOid)
				o.Note = "from " + strings.TrimPrefix(tracking, "refs/remotes/") + " as this repository last saw it (no fetch); the remote may hold more"
				add(o)
			}
		} else {
			add(e.commits(ctx, repo, "Commits sent", "sent", local, "--not", "--remotes="+remote))
		}
	case *operation.Branch:
		sp := r.StartPoint
		if sp == "" {
			sp = "HEAD"
		}
		fact("Points at", sp+" = "+e.describeCommit(ctx, repo, b.Refs[sp]))
		if mb, err := e.baseFor(ctx, repo); err == nil && mb.Ref != "" && b.Refs[sp] != "" {
			if in, _ := e.isAncestor(ctx, repo, b.Refs[sp], mb.Oid); in {
				fact("Relative to "+mb.Label, "starts inside it (no commits of its own yet)")
			} else {
				c := e.commits(ctx, repo, "Commits not in "+mb.Label, "ahead", b.Refs[sp], "--not", mb.Oid)
				fact("Relative to "+mb.Label, fmt.Sprintf("starts %d commit(s) ahead of it", c.CommitsTotal))
			}
		}
	case *operation.BranchDelete:
		for _, v := range rv.Verdicts {
			what := "kept"
			if v.Delete {
				what = "deleted"
			}
			val := what + ": " + v.Reason
			if v.TipOid != "" {
				val = "points at " + e.describeCommit(ctx, v.RepoPath, v.TipOid) + "; " + val
			}
			fact(v.Branch+" in "+v.RepoPath, val)
		}
		fact("Undo", "not offered for a branch deletion: recreate a deleted branch from the commit shown (git branch NAME <commit>)")
	case *operation.Worktree:
		fact("Real path", b.WorktreePath)
		full, _ := localBranch(r.Branch)
		if oid := b.Refs[full]; oid != "" {
			fact("Branch", shortBranch(full)+" (exists) at "+e.describeCommit(ctx, repo, oid))
		} else {
			fact("Branch", shortBranch(full)+" (new) at HEAD = "+e.describeCommit(ctx, repo, b.Head))
		}
	case *operation.SubmodulePointer:
		s := b.Submodule
		if s == nil {
			return
		}
		fact("Submodule", s.RelativePath+" in "+s.ParentPath)
		from, to := s.Recorded, s.CheckedOut
		if r.Direction == "record" {
			fact("Recorded pointer", e.describeCommit(ctx, s.Path, from)+" → "+e.describeCommit(ctx, s.Path, to))
			fact("Commit on", orDetached(shortBranch(s.ParentBranch))+" of the parent")
		} else {
			from, to = s.CheckedOut, s.Recorded
			fact("Checked out", e.describeCommit(ctx, s.Path, from)+" → "+e.describeCommit(ctx, s.Path, to)+" (detached)")
		}
		fwd := e.commits(ctx, s.Path, "Log between (new commits)", "between", from+".."+to)
		fwd.Repo = s.Path
		add(fwd)
		if back := e.commits(ctx, s.Path, "Commits left behind (the pointer goes back past them)", "between-back", to+".."+from); back.CommitsTotal > 0 {
			back.Repo = s.Path
			add(back)
		}
	}
}
