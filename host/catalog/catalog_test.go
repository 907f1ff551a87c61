package catalog

import (
	"encoding/json"
	"errors"
	"io/fs"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/fluxgit/fluxgit/spec"
)

var knownProviders = []string{"git-read", "handshake", "agents-presence", "shift-roster"}

func mustLoad(t testing.TB, layers ...fs.FS) *Catalog {
	t.Helper()
	c, err := Load(layers...)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return c
}

func mustTool(t testing.TB, c *Catalog, name string) *Tool {
	t.Helper()
	tool, ok := c.Tool(name)
	if !ok {
		t.Fatalf("tool %s not in catalog", name)
	}
	return tool
}

func TestEmbeddedSpecLintsClean(t *testing.T) {
	for _, f := range Lint(spec.FS, knownProviders, RequireToolsets(knownProviders)) {
		t.Errorf("%s", f)
	}
	for _, tool := range mustLoad(t).Tools {
		if len(tool.Toolsets) == 0 {
			t.Errorf("built-in tool %s names no toolsets", tool.Name)
		}
	}
}

func TestEmbeddedSpecLoads(t *testing.T) {
	c := mustLoad(t) // no layers = embedded spec
	if len(c.Tools) == 0 {
		t.Fatal("embedded spec has no tools")
	}
	known := map[string]bool{}
	for _, p := range knownProviders {
		known[p] = true
	}
	for _, p := range c.Providers() {
		if !known[p] {
			t.Errorf("Providers() names unknown provider %q", p)
		}
	}
	for _, r := range append(append([]*Resource{}, c.Resources...), c.Templates...) {
		if r.Name == "" || r.Provider == "" || r.Description == "" || (r.URI == "") == (r.URITemplate == "") {
			t.Errorf("resource %+v incomplete", r)
		}
	}
	for i, tool := range c.Tools {
		a := tool.Annotations
		switch {
		case tool.Title == "" || tool.Description == "" || tool.Tier == "":
			t.Errorf("%s: tier %q title %q", tool.Name, tool.Tier, tool.Title)
		case a.ReadOnlyHint == nil || *a.ReadOnlyHint != tool.ReadOnly:
			t.Errorf("%s: readOnlyHint not explicit or disagrees with ReadOnly", tool.Name)
		case tool.ReadOnly && a.DestructiveHint != nil:
			t.Errorf("%s: read-only tool with destructiveHint", tool.Name)
		case tool.File != "tools/"+tool.Name+".yaml":
			t.Errorf("%s: File = %s", tool.Name, tool.File)
		}
		if i > 0 && toolLess(tool, c.Tools[i-1]) {
			t.Errorf("tools out of order: %s before %s", c.Tools[i-1].Name, tool.Name)
		}
	}
}

// Every embedded tool carries at least one example with a payload, and the
// examples validate (TestEmbeddedSpecLintsClean checks the latter).
func TestEmbeddedSpecHasExamples(t *testing.T) {
	files, err := specFiles(spec.FS, "tools")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		doc, err := readDoc(spec.FS, f)
		if err != nil {
			t.Fatal(err)
		}
		exs, _ := doc.(*object).vals["examples"].([]any)
		withPayload := 0
		for _, e := range exs {
			if _, ok := e.(*object).get("payload"); ok {
				withPayload++
			}
		}
		if withPayload == 0 {
			t.Errorf("%s: no example with a payload", f)
		}
	}
}

