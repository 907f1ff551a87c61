package sdk_test

import (
	"context"
	"encoding/json"

	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// greeter serves one tool and one prompt.
type greeter struct{}

func (greeter) CallTool(ctx context.Context, c *sdk.Call) (*sdk.Result, error) {
	var in struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(c.Arguments, &in); err != nil || in.Name == "" {
		return nil, sdk.InvalidArgument("arguments.name must be a non-empty string, for example {\"name\":\"Ada\"}")
	}
	c.Progress(1, 2, "greeting")
	c.Log(sdk.LevelInfo, "greeter", map[string]any{"name": in.Name})
	if in.Name == "?" {
		// Ask the user; without the client capability this is an error
		// the host reports for us.
		ans, err := c.Elicit(ctx, &sdk.ElicitRequest{
			Message:         "Whom should I greet?",
			RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
		})
		if err != nil {
			return nil, err
		}
		if ans.Action != sdk.ElicitAccept {
			return sdk.Fail("greeter", 1, "nobody to greet", nil), nil
		}
		in.Name, _ = ans.Content["name"].(string)
	}
	return sdk.OK("greeter", map[string]any{"greeting": "Hello, " + in.Name})
}

func (greeter) GetPrompt(_ context.Context, r *sdk.PromptRequest) (*sdk.PromptResult, error) {
	return &sdk.PromptResult{Messages: []sdk.PromptMessage{{Role: sdk.RoleUser, Text: "Greet " + r.Arguments["name"] + " warmly."}}}, nil
}

func (greeter) Describe() sdk.Description {
	return sdk.Description{Tools: []string{"greet.say"}, Prompts: []string{"greet"}}
}

// A provider is a main package that calls Serve; the host starts it.
func Example() {
	var _ interface {
		sdk.Provider
		sdk.PromptProvider
		sdk.Describer
	} = greeter{}
	if false { // Serve blocks for the life of the process.
		sdk.Serve(greeter{})
	}
}
