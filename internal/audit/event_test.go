package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strings"
	"testing"
	"time"
)

func TestEventLabels(t *testing.T) {
	start := time.UnixMilli(1_700_000_000_000)
	for _, tc := range []struct {
		name                              string
		rec                               CallRecord
		eventType, approval, risk, result string
		readOnly                          bool
		summary                           string
	}{
		{"read success", CallRecord{Tool: "repo.status", Known: true, ReadOnly: true, Outcome: OutcomeSuccess},
			EventToolCall, ApprovalNotRequired, RiskNone, ResultSuccess, true, "read-only tool repo.status completed"},
		{"read tool error", CallRecord{Tool: "diff.text", Known: true, ReadOnly: true, Outcome: OutcomeError},
			EventToolCall, ApprovalNotRequired, RiskNone, ResultError, true, "read-only tool diff.text returned a structured error"},
		{"read blocked", CallRecord{Tool: "repo.status", Known: true, ReadOnly: true, Outcome: OutcomeBlocked, ErrorMessage: "Invalid params"},
			EventWriteBlock, ApprovalDenied, RiskNone, ResultBlocked, true, "read-only tool repo.status was blocked: Invalid params"},
		{"preview reset", CallRecord{Tool: "operation.preview.reset", Known: true, Event: EventWriteProposal, Risk: RiskHigh, Outcome: OutcomeSuccess},
			EventWriteProposal, ApprovalUIHandshake, RiskHigh, ResultSuccess, false, "write-proposal tool operation.preview.reset completed"},
		{"preview discard", CallRecord{Tool: "operation.preview.discard", Known: true, Event: EventWriteProposal, Risk: RiskHigh, Outcome: OutcomeError},
			EventWriteProposal, ApprovalUIHandshake, RiskHigh, ResultError, false, "write-proposal tool operation.preview.discard returned a structured error"},
		{"preview merge", CallRecord{Tool: "operation.preview.merge", Known: true, Event: EventWriteProposal, Risk: RiskMedium, Outcome: OutcomeSuccess},
			EventWriteProposal, ApprovalUIHandshake, RiskMedium, ResultSuccess, false, "write-proposal tool operation.preview.merge completed"},
		{"preview submodulePointer", CallRecord{Tool: "operation.preview.submodulePointer", Known: true, Event: EventWriteProposal, Risk: RiskMedium, Outcome: OutcomeSuccess},
			EventWriteProposal, ApprovalUIHandshake, RiskMedium, ResultSuccess, false, "write-proposal tool operation.preview.submodulePointer completed"},
		{"preview worktree", CallRecord{Tool: "operation.preview.worktree", Known: true, Event: EventWriteProposal, Risk: RiskLow, Outcome: OutcomeSuccess},
			EventWriteProposal, ApprovalUIHandshake, RiskLow, ResultSuccess, false, "write-proposal tool operation.preview.worktree completed"},
		{"preview blocked keeps its risk", CallRecord{Tool: "operation.preview.push", Known: true, Event: EventWriteProposal, Risk: RiskMedium, Outcome: OutcomeBlocked, ErrorMessage: "Invalid params"},
			EventWriteBlock, ApprovalDenied, RiskMedium, ResultBlocked, false, "write-proposal tool operation.preview.push was blocked: Invalid params"},
		{"cancel", CallRecord{Tool: "operation.cancel", Known: true, Event: EventProposalCancel, Risk: RiskNone, Outcome: OutcomeSuccess},
			EventProposalCancel, ApprovalNotRequired, RiskNone, ResultSuccess, false, "proposal-cancel tool operation.cancel completed"},
		{"other write tool", CallRecord{Tool: "shift_check_in", Known: true, Event: EventToolCall, Risk: RiskNone, Outcome: OutcomeSuccess},
			EventToolCall, ApprovalNotRequired, RiskNone, ResultSuccess, false, "tool shift_check_in completed"},
		// The labels are the record's (the tool's spec), never derived
		// from the tool's name.
		{"labels from the record, not the name", CallRecord{Tool: "operation.preview.reset", Known: true, Event: EventWriteProposal, Risk: RiskLow, Outcome: OutcomeSuccess},
			EventWriteProposal, ApprovalUIHandshake, RiskLow, ResultSuccess, false, "write-proposal tool operation.preview.reset completed"},
		{"third-party proposal tool", CallRecord{Tool: "acme.propose", Known: true, Event: EventWriteProposal, Risk: RiskHigh, Outcome: OutcomeSuccess},
			EventWriteProposal, ApprovalUIHandshake, RiskHigh, ResultSuccess, false, "write-proposal tool acme.propose completed"},
		{"write tool with a risk", CallRecord{Tool: "echo.bump", Known: true, Event: EventToolCall, Risk: RiskLow, Outcome: OutcomeError},
			EventToolCall, ApprovalNotRequired, RiskLow, ResultError, false, "tool echo.bump returned a structured error"},
		{"proposal tool without labels is a plain tool call", CallRecord{Tool: "operation.preview.merge", Known: true, Outcome: OutcomeSuccess},
			EventToolCall, ApprovalNotRequired, RiskNone, ResultSuccess, false, "tool operation.preview.merge completed"},
		{"unknown risk label", CallRecord{Tool: "acme.propose", Known: true, Event: EventWriteProposal, Risk: "extreme", Outcome: OutcomeSuccess},
			EventWriteProposal, ApprovalUIHandshake, RiskNone, ResultSuccess, false, "write-proposal tool acme.propose completed"},
		{"read-only tool cannot claim a risk", CallRecord{Tool: "repo.status", Known: true, ReadOnly: true, Event: EventWriteProposal, Risk: RiskHigh, Outcome: OutcomeSuccess},
			EventToolCall, ApprovalNotRequired, RiskNone, ResultSuccess, true, "read-only tool repo.status completed"},
		{"unknown tool ignores labels", CallRecord{Tool: "operation.preview.nuke", Event: EventWriteProposal, Risk: RiskHigh, Outcome: OutcomeBlocked, ErrorMessage: "Unknown tool 'x'"},
			EventWriteBlock, ApprovalDenied, RiskNone, ResultBlocked, false, "tool operation.preview.nuke was blocked: no tool of this name is served"},
		{"unknown tool", CallRecord{Tool: "operation.preview.nuke", Outcome: OutcomeBlocked, ErrorMessage: "Unknown tool 'operation.preview.nuke'"},
			EventWriteBlock, ApprovalDenied, RiskNone, ResultBlocked, false, "tool operation.preview.nuke was blocked: no tool of this name is served"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.rec.Start, tc.rec.Duration = start, 1500*time.Microsecond
			e := EventFromCall(tc.rec)
			if e.EventType != tc.eventType || e.Approval != tc.approval || e.Risk != tc.risk || e.Result != tc.result || e.ReadOnly != tc.readOnly {
				t.Fatalf("labels = %s/%s/%s/%s readOnly=%v", e.EventType, e.Approval, e.Risk, e.Result, e.ReadOnly)
			}
			if e.Summary != tc.summary {
				t.Fatalf("summary %q", e.Summary)
			}
			if e.Timestamp != 1_700_000_000_001 || e.DurationMS != 1 {
				t.Fatalf("timestamp %d duration %d", e.Timestamp, e.DurationMS)
			}
			if e.SessionID != FallbackSessionID || e.RepoScope != "unknown" || e.ArgsFingerprint != "" {
				t.Fatalf("session %q scope %q fp %q", e.SessionID, e.RepoScope, e.ArgsFingerprint)
			}
		})
	}
}

