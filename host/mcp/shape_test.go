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

// shapesTool has a lean outputSchema (data.n) and a referenceOutputSchema
// (data.count, and the envelope fields the reference always sends).
const shapesTool = `name: demo.shapes
title: Demo Shapes
description: A tool with two result shapes; used by tests.
provider: git-read
tier: free
annotations: {readOnlyHint: true}
inputSchema: {type: object, additionalProperties: false}
outputSchema:
  type: object
  description: lean envelope
  required: [tool, readOnly]
  properties:
    tool: {const: demo.shapes, description: tool name}
    readOnly: {const: true, description: always true}
    source: {type: string, description: where from}
    error: {type: object, description: the failure}
    data: {type: object, description: lean data, additionalProperties: false, required: [n], properties: {n: {type: integer, description: how many}}}
referenceOutputSchema:
  type: object
  description: reference envelope
  required: [tool, readOnly, tier]
  properties:
    tool: {const: demo.shapes, description: tool name}
    readOnly: {const: true, description: always true}
    tier: {const: free, description: the tier}
    source: {type: string, description: where from}
    repoPath: {type: string, description: the repository}
    error: {type: object, description: the failure}
    data: {type: object, description: reference data, additionalProperties: false, required: [count], properties: {count: {type: integer, description: how many}}}
`

func shapesServer(t *testing.T, reference bool) (*Server, *catalog.Tool) {
	t.Helper()
	c, err := catalog.Load(fstest.MapFS{"tools/demo.shapes.yaml": {Data: []byte(shapesTool)}})
	if err != nil {
		t.Fatal(err)
	}
	tool, _ := c.Tool("demo.shapes")
	return &Server{opts: Options{Catalog: c, ReferenceShape: reference}, log: hclog.NewNullLogger()}, tool
}

// The envelope by result shape: lean leaves out tier, repoPath, a
// local-git source and a null error.data; reference keeps today's
// envelope byte for byte.
func TestEnvelopeByShape(t *testing.T) {
	g := generation{version: V20251125}
	tests := []struct {
		name      string
		reference bool
		res       *wire.Result
		want      string
	}{
		{"lean success", false, &wire.Result{Source: "local-git", Data: json.RawMessage(`{"n":1}`)},
			`{"tool":"demo.shapes","readOnly":true,"data":{"n":1}}`},
		{"lean keeps another source", false, &wire.Result{Source: "fluxgit-app", Data: json.RawMessage(`{"n":1}`)},
			`{"tool":"demo.shapes","readOnly":true,"source":"fluxgit-app","data":{"n":1}}`},
		{"lean error without data", false, &wire.Result{Source: "local-git", Error: &wire.ToolError{Code: 10010, Message: "git failed"}},
			`{"tool":"demo.shapes","readOnly":true,"error":{"code":10010,"message":"git failed"}}`},
		{"lean error with data", false, &wire.Result{Source: "local-git", Error: &wire.ToolError{Code: 10010, Message: "git failed", Data: json.RawMessage(`{"stderr":"x"}`)}},
			`{"tool":"demo.shapes","readOnly":true,"error":{"code":10010,"message":"git failed","data":{"stderr":"x"}}}`},
		{"reference success", true, &wire.Result{Source: "local-git", Data: json.RawMessage(`{"count":1}`)},
			`{"tool":"demo.shapes","readOnly":true,"source":"local-git","tier":"free","repoPath":"/r","data":{"count":1}}`},
		{"reference error", true, &wire.Result{Source: "local-git", Error: &wire.ToolError{Code: 10010, Message: "git failed"}},
			`{"tool":"demo.shapes","readOnly":true,"source":"local-git","tier":"free","repoPath":"/r","error":{"code":10010,"message":"git failed","data":null}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, tool := shapesServer(t, tt.reference)
			raw, err := s.toolResult(tool, g, "/r", tt.res)
			if err != nil {
				t.Fatal(err)
			}
			out := decodeToolResult(t, raw)
			if string(out.StructuredContent) != tt.want || out.Content[0].Text != tt.want {
				t.Fatalf("got  %s\ntext %s\nwant %s", out.StructuredContent, out.Content[0].Text, tt.want)
			}
		})
	}
}

// Results are checked against the schema of the shape in effect: lean
// data passes only in lean mode, the reference's only in reference mode.
func TestResultValidatedAgainstShapeInEffect(t *testing.T) {
	g := generation{version: V20251125}
	for _, tt := range []struct {
		name      string
		reference bool
		data      string
		ok        bool
	}{
		{"lean data, lean", false, `{"n":1}`, true},
		{"reference data, lean", false, `{"count":1}`, false},
		{"reference data, reference", true, `{"count":1}`, true},
		{"lean data, reference", true, `{"n":1}`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, tool := shapesServer(t, tt.reference)
			_, err := s.toolResult(tool, g, "/r", &wire.Result{Source: "local-git", Data: json.RawMessage(tt.data)})
			if (err == nil) != tt.ok {
				t.Fatalf("err %v, want ok=%v", err, tt.ok)
			}
			if err != nil && !strings.Contains(err.Error(), "does not match its outputSchema") {
				t.Fatalf("err %v", err)
			}
		})
	}
}

// tools/list serves outputSchema in lean mode and referenceOutputSchema in
// reference mode.
func TestToolsListServesSchemaOfShape(t *testing.T) {
	for _, tt := range []struct {
		reference bool
		want      string
	}{{false, "lean envelope"}, {true, "reference envelope"}} {
		s, _ := shapesServer(t, tt.reference)
		raw, err := s.toolsList(generation{version: V20251125}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var list struct {
			Tools []struct {
				OutputSchema struct {
					Description string `json:"description"`
				} `json:"outputSchema"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(raw, &list); err != nil || len(list.Tools) != 1 {
			t.Fatalf("tools/list: %v %s", err, raw)
		}
		if got := list.Tools[0].OutputSchema.Description; got != tt.want {
			t.Fatalf("reference=%v: served %q, want %q", tt.reference, got, tt.want)
		}
	}
}

// An argument refusal carries tier only in the reference shape.
func TestArgumentRefusalByShape(t *testing.T) {
	for _, reference := range []bool{false, true} {
		s, tool := shapesServer(t, reference)
		raw, _, _ := s.argumentRefused(tool, generation{version: V20251125}, msgInvalidParams, "arguments.x is not allowed")
		out := decodeToolResult(t, raw)
		if got := strings.Contains(out.Content[0].Text, `"tier":"free"`); got != reference {
			t.Fatalf("reference=%v: %s", reference, out.Content[0].Text)
		}
		if out.StructuredContent == nil {
			t.Fatalf("reference=%v: refusal without structuredContent: %s", reference, raw)
		}
	}
}
