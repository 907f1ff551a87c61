package gitread

import (
	"context"

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

func (p *Provider) safetyTimeline(ctx context.Context, call *sdk.Call) (any, error) {
	c, err := p.fxFluxOpen(ctx, call)
	if err != nil {
		return nil, err
	}
	evs, truncated, err := p.fxTimeline(ctx, c)
	if err != nil {
		return nil, err
	}
	return &timelineData{Events: evs, EventCount: len(evs), Truncated: truncated, ReadOnly: true,
		ApprovalRequired: true, ApprovalMessage: fxApprovalMessage}, nil
}
