package restore

import (
	"context"
	"strconv"

	"github.com/fluxgit/fluxgit/plugins/gitread/repo"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// restorePointDetailsData is the flux.restorePointDetails payload.
type restorePointDetailsData struct {
	RestorePoint     *RestorePoint `json:"restorePoint"`
	RestoreCount     int           `json:"restoreCount"`
	ApprovalRequired bool          `json:"approvalRequired"`
	ApprovalMessage  string        `json:"approvalMessage"`
	// IDMatched is false (and Note says why) when restorePointId names
	// another restore point than the one returned; omitted otherwise.
	IDMatched *bool  `json:"restorePointIdMatched,omitempty"`
	Note      string `json:"note,omitempty"`
}

// fluxRestorePointDetails returns the repository's restore point. FluxGit
// keeps one per repository, and the reference accepts restorePointId
// without using it, so the record is returned whatever the id; an id that
// is not this record's is reported (restorePointIdMatched:false), never
// answered with a null restore point that hides a record the repository
// has.
func fluxRestorePointDetails(p *repo.Provider, ctx context.Context, call *sdk.Call) (any, error) {
	c, err := openRestore(p, ctx, call)
	if err != nil {
		return nil, err
	}
	rps, err := readRestorePoints(p, ctx, c)
	if err != nil {
		return nil, err
	}
	d := &restorePointDetailsData{RestoreCount: len(rps), ApprovalRequired: true, ApprovalMessage: restoreApprovalMessage}
	if len(rps) == 0 {
		return d, nil
	}
	d.RestorePoint = &rps[0]
	if id := c.args.RestorePointID; id != "" {
		for i := range rps {
			if rps[i].ID == id {
				d.RestorePoint = &rps[i]
				return d, nil
			}
		}
		no := false
		d.IDMatched = &no
		d.Note = "restorePointId " + strconv.Quote(id) + " is not one of this repository's restore points; this is the latest one (id " + rps[0].ID + "); flux.restorePoints lists them all"
	}
	return d, nil
}
