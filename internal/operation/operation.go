// Package operation is the proposal contract between the handshake
// provider (plugins/proposals), which sends write proposals, and the
// approval gateway (gateway/...), which checks, binds and executes them:
// the operation list, the typed body of each operation, the shared bounds
// and the gateway's URL paths. Both ends and the strict test gateway
// (tests/gatewaytest) import it, so the two ends of the wire cannot drift.
//
// Every body is also described by a JSON Schema,
// schemas/operations/<op>.schema.json; Validate checks a body against it
// with the validator the rest of fluxgit uses, and operation_test.go proves
// the Go types and the schemas name the same keys (see
// docs/adding-an-operation.md).
package operation

import "slices"

// Info is one operation's contract data.
type Info struct {
	// Name is the operation type: the body's operationType, the POST path
	// suffix, and the tool name's suffix (operation.preview.<Name>).
	Name string
	// Risk is the audit ledger's risk level of the operation (and the
	// spec file's audit.risk).
	Risk string
	// New returns a new zero typed body of the operation.
	New func() Body
}

// Audit risk levels (the ledger's risk field).
const (
	RiskHigh   = "high"
	RiskMedium = "medium"
	RiskLow    = "low"
)

// All lists the twelve operations in the contract's order (the order the
// preview tools are listed in). reset and discard can lose work and are
// high risk; operations that rewrite or publish history are medium;
// worktree, commit and branch only add and are low.
var All = []Info{
	{"merge", RiskMedium, func() Body { return &Merge{} }},
	{"rebase", RiskMedium, func() Body { return &Rebase{} }},
	{"discard", RiskHigh, func() Body { return &Discard{} }},
	{"reset", RiskHigh, func() Body { return &Reset{} }},
	{"patch", RiskMedium, func() Body { return &Patch{} }},
	{"plan", RiskMedium, func() Body { return &Plan{} }},
	{"worktree", RiskLow, func() Body { return &Worktree{} }},
	{"commit", RiskLow, func() Body { return &Commit{} }},
	{"push", RiskMedium, func() Body { return &Push{} }},
	{"branch", RiskLow, func() Body { return &Branch{} }},
	{"branchDelete", RiskMedium, func() Body { return &BranchDelete{} }},
	{"submodulePointer", RiskMedium, func() Body { return &SubmodulePointer{} }},
}

// PlanStepOps are the operation types a plan step may have, in order.
var PlanStepOps = []string{"merge", "rebase", "discard", "reset", "patch"}

// Names returns the operation names of All, in order, as a new slice.
func Names() []string {
	out := make([]string, len(All))
	for i, o := range All {
		out[i] = o.Name
	}
	return out
}

// Known reports whether op is one of All.
func Known(op string) bool {
	return slices.ContainsFunc(All, func(o Info) bool { return o.Name == op })
}

// Risk is the audit risk of op; an unknown op is high, so a mistake errs
// towards attention.
func Risk(op string) string {
	for _, o := range All {
		if o.Name == op {
			return o.Risk
		}
	}
	return RiskHigh
}

// Bounds every body obeys; the provider checks them before sending and the
// gateway again on arrival (the schemas carry the same numbers, which
// operation_test.go checks).
const (
	// MaxText bounds refs, branch names, remotes, reasons and repoId, in
	// characters (Unicode code points).
	MaxText = 4096
	// MaxPathLen bounds a filesystem or repository path, in characters.
	MaxPathLen = 32768
	// MaxPaths bounds a path list.
	MaxPaths = 10000
	// MaxPatch bounds a patch, in characters (4 Mi).
	MaxPatch = 4 << 20
	// MaxCommitMessage bounds a commit message, in characters.
	MaxCommitMessage = 65536
	// MaxPointerMessage bounds a submodulePointer record commit message.
	MaxPointerMessage = 2000
	// MaxPlanSteps bounds a plan's steps.
	MaxPlanSteps = 10
	// MaxDeleteRepos bounds a branchDelete's targets.
	MaxDeleteRepos = 20
	// MaxDeleteBranches bounds the branches of one branchDelete target.
	MaxDeleteBranches = 20
)

// URL paths of the gateway's agent API, relative to the gateway root.
const (
	// PreviewPath + <operation>: POST a proposal body.
	PreviewPath = "/v1/mcp/operation/preview/"
	// StatusPath + <previewId>: GET a proposal's status.
	StatusPath = "/v1/mcp/operation/status/"
	// CancelPath + <previewId>: POST a cancel body ({"agentId": ...}).
	CancelPath = "/v1/mcp/operation/cancel/"
	// CardViewPath + <previewId>: GET the read-only card of a proposal (its
	// review without diffs, its refs and risk) for the inline MCP Apps
	// card; it carries no decision and no secret.
	CardViewPath = "/v1/mcp/operation/card/"
	// SemanticDiffPath: POST a semantic diff request (diff.semantic).
	SemanticDiffPath = "/v1/mcp/diff/semantic"
)

// CardPath + <previewId> is the person's page for one proposal on the
// gateway: its card, with approve and reject. The address carries no
// secret and no decision, so it may be shown to anyone, the model
// included: a browser without the person's session sees only how to open
// it from their terminal (`fluxgit gateway open <previewId>`).
const CardPath = "/ui/p/"

// CardURL is the card address of proposal id on the gateway at base
// ("http://127.0.0.1:port"); id must already be a valid previewId.
func CardURL(base, id string) string { return base + CardPath + id }
