package httpserve

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/fluxgit/fluxgit/host/mcp"
	"github.com/fluxgit/fluxgit/host/rpc"
)

// HTTP header names of the Streamable HTTP transport.
const (
	headerSession  = "Mcp-Session-Id"
	headerVersion  = "Mcp-Protocol-Version"
	headerMethod   = "Mcp-Method"
	headerName     = "Mcp-Name"
	metaVersionKey = "io.modelcontextprotocol/protocolVersion"
	// defaultLegacyVersion is what the 2025-11-25 transport tells a server
	// to assume for a request without MCP-Protocol-Version.
	defaultLegacyVersion = mcp.V20250326
)

// JSON-RPC codes the transport answers with.
const (
	codeInvalidRequest = -32600
	codeInvalidParams  = -32602
	codeHeaderMismatch = -32020
)

// probe is what the transport reads of a POST body before the envelope
// rules judge it: enough to pick the generation and the session.
type probe struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

type probedParams struct {
	Meta map[string]json.RawMessage `json:"_meta"`
	Name *string                    `json:"name"`
	URI  *string                    `json:"uri"`
	// Arguments are a tools/call's, for its Mcp-Param-* headers.
	Arguments json.RawMessage `json:"arguments"`
	// TaskID is params.taskId of tasks/get, tasks/update and tasks/cancel,
	// which the Tasks extension mirrors into Mcp-Name for routing.
	TaskID *string `json:"taskId"`
}

// accepts reads the Accept header: which response types the client takes.
func accepts(r *http.Request) (jsonOK, sseOK bool) {
	vals := r.Header.Values("Accept")
	if len(vals) == 0 {
		return true, true
	}
	for _, v := range vals {
		for _, part := range strings.Split(v, ",") {
			mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			switch mt {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				sseOK = true
			case "*/*":
				jsonOK, sseOK = true, true
			}
		}
	}
	return jsonOK, sseOK
}

func (h *Handler) refuseClosing(w http.ResponseWriter) bool {
	h.mu.Lock()
	closing := h.closing
	h.mu.Unlock()
	if closing {
		w.Header().Set("Retry-After", "5")
		writeRPCError(w, http.StatusServiceUnavailable, nil, codeInvalidRequest, "the server is shutting down; retry against its replacement")
	}
	return closing
}

func (h *Handler) post(w http.ResponseWriter, r *http.Request) {
	if h.refuseClosing(w) {
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			writeRPCError(w, http.StatusUnsupportedMediaType, nil, codeInvalidRequest, "Content-Type must be application/json: the body is one JSON-RPC message")
			return
		}
	}
	jsonOK, sseOK := accepts(r)
	if !jsonOK && !sseOK {
		writeRPCError(w, http.StatusNotAcceptable, nil, codeInvalidRequest, "Accept must list application/json and text/event-stream")
		return
	}
	body, status, why := h.readBody(w, r)
	if status != 0 {
		writeRPCError(w, status, nil, codeInvalidRequest, why)
		return
	}
	var p probe
	var pp probedParams
	if json.Unmarshal(body, &p) == nil && len(p.Params) > 0 {
		_ = json.Unmarshal(p.Params, &pp)
	}
	hv := r.Header.Get(headerVersion)
	subject := h.subject(r)
	rawMetaVersion, modern := pp.Meta[metaVersionKey]

	if modern {
		why := checkModernHeaders(r, hv, rawMetaVersion, p.Method, pp)
		if why == "" && p.Method == "tools/call" && pp.Name != nil && h.opts.Server != nil {
			why = checkParamHeaders(r, h.opts.Server.ParamHeaders(*pp.Name), pp.Arguments)
		}
		if why != "" {
			writeRPCError(w, http.StatusBadRequest, requestID(body), codeHeaderMismatch, why)
			return
		}
		h.serveOneShot(w, r, body, subject, "")
		return
	}
	if hv != "" && !isLegacy(hv) {
		if hv == mcp.V20260728 {
			writeRPCError(w, http.StatusBadRequest, requestID(body), codeInvalidParams,
				`a 2026-07-28 request must carry params._meta["`+metaVersionKey+`"] (and clientCapabilities); legacy clients send initialize first`)
			return
		}
		writeRPCError(w, http.StatusBadRequest, requestID(body), codeInvalidRequest,
			fmt.Sprintf("MCP-Protocol-Version %q is not supported; supported: %s", hv, strings.Join(mcp.SupportedVersions, ", ")))
		return
	}
	version := hv
	if version == "" {
		version = defaultLegacyVersion
	}
	sid := r.Header.Get(headerSession)
	if h.opts.Mode == Stateless {
		h.serveOneShot(w, r, body, subject, version)
		return
	}
	if sid != "" {
		s, status, why := h.lookup(sid, subject)
		if s == nil {
			writeRPCError(w, status, requestID(body), codeInvalidRequest, why)
			return
		}
		h.serveOn(w, r, s, body, false)
		return
	}
	if p.Method == "initialize" {
		s, err := h.openSession(subject)
		if err != nil {
			w.Header().Set("Retry-After", "30")
			writeRPCError(w, http.StatusServiceUnavailable, requestID(body), codeInvalidRequest, err.Error())
			return
		}
		w.Header().Set(headerSession, s.id)
		h.serveOn(w, r, s, body, false)
		return
	}
	if h.opts.Mode == Stateful {
		writeRPCError(w, http.StatusBadRequest, requestID(body), codeInvalidRequest,
			"this request needs the Mcp-Session-Id header the initialize response returned; send initialize first")
		return
	}
	h.serveOneShot(w, r, body, subject, version)
}