func TestInlinedSchemasAreSelfContained(t *testing.T) {
	c := mustLoad(t)
	for _, tool := range c.Tools {
		for which, raw := range map[string]json.RawMessage{"input": tool.InputSchema, "output": tool.OutputSchema} {
			if !json.Valid(raw) {
				t.Errorf("%s %s: invalid JSON", tool.Name, which)
			}
			for _, bad := range []string{`"$ref"`, `"$defs"`, "fragments/"} {
				if strings.Contains(string(raw), bad) {
					t.Errorf("%s %s schema still contains %s", tool.Name, which, bad)
				}
			}
		}
	}
	// Key order of the spec file is kept: repoPath is the first property.
	in := string(mustTool(t, c, "diff.text").InputSchema)
	if i, j := strings.Index(in, `"repoPath"`), strings.Index(in, `"maxBytes"`); i < 0 || j < i {
		t.Errorf("property order not preserved: %s", in)
	}
	// A $ref with a sibling description keeps the fragment's assertions and
	// takes the local description.
	var s struct {
		Properties map[string]map[string]any `json:"properties"`
	}
	if err := json.Unmarshal([]byte(in), &s); err != nil {
		t.Fatal(err)
	}
	base := s.Properties["base"]
	if base["pattern"] != "^[^-]" || base["maxLength"] != 4096.0 || !strings.HasPrefix(base["description"].(string), "Old side") {
		t.Errorf("base = %v", base)
	}
}

func TestValidateArguments(t *testing.T) {
	c := mustLoad(t, spec.FS, fstest.MapFS{"tools/demo.targets.yaml": {Data: []byte(targetsTool)}})
	tests := []struct {
		tool, args, want string // want "" = valid
	}{
		{"repo.status", `{"repoPath":"/srv/repo"}`, ""},
		{"repo.status", `{"repoPath":"/srv/repo","repoId":"w1","maxEntries":10000}`, ""},
		{"diff.text", `{"repoPath":"/r","base":"HEAD~1","head":"HEAD","path":"a.go","maxBytes":1048576,"maxLines":5}`, ""},
		{"repo.history", `{"repoPath":"/r","limit":1.0,"cursor":"50"}`, ""},
		// type errors
		{"repo.status", `{"repoPath":5}`, "arguments.repoPath must be of type string, got integer"},
		{"diff.text", `{"repoPath":"/r","maxBytes":"big"}`, "arguments.maxBytes must be of type integer, got string"},
		{"diff.text", `{"repoPath":"/r","maxBytes":1.5}`, "arguments.maxBytes must be of type integer, got number"},
		{"repo.refs", `["/r"]`, "arguments must be of type object, got array"},
		{"repo.refs", `null`, "arguments must be of type object, got null"},
		// bounds
		{"diff.text", `{"repoPath":"/r","maxBytes":2000000}`, "arguments.maxBytes must be <= 1048576"},
		{"diff.text", `{"repoPath":"/r","maxLines":0}`, "arguments.maxLines must be >= 1"},
		{"repo.history", `{"repoPath":"/r","limit":201}`, "arguments.limit must be <= 200"},
		{"repo.status", `{"repoPath":""}`, "arguments.repoPath must not be empty"},
		{"repo.status", `{"repoPath":"/` + strings.Repeat("a", 32768) + `"}`, "arguments.repoPath must be at most 32768 characters long"},
		{"repo.history", `{"repoPath":"/r","cursor":"abc"}`, "arguments.cursor must match the pattern ^[0-9]{1,10}$"},
		// unknown key
		{"repo.refs", `{"repoPath":"/r","foo":1}`, "arguments.foo is not allowed"},
		{"repo.refs", `{"repoPath":"/r","zeta":1,"alpha":2}`, "arguments.alpha is not allowed"},
		// missing required
		{"repo.status", `{}`, "arguments.repoPath is required"},
		{"commit.details", `{"repoPath":"/r"}`, "arguments.commit is required"},
		{"demo.targets", `{"targets":[{"path":"a"},{"branch":"b"}]}`, "arguments.targets[1].path is required"},
		// the deepest cause wins over shallower ones
		{"demo.targets", `{"targets":[{"path":"a","extra":true}],"bogus":1}`, "arguments.targets[0].extra is not allowed"},
		{"demo.targets", `{"targets":[{"path":"a"},{"path":"a"}]}`, "arguments.targets[1] duplicates an earlier item"},
		{"demo.targets", `{"targets":[{"path":"a","mode":"fast"}]}`, `arguments.targets[0].mode must be one of "safe", "strict"`},
		{"demo.targets", `{"targets":[],"odd key":1}`, `arguments["odd key"] is not allowed`},
		{"demo.targets", `{"targets":[{"path":"a","a/b c%":1}]}`, `arguments.targets[0]["a/b c%"] is not allowed`},
		{"demo.targets", `{"targets":[{"path":"a","odd~/ key%":"x"}]}`, `arguments.targets[0]["odd~/ key%"] must be of type integer, got string`},
		// leading '-' revisions (option injection)
		{"diff.text", `{"repoPath":"/r","base":"--output=/tmp/pwned"}`, "arguments.base must not start with '-' (refused to prevent git option injection)"},
		{"commit.details", `{"repoPath":"/r","commit":"-p"}`, "arguments.commit must not start with '-' (refused to prevent git option injection)"},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+truncate(tt.args), func(t *testing.T) {
			err := mustTool(t, c, tt.tool).ValidateArguments(decode(t, tt.args))
			checkDetails(t, err, tt.want)
		})
	}
}

