package mcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fluxgit/fluxgit/host/catalog"
	"github.com/fluxgit/fluxgit/host/rpc"
	"github.com/fluxgit/fluxgit/internal/wire"
)

// The modern generation never sends requests to the client (MCP
// 2026-07-28, multi round-trip requests): a tools/call whose provider asks
// the client something is answered with resultType "input_required",
// carrying the questions as inputRequests and an opaque requestState. The
// client answers them and calls the tool again with the same arguments,
// inputResponses and that requestState.
//
// Provider authors write one blocking call (Call.Elicit, Call.Sample) for
// both generations, so the host keeps the provider call running between
// the round trips: it is parked under its requestState, a random token,
// until the client comes back, the call ends, or inputWait passes.

// inputWait is how long a parked call waits for the client's next round.
const inputWait = clientRequestTimeout

// maxParked bounds the calls waiting for client input server-wide.
const maxParked = 64

// parked is a provider call waiting between round trips.
type parked struct {
	token  string
	tool   string
	args   []byte // canonical arguments: a retry must repeat them
	client string

	cancel context.CancelFunc
	inputs chan []input  // batches of client requests from the provider
	done   chan struct{} // closed when the provider call returned
	res    *wire.Result  // set before done is closed
	err    error
	timer  *time.Timer // abandons the call when the client never returns
	start  time.Time
	argsIn json.RawMessage // the arguments as the client sent them

	mu      sync.Mutex
	leg     *request         // the request now serving the call
	detach  func() bool      // unties the call from the previous leg's context
	pending map[string]input // questions sent, by inputRequests key
	// resume is the provider's ClientRequest.Resume of the questions
	// asked: requestState carries it as "<token>.<resume>", so a retry
	// this server no longer holds can still reach the provider.
	resume string
}

// input is one question a provider put to the client.
type input struct {
	req    *wire.ClientRequest
	answer func(context.Context, *wire.Answer) error
}

// key is the question's inputRequests key: the provider's own name for
// it when it gave one that is free, one made from its id otherwise.
func (in input) key(taken map[string]input) string {
	if k := in.req.Key; k != "" {
		if _, dup := taken[k]; !dup {
			return k
		}
	}
	return "q" + strconv.FormatUint(in.req.ID, 10)
}

// inputResponses reads params.inputResponses: absent is no answers; it
// must otherwise be an object whose every value is an object (the
// client's result for that key).
func inputResponses(p params) (map[string]json.RawMessage, error) {
	raw, ok := p["inputResponses"]
	if !ok {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return nil, refuseParams("params.inputResponses must be an object mapping each inputRequests key to the client's result for it; leave it out when answering nothing")
	}
	for k, v := range m {
		v = bytes.TrimSpace(v)
		if len(v) == 0 || v[0] != '{' {
			return nil, refuseParams(fmt.Sprintf("params.inputResponses[%q] must be the client's result object for that request (an ElicitResult, CreateMessageResult or ListRootsResult)", k))
		}
	}
	return m, nil
}

// answerFits reports whether a client's answer has the shape of a result
// of method; an answer that does not is treated as missing, and the
// question is asked again.
func answerFits(method string, raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return false
	}
	switch method {
	case wire.MethodElicitation:
		var action string
		_ = json.Unmarshal(m["action"], &action)
		return action == "accept" || action == "decline" || action == "cancel"
	case wire.MethodSampling:
		var role string
		_ = json.Unmarshal(m["role"], &role)
		return role != "" && len(m["content"]) > 0
	case wire.MethodListRoots:
		var roots []json.RawMessage
		return json.Unmarshal(m["roots"], &roots) == nil && roots != nil
	}
	return false
}

type parkedTable struct {
	mu    sync.Mutex
	calls map[string]*parked
}

func newToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// callWithInput runs a modern tools/call whose client can answer
// questions. It returns the provider's result, or (input != nil) an
// input_required result to send instead.
func (s *Server) callWithInput(ctx context.Context, rq *request, tool *catalog.Tool, call *wire.Call, p params) (*wire.Result, json.RawMessage, error) {
	responses, err := inputResponses(p)
	if err != nil {
		return nil, nil, err
	}
	var pc *parked
	if raw, ok := p["requestState"]; ok && string(raw) != "null" {
		pc, err = s.resume(rq, tool, call, p, responses)
	} else {
		// A first call may already carry answers to questions the tool
		// names (SamplingRequest.Key and the like): they answer those
		// questions without a round trip.
		pc, err = s.park(rq, tool, call, p, responses)
	}
	if err != nil {
		return nil, nil, err
	}
	return s.await(ctx, rq, pc)
}

