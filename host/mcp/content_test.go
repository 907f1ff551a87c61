package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/hashicorp/go-hclog"

	"github.com/fluxgit/fluxgit/host/catalog"
	"github.com/fluxgit/fluxgit/internal/wire"
)

var (
	imageBlock = wire.Content{Type: wire.ContentImage, Data: "iVBORw==", MimeType: "image/png"}
	audioBlock = wire.Content{Type: wire.ContentAudio, Data: "UklGRg==", MimeType: "audio/wav"}
	linkBlock  = wire.Content{Type: wire.ContentResourceLink, URI: "x://notes/a", Name: "a", MimeType: "text/plain", Description: "Notes.", Size: 12}
	textRes    = wire.Content{Type: wire.ContentResource, Resource: &wire.Resource{URI: "x://r", MimeType: "text/plain"}}
	blobRes    = wire.Content{Type: wire.ContentResource, Resource: &wire.Resource{URI: "x://b", MimeType: "image/png", Blob: []byte{1, 2}}}
)

// Each block type renders as its MCP shape in the versions that have it;
// audio before 2025-03-26 and resource_link before 2025-06-18 become a
// text note, so a client never receives a type its version lacks.
func TestContentBlockPerVersion(t *testing.T) {
	modern := generation{modern: true, version: "2026-07-28"}
	v1105, v0326, v0618 := generation{version: V20241105}, generation{version: V20250326}, generation{version: V20250618}
	tests := []struct {
		name  string
		g     generation
		block wire.Content
		want  string // exact JSON, or "note:" and a substring of the text note
	}{
		{"image, oldest", v1105, imageBlock, `{"data":"iVBORw==","mimeType":"image/png","type":"image"}`},
		{"image, modern", modern, imageBlock, `{"data":"iVBORw==","mimeType":"image/png","type":"image"}`},
		{"audio before 2025-03-26", v1105, audioBlock, "note:audio/wav audio of about 6 bytes left out: MCP 2024-11-05"},
		{"audio from 2025-03-26", v0326, audioBlock, `{"data":"UklGRg==","mimeType":"audio/wav","type":"audio"}`},
		{"audio, modern", modern, audioBlock, `{"data":"UklGRg==","mimeType":"audio/wav","type":"audio"}`},
		{"empty text resource keeps text", v1105, textRes, `{"resource":{"mimeType":"text/plain","text":"","uri":"x://r"},"type":"resource"}`},
		{"blob resource", modern, blobRes, `{"resource":{"blob":"AQI=","mimeType":"image/png","uri":"x://b"},"type":"resource"}`},
		{"link before 2025-06-18", v0326, linkBlock, "note:Resource link: a <x://notes/a> (text/plain, 12 bytes): Notes. [Sent as text: MCP 2025-03-26"},
		{"link from 2025-06-18", v0618, linkBlock, `{"description":"Notes.","mimeType":"text/plain","name":"a","size":12,"type":"resource_link","uri":"x://notes/a"}`},
		{"link, modern", modern, wire.Content{Type: wire.ContentResourceLink, URI: "x://y", Name: "y"}, `{"name":"y","type":"resource_link","uri":"x://y"}`},
		{"text", v1105, wire.Content{Type: wire.ContentText, Text: "hi"}, `{"text":"hi","type":"text"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(contentBlock(tt.g, tt.block))
			if err != nil {
				t.Fatal(err)
			}
			if note, ok := strings.CutPrefix(tt.want, "note:"); ok {
				var got struct{ Type, Text string }
				if json.Unmarshal(b, &got) != nil || got.Type != "text" || !strings.Contains(got.Text, note) {
					t.Fatalf("got %s, want a text note containing %q", b, note)
				}
				return
			}
			if string(b) != tt.want {
				t.Fatalf("got  %s\nwant %s", b, tt.want)
			}
		})
	}
}

const envelopeTool = `name: demo.env
title: Demo Envelope
description: An envelope tool; used by tests.
provider: shift-roster
tier: free
annotations: {readOnlyHint: true}
inputSchema: {type: object, additionalProperties: false}
outputSchema:
  type: object
  description: the envelope
  properties:
    data: {type: object, description: the data, properties: {n: {type: integer, description: a number}}}
`

// A provider's content blocks follow the host's own text items in both
// result shapes, leave structuredContent as it was, and a malformed block
// fails the call as a broken provider instead of reaching the client.
func TestToolResultContent(t *testing.T) {
	c, err := catalog.Load(fstest.MapFS{
		"tools/demo.plain.yaml": {Data: []byte(plainTool)},
		"tools/demo.env.yaml":   {Data: []byte(envelopeTool)},
	})
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := c.Tool("demo.plain")
	env, _ := c.Tool("demo.env")
	s := &Server{log: hclog.NewNullLogger()}
	blocks := []wire.Content{imageBlock, audioBlock, linkBlock}
	tests := []struct {
		name  string
		tool  *catalog.Tool
		g     generation
		res   *wire.Result
		types string // content types in order
		sc    string // structuredContent
		err   string
	}{
		{"envelope, 2025-11-25", env, generation{version: V20251125}, &wire.Result{Data: json.RawMessage(`{"n":1}`), Text: "one", Content: blocks},
			"text text image audio resource_link", `{"tool":"demo.env","readOnly":true,"data":{"n":1}}`, ""},
		{"envelope without content", env, generation{version: V20251125}, &wire.Result{Data: json.RawMessage(`{"n":1}`)},
			"text", `{"tool":"demo.env","readOnly":true,"data":{"n":1}}`, ""},
		{"envelope, 2024-11-05", env, generation{version: V20241105}, &wire.Result{Data: json.RawMessage(`{"n":1}`), Content: blocks},
			"text image text text", "", ""},
		{"plain, modern", plain, generation{modern: true, version: "2026-07-28"}, &wire.Result{Data: json.RawMessage(`{"n":2}`), Text: "two", Content: blocks},
			"text image audio resource_link", `{"n":2}`, ""},
		{"plain, 2025-03-26", plain, generation{version: V20250326}, &wire.Result{Data: json.RawMessage(`{"n":2}`), Content: blocks},
			"text image audio text", "", ""},
		{"tool error keeps its content", plain, generation{version: V20251125}, &wire.Result{Error: &wire.ToolError{Code: 1, Message: "no"}, Text: "no", Content: []wire.Content{imageBlock}},
			"text image", `{"error":{"code":1,"message":"no","data":null}}`, ""},
		{"bad base64", env, generation{version: V20251125}, &wire.Result{Data: json.RawMessage(`{}`), Content: []wire.Content{{Type: "image", Data: "%%", MimeType: "image/png"}}},
			"", "", "result content[0] (image): data is not standard base64"},
		{"unknown type", plain, generation{version: V20251125}, &wire.Result{Data: json.RawMessage(`{}`), Content: []wire.Content{{Type: "video"}}},
			"", "", "unknown type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := s.toolResult(tt.tool, tt.g, "", tt.res)
			if tt.err != "" {
				re, ok := err.(*rpcError)
				if !ok || re.Code != codeInternal {
					t.Fatalf("want an internal error, got %v %s", err, raw)
				}
				if d, _ := json.Marshal(re.Data); !strings.Contains(string(d), tt.err) {
					t.Fatalf("error data %s does not say %q", d, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			out := decodeToolResult(t, raw)
			var types []string
			for _, c := range out.Content {
				types = append(types, c.Type)
			}
			if got := strings.Join(types, " "); got != tt.types || string(out.StructuredContent) != tt.sc {
				t.Fatalf("content types %q structuredContent %s; want %q %s\n%s", got, out.StructuredContent, tt.types, tt.sc, raw)
			}
		})
	}
}

// promptDispatcher renders every prompt as the messages it holds.
type promptDispatcher struct {
	fixedDispatcher
	msgs []wire.PromptMessage
}

func (d promptDispatcher) GetPrompt(context.Context, string, *wire.PromptRequest) (*wire.PromptResult, error) {
	return &wire.PromptResult{Messages: d.msgs}, nil
}

// A provider-rendered prompt's image passes in every version; audio and
// resource links become text notes where the version lacks them; text and
// resource messages pass unchanged; a malformed block is refused.
func TestPromptContentPerVersion(t *testing.T) {
	c, err := catalog.Load(fstest.MapFS{"prompts/demo_media.yaml": {Data: []byte(
		"name: demo_media\ntitle: Demo Media\ndescription: A provider-rendered prompt; used by tests.\nprovider: shift-roster\narguments: []\n")}})
	if err != nil {
		t.Fatal(err)
	}
	msg := func(b any) wire.PromptMessage {
		raw, _ := json.Marshal(b)
		return wire.PromptMessage{Role: "user", Content: raw}
	}
	good := []wire.PromptMessage{msg(imageBlock), msg(audioBlock), msg(linkBlock),
		msg(map[string]any{"type": "text", "text": "Look."}),
		msg(map[string]any{"type": "resource", "resource": map[string]any{"uri": "x://r", "text": "old-style, no mimeType"}})}
	tests := []struct {
		version string
		msgs    []wire.PromptMessage
		types   string
		err     string
	}{
		{V20241105, good, "image text text text resource", ""},
		{V20250326, good, "image audio text text resource", ""},
		{V20251125, good, "image audio resource_link text resource", ""},
		{V20251125, []wire.PromptMessage{msg(map[string]any{"type": "image", "data": "AA==", "mimeType": "text/plain"})}, "", "not an image/* type"},
		{V20251125, []wire.PromptMessage{msg(map[string]any{"type": "video"})}, "", "unknown type"},
	}
	for _, tt := range tests {
		t.Run(tt.version+tt.err, func(t *testing.T) {
			s := New(Options{Catalog: c, Providers: promptDispatcher{msgs: tt.msgs}, Name: "fluxgit", Version: "test", Recorder: &memRecorder{}}).NewSession()
			initializeAs(t, s, tt.version, nil)
			raw, err := send(t, s, "prompts/get", map[string]any{"name": "demo_media"})
			if tt.err != "" {
				re, ok := err.(*rpcError)
				if !ok {
					t.Fatalf("got %v %s, want a refusal saying %q", err, raw, tt.err)
				}
				if d, _ := json.Marshal(re.Data); re.Code != codeInternal || !strings.Contains(string(d), tt.err) {
					t.Fatalf("refusal %d %s does not say %q", re.Code, d, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var out struct {
				Messages []struct {
					Content struct{ Type string } `json:"content"`
				} `json:"messages"`
			}
			if err := json.Unmarshal(raw, &out); err != nil {
				t.Fatal(err)
			}
			var types []string
			for _, m := range out.Messages {
				types = append(types, m.Content.Type)
			}
			if got := strings.Join(types, " "); got != tt.types {
				t.Fatalf("types %q, want %q\n%s", got, tt.types, raw)
			}
		})
	}
}
