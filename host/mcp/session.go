package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/sourcegraph/jsonrpc2"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/fluxgit/fluxgit/host/rpc"
	"github.com/fluxgit/fluxgit/internal/telemetry"
)

// Session is one client connection: its negotiated generation and client
// identity, its log level, its subscriptions, its in-flight requests and
// their cancellation. Nothing of it is visible to any other session.
type Session struct {
	srv *Server
	log hclog.Logger
	ids IDResolver // nil: ids pass through unchanged

	mu       sync.Mutex
	legacy   generation // legacy state set by initialize
	inits    bool
	agent    string // transport-authenticated agent id; "" when none
	logLevel string // set by logging/setLevel; "" sends no log messages
	flight   map[jsonrpc2.ID]*inflight
	running  sync.WaitGroup // requests being served
	outgoing uint64         // last id of a request sent to the client

	// Set by Serve: the connection notifications go to, and its lifetime.
	conn   *jsonrpc2.Conn
	stream jsonrpc2.ObjectStream
	ctx    context.Context
	subs   *subscriptions
}

// NewSession starts a session on s. It serves nothing until Serve.
func (s *Server) NewSession() *Session {
	return &Session{srv: s, log: s.log, flight: map[jsonrpc2.ID]*inflight{},
		legacy: generation{version: V20251125}, subs: newSubscriptions(), ctx: context.Background()}
}

// Serve runs the connection until the client closes it.
//
// When the client closes its end (EOF), requests already received are
// still answered: a client that pipes a few requests and closes stdin gets
// its replies. Open listen streams end at once; anything still running
// after drainGrace is cancelled.
func (sess *Session) Serve(ctx context.Context, stream jsonrpc2.ObjectStream) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if r, ok := stream.(IDResolver); ok {
		sess.ids = r
	}
	sess.ctx, sess.stream = ctx, stream
	sess.srv.addSession(sess)
	defer sess.srv.removeSession(sess)
	conn := jsonrpc2.NewConn(ctx, drainOnEOF{stream, sess}, handler{sess}, jsonrpc2.SetLogger(discardLogger{}))
	sess.mu.Lock()
	sess.conn = conn
	sess.mu.Unlock()
	select {
	case <-conn.DisconnectNotify():
	case <-ctx.Done():
		conn.Close()
	}
	sess.cancelAll()
	// Let cancelled calls unwind so each reaches the Recorder (the audit
	// ledger) before the process exits.
	sess.waitRunning(shutdownGrace)
	return nil
}

func (sess *Session) connection() *jsonrpc2.Conn {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.conn
}

// Router is implemented by transports that carry each server message on a
// channel tied to one client request: Streamable HTTP answers a POST on its
// own response stream, and the MCP transports specification wants
// request-scoped notifications and server requests on the stream of the
// request they relate to. Without it every message goes to the one
// connection.
type Router interface {
	// NotifyRelated writes a notification that relates to the client
	// request the handler received as related, or to none (nil): a
	// resource change for a legacy subscription, say.
	NotifyRelated(related *jsonrpc2.ID, method string, params any) error
	// RelateOutgoing ties the server's request out, about to be sent, to
	// the client request it is made for.
	RelateOutgoing(out, related jsonrpc2.ID)
}

// notify sends a notification unrelated to any one request.
func (sess *Session) notify(method string, params any) { sess.notifyFor(nil, method, params) }

// notifyFor sends a notification on the session's connection, routed to
// the stream of the request related when the transport routes; a session
// that is not serving (a test driving dispatch directly) drops it.
func (sess *Session) notifyFor(related *jsonrpc2.ID, method string, params any) {
	if r, ok := sess.stream.(Router); ok {
		_ = r.NotifyRelated(related, method, params)
		return
	}
	if conn := sess.connection(); conn != nil {
		_ = conn.Notify(sess.ctx, method, params)
	}
}

// SetAuthenticatedAgent makes name, the subject a transport authenticated
// (a verified bearer token, say), the session's agent id: it replaces the
// clientInfo.name of initialize and of every modern request, so the audit
// ledger, the presence record and the approval gateway attribute calls to
// the authenticated caller, not to a name the client chose. Call it before
// Serve. An empty name changes nothing.
func (sess *Session) SetAuthenticatedAgent(name string) {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	sess.agent = name
	if name != "" {
		sess.legacy.client.Name = name
	}
}

// AssumeLegacyVersion serves the session's legacy requests as version
// without an initialize: a stateless HTTP request carries its negotiated
// version only in its MCP-Protocol-Version header. It reports false, and
// changes nothing, for a version that is not a legacy one this server
// speaks.
func (sess *Session) AssumeLegacyVersion(version string) bool {
	for _, v := range LegacyVersions {
		if v == version {
			sess.mu.Lock()
			sess.legacy.version = version
			sess.mu.Unlock()
			return true
		}
	}
	return false
}

