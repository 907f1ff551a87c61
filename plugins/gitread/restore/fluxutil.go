package restore

// Shared code of the FluxGit-required tools (safety.timeline,
// safety.eventDetails, flux.latestRestorePoint, flux.restorePoints,
// flux.restorePointDetails). They are gated on a configured gateway address
// (internal/fluxbridge, read from the environment at call time): without one
// they answer 10001; with one they are served locally from the restore
// point record <runDir>/rebase/<repoId>.json and the HEAD reflog. No HTTP
// call is made.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/fluxgit/fluxgit/internal/fluxbridge"
	"github.com/fluxgit/fluxgit/internal/gitexec"
	"github.com/fluxgit/fluxgit/internal/rundir"
	"github.com/fluxgit/fluxgit/plugins/gitread/repo"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// codeGatewayNotConfigured is the tool error of a FluxGit-required tool
// when no gateway address resolves.
const (
	codeGatewayNotConfigured    = 10001
	messageGatewayNotConfigured = "Gateway is not configured"
)

const (
	restoreApprovalMessage = "Restoring, undoing or redoing changes history; it needs a write proposal a person approves."
)

// upgradeHint is the 10001 hint: how the person starts fluxgit's own
// gateway (restore points are then read from its run directory), the
// FluxGit app as the alternative. Short: the model pays for every token.
const upgradeHint = "Ask the user to run `fluxgit gateway` in a terminal and set FLUXGIT_MCP_HANDSHAKE_ADDR in this MCP server's environment to the address it prints (or FLUXGIT_GATEWAY_ADDR to the FluxGit app's address), then call the tool again."

// gatewayError is the 10001 payload.
type gatewayError struct {
	Tool                 string   `json:"tool"`
	Tier                 string   `json:"tier"`
	GatewayConfigured    bool     `json:"gatewayConfigured"`
	Reason               string   `json:"reason"`
	UpgradeHint          string   `json:"upgradeHint"`
	LearnMore            string   `json:"learnMore"`
	FreeShellAlternative []string `json:"freeShellAlternative"`
}

// fluxGit wraps a FluxGit-required tool: gated on the gateway, then
// served like a local read.
func fluxGit(fn func(p *repo.Provider, ctx context.Context, call *sdk.Call) (any, error)) repo.ToolFunc {
	return func(p *repo.Provider, ctx context.Context, call *sdk.Call) (*sdk.Result, error) {
		name := call.Tool
		if _, ok := fluxbridge.FromEnv(); !ok {
			return sdk.Fail("", codeGatewayNotConfigured, messageGatewayNotConfigured, gatewayError{
				Tool: name, Tier: "fluxgit", GatewayConfigured: false,
				Reason:      name + " needs an approval gateway (`fluxgit gateway` or the FluxGit app): no valid gateway address is set (" + strings.Join(fluxbridge.Variables, ", ") + ").",
				UpgradeHint: upgradeHint,
				LearnMore:   "https://fluxgit.com/features/mcp-agent-git/",
				FreeShellAlternative: []string{
					"repo.status", "repo.refs", "repo.history", "repo.reflog", "commit.details",
					"worktree.changes", "submodule.status", "diff.text", "diff.semantic (fallback)",
				},
			}), nil
		}
		return repo.Finish(fn(p, ctx, call))
	}
}

type fluxArgs struct {
	RepoPath             string       `json:"repoPath"`
	RepoID               string       `json:"repoId"`
	RunDir               string       `json:"runDir"`
	Limit                *json.Number `json:"limit"`
	ReflogLimit          *json.Number `json:"reflogLimit"`
	IncludeReflog        *bool        `json:"includeReflog"`
	IncludeRestorePoints *bool        `json:"includeRestorePoints"`
	EventID              string       `json:"eventId"`
	RestorePointID       string       `json:"restorePointId"`
}