func TestEventObjectIsSorted(t *testing.T) {
	o := EventFromCall(CallRecord{Tool: "x"}).object()
	if !sort.SliceIsSorted(o, func(i, j int) bool { return o[i].Key < o[j].Key }) {
		t.Fatal("Event.object must be sorted for Object.Get/Set")
	}
}

func hexSHA(b string) string {
	s := sha256.Sum256([]byte(b))
	return hex.EncodeToString(s[:])
}

func TestRepoScopeNeverInClear(t *testing.T) {
	idHash := hexSHA("fluxgit-mcp-repo-id-v1\x00" + `"acme/secret-repo"`)
	for _, tc := range []struct{ args, want string }{
		{`{"repoId":"acme/secret-repo","repoPath":"/x"}`, "repoId:sha256:" + idHash},
		{`{"repo_id":"acme/secret-repo"}`, "repoId:sha256:" + idHash},
		{`{"repoId":42}`, "repoId:sha256:" + hexSHA("fluxgit-mcp-repo-id-v1\x0042")},
		{`{"repoId":null,"repoPath":"/home/ada/src/x"}`, "repoPath:sha256:" + hexSHA(`"/home/ada/src/x"`)},
		{`{"repoPath":"/home/ada/src/x"}`, "repoPath:sha256:" + hexSHA(`"/home/ada/src/x"`)},
		{`{"repoPaths":["/a","/b","/c"]}`, "fleet:3"},
		{`{"repositories":[{"repoPath":"/a"}]}`, "fleet:1"},
		{`{"repoPaths":"not-a-list"}`, "unknown"},
		{`{}`, "unknown"},
		{`[1,2]`, "unknown"},
		{`null`, "unknown"},
		{``, "unknown"},
		{`{"repoPath":`, "unknown"},
	} {
		got := RepoScope([]byte(tc.args))
		if got != tc.want {
			t.Errorf("RepoScope(%s) = %s, want %s", tc.args, got, tc.want)
		}
		if strings.Contains(got, "secret") || strings.Contains(got, "/home") {
			t.Errorf("RepoScope(%s) leaks the identifier: %s", tc.args, got)
		}
	}
}

