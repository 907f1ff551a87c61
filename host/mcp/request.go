package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/fluxgit/fluxgit/host/rpc"
	"github.com/fluxgit/fluxgit/internal/wire"
)

// request is one request being served: its generation and the session its
// request-scoped notifications (progress, log messages) and client
// requests go to. sess is nil when the host's work is driven without a
// connection (benchmarks); then every event is dropped.
type request struct {
	sess *Session
	gen  generation
	id   jsonrpc2.ID
	// ctx is the request's own context: it ends when the client cancels
	// the request, and with it every client request made for it.
	ctx context.Context

	mu           sync.Mutex
	done         bool // the reply is built: nothing request-scoped may follow
	progressSent bool
	lastProgress float64
	logs         int // log messages sent
	dropped      int // log messages over maxLogsPerCall

	// inputRequired marks a reply that asks the client for input (MCP
	// 2026-07-28 multi round-trip): resultType input_required, and the
	// call is recorded when it ends, not now.
	inputRequired bool
	// taskCreated marks a reply that is a CreateTaskResult: resultType
	// task, and the call is recorded when its task ends.
	taskCreated bool
	// taskRunning marks a host-run task's creation: the call goes on in
	// the background and is recorded when its task ends.
	taskRunning bool
	// repoPath is the canonical repository the call named ("" when none),
	// for the presence record (record.go).
	repoPath string
}

// meta is what the provider learns about the caller.
func (rq *request) meta(roots []string) wire.Meta {
	m := wire.Meta{ClientName: rq.gen.client.Name, ClientVersion: rq.gen.client.Version, AllowedRoots: roots,
		Progress: rq.gen.progressToken != nil, LogLevel: rq.gen.logLevel,
		Client: wire.ClientCaps{Sampling: rq.gen.caps.sampling, Elicitation: rq.gen.caps.elicitation, Roots: rq.gen.caps.roots}}
	if rq.sess != nil {
		m.RequestID = string(rq.sess.originalID(rq.id))
	}
	return m
}

// events is the EventFunc handed to the provider call.
func (rq *request) events(ev wire.Event, answer func(context.Context, *wire.Answer) error) {
	switch {
	case ev.Progress != nil:
		rq.progress(ev.Progress)
	case ev.Log != nil:
		rq.logLine(ev.Log)
	case ev.Request != nil:
		rq.clientRequest(ev.Request, answer)
	}
}

// progress forwards a progress report when the client sent a progress
// token. MCP requires progress to increase with every notification, so a
// report that does not move forward is dropped rather than sent.
func (rq *request) progress(p *wire.Progress) {
	if rq.sess == nil || rq.gen.progressToken == nil {
		return
	}
	rq.mu.Lock()
	if rq.done || (rq.progressSent && p.Progress <= rq.lastProgress) {
		rq.mu.Unlock()
		return
	}
	rq.progressSent, rq.lastProgress = true, p.Progress
	params := map[string]any{"progressToken": rq.gen.progressToken, "progress": p.Progress}
	if p.Total != nil {
		params["total"] = *p.Total
	}
	// message arrived in 2025-03-26; older clients never see it.
	if p.Message != "" && (rq.gen.modern || rq.gen.version >= V20250326) {
		params["message"] = p.Message
	}
	// Sent under the lock so two reports cannot overtake each other.
	rq.sess.notifyFor(&rq.id, "notifications/progress", params)
	rq.mu.Unlock()
}

// logLine forwards a provider's log message when the request's level
// admits it, at most maxLogsPerCall per call.
func (rq *request) logLine(l *wire.Log) {
	if rq.sess == nil || !wants(rq.gen.logLevel, l.Level) {
		return
	}
	msg, err := logMessage(l.Level, l.Logger, l.Data)
	if err != nil {
		return
	}
	rq.mu.Lock()
	defer rq.mu.Unlock()
	if rq.done {
		return
	}
	if rq.logs >= maxLogsPerCall {
		rq.dropped++
		return
	}
	rq.logs++
	rq.sess.notifyFor(&rq.id, "notifications/message", json.RawMessage(msg))
}

// finish ends the request-scoped stream: nothing more is forwarded, and
// log messages dropped over the cap are reported in one line.
func (rq *request) finish() {
	rq.mu.Lock()
	defer rq.mu.Unlock()
	if rq.done {
		return
	}
	rq.done = true
	if rq.dropped > 0 && rq.sess != nil && wants(rq.gen.logLevel, "warning") {
		data, _ := rpc.Marshal(fmt.Sprintf("%d more log messages of this request were dropped (at most %d are sent per request)", rq.dropped, maxLogsPerCall))
		if msg, err := logMessage("warning", "fluxgit", data); err == nil {
			rq.sess.notifyFor(&rq.id, "notifications/message", json.RawMessage(msg))
		}
	}
}

// clientRequestTimeout bounds how long a provider waits for the client to
// answer a sampling or elicitation request (a person may be answering).
const clientRequestTimeout = 2 * time.Minute

