// Package httpserve serves MCP over Streamable HTTP: both protocol
// generations on one endpoint. Legacy clients (2024-11-05 … 2025-11-25)
// initialize and, in the stateful session modes, get an Mcp-Session-Id, a
// GET stream for server messages and DELETE; 2026-07-28 requests carry
// their version in _meta and are served statelessly, each POST its own
// one-request session answered as JSON or as an SSE stream
// (subscriptions/listen always streams). Every session is an mcp.Session
// over a jsonrpc2.ObjectStream built here; the envelope rules are
// host/rpc's Envelope, the same as on stdio.
package httpserve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fluxgit/fluxgit/host/mcp"
	"github.com/fluxgit/fluxgit/host/rpc"
)

// Mode says when a legacy client gets a protocol session (Mcp-Session-Id).
type Mode string

// Session modes (docs/http.md).
const (
	// Stateless never issues a session id: every request is served on its
	// own, so nothing lasts between requests (no GET stream, no
	// resources/subscribe, no logging/setLevel).
	Stateless Mode = "stateless"
	// Stateful issues a session id on initialize and requires it on every
	// later legacy request.
	Stateful Mode = "stateful"
	// Auto issues a session id on initialize and serves legacy requests
	// without one statelessly.
	Auto Mode = "auto"
)

// ParseMode reads a session mode name.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.ToLower(strings.TrimSpace(s))); m {
	case Stateless, Stateful, Auto:
		return m, nil
	}
	return "", fmt.Errorf("session mode %q is not one of auto, stateful, stateless", s)
}

// Defaults (docs/http.md).
const (
	DefaultPath         = "/mcp"
	DefaultMaxBodyBytes = rpc.DefaultMaxFrameSize
	DefaultMaxSessions  = 1024
	// DefaultMaxStreams bounds the long-lived streams (legacy GET streams
	// and subscriptions/listen) open at once, server-wide.
	DefaultMaxStreams = 512
	// DefaultMaxInFlight bounds the requests served outside a session
	// (2026-07-28 and stateless legacy ones) at once, server-wide.
	DefaultMaxInFlight = 4096
	DefaultIdleTimeout = 30 * time.Minute
	// DefaultWriteTimeout bounds one write to a client; a client that
	// stops reading loses its stream instead of holding server memory.
	DefaultWriteTimeout = 15 * time.Second
	// DefaultBodyTimeout bounds how long a request's body may take to
	// arrive, counted from the end of its headers: a client that declares
	// a Content-Length and stalls loses its connection instead of holding
	// it forever (issue 22, finding 5). Long-lived streams are not bound
	// by it: a GET has no body, and a subscriptions/listen POST's body is
	// read before its stream starts.
	DefaultBodyTimeout = 30 * time.Second
	// DefaultKeepAlive is how often a quiet long-lived stream gets an SSE
	// comment, so intermediaries keep it open and a vanished client is
	// noticed.
	DefaultKeepAlive = 20 * time.Second
)

// Options configures a Handler.
type Options struct {
	Server *mcp.Server
	// Path is the MCP endpoint (DefaultPath).
	Path string
	// Mode is the legacy session mode (Auto when empty).
	Mode Mode
	// AllowedHosts are host names accepted in the Host header besides the
	// loopback names; "*" accepts any. Empty with a loopback listener
	// means loopback names only (DNS-rebinding protection).
	AllowedHosts []string
	// AllowedOrigins are origins (scheme://host[:port]) accepted in the
	// Origin header besides loopback origins; "*" accepts any.
	AllowedOrigins []string
	MaxBodyBytes   int64
	MaxSessions    int
	MaxStreams     int
	MaxInFlight    int
	IdleTimeout    time.Duration
	WriteTimeout   time.Duration
	// BodyTimeout bounds the arrival of a request body (DefaultBodyTimeout).
	BodyTimeout time.Duration
	// KeepAlive is the SSE keep-alive interval of long-lived streams
	// (DefaultKeepAlive).
	KeepAlive time.Duration
	// Middleware wraps the MCP endpoint, normally an authenticator
	// (host/httpauth's Authenticator.Wrap); it runs after the Origin and
	// Host checks.
	Middleware func(http.Handler) http.Handler
	// Subject returns the authenticated subject of a request (what
	// Middleware verified); it becomes the agent id of the session the
	// request opens, and a stateful session answers only its own subject.
	Subject func(ctx context.Context) (string, bool)
	// Stats serves GET <Path>/stats with goroutine, session and stream
	// counts, for load tests; loopback clients only.
	Stats bool
	Log   hclog.Logger
}

// Handler is the MCP endpoint.
type Handler struct {
	opts  Options
	log   hclog.Logger
	inner http.Handler

	mu       sync.Mutex
	sessions map[string]*session
	streams  int  // long-lived streams open
	closing  bool // Shutdown began: no new requests
	oneShots map[*session]struct{}

	running sync.WaitGroup // sessions being served
	reaper  chan struct{}
}

