package tests

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fluxgit/fluxgit/tests/gatewaytest"
)

// minimalArgs are the required operation arguments of each preview.
func minimalArgs(repo string) map[string]map[string]any {
	m := map[string]map[string]any{}
	for _, c := range bodyCases(repo, "") {
		if _, ok := m[c.op]; !ok {
			m[c.op] = c.args
		}
	}
	return m
}

// The fourteen handshake tools are listed with explicit annotations
// (readOnlyHint false on previews and cancel, true on status; previews
// never idempotent; destructive and open-world as the catalog says), a
// closed inputSchema and an outputSchema.
func TestHandshakeToolsListed(t *testing.T) {
	s := startServer(t, baseEnv(t))
	initialize(t, s)
	r := s.call(1, "tools/list", nil)
	var res struct {
		Tools []struct {
			Name         string                     `json:"name"`
			Annotations  map[string]json.RawMessage `json:"annotations"`
			InputSchema  map[string]any             `json:"inputSchema"`
			OutputSchema map[string]any             `json:"outputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil {
		t.Fatalf("tools/list: %v: %s", err, r.raw)
	}
	listed := map[string]int{}
	for i, tool := range res.Tools {
		listed[tool.Name] = i
	}
	// The annotations of each class of write tool; "" means absent.
	destructive := map[string]bool{"merge": true, "rebase": true, "discard": true, "reset": true, "patch": true, "plan": true, "push": true, "branchDelete": true}
	for _, name := range handshakeTools() {
		i, ok := listed[name]
		if !ok {
			t.Errorf("%s is not listed", name)
			continue
		}
		tool := res.Tools[i]
		op, isPreview := strings.CutPrefix(name, "operation.preview.")
		want := map[string]string{"readOnlyHint": "false", "destructiveHint": "false", "idempotentHint": "false", "openWorldHint": "false"}
		switch {
		case name == "operation.status":
			want = map[string]string{"readOnlyHint": "true", "destructiveHint": "", "idempotentHint": "true", "openWorldHint": "false"}
		case name == "operation.cancel":
			want["idempotentHint"] = "true"
		case isPreview:
			want["destructiveHint"] = jsonOf(destructive[op])
			want["openWorldHint"] = jsonOf(op == "push")
		}
		for k, v := range want {
			if got := string(tool.Annotations[k]); got != v {
				t.Errorf("%s %s = %q, want %q", name, k, got, v)
			}
		}
		// A preview's served schema leaves out the informational repoId
		// (x-fluxgit-served: false), so it must not be closed: the host
		// still accepts repoId. operation.status and cancel leave nothing out.
		props, _ := tool.InputSchema["properties"].(map[string]any)
		_, listsRepoID := props["repoId"]
		if closed := tool.InputSchema["additionalProperties"] == false; closed != !isPreview || listsRepoID || tool.OutputSchema == nil {
			t.Errorf("%s: inputSchema closed %v (want %v), lists repoId %v, outputSchema %v", name, closed, !isPreview, listsRepoID, tool.OutputSchema != nil)
		}
	}
}

// Through the official Go SDK client, in both generations: the tools are
// listed with their annotations, and every kind of result (completed,
// live, terminal failure, status, cancel, unknown id) validates against
// the tool's outputSchema.
func TestHandshakeSDKClient(t *testing.T) {
	g := gatewaytest.New(t)
	repo := fixtureRepo(t)
	args := minimalArgs(repo)
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			g.ResetRecords()
			ctx, cs := sdkSessionEnv(t, version, handshakeEnv(t, g))
			list, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatalf("tools/list: %v", err)
			}
			byName := map[string]*mcp.Tool{}
			for _, tool := range list.Tools {
				byName[tool.Name] = tool
			}
			for _, name := range handshakeTools() {
				tool := byName[name]
				if tool == nil || tool.OutputSchema == nil || tool.Annotations == nil {
					t.Fatalf("%s not listed with annotations and an outputSchema", name)
				}
				if tool.Annotations.ReadOnlyHint != (name == "operation.status") {
					t.Fatalf("%s readOnlyHint %v", name, tool.Annotations.ReadOnlyHint)
				}
			}
			call := func(name string, a map[string]any) (map[string]any, bool) {
				t.Helper()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: a})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if res.StructuredContent == nil {
					t.Fatalf("%s: no structuredContent", name)
				}
				v := validateAgainst(t, byName[name].OutputSchema, res.StructuredContent)
				return v.(map[string]any), res.IsError
			}
			for _, op := range gatewaytest.Ops {
				g.Script(gatewaytest.Plan{Statuses: []string{"completed"}})
				p, isErr := call("operation.preview."+op, withPreviewBase(args[op], repo))
				if isErr || p["status"] != "completed" {
					t.Fatalf("%s completed: %s", op, jsonOf(p))
				}
			}
			g.Script(gatewaytest.Plan{Statuses: []string{"rejected"}})
			if p, isErr := call("operation.preview.discard", withPreviewBase(args["discard"], repo)); !isErr || p["status"] != "rejected" {
				t.Fatalf("rejected: %s", jsonOf(p))
			}
			live, isErr := call("operation.preview.merge", withPreviewBase(args["merge"], repo))
			id, _ := live["previewId"].(string)
			if isErr || live["accepted"] != true || id == "" {
				t.Fatalf("live: %s", jsonOf(live))
			}
			if p, isErr := call("operation.status", map[string]any{"previewId": id}); isErr || p["previewId"] != id {
				t.Fatalf("status: %s", jsonOf(p))
			}
			if p, isErr := call("operation.cancel", map[string]any{"previewId": id}); isErr || p["status"] != "cancelled" {
				t.Fatalf("cancel: %s", jsonOf(p))
			}
			if p, isErr := call("operation.status", map[string]any{"previewId": gatewaytest.NewUUID()}); !isErr {
				t.Fatalf("unknown id: %s", jsonOf(p))
			}
			for _, r := range g.RequestsTo(gatewaytest.Preview) {
				if r.JSON()["agentId"] != "go-sdk-test" {
					t.Fatalf("agentId %v, want the SDK client's name", r.JSON()["agentId"])
				}
			}
			noViolations(t, g)
		})
	}
	// Not connected: the 10003 result validates too.
	ctx, cs := sdkSessionEnv(t, "2026-07-28", handshakeEnv(t, nil))
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range list.Tools {
		if tool.Name != "operation.preview.push" {
			continue
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool.Name, Arguments: withPreviewBase(nil, repo)})
		if err != nil || !res.IsError {
			t.Fatalf("push without a gateway: %v %+v", err, res)
		}
		validateAgainst(t, tool.OutputSchema, res.StructuredContent)
	}
}

// Write proposals are audited with their own labels: a preview is a
// write_proposal approved through the ui_handshake with the operation's
// risk, a cancel a proposal_cancel, a status read a plain read; a refused
// preview is a write_block. Nothing of the proposal is in clear.
func TestHandshakeAudit(t *testing.T) {
	g := gatewaytest.New(t)
	repo := fixtureRepo(t)
	dir := filepath.Join(t.TempDir(), "audit")
	if err := os.Mkdir(dir, 0o700); err != nil { // the ledger's directory must be private
		t.Fatal(err)
	}
	ledger := filepath.Join(dir, "mcp.jsonl")
	h := handshakeSession(t, auditEnv(t, ledger, "FLUXGIT_MCP_HANDSHAKE_ADDR="+g.Addr()), agentName)
	args := minimalArgs(repo)
	for _, op := range []string{"reset", "discard", "merge", "branchDelete", "commit", "branch"} {
		h.preview(t, op, repo, args[op])
	}
	id := h.preview(t, "worktree", repo, args["worktree"])["previewId"].(string)
	toolPayload(t, h.tool("operation.status", map[string]any{"previewId": id}))
	toolPayload(t, h.tool("operation.cancel", map[string]any{"previewId": id}))
	if code := codeOf(t, h.tool("operation.preview.rebase", withPreviewBase(map[string]any{"ontoRef": "main", "interactive": true}, repo))); code != -32602 {
		t.Fatalf("interactive rebase: %d", code)
	}
	h.stop()
	raw, err := os.ReadFile(ledger)
	if err != nil {
		t.Fatal(err)
	}
	for _, clear := range []string{repo, previewReason, id} {
		if bytes.Contains(raw, []byte(clear)) {
			t.Errorf("ledger holds %q in clear", clear)
		}
	}
	entries := ledgerEntries(t, ledger)
	if len(entries) != 10 {
		t.Fatalf("%d ledger entries, want 10", len(entries))
	}
	for i, w := range []map[string]any{
		{"tool": "operation.preview.reset", "event_type": "write_proposal", "approval": "ui_handshake", "risk": "high", "readOnly": false, "result": "success"},
		{"tool": "operation.preview.discard", "event_type": "write_proposal", "approval": "ui_handshake", "risk": "high", "readOnly": false, "result": "success"},
		{"tool": "operation.preview.merge", "event_type": "write_proposal", "approval": "ui_handshake", "risk": "medium", "readOnly": false, "result": "success"},
		{"tool": "operation.preview.branchDelete", "event_type": "write_proposal", "approval": "ui_handshake", "risk": "medium", "readOnly": false, "result": "success"},
		{"tool": "operation.preview.commit", "event_type": "write_proposal", "approval": "ui_handshake", "risk": "low", "readOnly": false, "result": "success"},
		{"tool": "operation.preview.branch", "event_type": "write_proposal", "approval": "ui_handshake", "risk": "low", "readOnly": false, "result": "success"},
		{"tool": "operation.preview.worktree", "event_type": "write_proposal", "approval": "ui_handshake", "risk": "low", "readOnly": false, "result": "success"},
		{"tool": "operation.status", "event_type": "tool_call", "approval": "not_required", "risk": "none", "readOnly": true, "result": "success"},
		{"tool": "operation.cancel", "event_type": "proposal_cancel", "approval": "not_required", "risk": "none", "readOnly": false, "result": "success"},
		{"tool": "operation.preview.rebase", "event_type": "write_block", "approval": "denied", "readOnly": false, "result": "blocked"},
	} {
		for k, v := range w {
			if entries[i][k] != v {
				t.Errorf("entry %d (%v): %s = %v, want %v", i+1, entries[i]["tool"], k, entries[i][k], v)
			}
		}
		if entries[i]["session_id"] != agentName {
			t.Errorf("entry %d: session_id %v", i+1, entries[i]["session_id"])
		}
	}
	noViolations(t, g)
}
