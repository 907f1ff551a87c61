package main

import (
	"context"

	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// The diagnostic tools of the server-stateless scenario (SEP-2575): each
// shows one rule of the 2026-07-28 stateless generation, which the host
// enforces, not the tool.

func init() {
	extraTools["test_missing_capability"] = missingCapability
	extraTools["test_streaming_elicitation"] = streamingElicitation
	extraTools["test_logging_tool"] = loggingTool
}

// missingCapability needs sampling: without the capability the SDK's
// refusal goes back as is, and the host answers -32021 naming sampling.
func missingCapability(ctx context.Context, c *sdk.Call) (*sdk.Result, error) {
	a, err := c.Sample(ctx, askCap)
	if err != nil {
		return nil, err
	}
	return text("The model answered: "+a.Content.Text, nil)
}

// streamingElicitation asks the user; a 2026-07-28 client gets the
// question as an input_required result, never as a request on the
// response stream.
func streamingElicitation(ctx context.Context, c *sdk.Call) (*sdk.Result, error) {
	a, err := c.Elicit(ctx, askOK)
	if err != nil {
		return nil, err
	}
	return text("Confirmed (action="+string(a.Action)+").", nil)
}

// loggingTool logs; the host sends the lines only at the level the
// request's _meta asks for, and none without one.
func loggingTool(_ context.Context, c *sdk.Call) (*sdk.Result, error) {
	for _, msg := range []string{"Logging tool started", "Logging tool working", "Logging tool done"} {
		c.Log(sdk.LevelInfo, source, msg)
	}
	return text("Logging tool executed", nil)
}