// New builds a Handler for opts.
func New(opts Options) (*Handler, error) {
	if opts.Server == nil {
		return nil, errors.New("httpserve: Options.Server is required")
	}
	if opts.Path == "" {
		opts.Path = DefaultPath
	}
	if !strings.HasPrefix(opts.Path, "/") {
		return nil, fmt.Errorf("httpserve: path %q must begin with /", opts.Path)
	}
	if opts.Mode == "" {
		// Sessions by default: logging/setLevel, resources/subscribe and
		// the GET stream need one, and the clients people try first (the
		// MCP Inspector) use them.
		opts.Mode = Auto
	}
	if _, err := ParseMode(string(opts.Mode)); err != nil {
		return nil, fmt.Errorf("httpserve: %w", err)
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = DefaultMaxSessions
	}
	if opts.MaxStreams <= 0 {
		opts.MaxStreams = DefaultMaxStreams
	}
	if opts.MaxInFlight <= 0 {
		opts.MaxInFlight = DefaultMaxInFlight
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = DefaultWriteTimeout
	}
	if opts.BodyTimeout <= 0 {
		opts.BodyTimeout = DefaultBodyTimeout
	}
	if opts.KeepAlive <= 0 {
		opts.KeepAlive = DefaultKeepAlive
	}
	log := opts.Log
	if log == nil {
		log = hclog.NewNullLogger()
	}
	h := &Handler{opts: opts, log: log, sessions: map[string]*session{}, oneShots: map[*session]struct{}{},
		reaper: make(chan struct{})}
	var inner http.Handler = http.HandlerFunc(h.serveMCP)
	if opts.Middleware != nil {
		inner = opts.Middleware(inner)
	}
	h.inner = inner
	go h.reap()
	return h, nil
}

// Path is the MCP endpoint path.
func (h *Handler) Path() string { return h.opts.Path }

// ServeHTTP checks Origin and Host, then serves the endpoint; everything
// else is 404. Metadata routes the middleware serves (OAuth
// protected-resource metadata) reach it too.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w, r = h.guardBody(w, r)
	if status, why := h.checkOrigin(r); status != 0 {
		writeRPCError(w, status, nil, -32600, why)
		return
	}
	if h.opts.Stats && r.Method == http.MethodGet && r.URL.Path == strings.TrimSuffix(h.opts.Path, "/")+"/stats" {
		h.serveStats(w, r)
		return
	}
	h.inner.ServeHTTP(w, r)
}

func (h *Handler) serveMCP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != h.opts.Path {
		http.NotFound(w, r)
		return
	}
	switch r.Method {
	case http.MethodPost:
		h.post(w, r)
	case http.MethodGet:
		h.get(w, r)
	case http.MethodDelete:
		h.del(w, r)
	default:
		w.Header().Set("Allow", h.allow())
		writeRPCError(w, http.StatusMethodNotAllowed, nil, -32600, "the MCP endpoint accepts "+h.allow())
	}
}

func (h *Handler) allow() string {
	if h.opts.Mode == Stateless {
		return "POST"
	}
	return "GET, POST, DELETE"
}

// checkOrigin applies the MCP transports' DNS-rebinding rules: a present
// Origin must be allowed (403), and the Host must name this server (421:
// the request was meant for another host) unless any host is allowed.
func (h *Handler) checkOrigin(r *http.Request) (int, string) {
	if o := r.Header.Get("Origin"); o != "" && !h.originAllowed(o) {
		return http.StatusForbidden, fmt.Sprintf("Origin %q is not allowed: browsers may reach this server only from a loopback page; add it with --allowed-origins (MCP_HTTP_ALLOWED_ORIGINS) if it is yours", o)
	}
	if !h.hostAllowed(r.Host) {
		return http.StatusMisdirectedRequest, fmt.Sprintf("Host %q is not a name of this server (a DNS-rebinding attempt?); add it with --allowed-hosts (MCP_HTTP_ALLOWED_HOSTS) if clients reach the server by that name", r.Host)
	}
	return 0, ""
}

