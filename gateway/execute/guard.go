package execute

import (
	"context"
	"fmt"
	"strings"
	"time"

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
	e := x.e
	override := x.job.Confirmations.OverrideGuard || e.guardOverride
	var v guardVerdict
	if override {
		v.env = append(v.env, roster.EnvGuardOverride+"=1")
	}
	args := []string{"diff-tree", "-r", "--no-renames", "--name-only", "-z", head, tree}
	if head == "" {
		args = []string{"ls-tree", "-r", "--name-only", "-z", tree}
	}
	out, err := e.git.Run(ctx, x.repo, args...)
	if err != nil {
		v.note = "; the guard could not list the committed files, so it did not check them: " + details(err)
		return v
	}
	var touched []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" {
			touched = append(touched, f)
		}
	}
	rctx, cancel := context.WithTimeout(ctx, guardBudget)
	defer cancel()
	rows, err := e.roster(rctx, x.repo)
	if err != nil {
		v.note = "; the shift roster could not be read, so the guard did not check this commit: " + err.Error()
		return v
	}
	var own roster.Owner
	if p := x.job.Binding.Proposer; p != nil {
		own = roster.CheckedInBy(roster.Hostname(), p.PID, p.Client)
	}
	var ids []string
	for _, r := range rows {
		if own != nil && own(r.Row) {
			ids = append(ids, r.WorkerID)
		}
	}
	if len(ids) > 0 {
		v.env = append(v.env, roster.EnvWorkerID+"="+strings.Join(ids, ","))
	}
	conflicts := roster.GuardConflicts(rows, x.repo, "", own, touched)
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
