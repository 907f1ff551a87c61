// Package gatewaytest is a strict FluxGit gateway for tests: a real HTTP
// server on a loopback listener that speaks the gateway protocol fluxgit's
// handshake provider talks to, and nothing else:
//
//	POST /v1/mcp/operation/preview/<op>   submit a proposal (12 operations)
//	GET  /v1/mcp/operation/status/<id>    read a proposal's record
//	POST /v1/mcp/operation/cancel/<id>    withdraw it; body {"agentId"} only
//	POST /v1/mcp/diff/semantic            semantic diff; body {repoId, repoPath, baseRef, headRef, paths}
//
// It is strict on purpose. A request whose body carries a key the contract
// does not list for that operation, lacks a required key, or has a
// malformed previewId (a lowercase UUID v4), requestedAt (RFC 3339 UTC with
// milliseconds and Z) or idempotencyKey ("<op>:client:<key>" or
// "<op>:call:<uuid v4>") is answered HTTP 400 with {"error": ...} and
// recorded as a violation, so a test can assert that a client sent exactly
// the contract (Violations is empty) rather than something a lenient
// server happened to accept. gateway/proposal holds the
// per-operation field table.
//
// Every request is recorded (method, path, the exact body bytes) and the
// gateway is scriptable per test: status sequences per proposal, JSON
// refusals, non-JSON failures, unsafe or missing previewIds in replies,
// redirects, oversize and slow replies, and idempotent replay (the same
// agentId and key with the same intent returns the earlier previewId; with
// another intent, 409). Only a pending proposal can be cancelled, and only
// by the agent that made it; unknown ids are 404.
package gatewaytest

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	contract "github.com/fluxgit/fluxgit/gateway/proposal"
	"github.com/fluxgit/fluxgit/internal/fluxbridge"
	"github.com/fluxgit/fluxgit/internal/operation"
)

// Endpoint names one kind of gateway request.
type Endpoint string

// The endpoints of the gateway protocol; Unknown is any other path.
const (
	Preview  Endpoint = "preview"
	Status   Endpoint = "status"
	Cancel   Endpoint = "cancel"
	Semantic Endpoint = "semantic"
	Unknown  Endpoint = "unknown"
)

// Paths of the protocol, for building and matching requests.
const (
	PreviewPrefix = operation.PreviewPath
	StatusPrefix  = operation.StatusPath
	CancelPrefix  = operation.CancelPath
	SemanticPath  = operation.SemanticDiffPath
	// RedirectTarget is where a scripted redirect points. No client may
	// ever reach it: a request there is recorded as a violation.
	RedirectTarget = "/redirected"
)

// maxRequestBody bounds a request body the gateway reads: preview bodies
// up to 32 MiB (a 4 Mi-character patch, JSON-escaped) are accepted, larger
// ones get 413.
const maxRequestBody = 32 << 20

// ProposalTTL is how long a proposal lives; expiresAt is computed from the
// gateway's clock.
const ProposalTTL = 5 * time.Minute

// Request is one request the gateway received, recorded on arrival,
// before any validation, so a malformed or still unanswered request is
// visible too.
type Request struct {
	Method string
	// Path is the request target as sent (escaped, with any query).
	Path string
	// Body is the exact body bytes.
	Body     []byte
	Endpoint Endpoint
	// Op is the preview operation (merge, …) for Preview requests.
	Op string
	// ID is the previewId in the path of Status and Cancel requests.
	ID string
	// Handled is the time the gateway itself spent on the request, from
	// the handler's entry to its return, the reply written (zero while it
	// is being handled): what a benchmark subtracts to find the client's
	// share.
	Handled time.Duration
}

// JSON decodes the body into a generic map (nil when it is not an object).
func (r Request) JSON() map[string]any {
	var m map[string]any
	if json.Unmarshal(r.Body, &m) != nil {
		return nil
	}
	return m
}

