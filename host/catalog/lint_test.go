package catalog

import (
	"strings"
	"testing"
	"testing/fstest"
)

// mutate applies old→new replacements to baseTool and fails the test when a
// replacement does not apply, so fixtures cannot silently rot.
func mutate(t *testing.T, pairs ...string) []byte {
	t.Helper()
	s := baseTool
	for i := 0; i+1 < len(pairs); i += 2 {
		if !strings.Contains(s, pairs[i]) {
			t.Fatalf("fixture: %q not found in baseTool", pairs[i])
		}
		s = strings.Replace(s, pairs[i], pairs[i+1], 1)
	}
	return []byte(s)
}

// plainPairs turn baseTool into a clean result: plain tool: no envelope
// fields, an error property, a payload that is the provider's object.
var plainPairs = []string{
	"tier: free", "tier: free\nresult: plain",
	"  required: [tool, readOnly]\n", "",
	"    tool:\n      const: demo.echo\n      description: tool name\n    readOnly:\n      const: true\n      description: always true\n", "    error:\n      type: object\n      description: the failure\n",
	"payload: {tool: demo.echo, readOnly: true, data: {echo: hi}}", "payload: {data: {echo: hi}}",
}

func TestLintBaseFixtureIsClean(t *testing.T) {
	for name, src := range map[string][]byte{"envelope": []byte(baseTool), "plain": mutate(t, plainPairs...)} {
		fsys := fstest.MapFS{"tools/demo.echo.yaml": {Data: src}}
		for _, f := range Lint(fsys, knownProviders) {
			t.Errorf("%s: %s", name, f)
		}
	}
}

// TestLintToolsetsOnlyRequiredOfNamedProviders: a third-party tool may
// omit toolsets (it is then served only with all or --tools).
func TestLintToolsetsOnlyRequiredOfNamedProviders(t *testing.T) {
	src := mutate(t, "toolsets: [git]\n", "")
	fsys := fstest.MapFS{"tools/demo.echo.yaml": {Data: src}}
	for _, tc := range []struct {
		name     string
		required []string
		want     int
	}{
		{"not required", nil, 0},
		{"another provider", []string{"fleet"}, 0},
		{"its provider", []string{"fleet", "git-read"}, 1},
	} {
		if got := Lint(fsys, knownProviders, RequireToolsets(tc.required)); len(got) != tc.want {
			t.Errorf("%s: %d findings, want %d: %s", tc.name, len(got), tc.want, joinFindings(got))
		}
	}
}