// nextOutgoing numbers a request to the client. Ids start at 1 and are
// chosen here (jsonrpc2.PickID), so a cancellation can name them.
func (sess *Session) nextOutgoing() uint64 {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	sess.outgoing++
	return sess.outgoing
}

// outgoingForgetter is implemented by streams that track the requests
// they wrote, so a late answer to an abandoned one is dropped.
type outgoingForgetter interface {
	ForgetOutgoing(id jsonrpc2.ID)
}

// abandonOutgoing gives up on a request sent to the client: the client is
// told (notifications/cancelled), and a late answer is ignored.
func (sess *Session) abandonOutgoing(related, id jsonrpc2.ID, reason string) {
	sess.notifyFor(&related, "notifications/cancelled", map[string]any{"requestId": id.Num, "reason": reason})
	if f, ok := sess.stream.(outgoingForgetter); ok {
		f.ForgetOutgoing(id)
	}
}

func (sess *Session) waitRunning(d time.Duration) bool {
	done := make(chan struct{})
	go func() { sess.running.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		sess.log.Warn("requests still running", "waited", d)
		return false
	}
}

// drainOnEOF delays the end of input until the requests already read are
// answered; jsonrpc2 closes the whole connection, writes included, as soon
// as a read fails.
type drainOnEOF struct {
	jsonrpc2.ObjectStream
	sess *Session
}

func (d drainOnEOF) ReadObject(v any) error {
	err := d.ObjectStream.ReadObject(v)
	if err != nil {
		// No Handle call can run while this read is pending, so the
		// WaitGroup sees no new Add during the wait.
		d.sess.endListens()
		if !d.sess.waitRunning(drainGrace) {
			d.sess.cancelAll()
		}
	}
	return err
}

// endListens cancels the open subscriptions/listen requests: they never
// finish on their own.
func (sess *Session) endListens() {
	sess.subs.mu.Lock()
	ids := make([]jsonrpc2.ID, 0, len(sess.subs.listens))
	for id := range sess.subs.listens {
		ids = append(ids, id)
	}
	sess.subs.mu.Unlock()
	sess.mu.Lock()
	defer sess.mu.Unlock()
	for _, id := range ids {
		if f := sess.flight[id]; f != nil {
			f.cancel()
		}
	}
}

// handler runs initialize and notifications inline, so that they take
// effect before anything sent after them, and every other request on its
// own goroutine, so a slow tool never blocks ping or cancellation.
type handler struct{ sess *Session }

func (h handler) Handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	sess := h.sess
	if req.Notif {
		sess.notification(req)
		return
	}
	// Register before starting the goroutine, so a cancellation read right
	// behind its request always finds it.
	rctx, cancel := context.WithCancel(ctx)
	self := &inflight{cancel: cancel}
	sess.mu.Lock()
	if _, busy := sess.flight[req.ID]; busy {
		sess.mu.Unlock()
		cancel()
		// Two requests under one id could not be told apart in their
		// replies or in notifications/cancelled; MCP forbids reusing an id
		// within a session, and JSON-RPC at least while it is in flight.
		_ = conn.ReplyWithError(ctx, req.ID, &jsonrpc2.Error{Code: codeInvalidRequest,
			Message: fmt.Sprintf("Request id %s is already in flight in this session; send each request with a new id", sess.originalID(req.ID))})
		return
	}
	sess.flight[req.ID] = self
	sess.mu.Unlock()
	sess.running.Add(1)
	if req.Method == "initialize" || req.Method == "logging/setLevel" {
		sess.respond(ctx, rctx, self, conn, req)
		return
	}
	go sess.respond(ctx, rctx, self, conn, req)
}

// inflight is one request being served: its entry in Session.flight.
// Entries are compared by pointer, so a request only ever removes its own.
type inflight struct{ cancel context.CancelFunc }

// done takes self's entry out of the in-flight table. It runs before the
// reply is written: a client may reuse the id as soon as it has the reply,
// and the new request must not find (and later lose) the old entry.
func (sess *Session) done(id jsonrpc2.ID, self *inflight) {
	sess.mu.Lock()
	if sess.flight[id] == self {
		delete(sess.flight, id)
	}
	sess.mu.Unlock()
}

