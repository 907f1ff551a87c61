package catalog

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/fluxgit/fluxgit/spec"
)

// twoShapeTool has a lean outputSchema (data.n, an integer) and a
// referenceOutputSchema in the reference's shape (data.count plus the
// envelope fields the reference always sends), with an example of each.
const twoShapeTool = `name: demo.shapes
title: Demo Shapes
description: A tool whose lean data differs from the reference's; used by tests.
provider: git-read
tier: free
toolsets: [git]
annotations: {readOnlyHint: true}
inputSchema:
  type: object
  additionalProperties: false
  properties: {}
outputSchema:
  type: object
  description: lean envelope
  required: [tool, readOnly]
  properties:
    tool: {const: demo.shapes, description: tool name}
    readOnly: {const: true, description: always true}
    source: {type: string, description: where from}
    tier: {const: free, description: the tier}
    repoPath: {type: string, description: the repository}
    data:
      type: object
      description: lean data
      additionalProperties: false
      required: [n]
      properties:
        n: {type: integer, description: how many}
referenceOutputSchema:
  type: object
  description: reference envelope
  required: [tool, readOnly, tier, source, repoPath, data]
  properties:
    tool: {const: demo.shapes, description: tool name}
    readOnly: {const: true, description: always true}
    source: {const: local-git, description: where from}
    tier: {const: free, description: the tier}
    repoPath: {type: string, description: the repository}
    data:
      type: object
      description: reference data
      additionalProperties: false
      required: [count]
      properties:
        count: {type: integer, description: how many}
examples:
  - name: lean
    arguments: {}
    payload: {tool: demo.shapes, readOnly: true, data: {n: 2}}
  - name: reference
    shape: reference
    arguments: {}
    payload: {tool: demo.shapes, readOnly: true, tier: free, source: local-git, repoPath: /r, data: {count: 2}}
`

func TestTwoShapeToolLintsClean(t *testing.T) {
	fsys := fstest.MapFS{"tools/demo.shapes.yaml": {Data: []byte(twoShapeTool)}}
	if got := Lint(fsys, knownProviders); len(got) > 0 {
		t.Fatalf("findings:\n%s", joinFindings(got))
	}
}

// Each example is checked against the schema of its shape, and a finding
// names the schema that refused it.
func TestTwoShapeExamplesPickTheirSchema(t *testing.T) {
	cases := []struct {
		name, old, new, msg string
	}{
		{"lean example in the reference's data", "payload: {tool: demo.shapes, readOnly: true, data: {n: 2}}",
			"payload: {tool: demo.shapes, readOnly: true, data: {count: 2}}", "examples[0] (lean): payload.data"},
		{"reference example in the lean data", "repoPath: /r, data: {count: 2}}", "repoPath: /r, data: {n: 2}}",
			"examples[1] (reference): referenceOutputSchema: payload.data"},
		{"reference example without the reference's envelope", "payload: {tool: demo.shapes, readOnly: true, tier: free, source: local-git, repoPath: /r, data: {count: 2}}",
			"payload: {tool: demo.shapes, readOnly: true, data: {count: 2}}", "examples[1] (reference): referenceOutputSchema: payload"},
		{"unknown shape", "    shape: reference\n", "    shape: full\n", "shape must be one of"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := strings.Replace(twoShapeTool, c.old, c.new, 1)
			if src == twoShapeTool {
				t.Fatalf("fixture: %q not found", c.old)
			}
			got := Lint(fstest.MapFS{"tools/demo.shapes.yaml": {Data: []byte(src)}}, knownProviders)
			if len(got) == 0 || !strings.Contains(joinFindings(got), c.msg) {
				t.Fatalf("want a finding containing %q, got:\n%s", c.msg, joinFindings(got))
			}
		})
	}
}