// RestorePoint is a FluxGit restore point (one checkpoint per repository).
type RestorePoint struct {
	ID        string  `json:"id"`
	RepoID    string  `json:"repoId"`
	Before    *string `json:"before"`
	After     *string `json:"after"`
	Operation *string `json:"operation"`
	CanUndo   bool    `json:"canUndo"`
	CanRedo   bool    `json:"canRedo"`
	// WhyNot says why neither undo nor redo can run on this point now
	// (HEAD moved, another branch, older points wait for the newer ones);
	// omitted when one of them can.
	WhyNot           string               `json:"whyNot,omitempty"`
	ApprovalRequired bool                 `json:"approvalRequired"`
	ApprovalMessage  string               `json:"approvalMessage"`
	Metadata         RestorePointMetadata `json:"metadata"`
}

// RestorePointMetadata carries the record's remaining fields and the
// repository state the flags were computed against.
type RestorePointMetadata struct {
	CheckpointPath   string          `json:"checkpointPath"`
	CreatedAt        json.RawMessage `json:"createdAt"`
	BranchRef        *string         `json:"branchRef"`
	Undone           bool            `json:"undone"`
	BeforeRef        *string         `json:"beforeRef"`
	AfterRef         *string         `json:"afterRef"`
	UpstreamRef      *string         `json:"upstreamRef"`
	ResetMode        *string         `json:"resetMode"`
	Plan             json.RawMessage `json:"plan"`
	CurrentBranchRef *string         `json:"currentBranchRef"`
	CurrentHead      *string         `json:"currentHead"`
}

// restoreContext is what every FluxGit-local tool needs.
type restoreContext struct {
	r      *repo.Repo
	args   fluxArgs
	runDir string
	repoID string
}

func openRestore(p *repo.Provider, ctx context.Context, call *sdk.Call) (*restoreContext, error) {
	var a fluxArgs
	if err := repo.Decode(call, &a); err != nil {
		return nil, err
	}
	runDir, err := repo.RunDirFor(a.RunDir)
	if err != nil {
		return nil, err
	}
	if a.RepoID != "" && !rundir.ValidID(strings.TrimSpace(a.RepoID)) {
		return nil, repo.Invalid("arguments.repoId must be a safe file name (no '/', '\\' or NUL, not '.' or '..')")
	}
	r, err := p.Open(ctx, call, a.RepoPath)
	if err != nil {
		return nil, err
	}
	c := &restoreContext{r: r, args: a, runDir: runDir, repoID: strings.TrimSpace(a.RepoID)}
	if c.repoID == "" {
		c.repoID = repo.RegistryID(runDir, r.Dir())
	}
	return c, nil
}

