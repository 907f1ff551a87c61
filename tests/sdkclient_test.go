package tests

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v5"
)

// The official MCP Go SDK, as a client, connects in both generations,
// lists tools and calls one; structuredContent validates against the
// tool's advertised outputSchema.
func TestOfficialSDKClient(t *testing.T) {
	repo := fixtureRepo(t)
	for _, tc := range []struct {
		name    string
		version string
	}{
		{"legacy", "2025-11-25"},
		{"modern", "2026-07-28"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cs := sdkSession(t, tc.version)
			if !strings.Contains(cs.InitializeResult().Instructions, "repo.brief") {
				t.Fatalf("instructions do not point agents at repo.brief: %q", cs.InitializeResult().Instructions)
			}
			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatalf("tools/list: %v", err)
			}
			byName := map[string]*mcp.Tool{}
			for _, tool := range tools.Tools {
				byName[tool.Name] = tool
			}
			for _, c := range []struct {
				tool string
				args map[string]any
			}{
				{"repo.status", map[string]any{"repoPath": repo}},
				{"repo.brief", map[string]any{"repoPath": repo}},
				{"repo.refs", map[string]any{"repoPath": repo}},
				{"commit.details", map[string]any{"repoPath": repo, "commit": "HEAD"}},
				{"fleet.radar", map[string]any{"repoPaths": []string{repo}}},
				{"shift_check_in", map[string]any{"gist": "testing the SDK client", "files": []string{"a.go"}}},
			} {
				tool := byName[c.tool]
				if tool == nil || tool.OutputSchema == nil {
					t.Fatalf("%s with outputSchema not listed", c.tool)
				}
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
				if err != nil {
					t.Fatalf("%s: %v", c.tool, err)
				}
				if res.IsError || res.StructuredContent == nil {
					t.Fatalf("%s: unexpected result: %+v", c.tool, res)
				}
				v := validateAgainst(t, tool.OutputSchema, res.StructuredContent)
				if c.tool == "repo.status" {
					data := v.(map[string]any)["data"].(map[string]any)
					// Lean shape: a dirty tree has entries (clean is derivable).
					if e, _ := data["entries"].([]any); data["branch"] != "main" || len(e) == 0 {
						t.Fatalf("repo.status data: %v", data)
					}
				}
			}
		})
	}
}

// validateAgainst compiles an advertised outputSchema on its own (no
// external references may be needed) and validates a result against it.
func validateAgainst(t *testing.T, schema, value any) any {
	t.Helper()
	schemaJSON, err := json.Marshal(schema)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	if err := c.AddResource("mem://out.json", strings.NewReader(string(schemaJSON))); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("mem://out.json")
	if err != nil {
		t.Fatalf("advertised outputSchema does not compile standalone: %v", err)
	}
	raw, _ := json.Marshal(value)
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(v); err != nil {
		t.Fatalf("structuredContent does not match outputSchema: %v", err)
	}
	return v
}

// sdkSession starts the real binary under the official go-sdk client,
// negotiating version, and checks the negotiation; the session and its
// context end with the test.
func sdkSession(t *testing.T, version string) (context.Context, *mcp.ClientSession) {
	t.Helper()
	return sdkSessionEnv(t, version, baseEnv(t))
}

// sdkSessionEnv is sdkSession with the process environment given.
func sdkSessionEnv(t *testing.T, version string, env []string) (context.Context, *mcp.ClientSession) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	cmd := exec.Command(fluxgitBin)
	cmd.Env = env
	client := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-test", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("negotiated %q, want %q", got, version)
	}
	return ctx, cs
}