// Fault replaces the normal reply to one request. The request is still
// validated first: a violation is answered 400 whatever the script says.
type Fault struct {
	// Delay holds the reply back this long (or until the client gives up).
	// With nothing else set, the normal reply follows the delay.
	Delay time.Duration
	// Status is the HTTP status of the reply (500 when only Body is set,
	// 400 when only JSONError is set, 302 for Redirect).
	Status int
	// JSONError makes the reply {"error": JSONError}: a refusal.
	JSONError string
	// Body is a raw reply body, sent as text/plain (JSONError unset).
	Body []byte
	// Redirect answers 302 to RedirectTarget on this gateway.
	Redirect bool
	// Oversize answers 2xx with a JSON body one kilobyte larger than the
	// client's reply cap (fluxbridge.MaxBodyBytes).
	Oversize bool
}

// Plan scripts the next proposal a preview POST creates.
type Plan struct {
	// Statuses are what successive status reads return; the last one
	// repeats. Empty means ["pending"].
	Statuses []string
	// Result is the result member of a completed (or failed) status body;
	// nil means DefaultResult(op) for completed and a failure message for
	// failed.
	Result any
	// ReplyID, when set, is the previewId the POST reply names instead of
	// the client's; the proposal is then stored under it (a gateway may
	// hand out its own canonical id, or an unsafe one in a fault test).
	ReplyID string
	// OmitReplyID leaves previewId out of the POST reply.
	OmitReplyID bool
	// HTTPStatus of the POST reply; 0 means 202.
	HTTPStatus int
}

type proposal struct {
	id       string
	op       string
	agentID  string
	body     map[string]any
	statuses []string
	reads    int
	result   any
	created  time.Time
}

// current is the status a client last saw (or would see first).
func (p *proposal) current() string {
	i := p.reads - 1
	if i < 0 {
		i = 0
	}
	if i >= len(p.statuses) {
		i = len(p.statuses) - 1
	}
	return p.statuses[i]
}

// next advances the sequence by one read.
func (p *proposal) next() string {
	p.reads++
	return p.current()
}

type idemEntry struct {
	proposal    *proposal
	fingerprint string
}

// Gateway is a running strict gateway. Its methods are safe for concurrent
// use.
type Gateway struct {
	ln  net.Listener
	srv *http.Server

	mu         sync.Mutex
	requests   []*Request
	violations []string
	plans      []Plan
	faults     map[Endpoint][]Fault
	proposals  map[string]*proposal
	idem       map[string]idemEntry
	semantic   any
}

// New starts a gateway on 127.0.0.1 and a free port and stops it when the
// test ends.
func New(t testing.TB) *Gateway {
	t.Helper()
	g, err := Start()
	if err != nil {
		t.Fatalf("start test gateway: %v", err)
	}
	t.Cleanup(g.Close)
	return g
}

// Start starts a gateway on 127.0.0.1 and a free port; Close stops it.
func Start() (*Gateway, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen on loopback: %w", err)
	}
	g := &Gateway{
		ln:        ln,
		faults:    map[Endpoint][]Fault{},
		proposals: map[string]*proposal{},
		idem:      map[string]idemEntry{},
		semantic:  map[string]any{"files": []any{}},
	}
	g.srv = &http.Server{Handler: g, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = g.srv.Serve(ln) }()
	return g, nil
}

// Addr is the gateway's ip:port, the value for FLUXGIT_MCP_HANDSHAKE_ADDR.
func (g *Gateway) Addr() string { return g.ln.Addr().String() }

// Close stops the gateway and drops open connections (a slow reply in
// progress ends at once).
func (g *Gateway) Close() { _ = g.srv.Close() }

// Script queues plans for the next proposals, one per successful preview
// POST, in order; once they are used up, proposals stay pending.
func (g *Gateway) Script(plans ...Plan) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.plans = append(g.plans, plans...)
}

// FaultNext queues a fault for the next valid request to ep; several
// queue in order.
func (g *Gateway) FaultNext(ep Endpoint, f Fault) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.faults[ep] = append(g.faults[ep], f)
}

// SetStatuses replaces what the next status reads of proposal id return
// (the last repeats), for instance to complete a proposal a preview left
// pending. It reports whether the proposal exists.
func (g *Gateway) SetStatuses(id string, statuses ...string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	p := g.proposals[id]
	if p == nil || len(statuses) == 0 {
		return false
	}
	p.statuses, p.reads = statuses, 0
	return true
}

// SetResult replaces the result a completed or failed status body of
// proposal id carries.
func (g *Gateway) SetResult(id string, result any) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	p := g.proposals[id]
	if p == nil {
		return false
	}
	p.result = result
	return true
}

