package sdk

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/fluxgit/fluxgit/internal/wire"
)

// media returns the content its tool names and renders prompts whose
// messages are content blocks.
type media struct{}

var pixel = []byte("\x89PNG\r\n\x1a\nfake")

func (media) CallTool(_ context.Context, c *Call) (*Result, error) {
	res, err := OK("m", map[string]any{"n": 1})
	if err != nil {
		return nil, err
	}
	switch c.Tool {
	case "all":
		link := ResourceLinkContent("x://big", "big")
		link.MimeType, link.Size = "video/mp4", 1<<30
		res.Content = []Content{TextContent("caption"), ImageContent(pixel, "image/png"), AudioContent([]byte("RIFF"), "audio/wav"),
			ResourceContent(Resource{URI: "x://r", MimeType: "application/json", Text: `{"a":1}`}),
			ResourceContent(Resource{URI: "x://b", MimeType: "image/png", Blob: pixel}), link}
	case "none":
	case "bad base64":
		res.Content = []Content{{Type: "image", Data: "not base64", MimeType: "image/png"}}
	case "no mime":
		res.Content = []Content{ImageContent(pixel, "")}
	case "too big":
		res.Content = []Content{ImageContent(make([]byte, MaxContentBytes), "image/png"), TextContent("x")}
	}
	return res, nil
}

func (media) GetPrompt(_ context.Context, r *PromptRequest) (*PromptResult, error) {
	switch r.Name {
	case "image":
		return &PromptResult{Messages: []PromptMessage{{Role: RoleUser, Content: ImageContent(pixel, "image/png")}, {Role: RoleUser, Text: "Describe it."}}}, nil
	case "both":
		return &PromptResult{Messages: []PromptMessage{{Role: RoleUser, Text: "x", Content: ImageContent(pixel, "image/png")}}}, nil
	case "bad audio":
		return &PromptResult{Messages: []PromptMessage{{Role: RoleUser, Text: "ok"}, {Role: RoleUser, Content: AudioContent(pixel, "image/png")}}}, nil
	}
	return nil, NotFound("Prompt not found", r.Name)
}

// Content blocks travel to the host in their MCP shapes, base64 encoded by
// the constructors; a result without them has none on the wire; invalid
// blocks fail the call with a message naming the item and the fix.
func TestResultContent(t *testing.T) {
	c := connect(t, media{})
	b64 := base64.StdEncoding.EncodeToString(pixel)
	tests := []struct {
		tool string
		want string // the wire content as JSON, or the error substring
		err  bool
	}{
		{"all", `[{"type":"text","text":"caption"},{"type":"image","data":"` + b64 + `","mimeType":"image/png"},` +
			`{"type":"audio","data":"UklGRg==","mimeType":"audio/wav"},` +
			`{"type":"resource","resource":{"uri":"x://r","mimeType":"application/json","text":"{\"a\":1}"}},` +
			`{"type":"resource","resource":{"uri":"x://b","mimeType":"image/png","blob":"` + b64 + `"}},` +
			`{"type":"resource_link","mimeType":"video/mp4","uri":"x://big","name":"big","size":1073741824}]`, false},
		{"none", `null`, false},
		{"bad base64", "result content[0] (image): data is not standard base64", true},
		{"no mime", "result content[0] (image): mimeType is required", true},
		{"too big", "more than 8388608 bytes (8 MiB) at item 1", true},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			r, err := c.Call(context.Background(), &wire.Call{Tool: tt.tool, Arguments: json.RawMessage(`{}`)}, nil)
			if tt.err {
				if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "provider result for "+tt.tool+" is invalid") {
					t.Fatalf("got %v, want an error containing %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, _ := wire.Marshal(r.Content)
			if string(got) != tt.want || string(r.Data) != `{"n":1}` {
				t.Fatalf("content %s data %s\nwant    %s", got, r.Data, tt.want)
			}
		})
	}
}

// A prompt message may be an image (or any content block), checked like a
// tool result's; setting it next to Text is refused.
func TestPromptContent(t *testing.T) {
	c := connect(t, media{})
	ctx := context.Background()
	pr, err := c.GetPrompt(ctx, &wire.PromptRequest{Name: "image"})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"image","data":"` + base64.StdEncoding.EncodeToString(pixel) + `","mimeType":"image/png"}`
	if len(pr.Messages) != 2 || string(pr.Messages[0].Content) != want || string(pr.Messages[1].Content) != `{"type":"text","text":"Describe it."}` {
		t.Fatalf("messages %+v", pr.Messages)
	}
	for name, msg := range map[string]string{
		"both":      "sets Content and also Text or Resource",
		"bad audio": "prompt bad audio message 1 content[0] (audio): mimeType \"image/png\" is not an audio/* type",
	} {
		if _, err := c.GetPrompt(ctx, &wire.PromptRequest{Name: name}); err == nil || !strings.Contains(err.Error(), msg) {
			t.Fatalf("%s: got %v, want %q", name, err, msg)
		}
	}
}

// Validate is what the SDK runs on each result; providers may call it in
// their own tests.
func TestResultValidate(t *testing.T) {
	for _, tc := range []struct {
		res *Result
		ok  bool
	}{
		{nil, true},
		{&Result{}, true},
		{&Result{Content: []Content{ImageContent(pixel, "image/png")}}, true},
		{&Result{Content: []Content{ResourceContent(Resource{URI: "x://r", Text: "t"})}}, false},
		{&Result{Content: []Content{ResourceLinkContent("x://r", "")}}, false},
		{&Result{Content: []Content{{Type: "html", Text: "<b>"}}}, false},
	} {
		if err := tc.res.Validate(); (err == nil) != tc.ok {
			t.Errorf("%+v: Validate() = %v", tc.res, err)
		}
	}
}
