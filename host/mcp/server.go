// Package mcp is the host's protocol layer: it speaks both MCP generations
// over a JSON-RPC connection, validates every tool call against the spec,
// and dispatches to providers. Nothing below this package knows MCP.
package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/sourcegraph/jsonrpc2"

	"github.com/fluxgit/fluxgit/host/catalog"
	"github.com/fluxgit/fluxgit/host/providers"
	"github.com/fluxgit/fluxgit/host/repopath"
	"github.com/fluxgit/fluxgit/host/rpc"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// Instructions is sent to agents in initialize and server/discover.
const Instructions = "fluxgit serves Git repositories to coding agents. Start with repo.brief (or repo.status) " +
	"to orient yourself in a repository. Read tools never modify the repository, its index, refs or config. " +
	"Write tools (operation.preview.*) only create a proposal that a human approves in the FluxGit app: keep " +
	"the returned previewId and follow it with operation.status until it reaches a terminal status."

// Dispatcher runs tool calls and resource reads; *providers.Manager is the
// production implementation.
type Dispatcher interface {
	CallTool(ctx context.Context, provider string, call *sdk.Call, retry bool) (*sdk.Result, error)
	ReadResource(ctx context.Context, provider, uri string, meta sdk.Meta) (*sdk.Resource, error)
	WatchResources(ctx context.Context, provider string, fn func(sdk.ResourceChange)) error
}

var _ Dispatcher = (*providers.Manager)(nil)

// IDResolver relates the ids jsonrpc2 sees to the ids the client sent: the
// stream substitutes ids jsonrpc2 cannot represent (negative integers, say).
type IDResolver interface {
	// HandlerID maps a client id (params.requestId of a cancellation) to
	// the id the handler received.
	HandlerID(clientID json.RawMessage) (jsonrpc2.ID, bool)
	// Forget releases a substitution for a request that gets no reply.
	Forget(id jsonrpc2.ID)
	// OriginalID is the exact id the client sent for a request.
	OriginalID(id jsonrpc2.ID) json.RawMessage
}

// Options configures a Server.
type Options struct {
	Catalog   *catalog.Catalog
	Providers Dispatcher
	Roots     repopath.Policy
	Name      string
	Version   string
	Log       hclog.Logger
	// IDs resolves original request ids (optional).
	IDs IDResolver
	// Recorder receives every tools/call (optional): the audit ledger.
	Recorder Recorder
}

// Server serves one stdio connection.
type Server struct {
	opts Options
	log  hclog.Logger

	mu      sync.Mutex
	session generation // legacy state set by initialize
	inits   bool
	flight  map[jsonrpc2.ID]context.CancelFunc
	running sync.WaitGroup // requests being served

	lists sync.Map // listVariant -> json.RawMessage

	// Set by Serve: the connection notifications go to, and its lifetime.
	conn     *jsonrpc2.Conn
	serveCtx context.Context
	subs     *subscriptions
}

// New builds a Server.
func New(opts Options) *Server {
	log := opts.Log
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return &Server{opts: opts, log: log, flight: map[jsonrpc2.ID]context.CancelFunc{},
		session: generation{version: V20251125}, subs: newSubscriptions(), serveCtx: context.Background()}
}

// Serve runs the connection until the client closes it.
//
// When the client closes its end (EOF), requests already received are
// still answered: a client that pipes a few requests and closes stdin gets
// its replies. Open listen streams end at once; anything still running
// after drainGrace is cancelled.
func (s *Server) Serve(ctx context.Context, stream jsonrpc2.ObjectStream) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.serveCtx = ctx
	conn := jsonrpc2.NewConn(ctx, drainOnEOF{stream, s}, handler{s}, jsonrpc2.SetLogger(discardLogger{}))
	s.subs.mu.Lock()
	s.conn = conn
	s.subs.mu.Unlock()
	select {
	case <-conn.DisconnectNotify():
	case <-ctx.Done():
		conn.Close()
	}
	s.cancelAll()
	// Let cancelled calls unwind so each reaches the Recorder (the audit
	// ledger) before the process exits.
	s.waitRunning(shutdownGrace)
	return nil
}

// Shutdown limits. drainGrace is how long requests received before EOF may
// run on; shutdownGrace how long cancelled ones get to unwind, so a provider
// that ignores cancellation cannot hold the exit hostage.
const (
	drainGrace    = 10 * time.Second
	shutdownGrace = 5 * time.Second
)

func (s *Server) waitRunning(d time.Duration) bool {
	done := make(chan struct{})
	go func() { s.running.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		s.log.Warn("requests still running", "waited", d)
		return false
	}
}

// drainOnEOF delays the end of input until the requests already read are
// answered; jsonrpc2 closes the whole connection, writes included, as soon
// as a read fails.
type drainOnEOF struct {
	jsonrpc2.ObjectStream
	s *Server
}