func TestLintRules(t *testing.T) {
	const file = "tools/demo.echo.yaml"
	const resFile = "resources/guide.yaml"
	const okResource = "uri: fluxgit://guide\nname: guide\ntitle: Guide\ndescription: How to use fluxgit.\nmimeType: text/markdown\nprovider: git-read\n"
	tool := func(b []byte) fstest.MapFS { return fstest.MapFS{file: {Data: b}} }
	tests := []struct {
		name  string
		files func(t *testing.T) fstest.MapFS
		rule  string
		file  string
		msg   string // substring of the message
	}{
		{"parse", func(t *testing.T) fstest.MapFS {
			return tool([]byte("name: demo.echo\n  title: [broken\n"))
		}, RuleParse, file, "yaml:"},
		{"toolsets missing", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "toolsets: [git]\n", ""))
		}, RuleToolsets, file, "add toolsets: [core, git, fleet, restore, proposals, presence, roster]"},
		{"served mark not false", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "      description: how many\n", "      description: how many\n      x-fluxgit-served: true\n"))
		}, RuleServedMark, file, "property count: x-fluxgit-served must be false"},
		{"served mark on a required argument", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "      x-fluxgit-path: repository\n", "      x-fluxgit-path: repository\n      x-fluxgit-served: false\n"))
		}, RuleServedMark, file, "property repoPath is required"},
		{"served mark off a property", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "  additionalProperties: false\n  required: [repoPath]\n", "  additionalProperties: false\n  x-fluxgit-served: false\n  required: [repoPath]\n"))
		}, RuleServedMark, file, "may only sit on the schema of a named property"},
		{"served mark in outputSchema", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "          description: echoed text\n", "          description: echoed text\n          x-fluxgit-served: false\n"))
		}, RuleServedMark, file, "outputSchema: x-fluxgit-served marks input arguments only"},
		{"x-mcp-header not a token", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "      description: how many\n", "      description: how many\n      x-mcp-header: two words\n"))
		}, RuleParamHeader, file, "arguments.count: x-mcp-header must be an HTTP header-name token"},
		{"x-mcp-header on a number", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "      type: integer\n      minimum: 1\n", "      type: number\n      x-mcp-header: Count\n      minimum: 1\n"))
		}, RuleParamHeader, file, `arguments.count: x-mcp-header "Count" needs type string, integer or boolean`},
		{"x-mcp-header used twice", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "      description: how many\n", "      description: how many\n      x-mcp-header: Repo\n",
				"      x-fluxgit-path: repository\n", "      x-fluxgit-path: repository\n      x-mcp-header: repo\n"))
		}, RuleParamHeader, file, `is already used by arguments.repoPath`},
		{"x-mcp-header off a property", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "  additionalProperties: false\n  required: [repoPath]\n", "  additionalProperties: false\n  x-mcp-header: Args\n  required: [repoPath]\n"))
		}, RuleParamHeader, file, `x-mcp-header "Args" is not on a property reached through properties alone`},
		{"x-mcp-header in outputSchema", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "          description: echoed text\n", "          description: echoed text\n          x-mcp-header: Echo\n"))
		}, RuleParamHeader, file, "outputSchema: x-mcp-header marks input arguments only"},
		{"toolsets unknown name", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "toolsets: [git]", "toolsets: [gitt]"))
		}, RuleMetaschema, file, "toolsets"},
		{"parse duplicate key", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "tier: free", "tier: free\ntier: free"))
		}, RuleParse, file, `duplicate key "tier"`},
		{"parse fragment", func(t *testing.T) fstest.MapFS {
			return fstest.MapFS{file: {Data: []byte(baseTool)}, "fragments/bad.yaml": {Data: []byte("a: [\n")}}
		}, RuleParse, "fragments/bad.yaml", "yaml:"},
		{"metaschema unknown key", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "tier: free", "tier: free\ncolour: red"))
		}, RuleMetaschema, file, "colour is not allowed"},
		{"metaschema tier", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "tier: free", "tier: gold"))
		}, RuleMetaschema, file, "tier must be one of"},
		{"metaschema resource", func(t *testing.T) fstest.MapFS {
			return fstest.MapFS{resFile: {Data: []byte(strings.Replace(okResource, "uri: fluxgit://guide\n", "", 1))}}
		}, RuleMetaschema, resFile, "uri is required"},
		{"schema-compile unresolved ref", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "    count:\n", "    other: {$ref: ../fragments/missing.yaml#/$defs/x}\n    count:\n"))
		}, RuleSchemaCompile, file, `inputSchema: $ref "../fragments/missing.yaml#/$defs/x"`},
		{"schema-compile bad pointer", func(t *testing.T) fstest.MapFS {
			return fstest.MapFS{
				file:               {Data: mutate(t, "    count:\n", "    other: {$ref: ../fragments/f.yaml#/$defs/nope}\n    count:\n")},
				"fragments/f.yaml": {Data: []byte("$defs: {}\n")},
			}
		}, RuleSchemaCompile, file, "fragments/f.yaml#/$defs/nope not found"},
		{"schema-compile cycle", func(t *testing.T) fstest.MapFS {
			return tool(append(mutate(t, "        echo:\n", "        node: {$ref: '#/$defs/node'}\n        echo:\n"),
				"$defs:\n  node: {type: object, description: n, properties: {next: {$ref: '#/$defs/node'}}}\n"...))
		}, RuleSchemaCompile, file, "outputSchema: $ref \"#/$defs/node\": reference cycle"},
		{"schema-compile invalid keyword", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "      maximum: 10", "      maximum: ten"))
		}, RuleSchemaCompile, file, "inputSchema: not a valid JSON Schema at /properties/count/maximum"},
		{"name-pattern", func(t *testing.T) fstest.MapFS {
			return fstest.MapFS{"tools/Demo.echo.yaml": {Data: mutate(t, "name: demo.echo", "name: Demo.echo")}}
		}, RuleNamePattern, "tools/Demo.echo.yaml", `"Demo.echo" does not match`},
		{"name-unique", func(t *testing.T) fstest.MapFS {
			return fstest.MapFS{"tools/a/demo.echo.yaml": {Data: []byte(baseTool)}, "tools/b/demo.echo.yaml": {Data: []byte(baseTool)}}
		}, RuleNameUnique, "tools/b/demo.echo.yaml", "already used by tools/a/demo.echo.yaml"},
		{"name-unique resource", func(t *testing.T) fstest.MapFS {
			return fstest.MapFS{resFile: {Data: []byte(okResource)}, "resources/guide2.yaml": {Data: []byte(okResource)}}
		}, RuleNameUnique, "resources/guide2.yaml", "already defined by resources/guide.yaml"},
		{"file-name", func(t *testing.T) fstest.MapFS {
			return fstest.MapFS{"tools/echo.yaml": {Data: []byte(baseTool)}}
		}, RuleFileName, "tools/echo.yaml", "must be named demo.echo.yaml"},
		{"description tool", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "description: Echoes its input back; used by tests.\n", ""))
		}, RuleDescription, file, "tool has no description"},
		{"description input property", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "      description: how many\n", ""))
		}, RuleDescription, file, "arguments.count has no description"},
		{"description nested output property", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "          description: echoed text\n", ""))
		}, RuleDescription, file, "payload.data.echo has no description"},
		{"description resource", func(t *testing.T) fstest.MapFS {
			return fstest.MapFS{resFile: {Data: []byte(strings.Replace(okResource, "description: How to use fluxgit.\n", "", 1))}}
		}, RuleDescription, resFile, "resource has no description"},
		{"read-only-hint missing", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "  readOnlyHint: true\n", ""))
		}, RuleReadOnlyHint, file, "readOnlyHint must be stated"},
		{"read-only-hint no annotations", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "annotations:\n  readOnlyHint: true\n  idempotentHint: true\n  openWorldHint: false\n", ""))
		}, RuleReadOnlyHint, file, "readOnlyHint must be stated"},
		{"read-only-destructive", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "  readOnlyHint: true\n", "  readOnlyHint: true\n  destructiveHint: false\n"))
		}, RuleReadOnlyDestructive, file, "must not set annotations.destructiveHint"},
		{"audit missing on a write tool", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "  readOnlyHint: true\n", "  readOnlyHint: false\n", "readOnly:\n      const: true", "readOnly:\n      const: false", "readOnly: true, data", "readOnly: false, data"))
		}, RuleAudit, file, "tool is not read-only, so it must state audit"},
		{"audit missing without readOnlyHint", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "  readOnlyHint: true\n", "  idempotentHint: false\n", "  idempotentHint: true\n", ""))
		}, RuleReadOnlyHint, file, "readOnlyHint must be stated"},
		{"audit on a read-only tool: risk", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "tier: free", "tier: free\naudit: {event: tool_call, risk: low}"))
		}, RuleAudit, file, "read-only tool must have audit event tool_call and risk none (or omit audit), not tool_call/low"},
		{"audit on a read-only tool: event", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "tier: free", "tier: free\naudit: {event: write_proposal, risk: none}"))
		}, RuleAudit, file, "not write_proposal/none"},
		{"audit metaschema event", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "tier: free", "tier: free\naudit: {event: write_block, risk: none}"))
		}, RuleMetaschema, file, `audit.event must be one of "tool_call", "write_proposal", "proposal_cancel"`},
		{"audit metaschema risk missing", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "tier: free", "tier: free\naudit: {event: tool_call}"))
		}, RuleMetaschema, file, "audit.risk is required"},
		{"provider-unknown", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "provider: git-read", "provider: git-wrte"))
		}, RuleProviderUnknown, file, `provider "git-wrte" is not one of git-read, handshake`},
		{"provider-unknown resource", func(t *testing.T) fstest.MapFS {
			return fstest.MapFS{resFile: {Data: []byte(strings.Replace(okResource, "provider: git-read", "provider: nobody", 1))}}
		}, RuleProviderUnknown, resFile, `provider "nobody"`},
		{"input-closed", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "  additionalProperties: false\n", ""))
		}, RuleInputClosed, file, "additionalProperties: false"},
		{"string-bounds maxLength", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "      maxLength: 100\n", ""))
		}, RuleStringBounds, file, "arguments.repoPath: string has no maxLength"},
		{"string-bounds array item", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "    count:\n", "    tags: {type: array, maxItems: 3, items: {type: string}, description: tags}\n    count:\n"))
		}, RuleStringBounds, file, "arguments.tags[]: string has no maxLength"},
		{"string-bounds required minLength", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "      minLength: 1\n", ""))
		}, RuleStringBounds, file, "arguments.repoPath is required, so it needs minLength >= 1"},
		{"example-invalid arguments", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "count: 2}", "count: 20}"))
		}, RuleExampleInvalid, file, "examples[0] (basic): arguments.count must be <= 10"},
		{"metaschema result", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "tier: free", "tier: free\nresult: bare"))
		}, RuleMetaschema, file, "result must be one of"},
		{"result-shape envelope field", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, append(plainPairs, "    error:\n", "    readOnly: {const: true, description: always true}\n    error:\n")...))
		}, RuleResultShape, file, "declares the envelope field readOnly"},
		{"result-shape no error", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, append(plainPairs, "    error:\n      type: object\n      description: the failure\n", "")...))
		}, RuleResultShape, file, "must declare the error property"},
		{"example-invalid payload", func(t *testing.T) fstest.MapFS {
			return tool(mutate(t, "echo: hi", "echo: 5"))
		}, RuleExampleInvalid, file, "examples[0] (basic): payload.data.echo must be of type string, got integer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Lint(tt.files(t), knownProviders, RequireToolsets(knownProviders))
			if len(got) != 1 {
				t.Fatalf("want exactly one %s finding, got %d:\n%s", tt.rule, len(got), joinFindings(got))
			}
			f := got[0]
			if f.Rule != tt.rule || f.File != tt.file || !strings.Contains(f.Message, tt.msg) {
				t.Errorf("finding = %s\nwant %s: %s: …%s…", f, tt.file, tt.rule, tt.msg)
			}
		})
	}
}