func isLegacy(v string) bool {
	for _, l := range mcp.LegacyVersions {
		if l == v {
			return true
		}
	}
	return false
}

// requestID is the body's id for an error reply, or nil.
func requestID(body []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &m) != nil || len(m.ID) == 0 {
		return nil
	}
	if m.ID[0] != '"' && (m.ID[0] < '0' || m.ID[0] > '9') && m.ID[0] != '-' {
		return nil
	}
	return m.ID
}

// checkModernHeaders applies the 2026-07-28 header rules: the mirrored
// headers must be present and match the body.
func checkModernHeaders(r *http.Request, hv string, rawMeta json.RawMessage, method string, pp probedParams) string {
	var metaVersion string
	_ = json.Unmarshal(rawMeta, &metaVersion)
	switch {
	case hv == "":
		return "Header mismatch: the MCP-Protocol-Version header is required and must equal params._meta[\"" + metaVersionKey + "\"]"
	case metaVersion != "" && hv != metaVersion:
		return fmt.Sprintf("Header mismatch: MCP-Protocol-Version %q does not match the body's protocol version %q", hv, metaVersion)
	}
	if hm := r.Header.Get(headerMethod); hm != method {
		if hm == "" {
			return "Header mismatch: the Mcp-Method header is required and must equal the request's method " + strconvQuote(method)
		}
		return fmt.Sprintf("Header mismatch: Mcp-Method %q does not match the body's method %q", hm, method)
	}
	var want *string
	switch method {
	case "tools/call", "prompts/get":
		want = pp.Name
	case "resources/read":
		want = pp.URI
	case "tasks/get", "tasks/update", "tasks/cancel":
		want = pp.TaskID
	default:
		return ""
	}
	hn, present := r.Header[http.CanonicalHeaderKey(headerName)]
	if want == nil {
		return ""
	}
	if !present || len(hn) == 0 {
		return "Header mismatch: the Mcp-Name header is required for " + method + " and must equal " + strconvQuote(*want)
	}
	got, ok := decodeHeaderValue(hn[0])
	if !ok {
		return "Header mismatch: the Mcp-Name header has an invalid =?base64?…?= value"
	}
	if got != *want {
		return fmt.Sprintf("Header mismatch: Mcp-Name %q does not match the body's value %q", got, *want)
	}
	return ""
}

// checkParamHeaders holds the Mcp-Param-* headers of a tools/call against
// its arguments (SEP-2243): each argument the tool mirrors (x-mcp-header)
// that the body carries must come with its header, and the header,
// decoded, must equal it; a header of a null or absent argument is not
// expected.
func checkParamHeaders(r *http.Request, marks []mcp.ParamHeader, arguments json.RawMessage) string {
	for _, m := range marks {
		header := "Mcp-Param-" + m.Name
		want, inBody := m.ParamValue(arguments)
		vals, present := r.Header[http.CanonicalHeaderKey(header)]
		if !inBody {
			continue
		}
		if !present || len(vals) == 0 {
			return fmt.Sprintf("Header mismatch: the %s header is required when arguments.%s is set, and must equal it", header, strings.Join(m.Path, "."))
		}
		raw := strings.Trim(vals[0], " \t")
		if !validHeaderValue(raw) {
			return "Header mismatch: the " + header + " header has characters outside visible ASCII; send such a value as =?base64?…?="
		}
		got, ok := decodeHeaderValue(raw)
		if !ok {
			return "Header mismatch: the " + header + " header has an invalid =?base64?…?= value (standard Base64 with padding)"
		}
		if got != want {
			return fmt.Sprintf("Header mismatch: %s %q does not match the body's arguments.%s %q", header, got, strings.Join(m.Path, "."), want)
		}
	}
	return ""
}

