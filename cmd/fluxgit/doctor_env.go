package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/fluxgit/fluxgit/cmd/fluxgit/internal/preflight"
	"github.com/fluxgit/fluxgit/gateway/policy"
	"github.com/fluxgit/fluxgit/internal/envflag"
)

// Names of the checks this file adds to preflight's.
const (
	checkEnvironment = "environment"
	checkAgentPolicy = "agent-policy"
)

// startupChecks are the checks `serve` and `doctor` run besides
// cmd/fluxgit/internal/preflight's: misspelt variables and the agent policy file.
func startupChecks() []preflight.Result {
	return append(environmentChecks(os.Environ()), agentPolicyCheck())
}

// environmentChecks warns about each FLUXGIT_* or SHIFT_* variable fluxgit
// does not read, and each near miss of its own MCP_* names: a misspelt
// FLUXGIT_ALLOWED_ROOTS would otherwise leave the server unconfined
// without a word (issue 22).
func environmentChecks(environ []string) []preflight.Result {
	unknown := envflag.Unknown(environ)
	if len(unknown) == 0 {
		return []preflight.Result{{Name: checkEnvironment, Status: preflight.OK, Detail: "no unknown FLUXGIT_*, SHIFT_* or misspelt MCP_* variables"}}
	}
	rs := make([]preflight.Result, 0, len(unknown))
	for _, u := range unknown {
		rs = append(rs, preflight.Result{Name: checkEnvironment, Status: preflight.Warn, Detail: u.String(), Fix: u.Fix()})
	}
	return rs
}

// agentPolicyCheck loads the FLUXGIT_MCP_AGENT_POLICY file with the
// gateway's own loader, so doctor fails exactly when `fluxgit gateway`
// would refuse to start.
func agentPolicyCheck() preflight.Result {
	name := strings.TrimSpace(os.Getenv(policy.EnvPolicy))
	if name == "" {
		return preflight.Result{Name: checkAgentPolicy, Status: preflight.OK, Detail: "none (" + policy.EnvPolicy + " unset: the gateway asks a person about every proposal)"}
	}
	p, err := policy.Load(name)
	if err != nil {
		return preflight.Result{Name: checkAgentPolicy, Status: preflight.Fail, Detail: err.Error() + "; `fluxgit gateway` will not start with it",
			Fix: fmt.Sprintf("correct the file (schemas/agent-policy.schema.json) or unset %s", policy.EnvPolicy)}
	}
	return preflight.Result{Name: checkAgentPolicy, Status: preflight.OK, Detail: p.String()}
}