func (h *Handler) originAllowed(origin string) bool {
	for _, a := range h.opts.AllowedOrigins {
		if a == "*" || strings.EqualFold(strings.TrimSuffix(a, "/"), origin) {
			return true
		}
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return isLoopbackName(u.Hostname())
}

func (h *Handler) hostAllowed(host string) bool {
	name := host
	if hn, _, err := net.SplitHostPort(host); err == nil {
		name = hn
	}
	name = strings.TrimSuffix(strings.TrimPrefix(name, "["), "]")
	if isLoopbackName(name) {
		return true
	}
	for _, a := range h.opts.AllowedHosts {
		if a == "*" || strings.EqualFold(a, name) || strings.EqualFold(a, host) {
			return true
		}
	}
	return false
}

// isLoopbackName reports names that can only mean this machine.
func isLoopbackName(name string) bool {
	name = strings.TrimSuffix(strings.TrimPrefix(name, "["), "]")
	if strings.EqualFold(name, "localhost") || strings.HasSuffix(strings.ToLower(name), ".localhost") {
		return true
	}
	ip := net.ParseIP(name)
	return ip != nil && ip.IsLoopback()
}

// IsLoopbackHost reports whether a listen host binds loopback only; the
// empty host and wildcards bind every interface.
func IsLoopbackHost(host string) bool {
	return isLoopbackName(host)
}

// writeRPCError writes an HTTP error whose body is a JSON-RPC error
// response (id null when id is nil), as the MCP transports allow.
func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, code int64, message string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, err := rpc.Marshal(map[string]any{"jsonrpc": "2.0", "id": id,
		"error": map[string]any{"code": code, "message": message}})
	if err != nil {
		http.Error(w, message, status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// Stats are the counts GET <path>/stats reports.
type Stats struct {
	Goroutines int `json:"goroutines"`
	Sessions   int `json:"sessions"`
	OneShots   int `json:"oneShots"`
	Streams    int `json:"streams"`
}

// Stats reports the handler's current counts.
func (h *Handler) Stats() Stats {
	h.mu.Lock()
	defer h.mu.Unlock()
	return Stats{Goroutines: runtime.NumGoroutine(), Sessions: len(h.sessions), OneShots: len(h.oneShots), Streams: h.streams}
}

func (h *Handler) serveStats(w http.ResponseWriter, r *http.Request) {
	host, _, _ := net.SplitHostPort(r.RemoteAddr)
	if !isLoopbackName(host) {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(h.Stats())
}

// acquireStream counts a long-lived stream against MaxStreams.
func (h *Handler) acquireStream() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.streams >= h.opts.MaxStreams {
		return false
	}
	h.streams++
	return true
}

func (h *Handler) releaseStream() {
	h.mu.Lock()
	h.streams--
	h.mu.Unlock()
}

// reap closes stateful sessions idle longer than IdleTimeout: a client
// that vanished without DELETE must not keep its session forever.
func (h *Handler) reap() {
	t := time.NewTicker(min(h.opts.IdleTimeout/4, time.Minute))
	defer t.Stop()
	for {
		select {
		case <-h.reaper:
			return
		case <-t.C:
		}
		var idle []*session
		h.mu.Lock()
		for _, s := range h.sessions {
			if s.idleSince(h.opts.IdleTimeout) {
				idle = append(idle, s)
			}
		}
		h.mu.Unlock()
		for _, s := range idle {
			h.log.Debug("closing idle session", "session", s.id)
			h.dropSession(s)
			s.close()
		}
	}
}

func (h *Handler) dropSession(s *session) {
	h.mu.Lock()
	if h.sessions[s.id] == s {
		delete(h.sessions, s.id)
	}
	h.mu.Unlock()
}

// Shutdown ends the endpoint gracefully: new requests are refused (503),
// long-lived streams end, requests in flight run to completion (each
// reaching the audit ledger) until ctx ends, then every session closes.
func (h *Handler) Shutdown(ctx context.Context) error {
	h.mu.Lock()
	if h.closing {
		h.mu.Unlock()
		return nil
	}
	h.closing = true
	all := make([]*session, 0, len(h.sessions)+len(h.oneShots))
	for _, s := range h.sessions {
		all = append(all, s)
	}
	for s := range h.oneShots {
		all = append(all, s)
	}
	h.mu.Unlock()
	close(h.reaper)
	for _, s := range all {
		s.endStreams()
	}
	done := make(chan struct{})
	go func() {
		for _, s := range all {
			s.waitIdle(ctx)
		}
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
	for _, s := range all {
		s.close()
	}
	wait := make(chan struct{})
	go func() { h.running.Wait(); close(wait) }()
	select {
	case <-wait:
		return nil
	case <-time.After(10 * time.Second):
		return errors.New("httpserve: sessions still running after shutdown")
	}
}

// readBody reads a POST body up to MaxBodyBytes, within the deadline
// guardBody set. Only a body read whole lifts the deadline: the
// connection then idles, or streams, as long as its response needs.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, int, string) {
	if r.ContentLength > h.opts.MaxBodyBytes {
		return nil, http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body of %d bytes exceeds the %d-byte limit", r.ContentLength, h.opts.MaxBodyBytes)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.opts.MaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		var ne net.Error
		switch {
		case errors.As(err, &mbe):
			return nil, http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body exceeds the %d-byte limit; send smaller arguments", h.opts.MaxBodyBytes)
		case errors.As(err, &ne) && ne.Timeout():
			got := fmt.Sprintf("%d bytes came", len(body))
			if r.ContentLength > 0 {
				got = fmt.Sprintf("%d of %d declared bytes came", len(body), r.ContentLength)
			}
			return nil, http.StatusRequestTimeout, fmt.Sprintf("the request body did not arrive within %s of its headers (%s); send the whole body at once", h.opts.BodyTimeout, got)
		}
		return nil, http.StatusBadRequest, "the request body could not be read: " + err.Error()
	}
	_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
	return body, 0, ""
}