// validHeaderValue reports whether a header value holds only visible
// ASCII and inner spaces or tabs, as SEP-2243 requires of a plain value.
func validHeaderValue(v string) bool {
	for _, c := range []byte(v) {
		if (c < 0x20 && c != '\t') || c > 0x7e {
			return false
		}
	}
	return true
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

// decodeHeaderValue undoes the transport's =?base64?…?= sentinel
// (SEP-2243): a value that both starts with =?base64? and ends with ?= is
// standard Base64 with padding; any other value is literal, even one
// with only the prefix or only the suffix.
func decodeHeaderValue(v string) (string, bool) {
	const prefix, suffix = "=?base64?", "?="
	if len(v) < len(prefix)+len(suffix) || !strings.HasPrefix(v, prefix) || !strings.HasSuffix(v, suffix) {
		return v, true
	}
	b, err := base64.StdEncoding.Strict().DecodeString(v[len(prefix) : len(v)-len(suffix)])
	if err != nil {
		return "", false
	}
	return string(b), true
}

func (h *Handler) subject(r *http.Request) string {
	if h.opts.Subject == nil {
		return ""
	}
	name, ok := h.opts.Subject(r.Context())
	if !ok {
		return ""
	}
	return name
}

// lookup finds the stateful session sid for a request by subject.
func (h *Handler) lookup(sid, subject string) (*session, int, string) {
	h.mu.Lock()
	s := h.sessions[sid]
	h.mu.Unlock()
	if s == nil {
		return nil, http.StatusNotFound, "session " + strconvQuote(sid) + " does not exist (it ended or expired); send a new initialize without Mcp-Session-Id"
	}
	if s.subject != subject {
		return nil, http.StatusForbidden, "this session belongs to another authenticated subject"
	}
	s.touch()
	return s, 0, ""
}

func (h *Handler) openSession(subject string) (*session, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.sessions) >= h.opts.MaxSessions {
		return nil, fmt.Errorf("too many sessions (%d, the limit); end unused ones with DELETE or retry later", h.opts.MaxSessions)
	}
	s := h.newSession(rand.Text(), subject)
	h.sessions[s.id] = s
	return s, nil
}

// serveOneShot serves one request in a session of its own.
func (h *Handler) serveOneShot(w http.ResponseWriter, r *http.Request, body []byte, subject, legacyVersion string) {
	h.mu.Lock()
	full := len(h.oneShots) >= h.opts.MaxInFlight
	h.mu.Unlock()
	if full {
		w.Header().Set("Retry-After", "1")
		writeRPCError(w, http.StatusServiceUnavailable, requestID(body), codeInvalidRequest,
			fmt.Sprintf("too many requests in flight (%d, the limit); retry shortly", h.opts.MaxInFlight))
		return
	}
	s := h.newSession("", subject)
	if legacyVersion != "" {
		s.mcp.AssumeLegacyVersion(legacyVersion)
	}
	h.mu.Lock()
	h.oneShots[s] = struct{}{}
	h.mu.Unlock()
	defer func() {
		s.close()
		<-s.done
		h.mu.Lock()
		delete(h.oneShots, s)
		h.mu.Unlock()
	}()
	h.serveOn(w, r, s, body, true)
}

