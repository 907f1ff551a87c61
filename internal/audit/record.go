package audit

import (
	"encoding/json"
	"time"
)

// Outcome classifies how a tools/call ended, for the audit ledger.
type Outcome string

// Outcomes of a tools/call.
const (
	// OutcomeSuccess: a tool result without an error.
	OutcomeSuccess Outcome = "success"
	// OutcomeError: a tool result with isError (the tool ran and failed).
	OutcomeError Outcome = "error"
	// OutcomeBlocked: the call was refused — a JSON-RPC error (unknown
	// tool, invalid arguments, refused path, provider failure), or a
	// refusal delivered as an isError result (see argumentRefused).
	OutcomeBlocked Outcome = "blocked"
)

// CallRecord describes one tools/call after it ended. Recorders get the
// raw arguments so they can fingerprint them; they must never store them.
type CallRecord struct {
	Tool string
	// Known is false when no tool of this name is served.
	Known bool
	// ReadOnly is the tool's readOnlyHint (false for unknown tools).
	ReadOnly bool
	// Event and Risk are the audit labels of the tool's spec (its audit
	// field: tool_call, write_proposal or proposal_cancel; none, low,
	// medium or high); empty for unknown tools.
	Event, Risk string
	// Arguments are the arguments exactly as the client sent them (nil
	// when absent).
	Arguments json.RawMessage
	// Scope, when set, is what ScopeArguments returns (see there).
	Scope json.RawMessage
	// ClientName and ClientVersion identify the calling agent.
	ClientName, ClientVersion string
	Outcome                   Outcome
	// ErrorMessage is the JSON-RPC error message for blocked calls.
	ErrorMessage string
	// ErrorCode is the JSON-RPC error code for blocked calls (0 when the
	// call was not blocked). Recorders key repeated refusals by it: unlike
	// the message, it never carries text the client chose.
	ErrorCode int64
	Start     time.Time
	Duration  time.Duration
}

// ScopeArguments are the arguments that name the repository a call
// targets, for the ledger's repo_scope: for a served tool, the value of its
// first top-level argument marked x-fluxgit-path: repository under the key
// repoPath, the first array of marked repositories under repoPaths, and
// repoId / repo_id as sent — so repo_scope follows the spec's marks, not
// argument names, yet keeps its format. For unknown tools (and records
// built elsewhere) they are the raw Arguments.
func (r CallRecord) ScopeArguments() json.RawMessage {
	if r.Scope != nil {
		return r.Scope
	}
	return r.Arguments
}