func (sess *Session) respond(parent, ctx context.Context, self *inflight, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	defer sess.running.Done()
	defer self.cancel()

	res, err := sess.dispatch(ctx, req)
	sess.done(req.ID, self)
	if ctx.Err() != nil && parent.Err() == nil {
		// Cancelled by the client: MCP asks receivers not to answer.
		if sess.ids != nil {
			sess.ids.Forget(req.ID)
		}
		return
	}
	if err != nil {
		var re *rpcError
		if !errors.As(err, &re) {
			re = errorf(codeInternal, map[string]any{"details": err.Error()}, "Internal error")
		}
		e := &jsonrpc2.Error{Code: re.Code, Message: re.Message}
		if re.Data != nil {
			e.SetError(re.Data)
		}
		_ = conn.ReplyWithError(parent, req.ID, e)
		return
	}
	// Sent as built: conn.Reply would encode the result a second time.
	_ = conn.SendResponse(parent, &jsonrpc2.Response{ID: req.ID, Result: &res})
}

func (sess *Session) notification(req *jsonrpc2.Request) {
	switch req.Method {
	case "notifications/cancelled":
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if req.Params == nil || json.Unmarshal(*req.Params, &p) != nil || len(p.RequestID) == 0 {
			return
		}
		id, ok := sess.handlerID(p.RequestID)
		if !ok {
			return
		}
		sess.mu.Lock()
		f := sess.flight[id]
		sess.mu.Unlock()
		if f != nil {
			f.cancel()
		}
	default:
		// notifications/initialized and anything else: a notification is
		// never executed, so a tools/call without an id does nothing.
	}
}

// handlerID maps a client's request id to the id jsonrpc2 handed us.
func (sess *Session) handlerID(raw json.RawMessage) (jsonrpc2.ID, bool) {
	if sess.ids != nil {
		return sess.ids.HandlerID(raw)
	}
	var id jsonrpc2.ID
	return id, json.Unmarshal(raw, &id) == nil
}

// originalID is the id exactly as the client sent it.
func (sess *Session) originalID(id jsonrpc2.ID) json.RawMessage {
	if sess.ids != nil {
		if raw := sess.ids.OriginalID(id); raw != nil {
			return raw
		}
	}
	raw, _ := json.Marshal(id)
	return raw
}

func (sess *Session) cancelAll() {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	for _, f := range sess.flight {
		f.cancel()
	}
}

// dispatch runs one request inside its trace span (a no-op one unless
// OTEL_ENABLED), so provider calls it makes become the span's children.
func (sess *Session) dispatch(ctx context.Context, req *jsonrpc2.Request) (json.RawMessage, error) {
	ctx, span := telemetry.Start(ctx, req.Method, trace.SpanKindServer,
		attribute.String("rpc.system", "jsonrpc"), attribute.String("rpc.method", req.Method))
	res, err := sess.route(ctx, req)
	telemetry.End(span, err)
	return res, err
}

// route resolves the generation, routes the method and decorates the
// result for the modern generation.
func (sess *Session) route(ctx context.Context, req *jsonrpc2.Request) (json.RawMessage, error) {
	s := sess.srv
	params, err := decodeParams(req.Params)
	if err != nil {
		return nil, err
	}
	gen, err := sess.generation(req.Method, params)
	if err != nil {
		return nil, err
	}
	rq := &request{sess: sess, gen: gen, id: req.ID}
	if gen.modern && isLegacyOnly(req.Method) {
		return nil, methodNotFound(req.Method)
	}
	if !gen.modern && isModernOnly(req.Method) {
		return nil, methodNotFound(req.Method)
	}
	var (
		res       json.RawMessage
		cacheable bool
	)
	switch req.Method {
	case "initialize":
		res, err = sess.initialize(params)
	case "logging/setLevel":
		res, err = sess.setLevel(params)
	case "ping":
		res = json.RawMessage(`{}`)
	case "server/discover":
		res, err = s.discover(gen)
		cacheable = true
	case "tools/list":
		res, err = s.toolsList(gen, params)
		cacheable = true
	case "tools/call":
		res, err = s.recordCall(ctx, rq, params)
	case "resources/list":
		res, err = s.resourcesList(gen, params, false)
		cacheable = true
	case "resources/templates/list":
		res, err = s.resourcesList(gen, params, true)
		cacheable = true
	case "resources/read":
		res, err = s.resourcesRead(ctx, gen, params)
		cacheable = true
	case "resources/subscribe", "resources/unsubscribe":
		res, err = sess.resourcesSubscribe(ctx, params, req.Method == "resources/subscribe")
	case "prompts/list":
		res, err = s.promptsList(gen, params)
		cacheable = true
	case "prompts/get":
		res, err = s.promptsGet(ctx, rq, params)
	case "completion/complete":
		res, err = s.complete(ctx, rq, params)
	case "subscriptions/listen":
		res, err = sess.subscriptionsListen(ctx, req.ID, gen, params)
	case "tasks/get", "tasks/update", "tasks/cancel", "tasks/result", "tasks/list":
		rq.ctx = ctx
		res, err = s.tasksMethod(ctx, rq, req.Method, params)
	default:
		return nil, methodNotFound(req.Method)
	}
	if err != nil || !gen.modern {
		return res, err
	}
	kv := []any{"resultType", "complete"}
	if rq.inputRequired {
		kv[1] = "input_required"
	}
	if rq.taskCreated {
		kv[1] = "task"
	}
	if cacheable {
		kv = append(kv, "ttlMs", 300000, "cacheScope", "public")
	}
	kv = append(kv, "_meta", map[string]any{metaServerInfo: s.serverInfo(gen)})
	return spliceFields(res, kv...)
}