// serveOn judges body with the session's envelope and delivers it; a
// request is then answered on this POST's response.
func (h *Handler) serveOn(w http.ResponseWriter, r *http.Request, s *session, body []byte, oneShot bool) {
	s.inmu.Lock()
	v := s.env.Inspect(body)
	var (
		ex  *exchange
		key string
		msg struct {
			ID     *jsonrpc2.ID `json:"id"`
			Method string       `json:"method"`
		}
	)
	if v.Action == rpc.Deliver && !v.Response {
		if err := json.Unmarshal(v.Message, &msg); err != nil {
			v = s.env.Refused(v, err)
		}
	}
	if v.Action == rpc.Deliver && !v.Response && msg.ID != nil {
		key = string(s.env.OriginalID(*msg.ID))
		switch {
		case oneShot && s.id == "" && (msg.Method == "resources/subscribe" || msg.Method == "logging/setLevel") && !isModernBody(body):
			v = s.env.Refused(v, fmt.Errorf("%s needs a session: this server serves requests without Mcp-Session-Id statelessly, so nothing would last past this request; start it with --session-mode auto or stateful, or use subscriptions/listen (2026-07-28)", msg.Method))
		default:
			ex = newExchange(false)
			ex.longLived = msg.Method == "subscriptions/listen"
			s.mu.Lock()
			if _, dup := s.exchanges[key]; dup {
				s.mu.Unlock()
				ex = nil
				v = s.env.Refused(v, fmt.Errorf("request id %s is already in flight in this session; use a new id", key))
			} else {
				s.exchanges[key] = ex
				s.inflight.Add(1)
				s.mu.Unlock()
			}
		}
	}
	if ex != nil && ex.longLived && !h.acquireStream() {
		s.mu.Lock()
		delete(s.exchanges, key)
		s.mu.Unlock()
		s.inflight.Done()
		s.env.Refused(v, fmt.Errorf("stream limit"))
		s.inmu.Unlock()
		w.Header().Set("Retry-After", "30")
		writeRPCError(w, http.StatusServiceUnavailable, json.RawMessage(key), codeInvalidRequest,
			fmt.Sprintf("too many open streams (%d, the limit); close a subscriptions/listen or GET stream you no longer read", h.opts.MaxStreams))
		return
	}
	switch v.Action {
	case rpc.Answer:
		s.inmu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write(append(v.Reply, '\n'))
		return
	case rpc.Drop:
		s.inmu.Unlock()
		h.log.Debug("dropped message", "details", v.Details)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	ok := s.push(v.Message)
	s.inmu.Unlock()
	if !ok {
		if ex != nil {
			s.inflight.Done()
		}
		writeRPCError(w, http.StatusNotFound, json.RawMessage(key), codeInvalidRequest, "the session ended; send a new initialize without Mcp-Session-Id")
		return
	}
	if ex == nil { // a notification or a response
		w.WriteHeader(http.StatusAccepted)
		return
	}
	defer s.inflight.Done()
	if ex.longLived {
		defer h.releaseStream()
	}
	jsonOK, sseOK := accepts(r)
	modern := isModernBody(body)
	if !oneShot && !modern {
		s.resumable(ex)
		ex.attach()
	}
	left := h.pump(w, r, s, ex, pumpOptions{jsonOK: jsonOK && !ex.longLived, sseOK: sseOK || ex.longLived,
		forceSSE: ex.longLived, modern: modern, keepAlive: ex.longLived, prime: primes(body) || r.Header.Get(headerVersion) >= mcp.V20251125})
	if ex.resumable {
		ex.detach()
		if !left {
			s.finished(ex)
		}
	}
	if left && !ex.resumable {
		s.mu.Lock()
		if s.exchanges[key] == ex {
			delete(s.exchanges, key)
		}
		s.mu.Unlock()
		// A client that closes a modern or one-request stream cancels its
		// request: nothing else could ever read the reply. A stateful
		// legacy session's request runs on (MCP 2025-11-25: disconnection
		// is not cancellation).
		if modern || oneShot {
			s.cancel(json.RawMessage(key))
		}
	}
	s.touch()
}

func isModernBody(body []byte) bool {
	var p probe
	var pp probedParams
	if json.Unmarshal(body, &p) != nil || len(p.Params) == 0 || json.Unmarshal(p.Params, &pp) != nil {
		return false
	}
	_, ok := pp.Meta[metaVersionKey]
	return ok
}

type pumpOptions struct {
	jsonOK, sseOK bool
	forceSSE      bool
	modern        bool
	keepAlive     bool
	// prime sends a resumable stream's priming event (an id, no data)
	// first, as 2025-11-25 advises, so a client can resume before the
	// first message.
	prime bool
	// replay, when set, are events a resumed stream writes first.
	replay []sentEvent
}

// primes reports whether an initialize asks for 2025-11-25 or later,
// whose clients expect priming events.
func primes(body []byte) bool {
	var m struct {
		Params struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"params"`
	}
	return json.Unmarshal(body, &m) == nil && m.Params.ProtocolVersion >= mcp.V20251125
}

// pump writes ex's messages to w: the reply alone as JSON when it comes
// first and the client takes JSON, else an SSE stream. It reports whether
// the client left (or stopped reading) before the stream ended.
func (h *Handler) pump(w http.ResponseWriter, r *http.Request, s *session, ex *exchange, o pumpOptions) (left bool) {
	rc := http.NewResponseController(w)
	started := false
	write := func(b []byte) error {
		_ = rc.SetWriteDeadline(time.Now().Add(h.opts.WriteTimeout))
		_, err := w.Write(b)
		return err
	}
	var buf bytes.Buffer
	event := func(m message, seq uint64) error {
		buf.Reset()
		buf.WriteString("event: message\n")
		if ex.resumable {
			fmt.Fprintf(&buf, "id: %d-%d\n", ex.num, seq)
		}
		buf.WriteString("data: ")
		buf.Write(m.b)
		buf.WriteString("\n\n")
		return write(buf.Bytes())
	}
	startSSE := func() error {
		hd := w.Header()
		hd.Set("Content-Type", "text/event-stream")
		hd.Set("Cache-Control", "no-cache, no-transform")
		hd.Set("X-Accel-Buffering", "no")
		w.WriteHeader(http.StatusOK)
		started = true
		if ex.resumable && o.prime && len(o.replay) == 0 {
			if err := write([]byte(fmt.Sprintf("id: %d-0\ndata:\n\n", ex.num))); err != nil {
				return err
			}
		}
		_ = rc.SetWriteDeadline(time.Now().Add(h.opts.WriteTimeout))
		return rc.Flush()
	}
	if o.forceSSE || !o.jsonOK {
		if err := startSSE(); err != nil {
			ex.leave()
			return true
		}
	}
	var tick <-chan time.Time
	if o.keepAlive {
		t := time.NewTicker(h.opts.KeepAlive)
		defer t.Stop()
		tick = t.C
	}
	for _, e := range o.replay {
		if err := event(message{b: e.b, final: e.final}, e.seq); err != nil {
			return true
		}
		if e.final {
			_ = rc.Flush()
			return false
		}
	}
	for {
		q, ended := ex.take()
		for _, m := range q {
			if !started && m.final && o.jsonOK {
				w.Header().Set("Content-Type", "application/json")
				status := http.StatusOK
				if o.modern {
					status = modernStatus(m.code)
				}
				w.WriteHeader(status)
				_ = write(m.b)
				return false
			}
			if !started {
				if err := startSSE(); err != nil {
					ex.leave()
					return true
				}
			}
			var seq uint64
			if ex.resumable {
				seq = ex.record(m)
			}
			if err := event(m, seq); err != nil {
				ex.leave()
				return true
			}
			if m.final {
				_ = rc.Flush()
				return false
			}
		}
		if ended {
			if !started {
				_ = startSSE()
			}
			_ = rc.Flush()
			return false
		}
		if started {
			if err := rc.Flush(); err != nil {
				ex.leave()
				return true
			}
		}
		select {
		case <-ex.wake:
		case <-r.Context().Done():
			ex.leave()
			return true
		case <-s.closed:
			if !started {
				writeRPCError(w, http.StatusServiceUnavailable, nil, codeInvalidRequest, "the session ended before the request was answered")
			}
			ex.leave()
			return false
		case <-tick:
			if started {
				if err := write([]byte(":\n\n")); err != nil {
					ex.leave()
					return true
				}
			}
		}
	}
}

// modernStatus is the HTTP status of a 2026-07-28 error reply sent as
// JSON: unknown methods are 404, malformed requests 400.
func modernStatus(code int64) int {
	switch code {
	case 0:
		return http.StatusOK
	case -32601:
		return http.StatusNotFound
	case -32602, -32600, -32700, -32020, -32021, -32022:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// get opens a stateful session's stream for server messages unrelated to
// any request.
func (h *Handler) get(w http.ResponseWriter, r *http.Request) {
	if h.refuseClosing(w) {
		return
	}
	if h.opts.Mode == Stateless {
		w.Header().Set("Allow", "POST")
		writeRPCError(w, http.StatusMethodNotAllowed, nil, codeInvalidRequest, "this server is stateless: it has no GET stream (use subscriptions/listen for change notifications)")
		return
	}
	if _, sseOK := accepts(r); !sseOK {
		writeRPCError(w, http.StatusNotAcceptable, nil, codeInvalidRequest, "a GET stream needs Accept: text/event-stream")
		return
	}
	sid := r.Header.Get(headerSession)
	if sid == "" {
		w.Header().Set("Allow", "POST, DELETE")
		writeRPCError(w, http.StatusMethodNotAllowed, nil, codeInvalidRequest, "a GET stream needs the Mcp-Session-Id header of an initialized session")
		return
	}
	s, status, why := h.lookup(sid, h.subject(r))
	if s == nil {
		writeRPCError(w, status, nil, codeInvalidRequest, why)
		return
	}
	if last := r.Header.Get("Last-Event-ID"); last != "" {
		h.resume(w, r, s, last)
		return
	}
	s.mu.Lock()
	if s.attached {
		s.mu.Unlock()
		writeRPCError(w, http.StatusConflict, nil, codeInvalidRequest, "this session already has an open GET stream; only one is served at a time")
		return
	}
	s.attached = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.attached = false
		s.mu.Unlock()
		s.touch()
	}()
	if !h.acquireStream() {
		w.Header().Set("Retry-After", "30")
		writeRPCError(w, http.StatusServiceUnavailable, nil, codeInvalidRequest,
			fmt.Sprintf("too many open streams (%d, the limit); close a stream you no longer read", h.opts.MaxStreams))
		return
	}
	defer h.releaseStream()
	h.pump(w, r, s, s.standalone, pumpOptions{sseOK: true, forceSSE: true, keepAlive: true})
}

// resume continues a session's stream after the event last (MCP
// 2025-11-25, resumability): the events after it are replayed, then the
// stream goes on live; a request's stream ends with its reply.
func (h *Handler) resume(w http.ResponseWriter, r *http.Request, s *session, last string) {
	var num, seq uint64
	if _, err := fmt.Sscanf(last, "%d-%d", &num, &seq); err != nil || fmt.Sprintf("%d-%d", num, seq) != last {
		writeRPCError(w, http.StatusBadRequest, nil, codeInvalidRequest, fmt.Sprintf("Last-Event-ID %q is not an event id of this server (<stream>-<event>)", last))
		return
	}
	if num == 0 {
		s.mu.Lock()
		if s.attached {
			s.mu.Unlock()
			writeRPCError(w, http.StatusConflict, nil, codeInvalidRequest, "this session already has an open GET stream; only one is served at a time")
			return
		}
		s.attached = true
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			s.attached = false
			s.mu.Unlock()
		}()
		if !h.acquireStream() {
			w.Header().Set("Retry-After", "30")
			writeRPCError(w, http.StatusServiceUnavailable, nil, codeInvalidRequest, fmt.Sprintf("too many open streams (%d, the limit)", h.opts.MaxStreams))
			return
		}
		defer h.releaseStream()
		h.pump(w, r, s, s.standalone, pumpOptions{sseOK: true, forceSSE: true, keepAlive: true, replay: s.standalone.since(seq)})
		return
	}
	s.mu.Lock()
	ex := s.streams[num]
	s.mu.Unlock()
	if ex == nil {
		writeRPCError(w, http.StatusNotFound, nil, codeInvalidRequest, fmt.Sprintf("stream %d of this session is unknown or already ended with its reply", num))
		return
	}
	if !ex.attach() {
		writeRPCError(w, http.StatusConflict, nil, codeInvalidRequest, fmt.Sprintf("stream %d is being read by another response", num))
		return
	}
	s.inflight.Add(1)
	defer s.inflight.Done()
	left := h.pump(w, r, s, ex, pumpOptions{sseOK: true, forceSSE: true, replay: ex.since(seq)})
	ex.detach()
	if !left {
		s.finished(ex)
	}
	s.touch()
}

// del ends a stateful session.
func (h *Handler) del(w http.ResponseWriter, r *http.Request) {
	if h.opts.Mode == Stateless {
		w.Header().Set("Allow", "POST")
		writeRPCError(w, http.StatusMethodNotAllowed, nil, codeInvalidRequest, "this server is stateless: there is no session to delete")
		return
	}
	sid := r.Header.Get(headerSession)
	if sid == "" {
		writeRPCError(w, http.StatusBadRequest, nil, codeInvalidRequest, "DELETE needs the Mcp-Session-Id header of the session to end")
		return
	}
	s, status, why := h.lookup(sid, h.subject(r))
	if s == nil {
		writeRPCError(w, status, nil, codeInvalidRequest, why)
		return
	}
	h.dropSession(s)
	s.close()
	w.WriteHeader(http.StatusNoContent)
}