func (d drainOnEOF) ReadObject(v any) error {
	err := d.ObjectStream.ReadObject(v)
	if err != nil {
		// No Handle call can run while this read is pending, so the
		// WaitGroup sees no new Add during the wait.
		d.s.endListens()
		if !d.s.waitRunning(drainGrace) {
			d.s.cancelAll()
		}
	}
	return err
}

// endListens cancels the open subscriptions/listen requests: they never
// finish on their own.
func (s *Server) endListens() {
	s.subs.mu.Lock()
	ids := make([]jsonrpc2.ID, 0, len(s.subs.listens))
	for id := range s.subs.listens {
		ids = append(ids, id)
	}
	s.subs.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		if c := s.flight[id]; c != nil {
			c()
		}
	}
}

type discardLogger struct{}

func (discardLogger) Printf(string, ...any) {}

// handler runs initialize and notifications inline, so that they take
// effect before anything sent after them, and every other request on its
// own goroutine, so a slow tool never blocks ping or cancellation.
type handler struct{ s *Server }

func (h handler) Handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	if req.Notif {
		h.s.notification(req)
		return
	}
	// Register before starting the goroutine, so a cancellation read right
	// behind its request always finds it.
	rctx, cancel := context.WithCancel(ctx)
	h.s.mu.Lock()
	h.s.flight[req.ID] = cancel
	h.s.mu.Unlock()
	h.s.running.Add(1)
	if req.Method == "initialize" {
		h.s.respond(ctx, rctx, conn, req)
		return
	}
	go h.s.respond(ctx, rctx, conn, req)
}

func (s *Server) respond(parent, ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	defer s.running.Done()
	defer func() {
		s.mu.Lock()
		cancel := s.flight[req.ID]
		delete(s.flight, req.ID)
		s.mu.Unlock()
		if cancel != nil {
			cancel()
		}
	}()

	res, err := s.dispatch(ctx, req)
	if ctx.Err() != nil && parent.Err() == nil {
		// Cancelled by the client: MCP asks receivers not to answer.
		if s.opts.IDs != nil {
			s.opts.IDs.Forget(req.ID)
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

func (s *Server) notification(req *jsonrpc2.Request) {
	switch req.Method {
	case "notifications/cancelled":
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if req.Params == nil || json.Unmarshal(*req.Params, &p) != nil || len(p.RequestID) == 0 {
			return
		}
		id, ok := s.handlerID(p.RequestID)
		if !ok {
			return
		}
		s.mu.Lock()
		cancel := s.flight[id]
		s.mu.Unlock()
		if cancel != nil {
			cancel()
		}
	default:
		// notifications/initialized and anything else: a notification is
		// never executed, so a tools/call without an id does nothing.
	}
}

// handlerID maps a client's request id to the id jsonrpc2 handed us.
func (s *Server) handlerID(raw json.RawMessage) (jsonrpc2.ID, bool) {
	if s.opts.IDs != nil {
		return s.opts.IDs.HandlerID(raw)
	}
	var id jsonrpc2.ID
	return id, json.Unmarshal(raw, &id) == nil
}

func (s *Server) cancelAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.flight {
		c()
	}
}

// dispatch resolves the generation, routes the method and decorates the
// result for the modern generation.
func (s *Server) dispatch(ctx context.Context, req *jsonrpc2.Request) (json.RawMessage, error) {
	params, err := decodeParams(req.Params)
	if err != nil {
		return nil, err
	}
	gen, err := s.generation(req.Method, params)
	if err != nil {
		return nil, err
	}
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
		res, err = s.initialize(params)
	case "ping":
		res = json.RawMessage(`{}`)
	case "server/discover":
		res, err = s.discover()
		cacheable = true
	case "tools/list":
		res, err = s.toolsList(gen, params)
		cacheable = true
	case "tools/call":
		res, err = s.recordCall(ctx, gen, params)
	case "resources/list":
		res, err = s.resourcesList(params, false)
		cacheable = true
	case "resources/templates/list":
		res, err = s.resourcesList(params, true)
		cacheable = true
	case "resources/read":
		res, err = s.resourcesRead(ctx, gen, params)
		cacheable = true
	case "resources/subscribe", "resources/unsubscribe":
		res, err = s.resourcesSubscribe(ctx, params, req.Method == "resources/subscribe")
	case "subscriptions/listen":
		res, err = s.subscriptionsListen(ctx, req.ID, params)
	default:
		return nil, methodNotFound(req.Method)
	}
	if err != nil || !gen.modern {
		return res, err
	}
	kv := []any{"resultType", "complete"}
	if cacheable {
		kv = append(kv, "ttlMs", 300000, "cacheScope", "public")
	}
	kv = append(kv, "_meta", map[string]any{metaServerInfo: s.serverInfo(gen)})
	return spliceFields(res, kv...)
}

func methodNotFound(m string) *rpcError {
	return errorf(codeMethodNotFound, map[string]any{"method": m}, "Method not found")
}

// params holds a request's params object, keys left raw.
type params map[string]json.RawMessage

func decodeParams(raw *json.RawMessage) (params, error) {
	if raw == nil || string(bytes.TrimSpace(*raw)) == "null" {
		return params{}, nil
	}
	var p params
	if err := json.Unmarshal(*raw, &p); err != nil || p == nil {
		return nil, invalidParams("params must be an object")
	}
	return p, nil
}

// generation classifies a request. Any request whose _meta names a
// protocol version is modern, even an unknown version: that way a future
// client gets -32022 instead of being silently served as legacy.
func (s *Server) generation(method string, p params) (generation, error) {
	var meta map[string]json.RawMessage
	if raw, ok := p["_meta"]; ok {
		if json.Unmarshal(raw, &meta) != nil {
			meta = nil
		}
	}
	rawVer, modern := meta[metaProtocolVersion]
	if !modern {
		s.mu.Lock()
		g := s.session
		s.mu.Unlock()
		return g, nil
	}
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
	g := generation{modern: true, version: ver}
	if ri, ok := meta[metaClientInfo]; ok {
		ci, err := parseClientInfo(ri)
		if err != nil {
			return generation{}, invalidParams("_meta[\"" + metaClientInfo + "\"] " + err.Error())
		}
		g.client = ci
	}
	return g, nil
}

func parseClientInfo(raw json.RawMessage) (clientInfo, error) {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return clientInfo{}, errors.New("must be an object with name and version")
	}
	var ci clientInfo
	if json.Unmarshal(m["name"], &ci.Name) != nil || strings.TrimSpace(ci.Name) == "" {
		return clientInfo{}, errors.New("needs a non-blank string name")
	}
	if json.Unmarshal(m["version"], &ci.Version) != nil || strings.TrimSpace(ci.Version) == "" {
		return clientInfo{}, errors.New("needs a non-blank string version")
	}
	return ci, nil
}

