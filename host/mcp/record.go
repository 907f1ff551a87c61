package mcp

import (
	"context"
	"encoding/json"
	"errors"
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
	// OutcomeBlocked: a JSON-RPC error; the call never produced a result
	// (unknown tool, invalid arguments, refused path, provider failure).
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
	// Arguments are the arguments exactly as the client sent them (nil
	// when absent).
	Arguments json.RawMessage
	// ClientName and ClientVersion identify the calling agent.
	ClientName, ClientVersion string
	Outcome                   Outcome
	// ErrorMessage is the JSON-RPC error message for blocked calls.
	ErrorMessage string
	Start        time.Time
	Duration     time.Duration
}

// Recorder receives every tools/call, refused ones included. RecordCall
// runs on the request goroutine after the reply is built; it must not fail
// the call (the ledger logs its own failures).
type Recorder interface {
	RecordCall(ctx context.Context, rec CallRecord)
}

// recordCall wraps toolsCall with the audit hook.
func (s *Server) recordCall(ctx context.Context, g generation, p params) (json.RawMessage, error) {
	start := time.Now()
	res, isErr, err := s.toolsCall(ctx, g, p)
	refusal := err
	if res != nil {
		err = nil // an argument refusal answered as a tool result
	}
	if s.opts.Recorder == nil {
		return res, err
	}
	rec := CallRecord{Arguments: p["arguments"], ClientName: g.client.Name, ClientVersion: g.client.Version, Start: start}
	_ = json.Unmarshal(p["name"], &rec.Tool)
	if t, ok := s.opts.Catalog.Tool(rec.Tool); ok {
		rec.Known, rec.ReadOnly = true, t.ReadOnly
	}
	switch {
	case refusal != nil:
		rec.Outcome = OutcomeBlocked
		var re *rpcError
		if errors.As(refusal, &re) {
			rec.ErrorMessage = re.auditMessage()
		} else {
			rec.ErrorMessage = "internal error"
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