func TestValidateArgumentsInputForms(t *testing.T) {
	tool := mustTool(t, mustLoad(t), "repo.status")
	for name, args := range map[string]any{
		"raw message": json.RawMessage(`{"repoPath":"/r","maxEntries":3}`),
		"bytes":       []byte(`{"repoPath":"/r"}`),
		"typed map":   map[string]string{"repoPath": "/r"},
		"go ints":     map[string]any{"repoPath": "/r", "maxEntries": 7},
		"struct": struct {
			RepoPath string `json:"repoPath"`
		}{"/r"},
	} {
		if err := tool.ValidateArguments(args); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	err := tool.ValidateArguments(map[string]any{"repoPath": "/r", "maxEntries": []int{1}})
	checkDetails(t, err, "arguments.maxEntries must be of type integer, got array")
	err = tool.ValidateArguments(json.RawMessage(`{"repoPath":`))
	var ve *ValidationError
	if !errors.As(err, &ve) || !strings.HasPrefix(ve.Details, "arguments is not valid JSON") {
		t.Errorf("truncated JSON: %v", err)
	}
}

func TestValidatePayload(t *testing.T) {
	c := mustLoad(t)
	// repo.refs and commit.details in their lean data shapes (outputSchema).
	ok := `{"tool":"repo.refs","readOnly":true,"tier":"free","source":"local-git","repoPath":"/r",
		"data":{"head":"main","branches":["main"],"tags":["v1"]}}`
	tests := []struct {
		tool, payload, want string
	}{
		{"repo.refs", ok, ""},
		{"repo.refs", `{"tool":"repo.refs","readOnly":true,"source":"local-git","error":{"code":10010,"message":"Local git fallback failed","data":null}}`, ""},
		{"repo.refs", `{"tool":"repo.status","readOnly":true,"error":{"code":1,"message":"x"}}`, `payload.tool must be "repo.refs"`},
		{"repo.refs", `{"readOnly":true,"error":{"code":1,"message":"x"}}`, "payload.tool is required"},
		{"repo.refs", `{"tool":"repo.refs","readOnly":false,"error":{"code":1,"message":"x"}}`, "payload.readOnly must be true"},
		{"repo.refs", `{"tool":"repo.refs","readOnly":true,"error":{"code":"E1","message":"x"}}`, "payload.error.code must be of type integer, got string"},
		{"repo.refs", strings.Replace(ok, `"tags":["v1"]`, `"tags":[7]`, 1), "payload.data.tags[0] must be of type string, got integer"},
		{"repo.refs", strings.Replace(ok, `"head":"main",`, ``, 1), "payload.data.head is required"},
		{"repo.refs", strings.Replace(ok, `"tier":"free"`, `"tier":"hybrid"`, 1), `payload.tier must be "free"`},
		{"repo.refs", strings.Replace(ok, `"data":`, `"error":{"code":1,"message":"x"},"data":`, 1), "payload.data is not allowed here"},
		{"repo.status", `{"tool":"repo.status","readOnly":true,"source":"local-git","repoPath":"/r","data":{"branch":null,"detached":true,
			"oid":null,"upstream":null,"ahead":0,"behind":0,"clean":false,"changedFiles":1,"entries":[{"status":"M","path":"a"}],"truncated":false}}`,
			"payload.data.entries[0].status must match the pattern ^[ MTADRCU?]{2}$"},
		{"commit.details", `{"tool":"commit.details","readOnly":true,"source":"local-git","repoPath":"/r","data":{"commit":"xyz",
			"author":"a <e>","time":"2026-01-01T00:00:00+00:00","message":"m"}}`,
			"payload.data.commit must match the pattern ^([0-9a-f]{40}|[0-9a-f]{64})$"},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+truncate(tt.payload), func(t *testing.T) {
			checkDetails(t, mustTool(t, c, tt.tool).ValidatePayload(decode(t, tt.payload)), tt.want)
		})
	}
}

