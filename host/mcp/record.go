package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/fluxgit/fluxgit/host/catalog"
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
	// scope, when set, is what ScopeArguments returns (see there).
	scope json.RawMessage
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
	if r.scope != nil {
		return r.scope
	}
	return r.Arguments
}

// scopeArguments builds CallRecord.scope from the raw arguments and the
// tool's path marks; nil when the arguments are not an object.
func scopeArguments(raw json.RawMessage, marks []catalog.PathArg) json.RawMessage {
	var args map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &args) != nil || args == nil {
		return nil
	}
	scope := map[string]json.RawMessage{}
	for _, k := range []string{"repoId", "repo_id"} {
		if v, ok := args[k]; ok {
			scope[k] = v
		}
	}
	for _, m := range marks {
		if m.Kind != catalog.PathRepository || len(m.Pointer) == 0 || !strings.HasPrefix(m.Pointer[0], ".") {
			continue
		}
		v, ok := args[strings.TrimPrefix(m.Pointer[0], ".")]
		if !ok {
			continue
		}
		key := "repoPath"
		if len(m.Pointer) > 1 {
			if m.Pointer[1] != "[]" {
				continue
			}
			key = "repoPaths"
		}
		if _, done := scope[key]; !done {
			scope[key] = v
		}
	}
	b, err := json.Marshal(scope)
	if err != nil {
		return nil
	}
	return b
}

// Recorder receives every tools/call, refused ones included. RecordCall
// runs on the request goroutine after the reply is built; it must not fail
// the call (the ledger logs its own failures).
type Recorder interface {
	RecordCall(ctx context.Context, rec CallRecord)
}

// recordCall wraps toolsCall with the audit hook.
func (s *Server) recordCall(ctx context.Context, rq *request, p params) (json.RawMessage, error) {
	start := time.Now()
	g := rq.gen
	res, isErr, err := s.toolsCall(ctx, rq, p)
	refusal := err
	if res != nil {
		err = nil // an argument refusal answered as a tool result
	}
	if s.opts.Recorder == nil || rq.inputRequired {
		// A call waiting for client input is recorded when it ends.
		return res, err
	}
	rec := CallRecord{Arguments: p["arguments"], ClientName: g.client.Name, ClientVersion: g.client.Version, Start: start}
	_ = json.Unmarshal(p["name"], &rec.Tool)
	if t, ok := s.opts.Catalog.Tool(rec.Tool); ok {
		rec.Known, rec.ReadOnly = true, t.ReadOnly
		rec.Event, rec.Risk = t.Audit.Event, t.Audit.Risk
		rec.scope = scopeArguments(rec.Arguments, t.Paths)
	}
	switch {
	case refusal != nil:
		rec.Outcome = OutcomeBlocked
		var re *rpcError
		if errors.As(refusal, &re) {
			rec.ErrorMessage, rec.ErrorCode = re.auditMessage(), re.Code
		} else {
			rec.ErrorMessage, rec.ErrorCode = "internal error", codeInternal
		}
	case isErr:
		rec.Outcome = OutcomeError
	default:
		rec.Outcome = OutcomeSuccess
	}
	rec.Duration = time.Since(start)
	s.opts.Recorder.RecordCall(ctx, rec)
	return res, err
}
