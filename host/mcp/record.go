package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/fluxgit/fluxgit/host/catalog"
	"github.com/fluxgit/fluxgit/internal/audit"
)

// Outcome classifies how a tools/call ended; the type is the ledger's
// (internal/audit), so the ledger needs nothing from this package.
type Outcome = audit.Outcome

// Outcomes of a tools/call.
const (
	OutcomeSuccess = audit.OutcomeSuccess
	OutcomeError   = audit.OutcomeError
	OutcomeBlocked = audit.OutcomeBlocked
)

// CallRecord describes one tools/call after it ended (see audit.CallRecord).
type CallRecord = audit.CallRecord

// scopeArguments builds CallRecord.Scope from the raw arguments and the
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
	if refusal == nil && !rq.inputRequired && !rq.taskCreated {
		s.recordPresence(rq, p, res)
	}
	if s.opts.Recorder == nil || rq.inputRequired || rq.taskRunning {
		// A call waiting for client input, or running as a host-run task,
		// is recorded when it ends; one a provider answered with its own
		// task has ended as far as the host can tell.
		return res, err
	}
	rec := CallRecord{Arguments: p["arguments"], ClientName: g.client.Name, ClientVersion: g.client.Version, Start: start}
	_ = json.Unmarshal(p["name"], &rec.Tool)
	if t, ok := s.opts.Catalog.Tool(rec.Tool); ok {
		rec.Known, rec.ReadOnly = true, t.ReadOnly
		rec.Event, rec.Risk = t.Audit.Event, t.Audit.Risk
		rec.Scope = scopeArguments(rec.Arguments, t.Paths)
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

// Presence keeps this process's presence record (host/presence), which
// lets other agents' sidecars see which repositories this client works
// in. Record must not fail or block the call for long; Close deletes the
// record.
type Presence interface {
	Record(clientName, clientVersion, repoPath, tool string)
	Close()
}

// recordPresence notes a call that named a repository: every read, even
// one that failed at tool level, and a write only when FluxGit accepted
// it (acceptedProposal). Refused calls never reach here.
func (s *Server) recordPresence(rq *request, p params, res json.RawMessage) {
	if s.opts.Presence == nil || rq.repoPath == "" || res == nil {
		return
	}
	var name string
	_ = json.Unmarshal(p["name"], &name)
	t, ok := s.opts.Catalog.Tool(name)
	if !ok || (!t.ReadOnly && !acceptedProposal(res)) {
		return
	}
	c := rq.gen.client
	if c.Version == "" && rq.sess != nil {
		// A modern request without its own clientInfo version falls back to
		// the one initialize gave.
		rq.sess.mu.Lock()
		c.Version = rq.sess.legacy.client.Version
		rq.sess.mu.Unlock()
	}
	s.opts.Presence.Record(c.Name, c.Version, rq.repoPath, name)
}

// acceptedProposal reports whether a write tool's result says FluxGit
// took the request: its payload carries a string previewId and a status
// other than "refused". Not connected (10003) and refused (10006) results
// do not count; a proposal that later ended (10004) does. A proposal made
// as a task (its creation result: taskId at the top on 2026-07-28, under
// task on 2025-11-25) counts too: the provider answers with a task only
// for a proposal the gateway holds (plugins/proposals, proposalID).
func acceptedProposal(res json.RawMessage) bool {
	var out struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		TaskID any `json:"taskId"`
		Task   *struct {
			TaskID any `json:"taskId"`
		} `json:"task"`
	}
	if json.Unmarshal(res, &out) != nil {
		return false
	}
	if _, ok := out.TaskID.(string); ok {
		return true
	}
	if out.Task != nil {
		_, ok := out.Task.TaskID.(string)
		return ok
	}
	if len(out.Content) == 0 {
		return false
	}
	var payload struct {
		PreviewID any `json:"previewId"`
		Status    any `json:"status"`
	}
	if json.Unmarshal([]byte(out.Content[0].Text), &payload) != nil {
		return false
	}
	_, ok := payload.PreviewID.(string)
	return ok && payload.Status != "refused"
}
