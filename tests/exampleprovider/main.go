// Command exampleprovider is a third-party provider that uses every
// capability the SDK offers: progress, log lines at each level, a prompt it
// renders itself with argument completion, a resource template with
// completion, a sampling and an elicitation request, an image (and a
// resource link) next to text in a tool result, and a long call that ends
// when cancelled. The tests build it and register it by configuration,
// exactly as a provider author would.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fluxgit/fluxgit/plugins/sdk"
)

const source = "example"

type example struct{}

// names are what the completions offer.
var names = []string{"ada", "alan", "grace", "linus", "margaret"}

func (example) Describe() sdk.Description {
	return sdk.Description{
		Tools:     []string{"example.ask", "example.count", "example.logs", "example.picture", "example.wait"},
		Resources: []string{"example://notes/{name}"},
		Prompts:   []string{"example_greet"},
	}
}

func (example) CallTool(ctx context.Context, c *sdk.Call) (*sdk.Result, error) {
	switch c.Tool {
	case "example.count":
		var in struct {
			Steps   int  `json:"steps"`
			DelayMs int  `json:"delayMs"`
			Stamp   bool `json:"stamp"`
		}
		if err := json.Unmarshal(c.Arguments, &in); err != nil {
			return nil, fmt.Errorf("decode arguments: %w", err)
		}
		for i := 0; i <= in.Steps; i++ {
			msg := fmt.Sprintf("step %d of %d", i, in.Steps)
			if in.Stamp {
				// The send time, for the latency benchmark.
				msg = strconv.FormatInt(time.Now().UnixNano(), 10)
			}
			c.Progress(float64(i), float64(in.Steps), msg)
			if in.DelayMs > 0 && i < in.Steps {
				select {
				case <-time.After(time.Duration(in.DelayMs) * time.Millisecond):
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
		}
		return sdk.OK(source, map[string]any{"steps": in.Steps})
	case "example.logs":
		levels := []sdk.Level{sdk.LevelDebug, sdk.LevelInfo, sdk.LevelNotice, sdk.LevelWarning,
			sdk.LevelError, sdk.LevelCritical, sdk.LevelAlert, sdk.LevelEmergency}
		for i, l := range levels {
			c.Log(l, "example", map[string]any{"n": i, "level": string(l)})
		}
		return sdk.OK(source, map[string]any{"sent": len(levels)})
	case "example.ask":
		return ask(ctx, c)
	case "example.picture":
		return picture(c)
	case "example.wait":
		var in struct {
			Marker string `json:"marker"`
		}
		if err := json.Unmarshal(c.Arguments, &in); err != nil {
			return nil, fmt.Errorf("decode arguments: %w", err)
		}
		_ = os.WriteFile(in.Marker+".started", nil, 0o644)
		select {
		case <-ctx.Done():
			_ = os.WriteFile(in.Marker, []byte("cancelled"), 0o644)
			return nil, ctx.Err()
		case <-time.After(time.Minute):
			_ = os.WriteFile(in.Marker, []byte("finished"), 0o644)
			return sdk.OK(source, map[string]any{"waited": true})
		}
	}
	return nil, fmt.Errorf("unknown tool %s", c.Tool)
}

// ask asks the user for a name, then the client's model for a greeting.
func ask(ctx context.Context, c *sdk.Call) (*sdk.Result, error) {
	var in struct {
		Topic string `json:"topic"`
	}
	if err := json.Unmarshal(c.Arguments, &in); err != nil {
		return nil, fmt.Errorf("decode arguments: %w", err)
	}
	answer, err := c.Elicit(ctx, &sdk.ElicitRequest{
		Message:         "Who should be greeted about " + in.Topic + "?",
		RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"A first name"}},"required":["name"]}`),
	})
	if err != nil {
		return nil, err
	}
	if answer.Action != sdk.ElicitAccept {
		return sdk.OK(source, map[string]any{"action": string(answer.Action)})
	}
	name, _ := answer.Content["name"].(string)
	reply, err := c.Sample(ctx, &sdk.SamplingRequest{
		Messages:  []sdk.SamplingMessage{{Role: sdk.RoleUser, Content: sdk.TextContent("Write a one-line greeting for " + name + " about " + in.Topic + ".")}},
		MaxTokens: 64,
	})
	if err != nil {
		return nil, err
	}
	return sdk.OK(source, map[string]any{"action": "accept", "name": name, "greeting": reply.Content.Text, "model": reply.Model})
}

// colors are the squares example.picture draws.
var colors = map[string]color.RGBA{"red": {R: 255, A: 255}, "green": {G: 255, A: 255}, "blue": {B: 255, A: 255}}

// picture returns a PNG square as an image content item, described in
// text, and on request a resource link to a note.
func picture(c *sdk.Call) (*sdk.Result, error) {
	in := struct {
		Color string `json:"color"`
		Size  int    `json:"size"`
		Link  bool   `json:"link"`
	}{Size: 4}
	if err := json.Unmarshal(c.Arguments, &in); err != nil {
		return nil, fmt.Errorf("decode arguments: %w", err)
	}
	fill, ok := colors[in.Color]
	if !ok {
		return nil, &sdk.ArgumentError{Message: "unknown colour", Details: "color must be red, green or blue"}
	}
	img := image.NewRGBA(image.Rect(0, 0, in.Size, in.Size))
	for y := 0; y < in.Size; y++ {
		for x := 0; x < in.Size; x++ {
			img.Set(x, y, fill)
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("encode png: %w", err)
	}
	res, err := sdk.OK(source, map[string]any{"mimeType": "image/png", "width": in.Size, "height": in.Size, "bytes": buf.Len()})
	if err != nil {
		return nil, err
	}
	res.Text = fmt.Sprintf("A %dx%d %s square.", in.Size, in.Size, in.Color)
	res.Content = []sdk.Content{sdk.ImageContent(buf.Bytes(), "image/png")}
	if in.Link {
		link := sdk.ResourceLinkContent("example://notes/ada", "ada")
		link.MimeType, link.Description = "text/plain", "Notes about ada."
		res.Content = append(res.Content, link)
	}
	return res, nil
}

func (example) ReadResource(_ context.Context, uri string, _ sdk.Meta) (*sdk.Resource, error) {
	name, ok := strings.CutPrefix(uri, "example://notes/")
	if !ok || !known(name) {
		return nil, sdk.ErrResourceNotFound
	}
	return &sdk.Resource{URI: uri, MimeType: "text/plain", Text: "Notes about " + name + "."}, nil
}

func (example) GetPrompt(_ context.Context, req *sdk.PromptRequest) (*sdk.PromptResult, error) {
	if req.Name != "example_greet" {
		return nil, sdk.NotFound("unknown prompt", req.Name)
	}
	who := req.Arguments["who"]
	msgs := []sdk.PromptMessage{{Role: sdk.RoleUser, Text: "Greet " + who + " warmly, in one line."}}
	if known(who) {
		msgs = append(msgs, sdk.PromptMessage{Role: sdk.RoleUser, Resource: &sdk.Resource{
			URI: "example://notes/" + who, MimeType: "text/plain", Text: "Notes about " + who + "."}})
	}
	return &sdk.PromptResult{Description: "A greeting for " + who, Messages: msgs}, nil
}

func (example) Complete(_ context.Context, req *sdk.CompleteRequest) (*sdk.Completion, error) {
	if (req.Prompt == "example_greet" && req.Argument == "who") || (req.Template == "example://notes/{name}" && req.Argument == "name") {
		var out []string
		for _, n := range names {
			if strings.HasPrefix(n, strings.ToLower(req.Value)) {
				out = append(out, n)
			}
		}
		sort.Strings(out)
		return &sdk.Completion{Values: out, Total: len(out)}, nil
	}
	return nil, sdk.NotFound("nothing to complete", req.Prompt+req.Template+" "+req.Argument)
}

func known(name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

func main() { sdk.Serve(example{}) }
