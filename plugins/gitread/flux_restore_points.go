package gitread

import (
	"context"

	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// restorePointsData is the flux.restorePoints payload.
type restorePointsData struct {
	RestorePoints    []RestorePoint `json:"restorePoints"`
	RestoreCount     int            `json:"restoreCount"`
	Truncated        bool           `json:"truncated"`
	ApprovalRequired bool           `json:"approvalRequired"`
	ApprovalMessage  string         `json:"approvalMessage"`
}

func (p *Provider) fluxRestorePoints(ctx context.Context, call *sdk.Call) (any, error) {
	c, err := p.fxFluxOpen(ctx, call)
	if err != nil {
		return nil, err
	}
	limit, err := intArg("limit", c.args.Limit, 50, 1, 200)
	if err != nil {
		return nil, err
	}
	rps, err := p.fxRestorePoints(ctx, c)
	if err != nil {
		return nil, err
	}
	d := &restorePointsData{RestoreCount: len(rps), ApprovalRequired: true, ApprovalMessage: fxApprovalMessage}
	if len(rps) > int(limit) {
		rps, d.Truncated = rps[:limit], true
	}
	d.RestorePoints = rps
	return d, nil
}