func TestReferenceOutputSchemaCompiles(t *testing.T) {
	src := strings.Replace(twoShapeTool, "        count: {type: integer, description: how many}", "        count: {$ref: ../fragments/missing.yaml#/$defs/x, description: how many}", 1)
	got := Lint(fstest.MapFS{"tools/demo.shapes.yaml": {Data: []byte(src)}}, knownProviders)
	if len(got) != 1 || got[0].Rule != RuleSchemaCompile || !strings.HasPrefix(got[0].Message, "referenceOutputSchema: ") {
		t.Fatalf("want one schema-compile finding on referenceOutputSchema, got:\n%s", joinFindings(got))
	}
	if _, err := Load(fstest.MapFS{"tools/demo.shapes.yaml": {Data: []byte(src)}}); err == nil || !strings.Contains(err.Error(), "referenceOutputSchema") {
		t.Fatalf("Load: want a referenceOutputSchema error, got %v", err)
	}
}

// The catalog keeps both schemas, serves and validates by shape, keeps
// them through the bundle, and compacts both.
func TestTwoShapeToolServesBothSchemas(t *testing.T) {
	layer := fstest.MapFS{"tools/demo.shapes.yaml": {Data: []byte(twoShapeTool)}}
	b, err := Bundle(layer)
	if err != nil {
		t.Fatal(err)
	}
	bundled := fstest.MapFS{"tools/demo.shapes.yaml": layer["tools/demo.shapes.yaml"], BundleFile: {Data: b}}
	for name, fsys := range map[string]fstest.MapFS{"sources": layer, "bundle": bundled} {
		t.Run(name, func(t *testing.T) {
			c, err := Load(fsys)
			if err != nil {
				t.Fatal(err)
			}
			tool, _ := c.Tool("demo.shapes")
			if !strings.Contains(string(tool.OutputSchemaFor(false)), `"lean envelope"`) ||
				!strings.Contains(string(tool.OutputSchemaFor(true)), `"reference envelope"`) {
				t.Fatalf("schemas by shape: lean %s / reference %s", tool.OutputSchemaFor(false), tool.OutputSchemaFor(true))
			}
			lean := map[string]any{"tool": "demo.shapes", "readOnly": true, "data": map[string]any{"n": 1}}
			ref := map[string]any{"tool": "demo.shapes", "readOnly": true, "tier": "free", "source": "local-git", "repoPath": "/r", "data": map[string]any{"count": 1}}
			for _, c := range []struct {
				payload   map[string]any
				reference bool
				ok        bool
			}{{lean, false, true}, {ref, false, false}, {ref, true, true}, {lean, true, false}} {
				if err := tool.ValidatePayloadFor(c.payload, c.reference); (err == nil) != c.ok {
					t.Errorf("reference=%v %v: err %v, want ok=%v", c.reference, c.payload["data"], err, c.ok)
				}
			}
			if err := tool.ValidatePayload(lean); err != nil {
				t.Errorf("ValidatePayload is the lean schema: %v", err)
			}
			if err := (Selection{CompactSchemas: true}).Apply(c); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(tool.ReferenceOutputSchema), "reference data") || !strings.Contains(string(tool.ReferenceOutputSchema), "reference envelope") {
				t.Fatalf("compacted reference schema: %s", tool.ReferenceOutputSchema)
			}
		})
	}
	// A tool with one shape serves it in both modes and has no
	// referenceOutputSchema in the bundle.
	c, err := Load(fstest.MapFS{"tools/demo.echo.yaml": {Data: []byte(baseTool)}})
	if err != nil {
		t.Fatal(err)
	}
	echo, _ := c.Tool("demo.echo")
	if !bytes.Equal(echo.OutputSchemaFor(true), echo.OutputSchema) || echo.ReferenceOutputSchema != nil {
		t.Fatalf("one-shape tool: reference schema %s", echo.ReferenceOutputSchema)
	}
	one, err := Bundle(fstest.MapFS{"tools/demo.echo.yaml": {Data: []byte(baseTool)}})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(one, []byte("ReferenceOutputSchema")) {
		t.Fatal("bundle of a one-shape tool names ReferenceOutputSchema")
	}
}