func TestOverrideLayerReplacesTool(t *testing.T) {
	override := fstest.MapFS{
		"tools/repo.status.yaml": {Data: []byte(strings.NewReplacer(
			"name: demo.echo", "name: repo.status",
			"title: Demo Echo", "title: Custom Status",
			"const: demo.echo", "const: repo.status",
			"tool: demo.echo", "tool: repo.status",
		).Replace(baseTool))},
		"tools/zz.write.yaml": {Data: []byte(strings.NewReplacer(
			"name: demo.echo", "name: zz.write",
			"readOnlyHint: true", "readOnlyHint: false",
		).Replace(baseTool))},
	}
	c := mustLoad(t, spec.FS, override)
	tool := mustTool(t, c, "repo.status")
	if tool.Title != "Custom Status" || tool.Order != 0 {
		t.Errorf("repo.status not replaced: %q order %d", tool.Title, tool.Order)
	}
	if !strings.Contains(string(tool.InputSchema), `"count"`) {
		t.Errorf("override input schema not used: %s", tool.InputSchema)
	}
	if err := tool.ValidateArguments(map[string]any{"repoPath": "/r", "maxEntries": json.Number("5")}); err == nil ||
		err.Error() != "arguments.maxEntries is not allowed" {
		t.Errorf("override schema not enforced: %v", err)
	}
	var names []string
	for _, t := range c.Tools {
		names = append(names, t.Name)
	}
	// read-only first; ordered before unordered (the override dropped
	// repo.status's order, so it follows every ordered read-only tool);
	// write tools last.
	last := names[len(names)-1]
	var lastRO string
	for _, t := range c.Tools {
		if t.ReadOnly {
			lastRO = t.Name
		}
	}
	if last != "zz.write" || lastRO != "repo.status" {
		t.Errorf("order = %s; want repo.status last of the read-only tools and zz.write last", strings.Join(names, " "))
	}
	// The embedded catalog is untouched by the override.
	if mustTool(t, mustLoad(t), "repo.status").Title != "Repo Status" {
		t.Error("embedded catalog changed")
	}
}

