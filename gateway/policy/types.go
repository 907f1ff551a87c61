// Package policy is the approval gateway's declarative agent policy
// (FLUXGIT_MCP_AGENT_POLICY, schemas/agent-policy.schema.json): which
// operations, refs and repository paths an agent may propose.
package policy

// EnvPolicy names the policy file.
const EnvPolicy = "FLUXGIT_MCP_AGENT_POLICY"

// Request is what a proposal asks for, as the policy sees it.
type Request struct {
	AgentID       string
	OperationType string
	// RepoPaths are the canonical repository and worktree paths the
	// proposal touches (its repoPath, branchDelete targets, a worktree's
	// new path).
	RepoPaths []string
	// Refs are the refs it names (branch names as written).
	Refs []string
}

// Violation is a refusal: the rule that applied and why.
type Violation struct {
	Rule   string // the rule's name, or "default"
	Reason string // a sentence the agent can act on
}

// Error says "rule <name>: <reason>"; the gateway's refusal already says
// that the agent policy refused it.
func (v *Violation) Error() string { return "rule " + v.Rule + ": " + v.Reason }
