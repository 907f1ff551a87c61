package restore

import (
	"context"

	"github.com/fluxgit/fluxgit/plugins/gitread/repo"
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

func fluxRestorePoints(p *repo.Provider, ctx context.Context, call *sdk.Call) (any, error) {
	c, err := openRestore(p, ctx, call)
	if err != nil {
		return nil, err
	}
	limit, err := repo.IntArg("limit", c.args.Limit, 50, 1, 200)
	if err != nil {
		return nil, err
	}
	rps, err := readRestorePoints(p, ctx, c)
	if err != nil {
		return nil, err
	}
	d := &restorePointsData{RestoreCount: len(rps), ApprovalRequired: true, ApprovalMessage: restoreApprovalMessage}
	if len(rps) > int(limit) {
		rps, d.Truncated = rps[:limit], true
	}
	d.RestorePoints = rps
	return d, nil
}