func TestLoadResources(t *testing.T) {
	layer := fstest.MapFS{
		"resources/guide.yaml":  {Data: []byte("uri: fluxgit://guide\nname: guide\ntitle: Guide\ndescription: How to use fluxgit.\nmimeType: text/markdown\nprovider: git-read\n")},
		"resources/status.yaml": {Data: []byte("uriTemplate: fluxgit://repo/{repoPath}/status\nname: status\ndescription: Status.\nmimeType: application/json\nprovider: agents-presence\n")},
		"resources/README.md":   {Data: []byte("not a spec")},
	}
	override := fstest.MapFS{
		"resources/guide2.yaml": {Data: []byte("uri: fluxgit://guide\nname: guide2\ndescription: Replaced.\nprovider: shift-roster\n")},
	}
	c := mustLoad(t, layer, override)
	if len(c.Resources) != 1 || c.Resources[0].Name != "guide2" || c.Resources[0].File != "resources/guide2.yaml" {
		t.Errorf("Resources = %+v", c.Resources)
	}
	if len(c.Templates) != 1 || c.Templates[0].URITemplate != "fluxgit://repo/{repoPath}/status" || c.Templates[0].MimeType != "application/json" {
		t.Errorf("Templates = %+v", c.Templates)
	}
	if got := strings.Join(c.Providers(), ","); got != "agents-presence,shift-roster" {
		t.Errorf("Providers = %s", got)
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name  string
		files fstest.MapFS
		want  string
	}{
		{"cycle between fragments", fstest.MapFS{
			"tools/demo.echo.yaml": {Data: []byte(strings.Replace(baseTool, "      description: how many", "      description: how many\n    node: {$ref: ../fragments/a.yaml#/$defs/a}", 1))},
			"fragments/a.yaml":     {Data: []byte("$defs:\n  a: {type: object, properties: {b: {$ref: b.yaml#/$defs/b}}}\n")},
			"fragments/b.yaml":     {Data: []byte("$defs:\n  b: {type: array, items: {$ref: a.yaml#/$defs/a}}\n")},
		}, "reference cycle: tools/demo.echo.yaml#/inputSchema -> fragments/a.yaml#/$defs/a -> fragments/b.yaml#/$defs/b -> fragments/a.yaml#/$defs/a"},
		{"self-referencing local def", fstest.MapFS{
			"tools/demo.echo.yaml": {Data: []byte(strings.Replace(baseTool, "      description: how many", "      description: how many\n    tree: {$ref: '#/$defs/node'}", 1) +
				"$defs:\n  node: {type: object, properties: {kids: {type: array, items: {$ref: '#/$defs/node'}}}}\n")},
		}, "reference cycle"},
		{"unresolved ref", fstest.MapFS{
			"tools/demo.echo.yaml": {Data: []byte(strings.Replace(baseTool, "      description: how many", "      description: how many\n    x: {$ref: ../fragments/nope.yaml#/$defs/x}", 1))},
		}, `inputSchema: $ref "../fragments/nope.yaml#/$defs/x": open fragments/nope.yaml: file does not exist`},
		{"ref outside the tree", fstest.MapFS{
			"tools/demo.echo.yaml": {Data: []byte(strings.Replace(baseTool, "      description: how many", "      description: how many\n    x: {$ref: ../../etc/passwd}", 1))},
		}, "points outside the spec tree"},
		{"network ref", fstest.MapFS{
			"tools/demo.echo.yaml": {Data: []byte(strings.Replace(baseTool, "      description: how many", "      description: how many\n    x: {$ref: 'https://example.com/s.json'}", 1))},
		}, "only relative references"},
		{"metaschema", fstest.MapFS{
			"tools/demo.echo.yaml": {Data: []byte(strings.Replace(baseTool, "tier: free", "tier: premium", 1))},
		}, `tools/demo.echo.yaml: tier must be one of "free", "hybrid", "fluxgit", "fluxgit-write-handshake"`},
		{"duplicate in one layer", fstest.MapFS{
			"tools/demo.echo.yaml":   {Data: []byte(baseTool)},
			"tools/x/demo.echo.yaml": {Data: []byte(baseTool)},
		}, "tools/x/demo.echo.yaml: tool demo.echo is also defined in tools/demo.echo.yaml"},
		{"yaml", fstest.MapFS{
			"tools/demo.echo.yaml": {Data: []byte("name: [oops\n")},
		}, "tools/demo.echo.yaml: yaml:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(tt.files)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Load error = %v\nwant it to contain %q", err, tt.want)
			}
		})
	}
}

