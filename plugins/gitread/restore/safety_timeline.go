package restore

import (
	"context"

	"github.com/fluxgit/fluxgit/plugins/gitread/repo"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// timelineData is the safety.timeline payload.
type timelineData struct {
	Events                []timelineEvent `json:"events"`
	EventCount            int             `json:"eventCount"`
	Truncated             bool            `json:"truncated"`
	ReadOnly              bool            `json:"readOnly"`
	ApprovalRequired      bool            `json:"approvalRequired"`
	ApprovalMessage       string          `json:"approvalMessage"`
	NetworkFetchPerformed bool            `json:"networkFetchPerformed"`
}

func safetyTimeline(p *repo.Provider, ctx context.Context, call *sdk.Call) (any, error) {
	c, err := openRestore(p, ctx, call)
	if err != nil {
		return nil, err
	}
	evs, truncated, err := readTimeline(p, ctx, c)
	if err != nil {
		return nil, err
	}
	return &timelineData{Events: evs, EventCount: len(evs), Truncated: truncated, ReadOnly: true,
		ApprovalRequired: true, ApprovalMessage: restoreApprovalMessage}, nil
}
