// Command descprovider is a provider the host/providers tests build: it
// declares what it serves (Describer) and uses call events, so the tests
// can drive the Describe check, event routing and retry rules through a
// real process.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/fluxgit/fluxgit/plugins/sdk"
)

type provider struct{}

func (provider) Describe() sdk.Description {
	return sdk.Description{Tools: []string{"d.ask", "d.crash"}, Resources: []string{"d://r"}}
}

func (provider) ReadResource(_ context.Context, uri string, _ sdk.Meta) (*sdk.Resource, error) {
	if uri != "d://r" {
		return nil, sdk.ErrResourceNotFound
	}
	return &sdk.Resource{URI: uri, Text: "r"}, nil
}

func (provider) CallTool(ctx context.Context, c *sdk.Call) (*sdk.Result, error) {
	var in struct {
		Progress bool   `json:"progress"`
		Marker   string `json:"marker"`
	}
	if err := json.Unmarshal(c.Arguments, &in); err != nil {
		return nil, fmt.Errorf("decode arguments: %w", err)
	}
	switch c.Tool {
	case "d.ask":
		c.Progress(1, 2, "asking")
		ans, err := c.Elicit(ctx, &sdk.ElicitRequest{Message: "name?", RequestedSchema: json.RawMessage(`{"type":"object"}`)})
		if err != nil {
			return nil, err
		}
		return sdk.OK("d", map[string]any{"action": ans.Action, "content": ans.Content, "pid": os.Getpid()})
	case "d.crash":
		// Each attempt leaves a line, so the test can count replays.
		f, err := os.OpenFile(in.Marker, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return nil, err
		}
		fmt.Fprintln(f, os.Getpid())
		f.Close()
		if in.Progress {
			// The test kills this process once it has seen the event.
			c.Progress(1, 0, "kill me")
			<-ctx.Done()
			return nil, ctx.Err()
		}
		os.Exit(3)
	}
	return nil, sdk.InvalidArgument("unknown tool " + c.Tool)
}

func main() { sdk.Serve(provider{}) }
