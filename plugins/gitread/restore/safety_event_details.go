package restore

import (
	"context"

	"github.com/fluxgit/fluxgit/plugins/gitread/repo"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// eventDetailsData is the safety.eventDetails payload.
type eventDetailsData struct {
	Event            *timelineEvent `json:"event"`
	EventFound       bool           `json:"eventFound"`
	ReadOnly         bool           `json:"readOnly"`
	ApprovalRequired bool           `json:"approvalRequired"`
	ApprovalMessage  string         `json:"approvalMessage"`
}

func safetyEventDetails(p *repo.Provider, ctx context.Context, call *sdk.Call) (any, error) {
	c, err := openRestore(p, ctx, call)
	if err != nil {
		return nil, err
	}
	evs, _, err := readTimeline(p, ctx, c)
	if err != nil {
		return nil, err
	}
	d := &eventDetailsData{ReadOnly: true, ApprovalRequired: true, ApprovalMessage: restoreApprovalMessage}
	for i := range evs {
		if c.args.EventID == "" || evs[i].ID == c.args.EventID {
			d.Event, d.EventFound = &evs[i], true
			break
		}
	}
	return d, nil
}