// SetSemanticReply sets the body of every later semantic diff reply (200).
func (g *Gateway) SetSemanticReply(v any) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.semantic = v
}

// Requests returns every request received so far, in arrival order.
func (g *Gateway) Requests() []Request {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]Request, len(g.requests))
	for i, r := range g.requests {
		out[i] = *r
	}
	return out
}

// RequestsTo returns the recorded requests to one endpoint.
func (g *Gateway) RequestsTo(ep Endpoint) []Request {
	var out []Request
	for _, r := range g.Requests() {
		if r.Endpoint == ep {
			out = append(out, r)
		}
	}
	return out
}

// Violations returns a description of every request that broke the
// contract; a conforming client leaves it empty.
func (g *Gateway) Violations() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.violations...)
}

// ResetRecords forgets the recorded requests and violations (proposals and
// scripts stay), so a benchmark's records do not grow without bound.
func (g *Gateway) ResetRecords() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.requests, g.violations = nil, nil
}

// Proposal returns the body of proposal id as the gateway stored it and
// its current status.
func (g *Gateway) Proposal(id string) (body map[string]any, status string, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	p := g.proposals[id]
	if p == nil {
		return nil, "", false
	}
	return p.body, p.current(), true
}

// ServeHTTP routes, validates, records and answers one request.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	body, readErr := io.ReadAll(io.LimitReader(r.Body, maxRequestBody+1))
	req := Request{Method: r.Method, Path: r.RequestURI, Body: body}
	req.Endpoint, req.Op, req.ID = route(r.URL.EscapedPath())

	rw := w
	// Recorded on arrival, so a test sees a request whose reply is still
	// held back (or was abandoned by the client); Handled is filled in last.
	rec := &Request{}
	*rec = req
	g.mu.Lock()
	g.requests = append(g.requests, rec)
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		rec.Handled = time.Since(start)
		g.mu.Unlock()
	}()

	if readErr != nil {
		g.refuse(rw, http.StatusBadRequest, "read request body: "+readErr.Error())
		return
	}
	if len(body) > maxRequestBody {
		g.refuse(rw, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body exceeds %d bytes", maxRequestBody))
		return
	}
	if msg := g.checkTransport(r, req); msg != "" {
		g.violation(rw, req, msg)
		return
	}
	var obj map[string]any
	if req.Endpoint != Status {
		var err error
		if obj, err = contract.DecodeObject(body); err != nil {
			g.violation(rw, req, err.Error())
			return
		}
	}
	var problems []string
	switch req.Endpoint {
	case Preview:
		problems = contract.Check(req.Op, obj)
		// The schema too, so every test that talks to this gateway
		// proves the provider's bodies conform to the contract as data.
		if len(problems) == 0 {
			if err := operation.Validate(req.Op, obj); err != nil {
				problems = append(problems, err.Error())
			}
		}
	case Cancel:
		problems = contract.CheckCancel(obj)
	case Semantic:
		problems = contract.CheckSemantic(obj)
	}
	if len(problems) > 0 {
		g.violation(rw, req, strings.Join(problems, "; "))
		return
	}

	if f, ok := g.popFault(req.Endpoint); ok {
		if f.Delay > 0 {
			select {
			case <-time.After(f.Delay):
			case <-r.Context().Done():
				return
			}
		}
		if g.fault(rw, f, req) {
			return
		}
	}
	switch req.Endpoint {
	case Preview:
		g.preview(rw, req.Op, obj)
	case Status:
		g.status(rw, req.ID)
	case Cancel:
		g.cancel(rw, req.ID, obj)
	case Semantic:
		g.mu.Lock()
		v := g.semantic
		g.mu.Unlock()
		writeJSON(rw, http.StatusOK, v)
	}
}

// route splits an escaped path into endpoint, operation and id.
func route(p string) (Endpoint, string, string) {
	switch {
	case strings.HasPrefix(p, PreviewPrefix):
		op := strings.TrimPrefix(p, PreviewPrefix)
		if contract.IsOp(op) {
			return Preview, op, ""
		}
	case strings.HasPrefix(p, StatusPrefix):
		return Status, "", strings.TrimPrefix(p, StatusPrefix)
	case strings.HasPrefix(p, CancelPrefix):
		return Cancel, "", strings.TrimPrefix(p, CancelPrefix)
	case p == SemanticPath:
		return Semantic, "", ""
	}
	return Unknown, "", ""
}

