package mcp

import (
	"strings"
	"testing"

	"github.com/fluxgit/fluxgit/host/repopath"
)

// The ledger's labels come from each tool's spec (its audit field), carried
// on the record; refused calls keep them, so a blocked proposal still says
// what it would have risked.
func TestRecordCarriesSpecAuditLabels(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, tool  string
		args        map[string]any
		event, risk string
		details     string // a substring of the refusal the model sees; "" for none
	}{
		{"read tool", "repo.status", map[string]any{"repoPath": dir}, "tool_call", "none", ""},
		{"reset proposal", "operation.preview.reset", map[string]any{"repoPath": dir, "targetRef": "HEAD~1"}, "write_proposal", "high", "arguments.reason is required"},
		{"interactive rebase is refused by the schema", "operation.preview.rebase",
			map[string]any{"repoPath": dir, "ontoRef": "main", "reason": "r", "interactive": true}, "write_proposal", "medium", "arguments.interactive must be false"},
		{"branch proposal", "operation.preview.branch", map[string]any{"repoPath": dir, "name": "-x", "reason": "r"}, "write_proposal", "low", "arguments.name must not start with '-'"},
		{"cancel", "operation.cancel", map[string]any{"previewId": "bad id"}, "proposal_cancel", "none", "arguments.previewId must match the pattern"},
		{"status", "operation.status", map[string]any{}, "tool_call", "none", "arguments.previewId is required"},
		{"unknown tool", "operation.preview.nuke", map[string]any{}, "", "", "Unknown tool"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _, rec := testServer(t, repopath.Policy{})
			res, err := send(t, s, "tools/call", map[string]any{"name": tc.tool, "arguments": tc.args, "_meta": modernMeta})
			got := rec.last()
			if got.Event != tc.event || got.Risk != tc.risk {
				t.Fatalf("record labels %q/%q, want %q/%q", got.Event, got.Risk, tc.event, tc.risk)
			}
			if tc.details == "" {
				return
			}
			text := string(res)
			if err != nil {
				text = err.Error()
				if re, ok := err.(*rpcError); ok {
					text += " " + re.Message
				}
			}
			if got.Outcome != OutcomeBlocked || !strings.Contains(text, tc.details) {
				t.Fatalf("outcome %s, reply %s, want a refusal saying %q", got.Outcome, text, tc.details)
			}
		})
	}
}