// generation classifies a request. Any request whose _meta names a
// protocol version is modern, even an unknown version: that way a future
// client gets -32022 instead of being silently served as legacy.
func (sess *Session) generation(method string, p params) (generation, error) {
	var meta map[string]json.RawMessage
	if raw, ok := p["_meta"]; ok {
		if json.Unmarshal(raw, &meta) != nil {
			meta = nil
		}
	}
	rawVer, modern := meta[metaProtocolVersion]
	if !modern {
		sess.mu.Lock()
		g := sess.legacy
		g.logLevel = sess.logLevel
		sess.mu.Unlock()
		g.progressToken = progressToken(meta)
		return g, nil
	}
	g, err := sess.modernGeneration(meta, rawVer)
	if err != nil {
		return generation{}, err
	}
	sess.mu.Lock()
	if sess.agent != "" {
		g.client.Name = sess.agent
	}
	sess.mu.Unlock()
	return g, nil
}

// modernGeneration reads a modern request's _meta.
func (sess *Session) modernGeneration(meta map[string]json.RawMessage, rawVer json.RawMessage) (generation, error) {
	var ver string
	if json.Unmarshal(rawVer, &ver) != nil {
		return generation{}, invalidParams("_meta[\"" + metaProtocolVersion + "\"] must be a string")
	}
	if ver != V20260728 {
		return generation{}, errorf(codeUnsupportedVersion,
			map[string]any{"supported": SupportedVersions, "requested": ver}, "Unsupported protocol version")
	}
	var caps map[string]json.RawMessage
	if rc, ok := meta[metaClientCaps]; !ok || json.Unmarshal(rc, &caps) != nil || caps == nil {
		return generation{}, invalidParams("_meta[\"" + metaClientCaps + "\"] is required and must be an object")
	}
	g := generation{modern: true, version: ver, caps: parseClientCaps(caps), progressToken: progressToken(meta)}
	if rl, ok := meta[metaLogLevel]; ok {
		var level string
		if json.Unmarshal(rl, &level) != nil || levelRank(level) < 0 {
			return generation{}, invalidParams(badLevel("_meta[\"" + metaLogLevel + "\"]"))
		}
		g.logLevel = level
	}
	if ri, ok := meta[metaClientInfo]; ok {
		ci, err := parseClientInfo(ri)
		if err != nil {
			return generation{}, invalidParams("_meta[\"" + metaClientInfo + "\"] " + err.Error())
		}
		g.client = ci
	}
	return g, nil
}

func (sess *Session) initialize(p params) (json.RawMessage, error) {
	s := sess.srv
	var req struct {
		ProtocolVersion *string                    `json:"protocolVersion"`
		ClientInfo      json.RawMessage            `json:"clientInfo"`
		Capabilities    map[string]json.RawMessage `json:"capabilities"`
	}
	raw, _ := json.Marshal(p)
	if err := json.Unmarshal(raw, &req); err != nil || req.ProtocolVersion == nil {
		return nil, invalidParams("initialize needs a string protocolVersion")
	}
	g := generation{version: negotiate(*req.ProtocolVersion), caps: parseClientCaps(req.Capabilities)}
	ci, named := legacyClientInfo(req.ClientInfo)
	sess.mu.Lock()
	switch {
	case named:
		g.client = ci
	case sess.inits || sess.agent != "":
		// A later initialize without a usable name (blank, missing,
		// malformed) keeps the agent id the session already has: the
		// audit ledger and the roster attribute calls by it, and an
		// anonymous re-handshake must not erase who is calling.
		g.client = sess.legacy.client
	}
	if sess.agent != "" {
		g.client.Name = sess.agent
	}
	sess.legacy = g
	sess.inits = true
	sess.mu.Unlock()
	return rpc.Marshal(map[string]any{
		"protocolVersion": g.version,
		"capabilities":    s.uiCapabilities(s.capabilities(g), g),
		"serverInfo":      s.serverInfo(g),
		"instructions":    s.instructions(),
	})
}