func TestArgsFingerprint(t *testing.T) {
	a := ArgsFingerprint([]byte(`{"b": 1, "a": "x"}`))
	b := ArgsFingerprint([]byte(`{"a":"x","b":1}`))
	if a != b || a != "sha256:"+hexSHA(`{"a":"x","b":1}`) {
		t.Fatalf("fingerprint not canonical: %s %s", a, b)
	}
	if ArgsFingerprint(nil) != "" || ArgsFingerprint([]byte("null")) != "" {
		t.Fatal("absent arguments must have no fingerprint")
	}
	// Not canonicalizable: hashed as sent, still never in clear.
	if got := ArgsFingerprint([]byte(`{"n":1e999}`)); got != "sha256:"+hexSHA(`{"n":1e999}`) {
		t.Fatalf("fallback fingerprint %s", got)
	}
}

func TestSessionID(t *testing.T) {
	for in, want := range map[string]string{
		"claude-code":                   "claude-code",
		"  Claude Code  ":               "Claude-Code",
		"codex/cli (v2)":                "codex-cli-v2",
		"a___b..c::d":                   "a___b..c::d",
		"--x--":                         "x",
		"!!!":                           FallbackSessionID,
		"":                              FallbackSessionID,
		"ünï cødé":                      "n-c-d",
		strings.Repeat("a", 200):        strings.Repeat("a", 128),
		strings.Repeat("a", 127) + "!b": strings.Repeat("a", 127),
	} {
		if got := SessionID(in); got != want {
			t.Errorf("SessionID(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestBoundText(t *testing.T) {
	if got := BoundText("a\nb\tc\x00d\u0085e", 512); got != "a b c d e" {
		t.Fatalf("control characters: %q", got)
	}
	long := strings.Repeat("é", 600)
	got := BoundText(long, MaxSummaryChars)
	if n := len([]rune(got)); n != MaxSummaryChars || !strings.HasSuffix(got, "é.") {
		t.Fatalf("bounded to %d chars, suffix %q", n, got[len(got)-4:])
	}
	exact := strings.Repeat("x", MaxSummaryChars)
	if BoundText(exact, MaxSummaryChars) != exact {
		t.Fatal("a text of exactly the bound must be kept")
	}
	// A blocked call's entry is bounded even for a huge tool name: a served
	// tool's name (which the catalog bounds anyway) to MaxToolChars, the
	// summary to MaxSummaryChars; an unknown name keeps only a prefix and
	// its fingerprint, never the 10 KB the caller sent.
	for _, tc := range []struct {
		known          bool
		tool, sum, fpr int
	}{
		{true, MaxToolChars, -1, 0},
		{false, MaxUnknownToolChars, -1, 1},
	} {
		name := strings.Repeat("t", 10_000)
		e := EventFromCall(CallRecord{Tool: name, Known: tc.known, Outcome: OutcomeBlocked, ErrorMessage: strings.Repeat("m", 10_000)})
		o := e.object()
		tool, _ := stringField(o, "tool")
		sum, _ := stringField(o, "summary")
		fp, hasFP := stringField(o, "toolFingerprint")
		if len([]rune(tool)) != tc.tool || (tc.sum >= 0 && len([]rune(sum)) != tc.sum) || len([]rune(sum)) > MaxSummaryChars {
			t.Fatalf("known=%v: tool %d chars, summary %d chars", tc.known, len(tool), len(sum))
		}
		if hasFP != (tc.fpr == 1) || (hasFP && fp != sha256Label([]byte(name))) {
			t.Fatalf("known=%v: toolFingerprint %q", tc.known, fp)
		}
		if !tc.known && strings.Count(sum, "t") > MaxUnknownToolChars+10 {
			t.Fatalf("summary repeats the unknown name: %q", sum)
		}
	}
}
