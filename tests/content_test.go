package tests

import (
	"bytes"
	"encoding/json"
	"image/png"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A provider's image and resource-link content items reach the official
// client through the real binary in every generation: the envelope text
// and the provider's text first, then the PNG as an image block, then the
// link, which a client on 2024-11-05 (no resource_link blocks) receives
// as a text note naming the URI.
func TestExampleProviderImageContent(t *testing.T) {
	for _, tc := range []struct {
		version    string
		link       bool // resource_link blocks exist in this version
		structured bool
	}{
		{"2024-11-05", false, false},
		{"2025-11-25", true, true},
		{"2026-07-28", true, true},
	} {
		t.Run(tc.version, func(t *testing.T) {
			ctx, cs, _ := exampleSession(t, tc.version, false)
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "example.picture",
				Arguments: map[string]any{"color": "red", "size": 2, "link": true}})
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError || len(res.Content) != 4 {
				t.Fatalf("want 4 content items and no error, got %d: %+v", len(res.Content), res.Content)
			}
			env, ok := res.Content[0].(*mcp.TextContent)
			if !ok || !strings.Contains(env.Text, `"tool":"example.picture"`) {
				t.Fatalf("content[0] is not the envelope: %#v", res.Content[0])
			}
			if desc, ok := res.Content[1].(*mcp.TextContent); !ok || desc.Text != "A 2x2 red square." {
				t.Fatalf("content[1] is not the provider's text: %#v", res.Content[1])
			}
			img, ok := res.Content[2].(*mcp.ImageContent)
			if !ok || img.MIMEType != "image/png" {
				t.Fatalf("content[2] is not a PNG image: %#v", res.Content[2])
			}
			decoded, err := png.Decode(bytes.NewReader(img.Data))
			if err != nil {
				t.Fatalf("image data is not a PNG: %v", err)
			}
			if b := decoded.Bounds(); b.Dx() != 2 || b.Dy() != 2 {
				t.Fatalf("image is %v, want 2x2", b)
			}
			if r, g, b, a := decoded.At(1, 1).RGBA(); r != 0xffff || g != 0 || b != 0 || a != 0xffff {
				t.Fatalf("pixel is %v, want red", decoded.At(1, 1))
			}
			switch link := res.Content[3].(type) {
			case *mcp.ResourceLink:
				if !tc.link || link.URI != "example://notes/ada" || link.Name != "ada" || link.MIMEType != "text/plain" {
					t.Fatalf("resource link on %s: %#v", tc.version, link)
				}
			case *mcp.TextContent:
				if tc.link || !strings.Contains(link.Text, "<example://notes/ada>") || !strings.Contains(link.Text, "no resource_link content") {
					t.Fatalf("link note on %s: %q", tc.version, link.Text)
				}
			default:
				t.Fatalf("content[3]: %#v", link)
			}
			if !tc.structured {
				if res.StructuredContent != nil {
					t.Fatalf("structuredContent on %s: %v", tc.version, res.StructuredContent)
				}
				return
			}
			// structuredContent is the envelope, as for any tool; it
			// describes the image the content item carries.
			d := exampleData(t, res)
			if d["bytes"] != float64(len(img.Data)) || d["width"] != float64(2) || d["mimeType"] != "image/png" {
				t.Fatalf("data %v does not describe the %d-byte image", d, len(img.Data))
			}
			raw, _ := json.Marshal(res.StructuredContent)
			if !bytes.Equal(normJSON(t, env.Text), normJSON(t, string(raw))) {
				t.Fatalf("envelope text %s differs from structuredContent %s", env.Text, raw)
			}
		})
	}
}

// normJSON re-encodes a JSON text with sorted keys, for comparison.
func normJSON(t *testing.T, s string) []byte {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v)
	return b
}
