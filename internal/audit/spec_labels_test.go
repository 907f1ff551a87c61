package audit

import (
	"testing"

	"github.com/fluxgit/fluxgit/host/catalog"
)

// The built-in spec carries the ledger labels of every write-handshake
// tool (the reference's table: reset and discard high; merge, rebase,
// patch, plan, push, branchDelete and submodulePointer medium; worktree,
// commit and branch low; the cancel none), and EventFromCall writes what
// the record carries from it.
func TestSpecAuditLabels(t *testing.T) {
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct{ event, approval, risk string }{
		"operation.preview.reset":            {EventWriteProposal, ApprovalUIHandshake, RiskHigh},
		"operation.preview.discard":          {EventWriteProposal, ApprovalUIHandshake, RiskHigh},
		"operation.preview.merge":            {EventWriteProposal, ApprovalUIHandshake, RiskMedium},
		"operation.preview.rebase":           {EventWriteProposal, ApprovalUIHandshake, RiskMedium},
		"operation.preview.patch":            {EventWriteProposal, ApprovalUIHandshake, RiskMedium},
		"operation.preview.plan":             {EventWriteProposal, ApprovalUIHandshake, RiskMedium},
		"operation.preview.push":             {EventWriteProposal, ApprovalUIHandshake, RiskMedium},
		"operation.preview.branchDelete":     {EventWriteProposal, ApprovalUIHandshake, RiskMedium},
		"operation.preview.submodulePointer": {EventWriteProposal, ApprovalUIHandshake, RiskMedium},
		"operation.preview.worktree":         {EventWriteProposal, ApprovalUIHandshake, RiskLow},
		"operation.preview.commit":           {EventWriteProposal, ApprovalUIHandshake, RiskLow},
		"operation.preview.branch":           {EventWriteProposal, ApprovalUIHandshake, RiskLow},
		"operation.cancel":                   {EventProposalCancel, ApprovalNotRequired, RiskNone},
		"operation.status":                   {EventToolCall, ApprovalNotRequired, RiskNone},
		"repo.status":                        {EventToolCall, ApprovalNotRequired, RiskNone},
		"shift_check_in":                     {EventToolCall, ApprovalNotRequired, RiskNone},
	}
	for name, w := range want {
		t.Run(name, func(t *testing.T) {
			tool, ok := cat.Tool(name)
			if !ok {
				t.Fatalf("%s is not in the spec", name)
			}
			rec := CallRecord{Tool: name, Known: true, ReadOnly: tool.ReadOnly, Event: tool.Audit.Event, Risk: tool.Audit.Risk, Outcome: OutcomeSuccess}
			e := EventFromCall(rec)
			if e.EventType != w.event || e.Approval != w.approval || e.Risk != w.risk {
				t.Fatalf("labels %s/%s/%s, want %s/%s/%s", e.EventType, e.Approval, e.Risk, w.event, w.approval, w.risk)
			}
			rec.Outcome = OutcomeBlocked
			if e := EventFromCall(rec); e.EventType != EventWriteBlock || e.Approval != ApprovalDenied || e.Risk != w.risk {
				t.Fatalf("blocked: labels %s/%s/%s, want %s/%s/%s", e.EventType, e.Approval, e.Risk, EventWriteBlock, ApprovalDenied, w.risk)
			}
		})
	}
	// Every read-only tool of the spec is a plain call with no risk.
	for _, tool := range cat.Tools {
		if tool.ReadOnly && (tool.Audit.Event != EventToolCall || tool.Audit.Risk != RiskNone) {
			t.Errorf("read-only %s has audit %s/%s", tool.Name, tool.Audit.Event, tool.Audit.Risk)
		}
	}
}
