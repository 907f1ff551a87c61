package restore

import (
	"context"

	"github.com/fluxgit/fluxgit/plugins/gitread/repo"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// LatestRestorePointData is the flux.latestRestorePoint payload.
type LatestRestorePointData struct {
	LatestRestorePoint *RestorePoint  `json:"latestRestorePoint"`
	RestorePoints      []RestorePoint `json:"restorePoints"`
	RestoreCount       int            `json:"restoreCount"`
	ApprovalRequired   bool           `json:"approvalRequired"`
	ApprovalMessage    string         `json:"approvalMessage"`
}

func fluxLatestRestorePoint(p *repo.Provider, ctx context.Context, call *sdk.Call) (any, error) {
	c, err := openRestore(p, ctx, call)
	if err != nil {
		return nil, err
	}
	rps, err := readRestorePoints(p, ctx, c)
	if err != nil {
		return nil, err
	}
	// restorePoints holds the latest point only (the reference's shape,
	// one element); restoreCount counts the whole stack, which
	// flux.restorePoints lists.
	d := &LatestRestorePointData{RestorePoints: rps[:min(len(rps), 1)], RestoreCount: len(rps), ApprovalRequired: true, ApprovalMessage: restoreApprovalMessage}
	if len(rps) > 0 {
		d.LatestRestorePoint = &rps[0]
	}
	return d, nil
}
