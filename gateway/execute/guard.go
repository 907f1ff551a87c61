package execute

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/fluxgit/fluxgit/internal/operation"
	"github.com/fluxgit/fluxgit/internal/roster"
)

// guardBudget bounds the roster read of one commit's guard.
const guardBudget = 10 * time.Second

// guardVerdict is what the shift-roster guard says about one commit.
type guardVerdict struct {
	// refusal, when set, is why nothing is committed.
	refusal string
	// note is appended to the completed message: an override that let
	// conflicts through, or a roster that could not be read.
	note string
	// env is for the user's hooks (a pre-commit `fluxgit guard check`):
	// the proposer's own worker ids, and the override when it applies, so
	// the hook reaches the same verdict as the gateway.
	env []string
}

// guard applies the check `fluxgit guard check` makes to a commit about
// to record tree on top of head ("" unborn): the files it changes must not
// be held by an unexpired exclusive lease of another, non-stale worker in
// any workspace naming the repository. The proposer's own workers (those
// its fluxgit server process checked in for its MCP client, see
// Binding.Proposer and roster.CheckedInBy) never block. The person
// overrides with the approval's OverrideGuard or by starting the gateway
// with FLUXGIT_GUARD_OVERRIDE=1. A roster that cannot be read does not
// stop the commit (the guard coordinates agents, it is no access
// control); the result says so.
func (x *execution) guard(ctx context.Context, head, tree string) guardVerdict {
	override := x.job.Confirmations.OverrideGuard || x.e.guardOverride
	var v guardVerdict
	if override {
		v.env = append(v.env, roster.EnvGuardOverride+"=1")
	}
	conflicts, own, err := x.e.guardConflicts(ctx, x.repo, head, tree, x.job.Binding.Proposer)
	if err != nil {
		v.note = "; " + err.Error()
		return v
	}
	if len(own) > 0 {
		v.env = append(v.env, roster.EnvWorkerID+"="+strings.Join(own, ","))
	}
	if len(conflicts) == 0 {
		return v
	}
	lines := strings.Join(roster.ConflictLines(conflicts), "; ")
	if override {
		v.note = fmt.Sprintf("; the person's guard override let through %d file(s) held exclusively by other agents: %s", len(conflicts), lines)
		return v
	}
	v.refusal = fmt.Sprintf("not committed, nothing changed: %d file(s) of this commit are held exclusively by other agents in the shift roster: %s. "+
		"Wait until that agent releases the file (shift_check_in with claims {}, or shift_check_out) or its lease expires, or ask it, then propose the commit again. "+
		"To commit anyway the person overrides the guard: propose again and approve with `fluxgit gateway approve <previewId> --override-guard` "+
		"(or the card's guard override box), or start the gateway with %s=1.", len(conflicts), lines, roster.EnvGuardOverride)
	return v
}

// guardConflicts lists the files a commit of tree on top of head (""
// unborn) changes that another agent holds exclusively, and the ids of
// the proposer's own workers (nil proposer: none). An error says why the
// guard could not check (the files could not be listed, the roster could
// not be read), in words for the result.
func (e *Executor) guardConflicts(ctx context.Context, repo, head, tree string, p *operation.Proposer) (conflicts []roster.Conflict, own []string, err error) {
	args := []string{"diff-tree", "-r", "--no-renames", "--name-only", "-z", head, tree}
	if head == "" {
		args = []string{"ls-tree", "-r", "--name-only", "-z", tree}
	}
	out, gerr := e.git.Run(ctx, repo, args...)
	if gerr != nil {
		return nil, nil, fmt.Errorf("the guard could not list the committed files, so it did not check them: %s", details(gerr))
	}
	var touched []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" {
			touched = append(touched, f)
		}
	}
	rctx, cancel := context.WithTimeout(ctx, guardBudget)
	defer cancel()
	rows, rerr := e.roster(rctx, repo)
	if rerr != nil {
		return nil, nil, fmt.Errorf("the shift roster could not be read, so the guard did not check this commit: %v", rerr)
	}
	var owner roster.Owner
	if p != nil {
		owner = roster.CheckedInBy(roster.Hostname(), p.PID, p.Client)
		for _, r := range rows {
			if owner(r.Row) {
				own = append(own, r.WorkerID)
			}
		}
	}
	return roster.GuardConflicts(rows, repo, "", owner, touched), own, nil
}