func TestMergeRefKeepsSemantics(t *testing.T) {
	// A $ref with assertion siblings is inlined as allOf, not merged, so
	// additionalProperties next to the $ref keeps its 2020-12 meaning.
	files := fstest.MapFS{
		"tools/demo.echo.yaml": {Data: []byte(strings.Replace(baseTool, "      description: how many",
			"      description: how many\n    opt:\n      $ref: ../fragments/f.yaml#/$defs/s\n      maxLength: 3\n      description: local", 1))},
		"fragments/f.yaml": {Data: []byte("$defs:\n  s: {type: string, minLength: 1, description: shared}\n")},
	}
	tool := mustTool(t, mustLoad(t, files), "demo.echo")
	if !strings.Contains(string(tool.InputSchema), `"opt":{"maxLength":3,"description":"local","allOf":[{"type":"string","minLength":1,"description":"shared"}]}`) {
		t.Errorf("input = %s", tool.InputSchema)
	}
	checkDetails(t, tool.ValidateArguments(decode(t, `{"repoPath":"/r","opt":""}`)), "arguments.opt must not be empty")
	checkDetails(t, tool.ValidateArguments(decode(t, `{"repoPath":"/r","opt":"abcd"}`)), "arguments.opt must be at most 3 characters long")
}

func TestLocalRefsInlined(t *testing.T) {
	// #/... refs resolve against the tool file itself (its top-level $defs)
	// and inside fragments against the fragment; all are inlined.
	files := fstest.MapFS{
		"tools/demo.echo.yaml": {Data: []byte(strings.Replace(baseTool, "      description: how many",
			"      description: how many\n    who: {$ref: '#/$defs/who'}\n    when: {$ref: ../fragments/f.yaml#/$defs/when}", 1) +
			"$defs:\n  who: {type: string, minLength: 1, maxLength: 8, description: a name}\n")},
		"fragments/f.yaml": {Data: []byte("$defs:\n  when: {$ref: '#/$defs/stamp', description: a time}\n  stamp: {type: integer, minimum: 0}\n")},
	}
	tool := mustTool(t, mustLoad(t, files), "demo.echo")
	in := string(tool.InputSchema)
	for _, want := range []string{
		`"who":{"type":"string","minLength":1,"maxLength":8,"description":"a name"}`,
		`"when":{"type":"integer","minimum":0,"description":"a time"}`,
	} {
		if !strings.Contains(in, want) {
			t.Errorf("input schema lacks %s:\n%s", want, in)
		}
	}
	if strings.Contains(in, "$") {
		t.Errorf("input schema still has $ keywords: %s", in)
	}
	checkDetails(t, tool.ValidateArguments(decode(t, `{"repoPath":"/r","when":-1}`)), "arguments.when must be >= 0")
	if got := Lint(files, knownProviders); len(got) != 0 {
		t.Errorf("lint: %s", joinFindings(got))
	}
}

func TestConcurrentValidation(t *testing.T) {
	c := mustLoad(t)
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, tool := range c.Tools {
				err := tool.ValidateArguments(map[string]any{"repoPath": "/r", "nope": true})
				if err == nil || err.Error() != "arguments.nope is not allowed" {
					t.Errorf("%s: %v", tool.Name, err)
				}
				_ = tool.ValidatePayload(map[string]any{"tool": tool.Name, "readOnly": true})
			}
		}()
	}
	wg.Wait()
}