// clientRequest puts a provider's question to the client and delivers the
// answer. It runs on its own goroutine: the provider's other events keep
// flowing while a person answers.
func (rq *request) clientRequest(cr *wire.ClientRequest, answer func(context.Context, *wire.Answer) error) {
	go func() {
		res, fail := rq.askClient(cr)
		a := &wire.Answer{RequestID: cr.ID, Result: res, Failure: fail}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = answer(ctx, a)
	}()
}

// askClient sends the request to the client (legacy generation: a
// JSON-RPC request on the connection) and waits for its answer.
func (rq *request) askClient(cr *wire.ClientRequest) (json.RawMessage, *wire.Failure) {
	if fail := rq.checkCapability(cr.Method); fail != nil {
		return nil, fail
	}
	if rq.gen.modern {
		// Modern requests ask through input_required results (mrtr.go);
		// a call that reaches here could not be parked.
		return nil, &wire.Failure{Kind: wire.KindUnavailable, Message: "the 2026-07-28 generation asks the client only through input_required results"}
	}
	conn := rq.sess.connection()
	if conn == nil {
		return nil, &wire.Failure{Kind: wire.KindUnavailable, Message: "no client connection"}
	}
	ctx, cancel := context.WithTimeout(rq.ctx, clientRequestTimeout)
	defer cancel()
	id := jsonrpc2.ID{Num: rq.sess.nextOutgoing()}
	if r, ok := rq.sess.stream.(Router); ok {
		r.RelateOutgoing(id, rq.id)
	}
	w, err := conn.DispatchCall(ctx, cr.Method, json.RawMessage(cr.Params), jsonrpc2.PickID(id))
	var res json.RawMessage
	if err == nil {
		err = w.Wait(ctx, &res)
	}
	if err == nil {
		return res, nil
	}
	if ctx.Err() != nil {
		// The client may still be asking a person; tell it to stop.
		reason := "the tool call was cancelled"
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			reason = fmt.Sprintf("no answer within %s", clientRequestTimeout)
		}
		rq.sess.abandonOutgoing(rq.id, id, reason)
	}
	var je *jsonrpc2.Error
	switch {
	case errors.As(err, &je):
		return nil, &wire.Failure{Kind: wire.KindUnavailable, Message: "the client refused " + cr.Method,
			Details: je.Message, Data: map[string]any{"code": je.Code}}
	case errors.Is(err, context.DeadlineExceeded):
		return nil, &wire.Failure{Kind: wire.KindUnavailable, Message: fmt.Sprintf("the client did not answer %s within %s", cr.Method, clientRequestTimeout)}
	}
	return nil, &wire.Failure{Kind: wire.KindUnavailable, Message: cr.Method + " failed", Details: err.Error()}
}

// checkCapability refuses a client request the client did not declare it
// can answer.
func (rq *request) checkCapability(method string) *wire.Failure {
	return capabilityRefusal(rq.gen.caps, method, rq.sess != nil)
}

// capabilityRefusal is checkCapability for a declared capability set;
// connected is false when nothing could carry the question.
func capabilityRefusal(caps clientCaps, method string, connected bool) *wire.Failure {
	var (
		ok  bool
		cap string
	)
	switch method {
	case wire.MethodSampling:
		ok, cap = caps.sampling, "sampling"
	case wire.MethodElicitation:
		ok, cap = caps.elicitation, "elicitation"
	case wire.MethodListRoots:
		ok, cap = caps.roots, "roots"
	default:
		return &wire.Failure{Kind: wire.KindInternal, Message: "providers may not send " + method + " to the client"}
	}
	if !connected || !ok {
		return &wire.Failure{Kind: wire.KindClientCapability, Message: "the client did not declare the " + cap + " capability",
			Data: map[string]any{"requiredCapabilities": map[string]any{cap: map[string]any{}}}}
	}
	return nil
}

// askUnrelated sends a request to the client that relates to no request
// in flight (a 2025-11-25 task's question: its tools/call has long been
// answered) and waits for the answer, at most clientRequestTimeout.
func (sess *Session) askUnrelated(ctx context.Context, method string, params any) (json.RawMessage, *wire.Failure) {
	conn := sess.connection()
	if conn == nil {
		return nil, &wire.Failure{Kind: wire.KindUnavailable, Message: "no client connection"}
	}
	ctx, cancel := context.WithTimeout(ctx, clientRequestTimeout)
	defer cancel()
	id := jsonrpc2.ID{Num: sess.nextOutgoing()}
	w, err := conn.DispatchCall(ctx, method, params, jsonrpc2.PickID(id))
	var res json.RawMessage
	if err == nil {
		err = w.Wait(ctx, &res)
	}
	if err == nil {
		return res, nil
	}
	var je *jsonrpc2.Error
	if errors.As(err, &je) {
		return nil, &wire.Failure{Kind: wire.KindUnavailable, Message: "the client refused " + method,
			Details: je.Message, Data: map[string]any{"code": je.Code}}
	}
	return nil, &wire.Failure{Kind: wire.KindUnavailable, Message: method + " failed", Details: err.Error()}
}
