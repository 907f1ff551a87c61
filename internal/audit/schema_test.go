package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/fluxgit/fluxgit/schemas"
)

func entrySchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	raw, err := schemas.FS.ReadFile("audit-entry.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat = true
	if err := c.AddResource("mem:///audit-entry.schema.json", bytes.NewReader(raw)); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("mem:///audit-entry.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func decodeLine(t *testing.T, line []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// Every entry the ledger writes satisfies schemas/audit-entry.schema.json.
func TestEntriesMatchSchema(t *testing.T) {
	sch := entrySchema(t)
	for _, s := range []*Signer{nil, testSigner(11)} {
		path := ledgerPath(t)
		l := openTest(t, path, s, nil)
		appendN(t, l, 0, 8)
		odd := CallRecord{Tool: "bad\ttool\x00" + strings.Repeat("x", 400), Outcome: OutcomeBlocked,
			ErrorMessage: strings.Repeat("é", 600), ClientName: "\x00\x01"}
		if _, err := l.Append(EventFromCall(odd)); err != nil {
			t.Fatal(err)
		}
		for i, line := range readLines(t, path) {
			if err := sch.Validate(decodeLine(t, line)); err != nil {
				t.Errorf("entry %d does not match the schema: %#v", i+1, err)
			}
		}
	}
	// And the schema is not vacuous.
	path := ledgerPath(t)
	appendN(t, openTest(t, path, nil, nil), 0, 2)
	good := readLines(t, path)[1]
	for _, bad := range []string{
		strings.Replace(string(good), `"repo_scope":"repoId:sha256:`, `"repo_scope":"repoId:acme/secret`, 1),
		strings.Replace(string(good), `"sequence":2`, `"sequence":0`, 1),
		strings.Replace(string(good), `"risk":"high"`, `"risk":"extreme"`, 1),
		strings.Replace(string(good), `"sidecarReadOnly":true`, `"sidecarReadOnly":false`, 1),
		strings.Replace(string(good), `{`, `{"arguments":{"repoPath":"/x"},`, 1),
		strings.Replace(string(good), `"entryHash":"sha256:`, `"entryHash":"sha512:`, 1),
	} {
		if bad == string(good) {
			t.Fatalf("replacement did not apply to %s", good)
		}
		if err := sch.Validate(decodeLine(t, []byte(bad))); err == nil {
			t.Errorf("schema accepted %s", bad)
		}
	}
}

// Coalesced entries, unknown-tool entries and audit.pruned entries match
// the schema too, and the schema holds them to their shape.
func TestNewEntryKindsMatchSchema(t *testing.T) {
	sch := entrySchema(t)
	path := ledgerPath(t)
	lim := smallLimits()
	lim.window = time.Hour
	lim.retainBytes = 0 // pruned below, once every kind was written
	l := openTest(t, path, testSigner(12), lim)
	for i := 0; i < 200; i++ {
		l.RecordCall(context.Background(), unknownCall(i))
		if i%50 == 49 {
			l.RecordCall(context.Background(), successCall(i))
		}
	}
	for i := 0; i < 5; i++ {
		l.RecordCall(context.Background(), invalidCall(i))
	}
	l.Close()
	l.lim.retainBytes = ledgerDiskBytes(t, path) - 1 // the oldest segment goes
	if res, err := l.Prune(); err != nil || len(res.Prunings) != 1 {
		t.Fatalf("prune: %+v, %v", res, err)
	}
	seen := map[string][]byte{}
	for _, f := range ledgerFileNames(t, path) {
		for _, line := range readLines(t, f) {
			s := string(line)
			switch {
			case strings.Contains(s, `"event_type":"audit.pruned"`):
				seen["pruned"] = line
			case strings.Contains(s, `"count":`):
				seen["coalesced"] = line
			case strings.Contains(s, `"toolFingerprint":`):
				seen["unknown"] = line
			}
			if err := sch.Validate(decodeLine(t, line)); err != nil {
				t.Errorf("%s: %#v", line, err)
			}
		}
	}
	if len(seen) != 3 {
		t.Fatalf("the ledger lacks a kind of entry: %d kinds seen", len(seen))
	}
	for _, bad := range []struct{ kind, old, new string }{
		{"pruned", `"pruned":{`, `"notpruned":{`},
		{"pruned", `"segmentIds":["`, `"segmentIds":["x`},
		{"coalesced", `"firstAt":`, `"firstAtX":`},
		{"coalesced", `"count":`, `"count":-`},
		{"unknown", `"toolFingerprint":"sha256:`, `"toolFingerprint":"md5:`},
		{"unknown", `"event_type":"write_block"`, `"pruned":{"firstSequence":1,"lastSequence":1,"reason":"","segmentIds":["00000000-0000-4000-8000-000000000000"]},"event_type":"write_block"`},
	} {
		line := string(seen[bad.kind])
		edited := strings.Replace(line, bad.old, bad.new, 1)
		if edited == line {
			t.Fatalf("replacement %q did not apply to %s", bad.old, line)
		}
		if err := sch.Validate(decodeLine(t, []byte(edited))); err == nil {
			t.Errorf("schema accepted %s", edited)
		}
	}
}

// The approval gateway's entries (a person's decision, an execution
// outcome) match the schema, and the schema still refuses verdicts it
// does not know.
func TestGatewayEntriesMatchSchema(t *testing.T) {
	sch := entrySchema(t)
	path := ledgerPath(t)
	l := openTest(t, path, nil, nil)
	scope := RepoScope([]byte(`{"repoPath":"/tmp/repo"}`))
	events := []Event{
		{Timestamp: 1, Tool: "operation.preview.merge", EventType: EventHumanDecision, RepoScope: scope,
			ArgsFingerprint: ArgsFingerprint([]byte(`{"a":1}`)), Risk: RiskMedium, Approval: ApprovalApproved,
			Result: ResultSuccess, SessionID: "claude-code", Summary: "approved on the approval page"},
		{Timestamp: 2, Tool: "operation.preview.reset", EventType: EventHumanDecision, RepoScope: scope,
			Risk: RiskHigh, Approval: ApprovalRejected, Result: ResultSuccess, SessionID: "claude-code", Summary: "rejected in the terminal"},
		{Timestamp: 3, Tool: "operation.preview.merge", EventType: EventOperationExecution, RepoScope: scope,
			Risk: RiskMedium, Approval: ApprovalApproved, Result: ResultError, SessionID: "claude-code", DurationMS: 12, Summary: "execution failed"},
	}
	for _, e := range events {
		if _, err := l.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	lines := readLines(t, path)
	if len(lines) != len(events) {
		t.Fatalf("%d lines, want %d", len(lines), len(events))
	}
	for i, line := range lines {
		if err := sch.Validate(decodeLine(t, line)); err != nil {
			t.Errorf("entry %d: %#v", i+1, err)
		}
	}
	for _, bad := range []struct{ old, new string }{
		{`"approval":"approved"`, `"approval":"maybe"`},
		{`"event_type":"human_decision"`, `"event_type":"human_whim"`},
	} {
		edited := strings.Replace(string(lines[0]), bad.old, bad.new, 1)
		if edited == string(lines[0]) {
			t.Fatalf("replacement %q did not apply to %s", bad.old, lines[0])
		}
		if err := sch.Validate(decodeLine(t, []byte(edited))); err == nil {
			t.Errorf("schema accepted %s", edited)
		}
	}
	if rep, err := Verify(path, VerifyOptions{}); err != nil {
		t.Fatalf("verify: %v (%+v)", err, rep)
	}
}