// park starts the provider call detached from this request, so it can
// outlive it while the client answers. preset are answers the client sent
// with the first call, by the provider's question keys.
func (s *Server) park(rq *request, tool *catalog.Tool, call *wire.Call, p params, preset map[string]json.RawMessage) (*parked, error) {
	callCtx, cancel := context.WithCancel(s.ctx)
	pc := &parked{token: newToken(), tool: tool.Name, args: call.Arguments, client: rq.gen.client.Name,
		cancel: cancel, inputs: make(chan []input, 4), done: make(chan struct{}), pending: map[string]input{},
		start: time.Now(), argsIn: p["arguments"]}
	pc.leg = rq
	pc.detach = context.AfterFunc(rq.ctx, cancel)
	// Events arrive in order on the provider call's goroutine, so the
	// batch being gathered needs no lock.
	var batch []input
	events := func(ev wire.Event, answer func(context.Context, *wire.Answer) error) {
		if ev.Request == nil {
			pc.mu.Lock()
			leg := pc.leg
			pc.mu.Unlock()
			leg.events(ev, answer)
			return
		}
		cr := ev.Request
		if fail := rq.checkCapability(cr); fail != nil {
			go func() { _ = answer(callCtx, &wire.Answer{RequestID: cr.ID, Failure: fail}) }()
		} else if res, ok := preset[cr.Key]; ok && cr.Key != "" && answerFits(cr.Method, res) {
			delete(preset, cr.Key)
			go func() { _ = answer(callCtx, &wire.Answer{RequestID: cr.ID, Result: res}) }()
		} else {
			batch = append(batch, input{req: cr, answer: answer})
		}
		if cr.More {
			return // the rest of the batch follows at once
		}
		if len(batch) > 0 {
			select {
			case pc.inputs <- batch:
			case <-callCtx.Done():
			}
			batch = nil
		}
	}
	go func() {
		pc.res, pc.err = s.opts.Providers.CallTool(callCtx, tool.Provider, call, tool.ReadOnly, events)
		close(pc.done)
	}()
	return pc, nil
}

// resume finds the parked call a retry names, checks the retry is the
// same call, and hands the client's answers to the provider.
func (s *Server) resume(rq *request, tool *catalog.Tool, call *wire.Call, p params, responses map[string]json.RawMessage) (*parked, error) {
	var state string
	if json.Unmarshal(p["requestState"], &state) != nil {
		return nil, refuseParams("params.requestState must be the string an input_required result returned")
	}
	token, resume, _ := strings.Cut(state, ".")
	s.parkedCalls.mu.Lock()
	pc := s.parkedCalls.calls[token]
	if pc != nil {
		// A retry takes the call; a second retry with the same state finds nothing.
		delete(s.parkedCalls.calls, token)
	}
	s.parkedCalls.mu.Unlock()
	if pc == nil && resume != "" && validResume(resume) {
		// The call is gone (it waited too long, or this server restarted)
		// but its provider left a way back: run it again with the value it
		// attached, which the provider checks (it came through the
		// client). The client's answers to the lost questions are
		// dropped; a provider that resumes does not ask them again.
		call.Meta.Resume = resume
		return s.park(rq, tool, call, p, nil)
	}
	if pc == nil {
		return nil, refuseParams("params.requestState is unknown or expired (a call waits " + inputWait.String() +
			" for its input); call the tool again without requestState and inputResponses")
	}
	pc.timer.Stop()
	if pc.tool != tool.Name || !bytes.Equal(pc.args, call.Arguments) || pc.client != rq.gen.client.Name {
		pc.cancel()
		return nil, refuseParams("params.requestState belongs to a different call: a retry must repeat the tool name and arguments of the call that returned it")
	}
	pc.mu.Lock()
	// Answers to questions not asked are ignored, as MCP asks of
	// information a server does not recognise; an answer of the wrong
	// shape leaves its question unanswered, to be asked again.
	for k, res := range responses {
		in, ok := pc.pending[k]
		if !ok || !answerFits(in.req.Method, res) {
			continue
		}
		delete(pc.pending, k)
		go func() { _ = in.answer(s.ctx, &wire.Answer{RequestID: in.req.ID, Result: res}) }()
	}
	pc.leg = rq
	pc.detach = context.AfterFunc(rq.ctx, pc.cancel)
	pc.mu.Unlock()
	return pc, nil
}