// legacyClientInfo reads initialize's clientInfo leniently: a malformed
// clientInfo does not fail the handshake (old clients send odd shapes), and
// only a non-blank string name counts as an identity.
func legacyClientInfo(raw json.RawMessage) (clientInfo, bool) {
	var m map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil || m == nil {
		return clientInfo{}, false
	}
	var ci clientInfo
	if json.Unmarshal(m["name"], &ci.Name) != nil || strings.TrimSpace(ci.Name) == "" {
		return clientInfo{}, false
	}
	if json.Unmarshal(m["version"], &ci.Version) != nil {
		ci.Version = ""
	}
	return ci, true
}

func (s *Server) serverInfo(g generation) map[string]any {
	info := map[string]any{"name": s.opts.Name, "version": s.opts.Version}
	if g.modern || g.version >= V20250618 {
		info["title"] = "fluxgit"
	}
	if g.modern || g.version >= V20251125 {
		info["description"] = "Git for coding agents: cheap, safe reads; human-approved write proposals."
	}
	return info
}

func (s *Server) capabilities() map[string]any {
	caps := map[string]any{"tools": map[string]any{"listChanged": false}}
	if len(s.opts.Catalog.Resources)+len(s.opts.Catalog.Templates) > 0 {
		caps["resources"] = map[string]any{"listChanged": false, "subscribe": true}
	}
	return caps
}

func (s *Server) initialize(p params) (json.RawMessage, error) {
	var req struct {
		ProtocolVersion *string         `json:"protocolVersion"`
		ClientInfo      json.RawMessage `json:"clientInfo"`
	}
	raw, _ := json.Marshal(p)
	if err := json.Unmarshal(raw, &req); err != nil || req.ProtocolVersion == nil {
		return nil, invalidParams("initialize needs a string protocolVersion")
	}
	g := generation{version: negotiate(*req.ProtocolVersion)}
	ci, named := legacyClientInfo(req.ClientInfo)
	s.mu.Lock()
	switch {
	case named:
		g.client = ci
	case s.inits:
		// A later initialize without a usable name (blank, missing,
		// malformed) keeps the agent id the session already has: the
		// audit ledger and the roster attribute calls by it, and an
		// anonymous re-handshake must not erase who is calling.
		g.client = s.session.client
	}
	s.session = g
	s.inits = true
	s.mu.Unlock()
	return rpc.Marshal(map[string]any{
		"protocolVersion": g.version,
		"capabilities":    s.capabilities(),
		"serverInfo":      s.serverInfo(g),
		"instructions":    Instructions,
	})
}

func (s *Server) discover() (json.RawMessage, error) {
	return rpc.Marshal(map[string]any{
		"supportedVersions": SupportedVersions,
		"capabilities":      s.capabilities(),
		"instructions":      Instructions,
	})
}

// checkCursor accepts the single-page cursors: absent, null or "".
func checkCursor(p params) error {
	raw, ok := p["cursor"]
	if !ok || string(raw) == "null" {
		return nil
	}
	var c string
	if json.Unmarshal(raw, &c) != nil {
		return invalidParams("params.cursor must be a string")
	}
	if c != "" {
		return invalidParams("params.cursor is not valid: every list is a single complete page")
	}
	return nil
}
