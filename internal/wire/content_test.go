package wire

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
)

// CheckContent accepts the five MCP block types well formed, counts their
// bytes, and refuses each malformed shape with a message saying what to
// fix.
func TestCheckContent(t *testing.T) {
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG fake"))
	big := base64.StdEncoding.EncodeToString(make([]byte, MaxContentBytes/2+1))
	tests := []struct {
		name  string
		items []Content
		bytes int
		err   string // substring; "" for none
	}{
		{"none", nil, 0, ""},
		{"text", []Content{{Type: ContentText, Text: "hi"}}, 2, ""},
		{"image", []Content{{Type: ContentImage, Data: png, MimeType: "image/png"}}, 9, ""},
		{"audio", []Content{{Type: ContentAudio, Data: png, MimeType: "audio/wav"}}, 9, ""},
		{"text resource", []Content{{Type: ContentResource, Resource: &Resource{URI: "x://a", MimeType: "text/plain", Text: "abc"}}}, 3, ""},
		{"empty text resource", []Content{{Type: ContentResource, Resource: &Resource{URI: "x://a", MimeType: "text/plain"}}}, 0, ""},
		{"blob resource", []Content{{Type: ContentResource, Resource: &Resource{URI: "x://a", MimeType: "image/png", Blob: []byte{1, 2}}}}, 2, ""},
		{"link", []Content{{Type: ContentResourceLink, URI: "x://a", Name: "a", Size: 10}}, 0, ""},
		{"no type", []Content{{Text: "x"}}, 0, "type is missing"},
		{"unknown type", []Content{{Type: "video"}}, 0, "unknown type"},
		{"empty text", []Content{{Type: ContentText}}, 0, "non-empty text"},
		{"image without mimeType", []Content{{Type: ContentImage, Data: png}}, 0, "mimeType is required"},
		{"image with an audio type", []Content{{Type: ContentImage, Data: png, MimeType: "audio/wav"}}, 0, "not an image/* type"},
		{"audio without data", []Content{{Type: ContentAudio, MimeType: "audio/wav"}}, 0, "data is empty"},
		{"data not base64", []Content{{Type: ContentImage, Data: "not base64!", MimeType: "image/png"}}, 0, "not standard base64"},
		{"url-safe base64", []Content{{Type: ContentImage, Data: "-_-_", MimeType: "image/png"}}, 0, "not standard base64"},
		{"resource missing", []Content{{Type: ContentResource}}, 0, "resource is missing"},
		{"resource without uri", []Content{{Type: ContentResource, Resource: &Resource{MimeType: "text/plain"}}}, 0, "resource.uri is required"},
		{"resource without mimeType", []Content{{Type: ContentResource, Resource: &Resource{URI: "x://a", Text: "t"}}}, 0, "resource.mimeType is required"},
		{"resource with text and blob", []Content{{Type: ContentResource, Resource: &Resource{URI: "x://a", MimeType: "text/plain", Text: "t", Blob: []byte{1}}}}, 0, "set one"},
		{"link without name", []Content{{Type: ContentResourceLink, URI: "x://a"}}, 0, "uri and name"},
		{"negative link size", []Content{{Type: ContentResourceLink, URI: "x://a", Name: "a", Size: -1}}, 0, "negative"},
		{"over the bound together", []Content{{Type: ContentImage, Data: big, MimeType: "image/png"}, {Type: ContentAudio, Data: big, MimeType: "audio/wav"}}, 0, "more than 8388608 bytes (8 MiB) at item 1"},
		{"one item over the bound", []Content{{Type: ContentImage, Data: base64.StdEncoding.EncodeToString(make([]byte, MaxContentBytes+3)), MimeType: "image/png"}}, 0, "exceeds"},
		{"names the item", []Content{{Type: ContentText, Text: "ok"}, {Type: ContentImage, MimeType: "image/png"}}, 0, "result content[1] (image)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := CheckContent("result content", tt.items)
			if tt.err == "" {
				if err != nil || n != tt.bytes {
					t.Fatalf("got %d, %v; want %d bytes", n, err, tt.bytes)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("got %v, want an error containing %q", err, tt.err)
			}
		})
	}
}

// A result from a provider that predates content blocks decodes with no
// content, and one with blocks keeps the MCP shapes on the wire.
func TestResultContentOnTheWire(t *testing.T) {
	var old Result
	if err := json.Unmarshal([]byte(`{"source":"s","data":{"n":1},"text":"t"}`), &old); err != nil || old.Content != nil {
		t.Fatalf("old result: %+v %v", old, err)
	}
	b, err := Marshal(Result{Data: json.RawMessage(`{}`), Content: []Content{
		{Type: ContentImage, Data: "AA==", MimeType: "image/png"},
		{Type: ContentResource, Resource: &Resource{URI: "x://a", MimeType: "image/png", Blob: []byte{0}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"data":{},"content":[{"type":"image","data":"AA==","mimeType":"image/png"},{"type":"resource","resource":{"uri":"x://a","mimeType":"image/png","blob":"AA=="}}]}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
}