// An outputSchema may not require what lean results leave out; the
// reference schema may.
func TestLintLeanEnvelope(t *testing.T) {
	for _, field := range LeanOmits {
		t.Run(field, func(t *testing.T) {
			src := mutate(t, "  required: [tool, readOnly]\n", "  required: [tool, readOnly]\n  anyOf:\n    - required: ["+field+"]\n")
			got := Lint(fstest.MapFS{"tools/demo.echo.yaml": {Data: src}}, knownProviders)
			var lean []Finding
			for _, f := range got {
				if f.Rule == RuleLeanEnvelope {
					lean = append(lean, f)
				}
			}
			if len(lean) != 1 || !strings.Contains(lean[0].Message, "envelope field "+field) {
				t.Fatalf("want one lean-envelope finding on %s, got:\n%s", field, joinFindings(got))
			}
		})
	}
	// data's own members may have those names.
	src := mutate(t, "      description: the echo\n", "      description: the echo\n      required: [source]\n",
		"        echo:\n", "        source: {type: string, description: a source}\n        echo:\n",
		"data: {echo: hi}", "data: {echo: hi, source: x}")
	if got := Lint(fstest.MapFS{"tools/demo.echo.yaml": {Data: src}}, knownProviders); len(got) > 0 {
		t.Fatalf("data member named source: %s", joinFindings(got))
	}
}

// An example written with the reference's envelope must still pass once
// the lean host drops those fields.
func TestLintExampleAsLeanResult(t *testing.T) {
	src := mutate(t,
		"    tool:\n      const: demo.echo\n", "    tier:\n      const: free\n      description: tier\n    tool:\n      const: demo.echo\n",
		"  required: [tool, readOnly]\n", "  required: [tool, readOnly]\n  dependentRequired: {data: [tier]}\n",
		"payload: {tool: demo.echo, readOnly: true, data: {echo: hi}}", "payload: {tool: demo.echo, readOnly: true, tier: free, data: {echo: hi}}")
	got := Lint(fstest.MapFS{"tools/demo.echo.yaml": {Data: src}}, knownProviders)
	if len(got) != 1 || got[0].Rule != RuleExampleInvalid || !strings.Contains(got[0].Message, "as a lean result") {
		t.Fatalf("want one example-invalid finding as a lean result, got:\n%s", joinFindings(got))
	}
}

func TestLeanEnvelope(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want string
	}{
		{"local git", `{"tool":"x","readOnly":true,"source":"local-git","tier":"free","repoPath":"/r","data":{"source":"local-git","tier":1}}`,
			`{"data":{"source":"local-git","tier":1},"readOnly":true,"tool":"x"}`},
		{"gateway source stays", `{"tool":"x","readOnly":false,"source":"fluxgit-app","tier":"fluxgit-write-handshake","repoPath":"/r","previewId":"p"}`,
			`{"previewId":"p","readOnly":false,"source":"fluxgit-app","tool":"x"}`},
		{"null error data", `{"tool":"x","readOnly":true,"tier":"free","error":{"code":1,"message":"m","data":null}}`,
			`{"error":{"code":1,"message":"m"},"readOnly":true,"tool":"x"}`},
		{"error data kept", `{"tool":"x","readOnly":true,"error":{"code":1,"message":"m","data":{"a":1}}}`,
			`{"error":{"code":1,"data":{"a":1},"message":"m"},"readOnly":true,"tool":"x"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var in map[string]any
			if err := json.Unmarshal([]byte(c.in), &in); err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(LeanEnvelope(in))
			if string(got) != c.want {
				t.Fatalf("got %s\nwant %s", got, c.want)
			}
			if _, ok := in["tier"]; !ok && strings.Contains(c.in, `"tier"`) {
				t.Fatal("LeanEnvelope changed its argument")
			}
		})
	}
}

// Every tool of the embedded spec accepts each of its examples as the lean
// host sends it (the lint rule, checked on the real spec).
func TestEmbeddedSpecExamplesPassLean(t *testing.T) {
	for _, f := range Lint(spec.FS, knownProviders) {
		if f.Rule == RuleExampleInvalid || f.Rule == RuleLeanEnvelope {
			t.Error(f)
		}
	}
}
