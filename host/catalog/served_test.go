package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/fluxgit/fluxgit/spec"
)

// compileServed compiles a served input schema the way a client would: on
// its own, as JSON Schema 2020-12 (the compiler checks it against the
// draft's metaschema first), with no resource to fetch.
func compileServed(t *testing.T, name string, raw json.RawMessage) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.LoadURL = func(u string) (io.ReadCloser, error) { return nil, fmt.Errorf("no remote schema %s", u) }
	url := "mem:///served/" + name + ".json"
	if err := c.AddResource(url, bytes.NewReader(raw)); err != nil {
		t.Fatalf("%s: served inputSchema is not JSON: %v", name, err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		t.Fatalf("%s: served inputSchema is not a valid 2020-12 schema: %v", name, err)
	}
	return sch
}

// specExamples returns, per tool name, the arguments of every example in
// the embedded spec's tool files.
func specExamples(t *testing.T) map[string][]any {
	t.Helper()
	out := map[string][]any{}
	files, err := fs.Glob(spec.FS, "tools/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no tool files: %v", err)
	}
	for _, f := range files {
		b, err := fs.ReadFile(spec.FS, f)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := parseYAML(b)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		o := doc.(*object)
		list, _ := o.vals["examples"].([]any)
		for _, e := range list {
			if args, ok := e.(*object).get("arguments"); ok {
				out[o.str("name")] = append(out[o.str("name")], toPlain(args))
			}
		}
	}
	return out
}

// informationalValue is a value of the full schema's property name that the
// full schema accepts next to args, found by trying a few candidates.
func informationalValue(t *testing.T, tool *Tool, args map[string]any, name string) any {
	t.Helper()
	for _, v := range []any{"workspace-1", json.Number("1"), true, []any{"a"}, map[string]any{}} {
		with := cloneArgs(args)
		with[name] = v
		if tool.ValidateArguments(with) == nil {
			return v
		}
	}
	t.Fatalf("%s: found no value the spec accepts for %s", tool.Name, name)
	return nil
}

func cloneArgs(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

func roundTripped(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out, err := decodeNumbers(b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestServedInputSchemasAcceptWhatTheSpecAccepts: every tool's inputSchema
// as tools/list serves it compiles as JSON Schema 2020-12, and accepts
// every example's arguments of the spec, also with each argument it leaves
// out (x-fluxgit-served: false) added — the host accepts those, so the
// served schema must never forbid them. A served schema that left an
// argument out must not close itself with additionalProperties: false.
func TestServedInputSchemasAcceptWhatTheSpecAccepts(t *testing.T) {
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	examples := specExamples(t)
	dropping := 0
	for _, tool := range c.Tools {
		served := compileServed(t, tool.Name, tool.InputSchema)
		var full, srv map[string]any
		if err := json.Unmarshal(tool.FullInputSchema(), &full); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(tool.InputSchema, &srv); err != nil {
			t.Fatal(err)
		}
		fullProps, _ := full["properties"].(map[string]any)
		srvProps, _ := srv["properties"].(map[string]any)
		var left []string
		for k := range fullProps {
			if _, ok := srvProps[k]; !ok {
				left = append(left, k)
			}
		}
		if len(left) > 0 {
			dropping++
			if srv["additionalProperties"] == false {
				t.Errorf("%s: the served schema leaves out %v but forbids them with additionalProperties: false", tool.Name, left)
			}
			if strings.Contains(string(tool.InputSchema), ServedKeyword) || strings.Contains(string(tool.SpecInputSchema), ServedKeyword) {
				t.Errorf("%s: the %s mark must be stripped from both schemas", tool.Name, ServedKeyword)
			}
		}
		if len(examples[tool.Name]) == 0 {
			examples[tool.Name] = []any{map[string]any{}} // still checks the informational arguments below
		}
		for i, ex := range examples[tool.Name] {
			args, _ := ex.(map[string]any)
			fullOK := tool.ValidateArguments(args) == nil
			if fullOK {
				if err := served.Validate(roundTripped(t, args)); err != nil {
					t.Errorf("%s: example %d is accepted by the spec but refused by the served schema: %v", tool.Name, i, err)
				}
			}
			for _, name := range left {
				if !fullOK {
					continue
				}
				with := cloneArgs(args)
				with[name] = informationalValue(t, tool, args, name)
				if err := served.Validate(roundTripped(t, with)); err != nil {
					t.Errorf("%s: example %d with %s is accepted by the host but refused by the served schema: %v", tool.Name, i, name, err)
				}
			}
		}
	}
	if dropping < 25 {
		t.Fatalf("only %d tools leave an informational argument out of the served schema; repoId should be left out of every git read", dropping)
	}
}

// TestServedMarkDerivation: a marked argument leaves the served schema
// (with additionalProperties: false, since a client may still send it),
// while the host keeps validating the full schema — the argument is still
// accepted, still bounded, and unknown arguments are still refused.
func TestServedMarkDerivation(t *testing.T) {
	src := strings.Replace(baseTool, "      description: how many\n", "      description: how many\n      x-fluxgit-served: false\n", 1)
	for name, layer := range map[string]fstest.MapFS{
		"sources": {"tools/demo.echo.yaml": {Data: []byte(src)}},
	} {
		b, err := Bundle(layer)
		if err != nil {
			t.Fatal(err)
		}
		withBundle := fstest.MapFS{"tools/demo.echo.yaml": layer["tools/demo.echo.yaml"], BundleFile: {Data: b}}
		for how, l := range map[string]fstest.MapFS{name: layer, "bundle": withBundle} {
			c, err := Load(l)
			if err != nil {
				t.Fatal(err)
			}
			tool := mustTool(t, c, "demo.echo")
			served := string(tool.InputSchema)
			if strings.Contains(served, `"count"`) || strings.Contains(served, "additionalProperties") || strings.Contains(served, ServedKeyword) {
				t.Errorf("%s: served schema %s", how, served)
			}
			if want := `"required":["repoPath"]`; !strings.Contains(served, want) {
				t.Errorf("%s: served schema lost %s: %s", how, want, served)
			}
			full := string(tool.FullInputSchema())
			if !strings.Contains(full, `"count"`) || !strings.Contains(full, `"additionalProperties":false`) || strings.Contains(full, ServedKeyword) {
				t.Errorf("%s: full schema %s", how, full)
			}
			for _, tc := range []struct {
				args map[string]any
				want string // "" accepted, else a substring of the refusal
			}{
				{map[string]any{"repoPath": "/r", "count": json.Number("2")}, ""},
				{map[string]any{"repoPath": "/r", "count": json.Number("20")}, "arguments.count"},
				{map[string]any{"repoPath": "/r", "bogus": true}, "bogus"},
			} {
				err := tool.ValidateArguments(tc.args)
				var ve *ValidationError
				switch {
				case tc.want == "" && err != nil:
					t.Errorf("%s: %v refused: %v", how, tc.args, err)
				case tc.want != "" && (!errors.As(err, &ve) || !strings.Contains(ve.Details, tc.want)):
					t.Errorf("%s: %v: got %v, want a refusal naming %s", how, tc.args, err, tc.want)
				}
			}
		}
	}
}
