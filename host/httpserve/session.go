package httpserve

import (
	"context"
	"encoding/json"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/fluxgit/fluxgit/host/mcp"
	"github.com/fluxgit/fluxgit/host/rpc"
)

// Queue bounds. A request's notifications (progress, log lines) beyond
// maxQueued wait for a client that is not reading are dropped; the reply
// itself is always kept. The GET stream keeps the newest maxQueued.
const maxQueued = 256

// session is one mcp.Session served over HTTP: a stateful legacy session
// (id set) that lives across requests, or a one-request session. It is the
// session's jsonrpc2.ObjectStream: ReadObject yields what POSTs delivered,
// WriteObject routes each outgoing message to the response stream of the
// request it answers or relates to (mcp.Router), else to the GET stream.
type session struct {
	h       *Handler
	id      string // "" for a one-request session
	subject string // authenticated subject that opened it
	mcp     *mcp.Session
	env     *rpc.Envelope

	inmu      sync.Mutex // orders Inspect with the delivery it decides
	in        chan []byte
	closeOnce sync.Once
	closed    chan struct{}
	done      chan struct{} // Serve returned

	inflight sync.WaitGroup // requests whose POST is still answering

	mu         sync.Mutex
	exchanges  map[string]*exchange // open requests by the client's raw id
	related    map[uint64]string    // server request id → client request it is for
	standalone *exchange            // the GET stream's queue (stateful sessions)
	attached   bool                 // a GET stream is open
	lastUse    time.Time
}

var (
	_ jsonrpc2.ObjectStream = (*session)(nil)
	_ mcp.IDResolver        = (*session)(nil)
	_ mcp.Router            = (*session)(nil)
)

func (h *Handler) newSession(id, subject string) *session {
	s := &session{h: h, id: id, subject: subject, mcp: h.opts.Server.NewSession(),
		env: rpc.NewEnvelope(rpc.WithMaxFrameSize(int(h.opts.MaxBodyBytes)), rpc.WithLogFunc(func(f string, a ...any) {
			h.log.Debug("rpc: " + f)
		})),
		in: make(chan []byte, 64), closed: make(chan struct{}), done: make(chan struct{}),
		exchanges: map[string]*exchange{}, related: map[uint64]string{}, lastUse: time.Now()}
	if id != "" {
		s.standalone = newExchange(true)
	}
	if subject != "" {
		s.mcp.SetAuthenticatedAgent(subject)
	}
	h.running.Add(1)
	go func() {
		defer h.running.Done()
		defer close(s.done)
		_ = s.mcp.Serve(context.Background(), s)
	}()
	return s
}

// close ends the session: ReadObject reports EOF, so the mcp.Session
// drains its requests and returns; open streams end.
func (s *session) close() {
	s.closeOnce.Do(func() { close(s.closed) })
}

// Close implements jsonrpc2.ObjectStream.
func (s *session) Close() error {
	s.close()
	return nil
}

func (s *session) touch() {
	s.mu.Lock()
	s.lastUse = time.Now()
	s.mu.Unlock()
}

func (s *session) idleSince(d time.Duration) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.exchanges) == 0 && !s.attached && time.Since(s.lastUse) > d
}

// waitIdle waits until no request of the session is being answered.
func (s *session) waitIdle(ctx context.Context) {
	done := make(chan struct{})
	go func() { s.inflight.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// endStreams ends the streams that never finish on their own: the GET
// stream and subscriptions/listen requests (cancelled, as closing their
// stream would).
func (s *session) endStreams() {
	s.mu.Lock()
	var listens []string
	for key, ex := range s.exchanges {
		if ex.longLived {
			listens = append(listens, key)
		}
	}
	gs := s.standalone
	s.mu.Unlock()
	if gs != nil {
		gs.end()
	}
	for _, key := range listens {
		s.cancel(json.RawMessage(key))
	}
}

// ReadObject implements jsonrpc2.ObjectStream: the next message a POST
// delivered, io.EOF once the session is closed.
func (s *session) ReadObject(v any) error {
	select {
	case m := <-s.in:
		return json.Unmarshal(m, v)
	case <-s.closed:
		return io.EOF
	}
}

// push hands a canonical message to the session; false when it closed.
func (s *session) push(m []byte) bool {
	select {
	case s.in <- m:
		return true
	case <-s.closed:
		return false
	}
}

// cancel delivers notifications/cancelled for the request the client
// sent with raw id: how a closed response stream ends a request.
func (s *session) cancel(raw json.RawMessage) {
	b, err := rpc.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled",
		"params": map[string]any{"requestId": raw, "reason": "the HTTP response stream was closed"}})
	if err != nil {
		return
	}
	s.inmu.Lock()
	defer s.inmu.Unlock()
	if v := s.env.Inspect(b); v.Action == rpc.Deliver {
		s.push(v.Message)
	}
}

// outgoing is what WriteObject needs to know of a message it routes.
type outgoing struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Error  *struct {
		Code int64 `json:"code"`
	} `json:"error"`
}

