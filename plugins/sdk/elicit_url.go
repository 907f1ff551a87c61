package sdk

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/fluxgit/fluxgit/internal/wire"
)

// ElicitURLRequest asks the client to show the person a URL (MCP
// URL-mode elicitation, 2025-11-25; delivered through input_required in
// 2026-07-28). Nothing but the URL passes through the client: what the
// person does there happens out of band, and the answer says only whether
// they agreed to open it.
type ElicitURLRequest struct {
	// Message tells the person why they should open the URL.
	Message string
	// URL is the address to show; it must not carry a secret, since the
	// client (and its model) sees it.
	URL string
	// ElicitationID names this request (unique per provider); a later
	// notifications/elicitation/complete would name it too.
	ElicitationID string
	// Resume is an optional value ([A-Za-z0-9_-], at most 128 bytes) that
	// lets the call be resumed after the host forgot it: a 2026-07-28
	// client answers by re-sending the call, and when the host no longer
	// holds the original (it waited too long, or the server restarted) the
	// re-sent call reaches CallTool again with Meta.Resume set to this
	// value. It travels through the client, so it must carry no secret and
	// the provider must check it before it trusts it.
	Resume string
}

// elicitURLParams is the elicitation/create params of URL mode.
type elicitURLParams struct {
	Mode          string `json:"mode"`
	Message       string `json:"message"`
	URL           string `json:"url"`
	ElicitationID string `json:"elicitationId"`
}

// ElicitURL asks the client to show the person req.URL. It needs the
// client's URL-mode elicitation capability (Meta.Client.ElicitationURL):
// without it the result is an *Error of KindClientCapability. Accept
// means the person agreed to open the URL, not that they finished there.
// It blocks until the client answers, the host gives up, or ctx ends.
func (c *Call) ElicitURL(ctx context.Context, req *ElicitURLRequest) (*ElicitResult, error) {
	if c == nil || c.events == nil || !c.Meta.Client.ElicitationURL {
		return nil, MissingCapability("elicitation.url")
	}
	if req == nil || req.URL == "" || req.ElicitationID == "" || req.Message == "" {
		return nil, fmt.Errorf("sdk: a URL elicitation needs a message, a url and an elicitationId")
	}
	if !ValidResume(req.Resume) {
		return nil, fmt.Errorf("sdk: ElicitURLRequest.Resume must be at most %d of [A-Za-z0-9_-]", wire.MaxResume)
	}
	b, err := wire.Marshal(elicitURLParams{Mode: "url", Message: req.Message, URL: req.URL, ElicitationID: req.ElicitationID})
	if err != nil {
		return nil, fmt.Errorf("sdk: encode %s: %w", wire.MethodElicitation, err)
	}
	res, err := c.events.stream.RequestResumable(ctx, wire.MethodElicitation, b, req.Resume)
	if err != nil {
		return nil, clientFailure(wire.MethodElicitation, err)
	}
	var out ElicitResult
	if err := json.Unmarshal(res, &out); err != nil {
		return nil, fmt.Errorf("sdk: decode the client's %s answer: %w", wire.MethodElicitation, err)
	}
	return &out, nil
}

// ValidResume reports whether s may be an ElicitURLRequest.Resume (the
// empty string, meaning none, included).
func ValidResume(s string) bool {
	if len(s) > wire.MaxResume {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
