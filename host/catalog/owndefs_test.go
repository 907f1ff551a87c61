package catalog

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"
	"testing/fstest"
)

// ownDefsTool declares $defs inside its inputSchema and outputSchema, so
// both are served as written (SEP-1613). Its defs use a fragment (inlined),
// carry a path mark (confined, then stripped) and are referenced with and
// without sibling keywords.
const ownDefsTool = `name: demo.defs
title: Demo Defs
description: A tool whose schemas declare their own $defs; used by tests.
provider: git-read
tier: free
toolsets: [git]
annotations: {readOnlyHint: true}
inputSchema:
  $schema: https://json-schema.org/draft/2020-12/schema
  type: object
  additionalProperties: false
  $defs:
    address:
      type: object
      description: A postal address.
      additionalProperties: false
      properties:
        street: {type: string, maxLength: 8, description: Street and number.}
        city: {$ref: ../fragments/f.yaml#/$defs/city}
    place: {$ref: '#/$defs/address', description: A place.}
    checkout: {type: string, minLength: 1, maxLength: 64, description: absolute path of a checkout, x-fluxgit-path: repository}
  properties:
    name: {type: string, maxLength: 200, description: A name.}
    home: {$ref: '#/$defs/place', description: Where the named one lives.}
    where: {$ref: '#/$defs/checkout'}
    visits: {type: array, maxItems: 3, description: Places visited., items: {$ref: '#/$defs/address'}}
outputSchema:
  type: object
  $defs:
    count: {type: integer, minimum: 0, description: A count.}
  properties:
    tool: {const: demo.defs, description: tool name}
    total: {$ref: '#/$defs/count'}
examples:
  - name: basic
    arguments: {name: Ann, home: {street: Main 1, city: Oslo}, where: /r}
    payload: {tool: demo.defs, total: 2}
`

const ownDefsFragment = "$defs:\n  city: {type: string, minLength: 1, maxLength: 20, description: City.}\n"

func ownDefsFiles(tool string) fstest.MapFS {
	return fstest.MapFS{
		"tools/demo.defs.yaml": {Data: []byte(tool)},
		"fragments/f.yaml":     {Data: []byte(ownDefsFragment)},
	}
}

func TestOwnDefsServedAsWritten(t *testing.T) {
	files := ownDefsFiles(ownDefsTool)
	tool := mustTool(t, mustLoad(t, files), "demo.defs")

	var in map[string]any
	if err := json.Unmarshal(tool.InputSchema, &in); err != nil {
		t.Fatal(err)
	}
	props := in["properties"].(map[string]any)
	defs, _ := in["$defs"].(map[string]any)
	tests := []struct {
		what      string
		got, want any
	}{
		{"$schema", in["$schema"], "https://json-schema.org/draft/2020-12/schema"},
		{"additionalProperties", in["additionalProperties"], false},
		{"$defs keys", keysOf(defs), []string{"address", "checkout", "place"}},
		{"ref with a sibling kept", props["home"], map[string]any{"$ref": "#/$defs/place", "description": "Where the named one lives."}},
		{"ref in items kept", props["visits"].(map[string]any)["items"], map[string]any{"$ref": "#/$defs/address"}},
		{"ref between defs kept", defs["place"], map[string]any{"$ref": "#/$defs/address", "description": "A place."}},
		{"fragment ref inlined", defs["address"].(map[string]any)["properties"].(map[string]any)["city"],
			map[string]any{"type": "string", "minLength": 1.0, "maxLength": 20.0, "description": "City."}},
		{"path mark stripped in $defs", defs["checkout"].(map[string]any)[PathKeyword], nil},
		{"path found through the ref", tool.Paths, []PathArg{{Pointer: []string{".where"}, Kind: PathRepository}}},
	}
	for _, tc := range tests {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("%s = %#v, want %#v", tc.what, tc.got, tc.want)
		}
	}
	if s := string(tool.InputSchema); strings.Contains(s, "fragments/") || strings.Contains(s, PathKeyword) {
		t.Errorf("served input schema = %s", s)
	}
	if !strings.Contains(string(tool.OutputSchema), `"total":{"$ref":"#/$defs/count"}`) {
		t.Errorf("served output schema = %s", tool.OutputSchema)
	}

	// The served schema validates with its refs.
	for _, tc := range []struct{ args, want string }{
		{`{"home":{"street":"Main 1","city":"Oslo"}}`, ""},
		{`{"home":{"street":"Main Street 1"}}`, "arguments.home.street must be at most 8 characters long"},
		{`{"home":{"city":""}}`, "arguments.home.city must not be empty"},
		{`{"visits":[{"zip":1}]}`, "arguments.visits[0].zip is not allowed"},
		{`{"where":""}`, "arguments.where must not be empty"},
		{`{"other":1}`, "arguments.other is not allowed"},
	} {
		checkDetails(t, tool.ValidateArguments(decode(t, tc.args)), tc.want)
	}
	checkDetails(t, tool.ValidatePayload(decode(t, `{"tool":"demo.defs","total":-1}`)), "payload.total must be >= 0")

	if got := Lint(files, knownProviders); len(got) != 0 {
		t.Errorf("lint: %s", joinFindings(got))
	}
}

// The lint rules see the subschemas a local ref stands for.
func TestOwnDefsLintedThroughRefs(t *testing.T) {
	tests := []struct {
		name, old, new, want string
	}{
		{"unbounded string in a def", "street: {type: string, maxLength: 8,", "street: {type: string,",
			"string-bounds: arguments.home.street: string has no maxLength"},
		{"undescribed property in a def", " description: Street and number.}", "}",
			"description: arguments.home.street has no description"},
		{"unmarked path in a def", ", x-fluxgit-path: repository}", "}",
			"path-mark: arguments.where looks like a filesystem path"},
		{"bad example through a ref", "city: Oslo}", "city: ''}",
			"example-invalid: examples[0] (basic): arguments.home.city must not be empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(ownDefsTool, tc.old) {
				t.Fatalf("test tool lacks %q", tc.old)
			}
			got := joinFindings(Lint(ownDefsFiles(strings.Replace(ownDefsTool, tc.old, tc.new, 1)), knownProviders))
			if !strings.Contains(got, tc.want) {
				t.Errorf("lint findings:\n%s\nwant one containing %q", got, tc.want)
			}
		})
	}
}

// Local refs that cannot be expanded fail the load with a message that
// says how to fix the spec.
func TestOwnDefsErrors(t *testing.T) {
	tests := []struct {
		name, old, new, want string
	}{
		{"ref to the spec file's $defs", "items: {$ref: '#/$defs/address'}", "items: {$ref: '#/$defs/elsewhere'}",
			`$ref "#/$defs/elsewhere": not found in this schema; a schema with its own $defs is served as written, so #/... refers to the schema itself`},
		{"recursive def", "street: {type: string, maxLength: 8, description: Street and number.}",
			"street: {type: string, maxLength: 8, description: Street and number.}\n        next: {$ref: '#/$defs/address'}",
			"reference cycle"},
		{"anchor", "where: {$ref: '#/$defs/checkout'}", "where: {$ref: '#checkout'}", "no anchors"},
		{"unmarked path", ", x-fluxgit-path: repository}", "}", "arguments.where looks like a filesystem path"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(ownDefsTool, tc.old) {
				t.Fatalf("test tool lacks %q", tc.old)
			}
			_, err := Load(ownDefsFiles(strings.Replace(ownDefsTool, tc.old, tc.new, 1) + "$defs:\n  elsewhere: {type: object}\n"))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Load error = %v\nwant it to contain %q", err, tc.want)
			}
		})
	}
}

func keysOf(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