// restorePoints returns the repository's restore points (zero or one).
func readRestorePoints(p *repo.Provider, ctx context.Context, c *restoreContext) ([]RestorePoint, error) {
	if c.repoID == "" || c.runDir == "" {
		return []RestorePoint{}, nil
	}
	path := rundir.RecordPath(c.runDir, c.repoID)
	// Messages name the record relative to the run directory only.
	rel := rundir.RebaseDir + "/" + c.repoID + ".json"
	b, err := rundir.ReadRecordFile(c.runDir, c.repoID, repo.RefuseProtected)
	if errors.Is(err, os.ErrNotExist) {
		return []RestorePoint{}, nil
	}
	cmd := gitexec.Command(c.r.Dir(), "symbolic-ref", "-q", "HEAD")
	if err != nil {
		return nil, repo.Failure(cmd, "cannot read the restore point record "+rel+" in the FluxGit run directory: "+err.Error())
	}
	rec, err := rundir.ParseRecord(b)
	if err != nil {
		return nil, repo.Failure(cmd, "the restore point record "+rel+" in the FluxGit run directory is not valid JSON: "+err.Error())
	}
	var branch, head *string
	if err := repo.Parallel(
		func() error {
			out, err := p.Run(ctx, c.r.Dir(), "symbolic-ref", "-q", "HEAD")
			var ge *gitexec.Error
			if errors.As(err, &ge) && ge.ExitCode == 1 && errors.Is(err, gitexec.ErrExit) {
				return nil // detached
			}
			if err != nil {
				return err
			}
			s := strings.TrimSpace(string(out))
			branch = &s
			return nil
		},
		func() error {
			out, err := p.Run(ctx, c.r.Dir(), "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
			var ge *gitexec.Error
			if errors.As(err, &ge) && ge.ExitCode == 1 && errors.Is(err, gitexec.ErrExit) {
				return nil // unborn
			}
			if err != nil {
				return err
			}
			s := strings.TrimSpace(string(out))
			head = &s
			return nil
		},
	); err != nil {
		return nil, err
	}
	// The gateway keeps every restore point of the repository in a stack
	// beside the latest record (rundir.Stack, docs/approvals.md); when the
	// stack's newest point is the latest record, the points come from it,
	// newest first. Only the newest point not undone can be undone and
	// only the one above it redone (the gateway's Undo and Redo take them
	// in that order). A record without a stack (the FluxGit app's) is the
	// reference's single restore point.
	recs, paths, cursor := []rundir.Record{rec}, []string{path}, -2
	if st, err := rundir.ReadStack(c.runDir, c.repoID, repo.RefuseProtected); err == nil && len(st.Points) > 0 &&
		st.Points[len(st.Points)-1].ID(c.repoID) == rec.ID(c.repoID) {
		n := len(st.Points)
		recs, paths, cursor = make([]rundir.Record, n), make([]string, n), n-1-st.Cursor()
		for i := range st.Points {
			recs[i], paths[i] = st.Points[n-1-i], filepath.Join(c.runDir, rundir.RebaseDir, rundir.StackName(c.repoID))
		}
		paths[0] = path
	}
	eq := func(a, b *string) bool { return a != nil && b != nil && *a == *b }
	out := make([]RestorePoint, 0, len(recs))
	for i, rec := range recs {
		branchMatches := (rec.BranchRef == nil || *rec.BranchRef == "") && branch == nil || eq(rec.BranchRef, branch)
		plan := rec.Plan
		if len(plan) == 0 {
			plan = json.RawMessage("null")
		}
		// A record without an operation (null, missing or "") reports null.
		var op *string
		if rec.Operation != "" {
			op = &rec.Operation
		}
		// i counts from the newest; cursor is the newest not undone, -2
		// without a stack (then the reference's rule alone decides).
		undoTurn, redoTurn := cursor == -2 || i == cursor, cursor == -2 || i == cursor-1
		rp := RestorePoint{
			ID:     rec.ID(c.repoID),
			RepoID: c.repoID, Before: rec.BeforeCommit, After: rec.AfterCommit, Operation: op,
			CanUndo:          undoTurn && !rec.Undone && branchMatches && eq(head, rec.AfterCommit),
			CanRedo:          redoTurn && rec.Undone && branchMatches && eq(head, rec.BeforeCommit),
			ApprovalRequired: true, ApprovalMessage: restoreApprovalMessage,
			Metadata: RestorePointMetadata{
				CheckpointPath: paths[i], CreatedAt: rec.CreatedAt.Raw(), BranchRef: rec.BranchRef, Undone: rec.Undone,
				BeforeRef: rec.BeforeRef, AfterRef: rec.AfterRef, UpstreamRef: rec.UpstreamRef, ResetMode: rec.ResetMode,
				Plan: plan, CurrentBranchRef: branch, CurrentHead: head,
			},
		}
		if !rp.CanUndo && !rp.CanRedo {
			rp.WhyNot = whyNot(rec, undoTurn, redoTurn, branchMatches, head, branch)
		}
		out = append(out, rp)
	}
	return out, nil
}

// whyNot says why a restore point can be neither undone nor redone.
func whyNot(rec rundir.Record, undoTurn, redoTurn, branchMatches bool, head, branch *string) string {
	str := func(s *string, none string) string {
		if s == nil || *s == "" {
			return none
		}
		return *s
	}
	switch {
	case rec.AfterCommit == nil:
		return "its operation did not finish"
	case !rec.Undone && !undoTurn:
		return "newer restore points must be undone first (undo goes from the newest back)"
	case rec.Undone && !redoTurn:
		return "older undone restore points must be redone first (redo goes back up in order)"
	case !branchMatches:
		return "the checked-out branch is " + str(branch, "(detached HEAD)") + ", the restore point is for " + str(rec.BranchRef, "(detached HEAD)")
	case !rec.Undone:
		return "HEAD is " + str(head, "(unborn)") + ", no longer " + *rec.AfterCommit + " where the operation left it"
	}
	return "HEAD is " + str(head, "(unborn)") + ", no longer " + str(rec.BeforeCommit, "(none)") + " where the undo left it"
}

// timelineAction is a next step an agent can take on an event.
type timelineAction struct {
	Action           string         `json:"action"`
	Description      string         `json:"description"`
	Tool             string         `json:"tool,omitempty"`
	Arguments        map[string]any `json:"arguments,omitempty"`
	ApprovalRequired bool           `json:"approvalRequired"`
}

// timelineEvent is one safety.timeline event.
type timelineEvent struct {
	ID                    string           `json:"id"`
	RepoLabel             string           `json:"repoLabel"`
	Source                string           `json:"source"`
	Kind                  string           `json:"kind"`
	Severity              string           `json:"severity"`
	Title                 string           `json:"title"`
	Summary               string           `json:"summary"`
	OccurredAtUnix        int64            `json:"occurredAtUnix"`
	HeadBefore            *string          `json:"headBefore"`
	HeadAfter             *string          `json:"headAfter"`
	RestorePoint          *RestorePoint    `json:"restorePoint,omitempty"`
	ReflogSelector        string           `json:"reflogSelector,omitempty"`
	CanCompare            bool             `json:"canCompare"`
	Actions               []timelineAction `json:"actions"`
	ApprovalRequired      bool             `json:"approvalRequired"`
	NetworkFetchPerformed bool             `json:"networkFetchPerformed"`
}

// readTimeline builds the event list of safety.timeline.
func readTimeline(p *repo.Provider, ctx context.Context, c *restoreContext) ([]timelineEvent, bool, error) {
	limit, err := repo.IntArg("limit", c.args.Limit, 50, 1, 200)
	if err != nil {
		return nil, false, err
	}
	reflogLimit, err := repo.IntArg("reflogLimit", c.args.ReflogLimit, 12, 1, 100)
	if err != nil {
		return nil, false, err
	}
	label := filepath.Base(c.r.Dir())
	events := []timelineEvent{}
	copyAction := func(summary string) timelineAction {
		return timelineAction{Action: "copyRedactedSummary", Description: summary}
	}
	if c.args.IncludeRestorePoints == nil || *c.args.IncludeRestorePoints {
		rps, err := readRestorePoints(p, ctx, c)
		if err != nil {
			return nil, false, err
		}
		for i := range rps {
			rp := rps[i]
			op := "operation"
			if rp.Operation != nil && *rp.Operation != "" {
				op = *rp.Operation
			}
			summary := fmt.Sprintf("FluxGit recorded a restore point before %s in %s.", op, label)
			ev := timelineEvent{
				ID: rp.ID, RepoLabel: label, Source: "restore_point", Kind: "restore_created", Severity: "warning",
				Title: "Restore point: " + op, Summary: summary, OccurredAtUnix: rundir.ParseCreatedAt(rp.Metadata.CreatedAt).Unix(),
				HeadBefore: rp.Before, HeadAfter: rp.After, RestorePoint: &rp, CanCompare: rp.Before != nil && rp.After != nil,
				ApprovalRequired: true,
				Actions: []timelineAction{
					{Action: "openRestorePoint", Description: "Show the restore point.", Tool: "flux.restorePointDetails", Arguments: map[string]any{"repoPath": c.r.Dir(), "restorePointId": rp.ID}},
				},
			}
			if ev.CanCompare {
				ev.Actions = append(ev.Actions, timelineAction{Action: "compareBeforeAfter", Description: "Diff the state before and after.", Tool: "diff.text", Arguments: map[string]any{"repoPath": c.r.Dir(), "base": *rp.Before, "head": *rp.After}})
			}
			ev.Actions = append(ev.Actions, copyAction(summary))
			events = append(events, ev)
		}
	}
	if c.args.IncludeReflog == nil || *c.args.IncludeReflog {
		gitDir, _, err := p.GitDirs(ctx, c.r)
		if err != nil {
			return nil, false, err
		}
		entries, err := repo.ReadReflogTail(filepath.Join(gitDir, "logs", "HEAD"))
		if err != nil {
			return nil, false, repo.Failure(gitexec.Command(c.r.Dir(), "reflog", "show", "HEAD"), "cannot read the HEAD reflog: "+cleanErr(err).Error())
		}
		for n := 0; n < int(reflogLimit) && n < len(entries); n++ {
			e := entries[len(entries)-1-n]
			sel := "HEAD@{" + strconv.Itoa(n) + "}"
			sev := "info"
			low := strings.ToLower(e.Message)
			for _, w := range []string{"reset", "rebase", "merge", "cherry-pick", "revert"} {
				if strings.Contains(low, w) {
					sev = "warning"
				}
			}
			msg := repo.TruncRunes(e.Message, 200)
			title, _, _ := strings.Cut(msg, ":")
			ev := timelineEvent{
				ID: "reflog:" + sel, RepoLabel: label, Source: "reflog", Kind: "ref_move", Severity: sev,
				Title: "HEAD moved: " + title, Summary: msg, OccurredAtUnix: e.Unix, ReflogSelector: sel,
				CanCompare: e.Old != "" && e.New != "", ApprovalRequired: true,
			}
			if e.Old != "" {
				ev.HeadBefore = &e.Old
			}
			if e.New != "" {
				ev.HeadAfter = &e.New
				ev.Actions = append(ev.Actions, timelineAction{Action: "openReflogEntry", Description: "Show the commit HEAD moved to.", Tool: "commit.details", Arguments: map[string]any{"repoPath": c.r.Dir(), "commit": e.New}})
			}
			if ev.CanCompare {
				ev.Actions = append(ev.Actions, timelineAction{Action: "compareBeforeAfter", Description: "Diff the state before and after the move.", Tool: "diff.text", Arguments: map[string]any{"repoPath": c.r.Dir(), "base": e.Old, "head": e.New}})
			}
			if e.Old != "" {
				ev.Actions = append(ev.Actions, timelineAction{Action: "createRescueBranch", Description: "Propose a branch at the commit HEAD left, so it cannot be lost.", Tool: "operation.preview.branch", Arguments: map[string]any{"repoPath": c.r.Dir(), "startPoint": e.Old}, ApprovalRequired: true})
			}
			ev.Actions = append(ev.Actions, copyAction(label+": "+msg))
			events = append(events, ev)
		}
	}
	sort.SliceStable(events, func(i, j int) bool { return events[i].OccurredAtUnix > events[j].OccurredAtUnix })
	truncated := false
	if len(events) > int(limit) {
		events, truncated = events[:limit], true
	}
	return events, truncated, nil
}

// cleanErr keeps "does not exist" recognisable and drops the path an
// *fs.PathError carries.
func cleanErr(err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return os.ErrNotExist
	case errors.Is(err, fs.ErrPermission):
		return os.ErrPermission
	}
	return rundir.ErrUnreadable
}