// await waits for the call's next step: its result, or a question for the
// client (returned as an input_required result, the call parked again).
func (s *Server) await(ctx context.Context, rq *request, pc *parked) (*wire.Result, json.RawMessage, error) {
	pc.mu.Lock()
	unanswered := len(pc.pending) > 0
	pc.mu.Unlock()
	if unanswered {
		// The client answered only some questions: ask the rest again.
		return nil, s.inputRequired(rq, pc, nil), nil
	}
	select {
	case <-pc.done:
		rq.finish()
		return pc.res, nil, pc.err
	case batch := <-pc.inputs:
		return nil, s.inputRequired(rq, pc, batch), nil
	case <-ctx.Done():
		pc.cancel()
		<-pc.done
		rq.finish()
		return nil, nil, ctx.Err()
	}
}

// inputRequests renders pending questions as the inputRequests of an
// input_required result or of an input_required task (tasks.go), by key.
// encoding/json writes map keys sorted, so the order is stable.
func inputRequests(pending map[string]input) map[string]any {
	reqs := make(map[string]any, len(pending))
	for k, in := range pending {
		reqs[k] = map[string]any{"method": in.req.Method, "params": json.RawMessage(in.req.Params)}
	}
	return reqs
}

// inputRequired parks pc and renders the input_required result.
func (s *Server) inputRequired(rq *request, pc *parked, batch []input) json.RawMessage {
	pc.mu.Lock()
	for _, in := range batch {
		pc.pending[in.key(pc.pending)] = in
	}
	// More questions may be waiting already: ask them in the same round.
	for more := true; more; {
		select {
		case next := <-pc.inputs:
			for _, in := range next {
				pc.pending[in.key(pc.pending)] = in
			}
		default:
			more = false
		}
	}
	pc.detach()
	reqs := inputRequests(pc.pending)
	for _, in := range pc.pending {
		if validResume(in.req.Resume) {
			pc.resume = in.req.Resume // the questions are one call's: any of them names it
		}
	}
	pc.mu.Unlock()
	rq.finish()

	s.parkedCalls.mu.Lock()
	full := len(s.parkedCalls.calls) >= maxParked
	if !full {
		pc.token = newToken()
		pc.timer = time.AfterFunc(inputWait, func() { s.abandon(pc) })
		s.parkedCalls.calls[pc.token] = pc
	}
	s.parkedCalls.mu.Unlock()
	rq.inputRequired = true
	if full {
		// Load shedding as MCP describes it: an input_required result
		// with no requests tells the client to retry later.
		pc.cancel()
		out, _ := rpc.Marshal(map[string]any{"inputRequests": map[string]any{}})
		return out
	}
	state := pc.token
	if pc.resume != "" {
		state += "." + pc.resume
	}
	out, _ := rpc.Marshal(map[string]any{"inputRequests": reqs, "requestState": state})
	return out
}

// validResume reports whether s is a well-formed ClientRequest.Resume;
// anything else in a requestState is never handed to a provider.
func validResume(s string) bool {
	if s == "" || len(s) > wire.MaxResume {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// abandon ends a parked call whose client never came back, and records
// it: the ledger sees every call, finished or not.
func (s *Server) abandon(pc *parked) {
	s.parkedCalls.mu.Lock()
	if s.parkedCalls.calls[pc.token] != pc {
		s.parkedCalls.mu.Unlock()
		return
	}
	delete(s.parkedCalls.calls, pc.token)
	s.parkedCalls.mu.Unlock()
	pc.cancel()
	<-pc.done
	if s.opts.Recorder == nil {
		return
	}
	rec := CallRecord{Tool: pc.tool, Known: true, Arguments: pc.argsIn, ClientName: pc.client, Start: pc.start,
		Outcome: OutcomeBlocked, ErrorCode: codeRequestCancelled,
		ErrorMessage: "abandoned: the client did not answer the call's input requests within " + inputWait.String()}
	if t, ok := s.opts.Catalog.Tool(pc.tool); ok {
		rec.ReadOnly = t.ReadOnly
		rec.Event, rec.Risk = t.Audit.Event, t.Audit.Risk
		rec.Scope = scopeArguments(rec.Arguments, t.Paths)
	}
	rec.Duration = time.Since(pc.start)
	s.opts.Recorder.RecordCall(context.Background(), rec)
}