// A valid x-mcp-header mark (SEP-2243) is clean.
func TestLintParamHeaderClean(t *testing.T) {
	b := mutate(t, "      description: how many\n", "      description: how many\n      x-mcp-header: Count\n")
	if got := Lint(fstest.MapFS{"tools/demo.echo.yaml": {Data: b}}, knownProviders, RequireToolsets(knownProviders)); len(got) != 0 {
		t.Fatalf("a valid mark has findings:\n%s", joinFindings(got))
	}
}

// Stated audit labels that fit the tool's class are clean.
func TestLintAuditClean(t *testing.T) {
	for name, src := range map[string][]byte{
		"read-only, explicit default": mutate(t, "tier: free", "tier: free\naudit: {event: tool_call, risk: none}"),
		"proposal": mutate(t, "tier: free", "tier: free\naudit: {event: write_proposal, risk: high}",
			"  readOnlyHint: true\n", "  readOnlyHint: false\n", "readOnly:\n      const: true", "readOnly:\n      const: false", "readOnly: true, data", "readOnly: false, data"),
		"cancel": mutate(t, "tier: free", "tier: free\naudit: {event: proposal_cancel, risk: none}",
			"  readOnlyHint: true\n", "  readOnlyHint: false\n", "readOnly:\n      const: true", "readOnly:\n      const: false", "readOnly: true, data", "readOnly: false, data"),
	} {
		for _, f := range Lint(fstest.MapFS{"tools/demo.echo.yaml": {Data: src}}, knownProviders) {
			t.Errorf("%s: %s", name, f)
		}
	}
}