func TestLiteralToolValidates(t *testing.T) {
	// A Tool built by hand (e.g. by a host test) works without Load.
	tool := &Tool{Name: "x", InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","maximum":3}}}`)}
	checkDetails(t, tool.ValidateArguments(decode(t, `{"n":4}`)), "arguments.n must be <= 3")
	if err := tool.ValidatePayload(map[string]any{}); err == nil || isValidationError(err) {
		t.Errorf("missing outputSchema: %v", err)
	}
}

func TestRestrict(t *testing.T) {
	c := mustLoad(t)
	var want []string
	for _, tool := range c.Tools {
		if strings.HasPrefix(tool.Name, "repo.") {
			want = append(want, tool.Name)
		}
	}
	c.Restrict(func(tool *Tool) bool { return strings.HasPrefix(tool.Name, "repo.") })
	var names []string
	for _, tool := range c.Tools {
		names = append(names, tool.Name)
	}
	if got := strings.Join(names, " "); got != strings.Join(want, " ") || len(want) < 3 {
		t.Errorf("after Restrict: %s, want %s (order kept)", got, strings.Join(want, " "))
	}
	if _, ok := c.Tool("diff.text"); ok {
		t.Error("removed tool still found by name")
	}
	if _, ok := c.Tool("repo.refs"); !ok {
		t.Error("kept tool not found by name")
	}
}

func TestCatalogToolWithoutIndex(t *testing.T) {
	c := &Catalog{Tools: []*Tool{{Name: "a"}}}
	if _, ok := c.Tool("a"); !ok {
		t.Error("literal catalog lookup failed")
	}
	if _, ok := c.Tool("b"); ok {
		t.Error("found missing tool")
	}
}

// --- helpers -----------------------------------------------------------------

func decode(t testing.TB, s string) any {
	t.Helper()
	v, err := decodeNumbers([]byte(s))
	if err != nil {
		t.Fatalf("bad test JSON %s: %v", s, err)
	}
	return v
}

func isValidationError(err error) bool {
	var ve *ValidationError
	return errors.As(err, &ve)
}

func checkDetails(t *testing.T, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Errorf("unexpected error: %v", err)
		}
		return
	}
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error = %v (%T), want *ValidationError %q", err, err, want)
	}
	if ve.Details != want || ve.Error() != want {
		t.Errorf("details = %q\n          want %q", ve.Details, want)
	}
}

func truncate(s string) string {
	s = strings.Join(strings.Fields(s), "")
	if len(s) > 60 {
		return s[:60]
	}
	return s
}

// baseTool is a minimal, lint-clean, self-contained tool spec that the lint
// fixtures mutate.
const baseTool = `name: demo.echo
title: Demo Echo
description: Echoes its input back; used by tests.
provider: git-read
tier: free
toolsets: [git]
annotations:
  readOnlyHint: true
  idempotentHint: true
  openWorldHint: false
inputSchema:
  type: object
  additionalProperties: false
  required: [repoPath]
  properties:
    repoPath:
      type: string
      minLength: 1
      maxLength: 100
      description: absolute path of a git work tree
      x-fluxgit-path: repository
    count:
      type: integer
      minimum: 1
      maximum: 10
      description: how many
outputSchema:
  type: object
  required: [tool, readOnly]
  properties:
    tool:
      const: demo.echo
      description: tool name
    readOnly:
      const: true
      description: always true
    data:
      type: object
      description: the echo
      properties:
        echo:
          type: string
          description: echoed text
examples:
  - name: basic
    arguments: {repoPath: /r, count: 2}
    payload: {tool: demo.echo, readOnly: true, data: {echo: hi}}
`

// targetsTool has nested objects in arrays, for argument-path tests.
const targetsTool = `name: demo.targets
title: Demo Targets
description: Nested arguments; used by tests.
provider: git-read
tier: free
toolsets: [git]
annotations: {readOnlyHint: true}
inputSchema:
  type: object
  additionalProperties: false
  properties:
    targets:
      type: array
      uniqueItems: true
      description: targets
      items:
        type: object
        additionalProperties: false
        required: [path]
        properties:
          path: {type: string, minLength: 1, maxLength: 10, description: a path, x-fluxgit-path: relative}
          branch: {type: string, maxLength: 10, description: a branch}
          mode: {enum: [safe, strict], description: a mode}
          "odd~/ key%": {type: integer, description: an awkward name}
outputSchema:
  type: object
`
