package mcp

import (
	"encoding/json"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/hashicorp/go-hclog"

	"github.com/fluxgit/fluxgit/host/catalog"
	"github.com/fluxgit/fluxgit/internal/wire"
)

const plainTool = `name: demo.plain
title: Demo Plain
description: A result plain tool; used by tests.
provider: shift-roster
tier: free
result: plain
annotations: {readOnlyHint: false}
inputSchema: {type: object, additionalProperties: false}
outputSchema:
  type: object
  description: the object
  additionalProperties: false
  properties:
    n: {type: integer, description: a number}
    error: {type: object, description: the failure}
`

// A result: plain tool's object is structuredContent as is (no envelope),
// its text is the only content item, errors are {"error": ...} with
// isError, and an object outside the outputSchema is refused.
func TestPlainResult(t *testing.T) {
	c, err := catalog.Load(fstest.MapFS{"tools/demo.plain.yaml": {Data: []byte(plainTool)}})
	if err != nil {
		t.Fatal(err)
	}
	tool, _ := c.Tool("demo.plain")
	if !tool.Plain() {
		t.Fatal("result: plain was not loaded")
	}
	s := &Server{log: hclog.NewNullLogger()}
	structured := generation{version: V20250618}
	legacy := generation{version: "2025-03-26"}
	tests := []struct {
		name    string
		g       generation
		res     *wire.Result
		wantErr bool
		isError bool
		text    string
		sc      string // structuredContent, "" for none
	}{
		{"success", structured, &wire.Result{Source: "x", Data: json.RawMessage(`{"n":1}`), Text: "# one"}, false, false, "# one", `{"n":1}`},
		{"success without text", structured, &wire.Result{Data: json.RawMessage(`{"n":2}`)}, false, false, `{"n":2}`, `{"n":2}`},
		{"legacy client", legacy, &wire.Result{Data: json.RawMessage(`{"n":1}`), Text: "# one"}, false, false, "# one", ""},
		{"tool error", structured, &wire.Result{Error: &wire.ToolError{Code: 10020, Message: "gone", Data: json.RawMessage(`{"reason":"r"}`)}, Text: "gone (reason r)"}, false, true, "gone (reason r)",
			`{"error":{"code":10020,"message":"gone","data":{"reason":"r"}}}`},
		{"outside the outputSchema", structured, &wire.Result{Data: json.RawMessage(`{"n":"one","tool":"demo.plain"}`), Text: "x"}, true, false, "", ""},
		{"not an object", structured, &wire.Result{Data: json.RawMessage(`[1]`), Text: "x"}, true, false, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := s.toolResult(tool, tt.g, "", tt.res)
			if tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), "outputSchema") {
					t.Fatalf("want an outputSchema refusal, got %v %s", err, raw)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			out := decodeToolResult(t, raw)
			if len(out.Content) != 1 || out.Content[0].Text != tt.text || out.IsError != tt.isError || string(out.StructuredContent) != tt.sc {
				t.Fatalf("result %s", raw)
			}
		})
	}
}

// toolResultView is what the tests read of a tools/call result.
type toolResultView struct {
	Content []struct {
		Type, Text string
	} `json:"content"`
	IsError           bool            `json:"isError"`
	StructuredContent json.RawMessage `json:"structuredContent"`
}

func decodeToolResult(t *testing.T, raw json.RawMessage) toolResultView {
	t.Helper()
	var out toolResultView
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