func TestLintNilProvidersSkipsProviderRule(t *testing.T) {
	fsys := fstest.MapFS{"tools/demo.echo.yaml": {Data: mutate(t, "provider: git-read", "provider: anything")}}
	if got := Lint(fsys, nil); len(got) != 0 {
		t.Errorf("findings with nil providers:\n%s", joinFindings(got))
	}
	if got := Lint(fsys, []string{}); len(got) != 1 || got[0].Rule != RuleProviderUnknown {
		t.Errorf("findings with empty providers:\n%s", joinFindings(got))
	}
}

func TestLintFindingsSortedAndFormatted(t *testing.T) {
	fsys := fstest.MapFS{
		"tools/b.yaml": {Data: mutate(t, "name: demo.echo", "name: Bad", "  readOnlyHint: true\n", "")},
		"tools/a.yaml": {Data: mutate(t, "tier: free", "tier: x")},
	}
	got := Lint(fsys, knownProviders)
	want := []string{
		"tools/a.yaml: file-name: file of tool demo.echo must be named demo.echo.yaml",
		`tools/a.yaml: metaschema: tier must be one of "free", "hybrid", "fluxgit", "fluxgit-write-handshake"`,
		"tools/b.yaml: file-name: file of tool Bad must be named Bad.yaml",
		`tools/b.yaml: name-pattern: tool name "Bad" does not match ` + ToolNamePattern,
		"tools/b.yaml: read-only-hint: annotations.readOnlyHint must be stated explicitly (true or false)",
	}
	if joinFindings(got) != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", joinFindings(got), strings.Join(want, "\n"))
	}
}

func TestLintEmptyTree(t *testing.T) {
	if got := Lint(fstest.MapFS{}, knownProviders); len(got) != 0 {
		t.Errorf("empty tree: %s", joinFindings(got))
	}
}

func joinFindings(fs []Finding) string {
	var lines []string
	for _, f := range fs {
		lines = append(lines, f.String())
	}
	return strings.Join(lines, "\n")
}
