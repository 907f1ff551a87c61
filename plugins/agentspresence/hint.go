package agentspresence

import (
	"context"
	"encoding/json"
	"time"

	"github.com/fluxgit/fluxgit/internal/agentdetect"
)

// HintBudget bounds the detection behind one otherAgents hint: it runs
// after the gateway answered and before the agent gets the result.
const HintBudget = 1500 * time.Millisecond

// HintNote explains the hint to the agent.
const HintNote = "Informational only; it never changes the proposal's outcome. Other agents seen in this repository " +
	"(you are left out). overlappingPaths lists the proposal paths each one touched or declared (null when this " +
	"proposal names no paths fluxgit can know). If an agent overlaps, tell the user before they approve."

// HintAgent is one agent of the hint: the detected-agent object plus the
// paths of the proposal it touches.
type HintAgent struct {
	Agent
	OverlappingPaths []string `json:"overlappingPaths"`
}

// Hint is the otherAgents member of a proposal result.
type Hint struct {
	Informational         bool        `json:"informational"`
	Agents                []HintAgent `json:"agents"`
	AgentCount            int         `json:"agentCount"`
	OverlappingAgentCount int         `json:"overlappingAgentCount"`
	ProposalPathsKnown    bool        `json:"proposalPathsKnown"`
	// OmittedLikelyCaller counts the findings left out as likely the
	// caller itself (F§7 otherAgents: a count, not a flag).
	OmittedLikelyCaller int    `json:"omittedLikelyCaller"`
	Note                string `json:"note"`
}

// OtherAgents builds the hint for a proposal on repoPath touching
// proposalPaths (normalised, repository-relative; nil when unknown), for
// the MCP client clientName. It returns nil — no hint — when detection is
// disabled. The caller's own agent is left out when it is likely the
// caller (same agent, and no pid or one of the host's ancestors).
func (d *Detector) OtherAgents(ctx context.Context, clientName, repoPath string, proposalPaths []string, disabled bool) json.RawMessage {
	if disabled {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, HintBudget)
	defer cancel()
	top, worktrees, err := Locate(ctx, repoPath)
	if err != nil {
		top, worktrees = canonical(repoPath), []string{canonical(repoPath)}
	}
	rep := d.Detect(ctx, top, worktrees)
	caller := NewCaller(clientName)
	agents := caller.annotate(rep.Agents)
	h := Hint{Informational: true, Agents: []HintAgent{}, ProposalPathsKnown: proposalPaths != nil, Note: HintNote}
	kept := make([]agentdetect.Finding, 0, len(agents))
	var others []Agent
	for _, a := range agents {
		if a.LikelyCaller {
			h.OmittedLikelyCaller++
			continue
		}
		others = append(others, a)
		kept = append(kept, a.Finding)
	}
	overlaps := agentdetect.Overlap(kept, proposalPaths)
	for i, a := range others {
		if len(h.Agents) == agentdetect.MaxAgents {
			break
		}
		h.Agents = append(h.Agents, HintAgent{Agent: a, OverlappingPaths: overlaps[i]})
	}
	for _, o := range overlaps {
		if len(o) > 0 {
			h.OverlappingAgentCount++
		}
	}
	omitted := len(agents) - len(others)
	h.AgentCount = max(rep.AgentCount-omitted, len(others))
	b, err := json.Marshal(h)
	if err != nil {
		return nil
	}
	return b
}
