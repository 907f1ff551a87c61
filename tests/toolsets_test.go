package tests

import (
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// listedTool is what the toolset tests read from tools/list.
type listedTool struct {
	Name        string `json:"name"`
	Annotations struct {
		ReadOnlyHint *bool `json:"readOnlyHint"`
	} `json:"annotations"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
}

// toolsetSession starts fluxgit with args and env added, initializes it and
// returns the instructions, the raw tools/list result and its tools.
func toolsetSession(t *testing.T, env []string, args ...string) (*server, string, json.RawMessage, []listedTool) {
	t.Helper()
	s := startServer(t, append(baseEnv(t), env...), append([]string{"serve"}, args...)...)
	r := s.call(0, "initialize", map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "toolsets", "version": "1"},
	})
	if r.Error != nil {
		t.Fatalf("initialize: %s", r.raw)
	}
	var init struct {
		Instructions string `json:"instructions"`
	}
	if err := json.Unmarshal(r.Result, &init); err != nil {
		t.Fatal(err)
	}
	s.sendJSON(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	r = s.call(1, "tools/list", nil)
	if r.Error != nil {
		t.Fatalf("tools/list: %s", r.raw)
	}
	var list struct {
		Tools []listedTool `json:"tools"`
	}
	if err := json.Unmarshal(r.Result, &list); err != nil {
		t.Fatal(err)
	}
	return s, init.Instructions, r.Result, list.Tools
}

func toolNames(tools []listedTool) []string {
	var names []string
	for _, t := range tools {
		names = append(names, t.Name)
	}
	sort.Strings(names)
	return names
}

// The core toolset, what fluxgit serves with no configuration: the reads
// an agent makes every day, and with a gateway address the proposals it
// files every day (sorted, as toolNames returns them).
var (
	coreReads = []string{"commit.details", "conflict.read", "diff.text", "repo.brief", "repo.history", "repo.refs",
		"repo.status", "worktree.changes"}
	coreWithProposals = []string{"commit.details", "conflict.read", "diff.text", "operation.cancel", "operation.preview.branch",
		"operation.preview.commit", "operation.preview.push", "operation.status", "repo.brief", "repo.history", "repo.refs",
		"repo.status", "worktree.changes"}
)

// TestToolsetSelection checks, per setting, what tools/list serves, that a
// hidden tool is refused as unknown with an error listing only served
// tools, that the instructions mention write proposals only when they are
// served, and that tools/list is byte-identical across two processes.
func TestToolsetSelection(t *testing.T) {
	for _, tc := range []struct {
		name  string
		env   []string
		args  []string
		want  []string // exact names; nil: check count and readOnly instead
		count int
		// allReadOnly: every served tool has readOnlyHint true.
		allReadOnly bool
		hidden      string // a tool that must be refused as unknown
		writes      bool   // the instructions mention write proposals
	}{
		{name: "default serves the core toolset, without proposals when no gateway address is set", env: []string{defaultSelection},
			want: coreReads, hidden: "operation.preview.commit"},
		{name: "default with a gateway address adds the core proposals", env: []string{defaultSelection, "FLUXGIT_MCP_HANDSHAKE_ADDR=127.0.0.1:9"},
			want: coreWithProposals, hidden: "fleet.radar", writes: true},
		{name: "default read-only with a gateway address", env: []string{defaultSelection, "FLUXGIT_MCP_HANDSHAKE_ADDR=127.0.0.1:9"}, args: []string{"--read-only"},
			want: withStatus(coreReads), allReadOnly: true, hidden: "operation.preview.commit"},
		{name: "an explicit toolset is served without a gateway address", env: []string{defaultSelection}, args: []string{"--toolsets", "core"},
			want: coreWithProposals, hidden: "repo.scope", writes: true},
		{name: "all", args: []string{"--toolsets", "all"}, count: 43, hidden: "repo.nope", writes: true},
		{name: "fleet and roster", args: []string{"--toolsets", "fleet, roster"},
			want: []string{"fleet.digest", "fleet.radar", "shift_check_in", "shift_check_out"}, hidden: "repo.status"},
		{name: "presence from the environment", env: []string{"FLUXGIT_TOOLSETS=presence"},
			want: []string{"agents.presence"}, hidden: "fleet.radar"},
		{name: "flag wins over the environment", env: []string{"FLUXGIT_TOOLSETS=presence"}, args: []string{"--toolsets", "restore"},
			want:   []string{"flux.latestRestorePoint", "flux.restorePointDetails", "flux.restorePoints", "safety.eventDetails", "safety.timeline"},
			hidden: "agents.presence"},
		{name: "git", args: []string{"--toolsets", "git"}, count: 19, hidden: "operation.preview.commit"},
		{name: "read-only", args: []string{"--read-only"}, count: 28, allReadOnly: true, hidden: "operation.preview.commit"},
		{name: "read-only from the environment with proposals", env: []string{"FLUXGIT_READ_ONLY=1", "FLUXGIT_TOOLSETS=proposals"},
			want: []string{"operation.status"}, allReadOnly: true, hidden: "operation.cancel"},
		{name: "tools allow-list within toolsets", args: []string{"--toolsets", "git,fleet", "--tools", "repo.status,fleet.radar,agents.presence"},
			want: []string{"fleet.radar", "repo.status"}, hidden: "agents.presence"},
		{name: "tools allow-list from the environment", env: []string{"FLUXGIT_TOOLS=operation.preview.commit,repo.brief"},
			want: []string{"operation.preview.commit", "repo.brief"}, hidden: "repo.status", writes: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, instructions, raw, tools := toolsetSession(t, tc.env, tc.args...)
			names := toolNames(tools)
			if tc.want != nil && !slices.Equal(names, tc.want) {
				t.Fatalf("tools/list serves %v, want %v", names, tc.want)
			}
			if tc.want == nil && len(names) != tc.count {
				t.Fatalf("tools/list serves %d tools, want %d: %v", len(names), tc.count, names)
			}
			for _, tool := range tools {
				ro := tool.Annotations.ReadOnlyHint != nil && *tool.Annotations.ReadOnlyHint
				if tc.allReadOnly && !ro {
					t.Fatalf("%s is served although it is not read-only", tool.Name)
				}
			}
			if got := strings.Contains(instructions, "operation.preview"); got != tc.writes {
				t.Fatalf("instructions mention write proposals: %v, want %v: %q", got, tc.writes, instructions)
			}

			r := s.call(2, "tools/call", map[string]any{"name": tc.hidden, "arguments": map[string]any{"repoPath": "/"}})
			if r.Error == nil || !strings.Contains(r.Error.Message, "Unknown tool") {
				t.Fatalf("calling hidden %s: want the unknown-tool error, got %s", tc.hidden, r.raw)
			}
			var data struct {
				ReadOnlyTools      []string `json:"readOnlyTools"`
				WriteProposalTools []string `json:"writeProposalTools"`
			}
			if err := json.Unmarshal(r.Error.Data, &data); err != nil {
				t.Fatalf("unknown-tool data: %v: %s", err, r.raw)
			}
			listed := append(append([]string{}, data.ReadOnlyTools...), data.WriteProposalTools...)
			sort.Strings(listed)
			if !slices.Equal(listed, names) {
				t.Fatalf("unknown-tool error lists %v, served are %v", listed, names)
			}

			// Clients cache tools/list: the same configuration gives the
			// same bytes in another process.
			_, _, again, _ := toolsetSession(t, tc.env, tc.args...)
			if !bytes.Equal(raw, again) {
				t.Fatalf("tools/list differs between two processes with the same configuration")
			}
		})
	}
}

// TestToolsetDefaultKeepsConfiguredProviders: a provider a person
// configured with a spec of its own (tools naming no toolset) is served by
// the default selection next to the core toolset, and hidden by an
// explicit toolset that does not name it.
func TestToolsetDefaultKeepsConfiguredProviders(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"default", nil, append(append([]string{}, coreReads...), "example.ask", "example.count", "example.logs", "example.picture", "example.wait")},
		{"an explicit toolset", []string{"--toolsets", "core"}, coreWithProposals},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := append(exampleEnv(t), defaultSelection)
			_, _, _, tools := toolsetSession(t, env, tc.args...)
			want := append([]string{}, tc.want...)
			sort.Strings(want)
			if got := toolNames(tools); !slices.Equal(got, want) {
				t.Fatalf("tools/list serves %v, want %v", got, want)
			}
		})
	}
}

// TestToolsetCompactSchemas: --compact-schemas drops every description
// below the root of each output schema, keeps input schemas and the tools
// themselves, and makes tools/list smaller.
func TestToolsetCompactSchemas(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  []string
		args []string
	}{
		{"flag", nil, []string{"--compact-schemas"}},
		{"environment", []string{"FLUXGIT_COMPACT_SCHEMAS=true"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, fullRaw, full := toolsetSession(t, nil)
			_, _, compactRaw, compact := toolsetSession(t, tc.env, tc.args...)
			if !slices.Equal(toolNames(full), toolNames(compact)) {
				t.Fatalf("compact schemas changed the tools served")
			}
			if len(compactRaw)*3 > len(fullRaw)*2 {
				t.Fatalf("compact tools/list is %d bytes, full %d: want at least a third less", len(compactRaw), len(fullRaw))
			}
			for i, c := range compact {
				f := full[i]
				if !bytes.Equal(c.InputSchema, f.InputSchema) {
					t.Fatalf("%s: input schema changed", c.Name)
				}
				var schema map[string]any
				if err := json.Unmarshal(c.OutputSchema, &schema); err != nil {
					t.Fatalf("%s: %v", c.Name, err)
				}
				if _, ok := schema["description"]; !ok {
					t.Fatalf("%s: the root description must stay", c.Name)
				}
				delete(schema, "description")
				if path := nestedDescription(schema, "outputSchema"); path != "" {
					t.Fatalf("%s: description left at %s", c.Name, path)
				}
			}
		})
	}
}

// nestedDescription returns the path of a description keyword in schema
// (property maps are walked by value, so a property named description is
// not one), or "".
func nestedDescription(v any, path string) string {
	switch x := v.(type) {
	case map[string]any:
		if _, ok := x["description"]; ok {
			return path + ".description"
		}
		for k, e := range x {
			switch k {
			case "const", "enum", "default", "examples":
				continue
			case "properties", "$defs", "patternProperties":
				if m, ok := e.(map[string]any); ok {
					for name, sub := range m {
						if p := nestedDescription(sub, path+"."+k+"."+name); p != "" {
							return p
						}
					}
				}
				continue
			}
			if p := nestedDescription(e, path+"."+k); p != "" {
				return p
			}
		}
	case []any:
		for _, e := range x {
			if p := nestedDescription(e, path+"[]"); p != "" {
				return p
			}
		}
	}
	return ""
}

// TestToolsetBadValues: a typo fails at start with exit 2, one message that
// names the valid values, and no MCP output.
func TestToolsetBadValues(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"unknown toolset", nil, []string{"--toolsets", "git,gti"}, `unknown toolset "gti": use a comma-separated list of core, git, fleet, restore, proposals, presence, roster, or all`},
		{"unknown toolset from the environment", []string{"FLUXGIT_TOOLSETS=everything"}, nil, `FLUXGIT_TOOLSETS: unknown toolset "everything"`},
		{"unknown tool", nil, []string{"--tools", "repo.status,repo.stats"}, "unknown tool repo.stats: known tools are agents.presence, commit.details"},
		{"bad read-only value", []string{"FLUXGIT_READ_ONLY=maybe"}, nil, `FLUXGIT_READ_ONLY="maybe": use true or false (1/0, true/false, yes/no or on/off)`},
		{"bad compact value", []string{"FLUXGIT_COMPACT_SCHEMAS=yes please"}, nil, `FLUXGIT_COMPACT_SCHEMAS="yes please": use true or false`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(fluxgitBin, append([]string{"serve"}, tc.args...)...)
			cmd.Env = append(baseEnv(t), tc.env...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 2 {
				t.Fatalf("want exit 2, got %v; stderr %q", err, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Fatalf("stderr %q lacks %q", stderr.String(), tc.want)
			}
			if stdout.Len() != 0 {
				t.Fatalf("stdout must stay empty: %q", stdout.String())
			}
		})
	}
}

// TestToolsetSDKClient drives a read-only git selection with compact
// schemas through the official SDK client in both protocol generations: a
// served tool's result validates against its compact output schema and a
// hidden one is an unknown tool.
func TestToolsetSDKClient(t *testing.T) {
	repo := fixtureRepo(t)
	for _, tc := range []struct{ name, version string }{
		{"legacy", "2025-11-25"},
		{"modern", "2026-07-28"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := append(baseEnv(t), "FLUXGIT_TOOLSETS=git,proposals", "FLUXGIT_READ_ONLY=true", "FLUXGIT_COMPACT_SCHEMAS=1")
			ctx, cs := sdkSessionEnv(t, tc.version, env)
			if strings.Contains(cs.InitializeResult().Instructions, "operation.preview") {
				t.Fatalf("instructions mention write proposals that are not served: %q", cs.InitializeResult().Instructions)
			}
			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatalf("tools/list: %v", err)
			}
			byName := map[string]*mcp.Tool{}
			for _, tool := range tools.Tools {
				if tool.Annotations == nil || !tool.Annotations.ReadOnlyHint {
					t.Fatalf("%s served in read-only mode", tool.Name)
				}
				byName[tool.Name] = tool
			}
			if len(byName) != 20 || byName["operation.status"] == nil || byName["repo.status"] == nil {
				t.Fatalf("want the 19 git tools and operation.status, got %d: %v", len(byName), byName)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "repo.status", Arguments: map[string]any{"repoPath": repo}})
			if err != nil || res.IsError {
				t.Fatalf("repo.status: %v %+v", err, res)
			}
			validateAgainst(t, byName["repo.status"].OutputSchema, res.StructuredContent)
			for _, hidden := range []string{"operation.preview.commit", "fleet.radar"} {
				_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: hidden, Arguments: map[string]any{"repoPath": repo}})
				if err == nil || !strings.Contains(err.Error(), "Unknown tool") {
					t.Fatalf("%s: want the unknown-tool error, got %v", hidden, err)
				}
			}
		})
	}
}

// withStatus is names with operation.status, sorted.
func withStatus(names []string) []string {
	out := append(append([]string{}, names...), "operation.status")
	sort.Strings(out)
	return out
}
