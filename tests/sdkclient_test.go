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
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.Command(fluxgitBin)
			cmd.Env = baseEnv(t)
			client := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-test", Version: "1.0.0"}, nil)
			cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: tc.version})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer cs.Close()
			if got := cs.InitializeResult().ProtocolVersion; got != tc.version {
				t.Fatalf("negotiated %q, want %q", got, tc.version)
			}
			if !strings.Contains(cs.InitializeResult().Instructions, "repo.brief") {
				t.Fatalf("instructions do not point agents at repo.brief: %q", cs.InitializeResult().Instructions)
			}
			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatalf("tools/list: %v", err)
			}
			var status *mcp.Tool
			for _, tool := range tools.Tools {
				if tool.Name == "repo.status" {
					status = tool
				}
			}
			if status == nil || status.OutputSchema == nil {
				t.Fatalf("repo.status with outputSchema not listed: %+v", tools.Tools)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "repo.status", Arguments: map[string]any{"repoPath": repo}})
			if err != nil {
				t.Fatalf("tools/call: %v", err)
			}
			if res.IsError || res.StructuredContent == nil {
				t.Fatalf("unexpected result: %+v", res)
			}
			schemaJSON, err := json.Marshal(status.OutputSchema)
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
			raw, _ := json.Marshal(res.StructuredContent)
			var v any
			if err := json.Unmarshal(raw, &v); err != nil {
				t.Fatal(err)
			}
			if err := sch.Validate(v); err != nil {
				t.Fatalf("structuredContent does not match outputSchema: %v", err)
			}
			data := v.(map[string]any)["data"].(map[string]any)
			if data["branch"] != "main" || data["clean"] != false {
				t.Fatalf("repo.status data: %v", data)
			}
		})
	}
}