// checkTransport checks what every request must satisfy: the path, the
// method, the Host the client dialled, no query, no Origin, JSON bodies on
// POST and none on GET, and a safe id in status and cancel paths.
func (g *Gateway) checkTransport(r *http.Request, req Request) string {
	if req.Endpoint == Unknown {
		return fmt.Sprintf("no endpoint %s %s in the contract", r.Method, req.Path)
	}
	want := http.MethodPost
	if req.Endpoint == Status {
		want = http.MethodGet
	}
	switch {
	case r.Method != want:
		return fmt.Sprintf("%s needs %s, got %s", req.Endpoint, want, r.Method)
	case r.URL.RawQuery != "" || r.URL.ForceQuery:
		return "a query string is not part of the contract"
	case r.Host != g.Addr():
		return fmt.Sprintf("Host header %q is not the gateway address %s", r.Host, g.Addr())
	case r.Header.Get("Origin") != "":
		return "agent API requests must not carry an Origin header"
	}
	if req.Endpoint == Status || req.Endpoint == Cancel {
		if !SafeID(req.ID) {
			return fmt.Sprintf("previewId %q in the path is not 1-128 of [A-Za-z0-9_-]", req.ID)
		}
	}
	if req.Endpoint == Status {
		if len(req.Body) != 0 {
			return "a status read carries no body"
		}
		return ""
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return fmt.Sprintf("Content-Type %q, want application/json", ct)
	}
	return ""
}

func (g *Gateway) violation(w http.ResponseWriter, req Request, msg string) {
	g.mu.Lock()
	g.violations = append(g.violations, fmt.Sprintf("%s %s: %s", req.Method, req.Path, msg))
	g.mu.Unlock()
	g.refuse(w, http.StatusBadRequest, "contract violation: "+msg)
}

func (g *Gateway) refuse(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"error": msg})
}

func (g *Gateway) popFault(ep Endpoint) (Fault, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	q := g.faults[ep]
	if len(q) == 0 {
		return Fault{}, false
	}
	g.faults[ep] = q[1:]
	return q[0], true
}

// fault answers as f says; false means f only delayed the normal reply.
func (g *Gateway) fault(w http.ResponseWriter, f Fault, req Request) bool {
	switch {
	case f.Redirect:
		status := f.Status
		if status == 0 {
			status = http.StatusFound
		}
		w.Header().Set("Location", "http://"+g.Addr()+RedirectTarget)
		w.WriteHeader(status)
		return true
	case f.Oversize:
		status := f.Status
		if status == 0 {
			status = http.StatusOK
		}
		id := req.ID
		if req.Endpoint == Preview {
			if m := req.JSON(); m != nil {
				id, _ = m["previewId"].(string)
			}
		}
		head := fmt.Sprintf(`{"previewId":%q,"status":"pending","padding":"`, id)
		pad := bytes.Repeat([]byte("x"), fluxbridge.MaxBodyBytes+1024-len(head))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, head)
		_, _ = w.Write(pad)
		_, _ = io.WriteString(w, `"}`)
		return true
	case f.JSONError != "":
		status := f.Status
		if status == 0 {
			status = http.StatusBadRequest
		}
		writeJSON(w, status, map[string]any{"error": f.JSONError})
		return true
	case f.Body != nil || f.Status != 0:
		status := f.Status
		if status == 0 {
			status = http.StatusInternalServerError
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(status)
		_, _ = w.Write(f.Body)
		return true
	}
	return false
}

