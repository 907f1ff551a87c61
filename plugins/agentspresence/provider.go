// Package agentspresence is the agents-presence provider: agents.presence
// reports the other coding agents working in a repository — their
// processes, their own session stores, editors with the repository open,
// fluxgit presence records and the shift roster's declared check-ins —
// from local, read-only signals (internal/agentdetect). It returns
// metadata only: never prompt or output text, never tokens.
//
// The package also builds the handshake provider's otherAgents hint
// (OtherAgents), from the same library: one provider never calls another.
package agentspresence

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/fluxgit/fluxgit/internal/agentdetect"
	"github.com/fluxgit/fluxgit/internal/gitexec"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// Tool is the one tool this provider serves.
const Tool = "agents.presence"

// Source is the Result.Source of every answer: local, read-only signals.
const Source = "local-agent-detector"

// Tool error codes.
const (
	// CodeGitFailed: the path is not a git work tree (or git failed).
	CodeGitFailed    = 10010
	MessageGitFailed = "Local git fallback failed"
	// CodeDetectionDisabled: EnvDetectionDisabled is set.
	CodeDetectionDisabled    = 10011
	MessageDetectionDisabled = "Agent detection is disabled"
)

// Budget bounds one agents.presence detection: sources still running then
// are reported as failed and their findings dropped.
const Budget = 3 * time.Second

// Privacy is the privacy statement every answer carries.
const Privacy = "Metadata only, read from local sources without writing anything: agent ids, process ids, " +
	"branches, last tool names, repository-relative file paths and timestamps. Never prompt or output text, " +
	"never tokens, never another process's environment; command lines are not returned."

// Guidance tells the agent what to do with the answer.
const Guidance = "Agents with likelyCaller false are probably not you. Before discarding, resetting, rebasing " +
	"or rewriting files listed under another agent (especially one in state working, or a roster check-in, which " +
	"declares intent), ask the user or coordinate through the shift roster (shift_check_in lists who works on " +
	"what). state working: activity in the last 2 minutes; open: a live process or session; recent: activity in " +
	"the last 15 minutes. confidence says how the agent was tied to the repository: registry > argv > cwd; declared " +
	"is a roster check-in."

// Provider serves agents.presence.
type Provider struct {
	// Detector configures detection; the zero value uses every source.
	Detector Detector
	// Disabled reports whether detection is turned off; nil reads
	// EnvDetectionDisabled at each call.
	Disabled func() bool
}

// New returns a Provider with every source.
func New() *Provider { return &Provider{} }

var (
	_ sdk.Provider  = (*Provider)(nil)
	_ sdk.Describer = (*Provider)(nil)
)

// Describe lists the served tool.
func (p *Provider) Describe() sdk.Description { return sdk.Description{Tools: []string{Tool}} }

type args struct {
	RepoPath string `json:"repoPath"`
	RepoID   string `json:"repoId"`
}

// Agent is one reported agent: a merged finding plus how it relates to
// the caller.
type Agent struct {
	agentdetect.Finding
	// SameAgentAsCaller: the caller's mapped agent id equals the
	// finding's.
	SameAgentAsCaller bool `json:"sameAgentAsCaller"`
	// LikelyCaller: the same agent, and its pid is unknown or one of this
	// server's ancestors (probably the caller itself).
	LikelyCaller bool `json:"likelyCaller"`
}

// Caller describes who asked.
type Caller struct {
	ClientName             *string `json:"clientName"`
	Agent                  *string `json:"agent"`
	OwnMCPPresenceExcluded bool    `json:"ownMcpPresenceExcluded"`
}

// Data is agents.presence's data.
type Data struct {
	RepoPath   string  `json:"repoPath"`
	Agents     []Agent `json:"agents"`
	AgentCount int     `json:"agentCount"`
	Truncated  bool    `json:"truncated"`
	Caller     Caller  `json:"caller"`
	Privacy    string  `json:"privacy"`
	Guidance   string  `json:"guidance"`
}

// CallTool serves agents.presence.
func (p *Provider) CallTool(ctx context.Context, call *sdk.Call) (*sdk.Result, error) {
	if call == nil {
		return nil, errors.New("agentspresence: nil call")
	}
	if call.Tool != Tool {
		return nil, sdk.InvalidArgument("unknown tool " + call.Tool + "; the agents-presence provider serves " + Tool)
	}
	var a args
	if err := json.Unmarshal(call.Arguments, &a); err != nil || a.RepoPath == "" {
		return nil, sdk.InvalidArgument("arguments.repoPath is required: the absolute path of a git work tree")
	}
	top, worktrees, err := Locate(ctx, a.RepoPath)
	if err != nil {
		var ge *gitexec.Error
		if errors.As(err, &ge) {
			data := map[string]any{"command": ge.Command, "details": ge.Details}
			if kind, hint := gitexec.Classify(ge.Details); kind != "" {
				data["kind"], data["hint"] = kind, hint
			}
			return sdk.Fail(Source, CodeGitFailed, MessageGitFailed, data), nil
		}
		return nil, err
	}
	if p.disabled() {
		return sdk.Fail(Source, CodeDetectionDisabled, MessageDetectionDisabled, map[string]any{
			"environmentVariable": EnvDetectionDisabled,
			"reason":              EnvDetectionDisabled + " is set, so fluxgit does not look for other agents.",
			"agentRecommendation": "Do not assume you are alone in this repository: check the shift roster (shift_check_in lists the workers of a workspace) or ask the user which other agents are working here before discarding or rewriting files.",
		}), nil
	}
	ctx, cancel := context.WithTimeout(ctx, Budget)
	defer cancel()
	rep := p.Detector.Detect(ctx, top, worktrees)
	caller := NewCaller(call.Meta.ClientName)
	data := Data{RepoPath: top, Agents: caller.annotate(rep.Agents), AgentCount: rep.AgentCount, Truncated: rep.Truncated,
		Caller: caller.json(), Privacy: Privacy, Guidance: Guidance}
	return sdk.OK(Source, data)
}

func (p *Provider) disabled() bool {
	if p.Disabled != nil {
		return p.Disabled()
	}
	return DetectionDisabled()
}

// CallerInfo is the calling client as detection sees it.
type CallerInfo struct {
	// Name is the MCP client name ("" when unknown), Agent its detector
	// id ("" when unknown).
	Name, Agent string
	// Ancestors are the host's ancestor pids, nearest first.
	Ancestors []int
}

// NewCaller maps the MCP client name to its detector id and reads the
// host's ancestors.
func NewCaller(clientName string) CallerInfo {
	c := CallerInfo{Name: clientName, Ancestors: agentdetect.Ancestors(Host())}
	if clientName != "" {
		c.Agent = agentdetect.CallerAgent(clientName)
	}
	return c
}

func (c CallerInfo) json() Caller {
	out := Caller{OwnMCPPresenceExcluded: true}
	if c.Name != "" {
		out.ClientName = &c.Name
	}
	if c.Agent != "" {
		out.Agent = &c.Agent
	}
	return out
}

// annotate adds sameAgentAsCaller and likelyCaller to each finding.
func (c CallerInfo) annotate(fs []agentdetect.Finding) []Agent {
	out := make([]Agent, 0, len(fs))
	for _, f := range fs {
		if f.Files == nil {
			f.Files = []string{}
		}
		out = append(out, Agent{Finding: f,
			SameAgentAsCaller: agentdetect.SameAgentAsCaller(f, c.Agent),
			LikelyCaller:      agentdetect.LikelyCaller(f, c.Agent, c.Ancestors)})
	}
	return out
}
