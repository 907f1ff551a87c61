package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/fluxgit/fluxgit/cmd/fluxgit/internal/preflight"
	"github.com/fluxgit/fluxgit/host/repopath"
	"github.com/fluxgit/fluxgit/internal/credpaths"
	"github.com/fluxgit/fluxgit/internal/privdir"
	"github.com/fluxgit/fluxgit/internal/rundir"
)

// allowedRoots is FLUXGIT_MCP_ALLOWED_ROOTS as the host parses it. A
// malformed value gives no roots: the host then refuses every call
// (-32010), and the work-tree check still applies.
func allowedRoots() []string {
	p := repopath.FromEnv()
	if p.Check() != nil {
		return nil
	}
	return p.Roots
}

// gatewayStateCheck chooses the gateway's secret directory and refuses
// when the secret, the run directory's gateway state, the audit signing
// key or the agent policy lies where an agent's read tools could open it
// (inside an allowed root or a git work tree): an agent that reads the
// secret approves its own proposals (issue 22). The error names each
// path, why, and the fix.
//
// With autoApprove rules in the policy (autoApproves) the policy's own
// refusal says more: those rules approve writes without the person, and an
// approved write inside a work tree could rewrite them (CONTRACT §10).
func gatewayStateCheck(runDir string, autoApproves bool) (secretDir string, err error) {
	roots := allowedRoots()
	secretDir, serr := credpaths.ChooseSecretDir(roots)
	ex := credpaths.Exposed(credpaths.GatewayState(runDir, secretDir), roots)
	if serr == nil && len(ex) == 0 {
		return secretDir, nil
	}
	// Every problem at once, so one round of fixes is enough.
	var msgs []string
	if serr != nil {
		msgs = append(msgs, serr.Error())
	}
	for _, e := range ex {
		m := e.Error()
		if autoApproves && e.Label == credpaths.LabelAgentPolicy {
			m += "; its autoApprove rules approve writes without you, and an approved write could rewrite them there (or remove the autoApprove rules to keep every approval yours)"
		}
		msgs = append(msgs, m)
	}
	if len(msgs) == 1 {
		return "", errors.New(msgs[0])
	}
	return "", fmt.Errorf("%d problems: %s", len(msgs), strings.Join(msgs, "; "))
}

// checkGatewayReach is doctor's row for issue 22: it fails when the
// gateway's secret, its state in the run directory, the signing key, the
// agent policy, the host configuration or the JWT key lies where an
// agent's read tools could open it, and when no private place for the
// secret qualifies.
func checkGatewayReach(configPath string) preflight.Result {
	const name = "credentials"
	roots := allowedRoots()
	secretDir, serr := credpaths.ChooseSecretDir(roots)
	runDir, _ := rundir.Dir()
	state := append(credpaths.GatewayState(runDir, secretDir), credpaths.HostState(configPath)...)
	ex := credpaths.Exposed(state, roots)
	if serr != nil || len(ex) > 0 {
		var detail, fix []string
		var se *credpaths.SecretDirError
		if errors.As(serr, &se) {
			detail = append(detail, se.Detail())
			fix = append(fix, se.Fix())
		}
		for _, e := range ex {
			detail = append(detail, fmt.Sprintf("the %s %s is %s", e.Label, e.Path.Path, e.Why))
			fix = append(fix, e.Fix)
		}
		return preflight.Result{Name: name, Status: preflight.Fail,
			Detail: strings.Join(detail, "; ") + ": an agent's read tools could open it",
			Fix:    strings.Join(fix, "; ")}
	}
	// The directory itself must be private too (the gateway checks the
	// same at start, creating it 0700 when it is missing).
	if err := privdir.Check(secretDir, privdir.Options{Label: "gateway secret directory"}); err != nil {
		fix := "use a directory only you can read"
		var pe *privdir.Error
		if errors.As(err, &pe) {
			fix = pe.Fix()
		}
		return preflight.Result{Name: name, Status: preflight.Fail, Detail: err.Error(), Fix: fix}
	}
	scope := "no git work tree"
	if len(roots) > 0 {
		scope = "no allowed root and no git work tree"
	}
	return preflight.Result{Name: name, Status: preflight.OK,
		Detail: fmt.Sprintf("gateway secret in %s; it, the gateway state, keys and policy lie in %s", secretDir, scope)}
}