// preview creates a proposal, or replays the one an earlier request with
// the same agentId and idempotencyKey created.
func (g *Gateway) preview(w http.ResponseWriter, op string, body map[string]any) {
	agentID := body["agentId"].(string)
	key := body["idempotencyKey"].(string)
	fp := intentFingerprint(body)
	g.mu.Lock()
	if e, ok := g.idem[agentID+"\n"+key]; ok {
		p := e.proposal
		g.mu.Unlock()
		if e.fingerprint != fp {
			g.refuse(w, http.StatusConflict, "idempotencyKey "+key+" was already used by this agent for a different proposal; use a new key for a new intent")
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"previewId": p.id, "status": p.current(), "expiresAt": stamp(p.created.Add(ProposalTTL))})
		return
	}
	var plan Plan
	if len(g.plans) > 0 {
		plan, g.plans = g.plans[0], g.plans[1:]
	}
	id := body["previewId"].(string)
	if plan.ReplyID != "" {
		id = plan.ReplyID
	}
	statuses := plan.Statuses
	if len(statuses) == 0 {
		statuses = []string{"pending"}
	}
	p := &proposal{id: id, op: op, agentID: agentID, body: body, statuses: append([]string(nil), statuses...), result: plan.Result, created: time.Now()}
	g.proposals[id] = p
	g.idem[agentID+"\n"+key] = idemEntry{proposal: p, fingerprint: fp}
	g.mu.Unlock()

	reply := map[string]any{"status": "pending", "expiresAt": stamp(p.created.Add(ProposalTTL))}
	if !plan.OmitReplyID {
		reply["previewId"] = id
	}
	status := plan.HTTPStatus
	if status == 0 {
		status = http.StatusAccepted
	}
	writeJSON(w, status, reply)
}

// intentFingerprint identifies what a proposal asks for, exactly as
// fluxgit's own gateway compares replays.
func intentFingerprint(body map[string]any) string { return contract.Fingerprint(body) }

// statusBody is the proposal record a status read returns.
func (p *proposal) statusBody(status string) map[string]any {
	b := map[string]any{
		"previewId":     p.id,
		"operationType": p.op,
		"status":        status,
		"expiresAt":     stamp(p.created.Add(ProposalTTL)),
	}
	switch status {
	case "completed":
		if p.result != nil {
			b["result"] = p.result
		} else {
			b["result"] = DefaultResult(p.op)
		}
	case "failed":
		if p.result != nil {
			b["result"] = p.result
		} else {
			b["result"] = map[string]any{"status": "failed", "message": "git refused the operation"}
		}
	case "rejected":
		b["rejectionReason"] = "The reviewer declined this proposal."
	}
	return b
}

func (g *Gateway) status(w http.ResponseWriter, id string) {
	g.mu.Lock()
	p := g.proposals[id]
	if p == nil {
		g.mu.Unlock()
		g.refuse(w, http.StatusNotFound, "unknown previewId")
		return
	}
	body := p.statusBody(p.next())
	g.mu.Unlock()
	writeJSON(w, http.StatusOK, body)
}

// cancel withdraws a pending proposal for the agent that made it.
func (g *Gateway) cancel(w http.ResponseWriter, id string, body map[string]any) {
	agentID := body["agentId"].(string)
	g.mu.Lock()
	p := g.proposals[id]
	if p == nil {
		g.mu.Unlock()
		g.refuse(w, http.StatusNotFound, "unknown previewId")
		return
	}
	if p.agentID != agentID {
		g.mu.Unlock()
		g.refuse(w, http.StatusForbidden, "only the agent that made a proposal may cancel it")
		return
	}
	if cur := p.current(); cur != "pending" {
		g.mu.Unlock()
		g.refuse(w, http.StatusConflict, "proposal is "+cur+"; only a pending proposal can be cancelled")
		return
	}
	p.statuses, p.reads = []string{"cancelled"}, 0
	record := map[string]any{}
	for k, v := range p.body {
		record[k] = v
	}
	record["previewId"] = p.id
	record["status"] = "cancelled"
	record["expiresAt"] = stamp(p.created.Add(ProposalTTL))
	g.mu.Unlock()
	writeJSON(w, http.StatusOK, record)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(`{"error":"test gateway could not encode its reply"}`)
		status = http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// stamp renders t as the contract's timestamps: RFC 3339, UTC,
// milliseconds, Z.
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// NewUUID returns a random UUID v4, lowercase, for tests that need an id
// the gateway does not know.
func NewUUID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Errorf("read random bytes: %w", err))
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// URL returns the gateway's base URL.
func (g *Gateway) URL() *url.URL { return &url.URL{Scheme: "http", Host: g.Addr()} }
