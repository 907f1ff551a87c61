// Package builtin lists the providers compiled into the fluxgit binary and
// served by its hidden `provider NAME` command.
package builtin

import (
	"context"
	"encoding/json"
	"sort"

	"github.com/fluxgit/fluxgit/plugins/agentspresence"
	"github.com/fluxgit/fluxgit/plugins/gitread"
	"github.com/fluxgit/fluxgit/plugins/proposals"
	"github.com/fluxgit/fluxgit/plugins/sdk"
	"github.com/fluxgit/fluxgit/plugins/shiftroster"
)

// Factories maps a provider name to its constructor. A provider appears
// here only when its tools really work: an unfinished provider is absent.
var Factories = map[string]func() sdk.Provider{
	"agents-presence": func() sdk.Provider { return agentspresence.New() },
	"git-read":        func() sdk.Provider { return gitread.New() },
	"handshake":       newHandshake,
	"shift-roster":    func() sdk.Provider { return shiftroster.New() },
}

// newHandshake is the handshake provider with the otherAgents hint: the
// agents other than the caller that agent detection sees in the
// repository, and which of the proposal's paths they touch. Detection is
// the agentdetect library (through agentspresence's Detector), not a call
// into the agents-presence provider; FLUXGIT_MCP_AGENT_DETECTION_DISABLED,
// read at each proposal, removes the hint.
func newHandshake() sdk.Provider {
	h := proposals.New()
	d := &agentspresence.Detector{}
	h.OtherAgents = func(ctx context.Context, repoPath string, proposalPaths []string) json.RawMessage {
		return d.OtherAgents(ctx, proposals.CallerName(ctx), repoPath, proposalPaths, agentspresence.DetectionDisabled())
	}
	return h
}

// Names returns the built-in provider names, sorted.
func Names() []string {
	names := make([]string, 0, len(Factories))
	for n := range Factories {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Planned are providers the contract names that later work will add; spec
// lint accepts them so their spec files can land before their code.
var Planned = []string{}
