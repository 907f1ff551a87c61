package sdk_test

import (
	"context"
	"encoding/json"
	"fmt"

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

// A tool result with an image next to its data and text. The host sends
// the envelope, then the text, then the image; structuredContent stays
// the envelope.
func ExampleImageContent() {
	png := []byte("\x89PNG\r\n\x1a\n") // the encoded image, as a provider rendered it
	res, err := sdk.OK("example", map[string]any{"width": 1, "height": 1})
	if err != nil {
		panic(err)
	}
	res.Text = "A 1x1 chart."
	res.Content = []sdk.Content{sdk.ImageContent(png, "image/png")}
	fmt.Println(res.Validate(), res.Content[0].Type, res.Content[0].MimeType, res.Content[0].Data)
	// Output: <nil> image image/png iVBORw0KGgo=
}
