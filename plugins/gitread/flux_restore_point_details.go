package gitread

import (
	"context"

	"github.com/fluxgit/fluxgit/plugins/sdk"
)

func init() { registerFluxGit("flux.restorePointDetails", (*Provider).fluxRestorePointDetails) }

// RestorePointDetailsData is the flux.restorePointDetails payload.
type RestorePointDetailsData struct {
	RestorePoint     *RestorePoint `json:"restorePoint"`
	RestoreCount     int           `json:"restoreCount"`
	ApprovalRequired bool          `json:"approvalRequired"`
	ApprovalMessage  string        `json:"approvalMessage"`
}

// fluxRestorePointDetails returns the repository's restore point; with a
// restorePointId, only when the id matches.
func (p *Provider) fluxRestorePointDetails(ctx context.Context, call *sdk.Call) (any, error) {
	c, err := p.fxFluxOpen(ctx, call)
	if err != nil {
		return nil, err
	}
	rps, err := p.fxRestorePoints(ctx, c)
	if err != nil {
		return nil, err
	}
	d := &RestorePointDetailsData{RestoreCount: len(rps), ApprovalRequired: true, ApprovalMessage: fxApprovalMessage}
	for i := range rps {
		if c.args.RestorePointID == "" || rps[i].ID == c.args.RestorePointID {
			d.RestorePoint = &rps[i]
			break
		}
	}
	return d, nil
}
