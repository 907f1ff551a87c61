package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/fluxgit/fluxgit/host/repopath"
	"github.com/fluxgit/fluxgit/internal/credpaths"
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
func gatewayStateCheck(runDir string) (secretDir string, err error) {
	roots := allowedRoots()
	secretDir, err = credpaths.ChooseSecretDir(roots)
	if err != nil {
		return "", err
	}
	if ex := credpaths.Exposed(credpaths.GatewayState(runDir, secretDir), roots); len(ex) > 0 {
		return "", exposureError(ex)
	}
	return secretDir, nil
}

// exposureError joins exposures into one error, one sentence each.
func exposureError(ex []credpaths.Exposure) error {
	msgs := make([]string, 0, len(ex))
	for _, e := range ex {
		msgs = append(msgs, e.Error())
	}
	if len(msgs) == 1 {
		return errors.New(msgs[0])
	}
	return fmt.Errorf("%d locations lie where an agent's read tools can open them: %s", len(msgs), strings.Join(msgs, "; "))
}