// WriteObject implements jsonrpc2.ObjectStream. It never blocks on the
// network: messages are queued for the goroutine answering their POST.
func (s *session) WriteObject(v any) error {
	b, err := s.env.Outbound(v)
	if err != nil {
		return err
	}
	var o outgoing
	if err := json.Unmarshal(b, &o); err != nil {
		return err
	}
	switch {
	case o.Method == "": // a response
		m := message{b: b, final: true}
		if o.Error != nil {
			m.code = o.Error.Code
		}
		s.deliverTo(string(o.ID), m)
	case len(o.ID) > 0: // a server request, sent on its client request's stream
		n, _ := strconv.ParseUint(string(o.ID), 10, 64)
		s.mu.Lock()
		key, ok := s.related[n]
		delete(s.related, n)
		s.mu.Unlock()
		if !ok || !s.deliverTo(key, message{b: b}) {
			s.env.ForgetOutgoing(jsonrpc2.ID{Num: n})
			return errNoStream
		}
	default:
		s.deliverStandalone(b)
	}
	return nil
}

type streamError string

func (e streamError) Error() string { return string(e) }

const errNoStream = streamError("httpserve: the client request this message relates to has no open response stream")

// deliverTo queues m on the stream of the open request key; false when
// there is none (the client left, or the request ended).
func (s *session) deliverTo(key string, m message) bool {
	s.mu.Lock()
	ex := s.exchanges[key]
	if ex != nil && m.final {
		delete(s.exchanges, key)
	}
	s.mu.Unlock()
	if ex == nil {
		return false
	}
	return ex.deliver(m)
}

func (s *session) deliverStandalone(b []byte) {
	if s.standalone != nil {
		s.standalone.deliver(message{b: b})
	}
}

// NotifyRelated implements mcp.Router.
func (s *session) NotifyRelated(related *jsonrpc2.ID, method string, params any) error {
	req := &jsonrpc2.Request{Method: method, Notif: true}
	if err := req.SetParams(params); err != nil {
		return err
	}
	b, err := s.env.Outbound(req)
	if err != nil {
		return err
	}
	if related == nil {
		s.deliverStandalone(b)
		return nil
	}
	if !s.deliverTo(string(s.env.OriginalID(*related)), message{b: b}) {
		return errNoStream
	}
	return nil
}

// RelateOutgoing implements mcp.Router.
func (s *session) RelateOutgoing(out, related jsonrpc2.ID) {
	key := string(s.env.OriginalID(related))
	s.mu.Lock()
	s.related[out.Num] = key
	s.mu.Unlock()
}

// OriginalID implements mcp.IDResolver.
func (s *session) OriginalID(id jsonrpc2.ID) json.RawMessage { return s.env.OriginalID(id) }

// HandlerID implements mcp.IDResolver.
func (s *session) HandlerID(raw json.RawMessage) (jsonrpc2.ID, bool) { return s.env.HandlerID(raw) }

// Forget implements mcp.IDResolver: the session will not answer the
// request (it was cancelled), so its response stream ends without a reply.
func (s *session) Forget(id jsonrpc2.ID) {
	key := string(s.env.OriginalID(id))
	s.env.Forget(id)
	s.mu.Lock()
	ex := s.exchanges[key]
	delete(s.exchanges, key)
	s.mu.Unlock()
	if ex != nil {
		ex.end()
	}
}

// ForgetOutgoing lets a late answer to an abandoned server request drop.
func (s *session) ForgetOutgoing(id jsonrpc2.ID) { s.env.ForgetOutgoing(id) }

// message is one queued outgoing message.
type message struct {
	b     []byte
	final bool  // the reply to the exchange's request
	code  int64 // the reply's error code, 0 for a result
}

// exchange is the response stream of one POSTed request, or a session's
// GET stream (persistent: it outlives each GET and keeps the newest
// messages while none is open).
type exchange struct {
	persistent bool
	longLived  bool // subscriptions/listen: counted against MaxStreams

	mu      sync.Mutex
	queue   []message
	ended   bool // the reply is queued, or the request ended without one
	gone    bool // nobody will read: drop everything
	dropped int
	wake    chan struct{}
}

func newExchange(persistent bool) *exchange {
	return &exchange{persistent: persistent, wake: make(chan struct{}, 1)}
}

func (ex *exchange) signal() {
	select {
	case ex.wake <- struct{}{}:
	default:
	}
}

// deliver queues m; false when the exchange takes no more.
func (ex *exchange) deliver(m message) bool {
	ex.mu.Lock()
	if ex.gone || ex.ended {
		ex.mu.Unlock()
		return false
	}
	if !m.final && len(ex.queue) >= maxQueued {
		ex.dropped++
		if !ex.persistent {
			ex.mu.Unlock()
			return true
		}
		ex.queue = ex.queue[1:]
	}
	ex.queue = append(ex.queue, m)
	if m.final {
		ex.ended = true
	}
	ex.mu.Unlock()
	ex.signal()
	return true
}

// end ends the stream without (more) messages.
func (ex *exchange) end() {
	ex.mu.Lock()
	ex.ended = true
	ex.mu.Unlock()
	ex.signal()
}

// take removes the queued messages.
func (ex *exchange) take() ([]message, bool) {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	q := ex.queue
	ex.queue = nil
	ended := ex.ended
	if ex.persistent && ended {
		ex.ended = false // the next GET starts afresh
	}
	return q, ended
}

// leave marks a reader gone: a request's stream takes nothing more, a GET
// stream keeps queueing for the next GET.
func (ex *exchange) leave() {
	if ex.persistent {
		return
	}
	ex.mu.Lock()
	ex.gone = true
	ex.queue = nil
	ex.mu.Unlock()
}
