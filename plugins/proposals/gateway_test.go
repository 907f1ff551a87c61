package proposals

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/fluxgit/fluxgit/internal/fluxbridge"
	"github.com/fluxgit/fluxgit/internal/operation"
)

// request is one request the test gateway received.
type request struct {
	Method string
	Path   string
	Body   map[string]any
	Raw    []byte
}

// testGateway is a real loopback HTTP server speaking the gateway
// protocol strictly: a preview body with a key the contract does not list
// (or without a header key) is refused with 400 and fails the test. The
// handlers decide the replies; by default a preview is pending.
type testGateway struct {
	t   *testing.T
	srv *httptest.Server

	mu   sync.Mutex
	reqs []request

	// preview answers POST /v1/mcp/operation/preview/<op>; nil: 202 with
	// {previewId, status:"pending", expiresAt}.
	preview http.HandlerFunc
	// status answers GET /v1/mcp/operation/status/<id>; nil: 200 with
	// {previewId, status:"pending"}.
	status http.HandlerFunc
	// cancel answers POST /v1/mcp/operation/cancel/<id>; nil: 200 with
	// {previewId, status:"cancelled"}.
	cancel http.HandlerFunc
}

func newTestGateway(t *testing.T) *testGateway {
	t.Helper()
	g := &testGateway{t: t}
	g.srv = httptest.NewServer(http.HandlerFunc(g.serve))
	t.Cleanup(g.srv.Close)
	return g
}

// addr is the gateway's address as the provider resolves it.
func (g *testGateway) addr() func() (fluxbridge.Address, bool) {
	ap, err := fluxbridge.Normalize(g.srv.Listener.Addr().String())
	if err != nil {
		g.t.Fatalf("test gateway address: %v", err)
	}
	return func() (fluxbridge.Address, bool) { return fluxbridge.Address{AddrPort: ap, Variable: "test"}, true }
}

func (g *testGateway) requests() []request {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]request(nil), g.reqs...)
}

func (g *testGateway) serve(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		g.t.Errorf("test gateway: read body: %v", err)
	}
	rec := request{Method: r.Method, Path: r.URL.EscapedPath(), Raw: raw}
	if len(raw) > 0 {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&rec.Body); err != nil {
			g.t.Errorf("test gateway: %s %s: body is not a JSON object: %v", r.Method, r.URL.Path, err)
		}
	}
	g.mu.Lock()
	g.reqs = append(g.reqs, rec)
	g.mu.Unlock()

	switch {
	case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, previewPath):
		op := strings.TrimPrefix(r.URL.Path, previewPath)
		if problem := strictPreviewBody(op, rec.Body); problem != "" {
			g.t.Errorf("test gateway: preview %s: %s; body %s", op, problem, raw)
			http.Error(w, `{"error":"`+problem+`"}`, http.StatusBadRequest)
			return
		}
		if r.Header.Get("Content-Type") != "application/json" {
			g.t.Errorf("test gateway: preview %s: Content-Type %q", op, r.Header.Get("Content-Type"))
		}
		if g.preview != nil {
			g.preview(w, r)
			return
		}
		writeJSON(w, http.StatusAccepted, map[string]any{"previewId": rec.Body["previewId"], "status": "pending", "expiresAt": "2026-11-30T20:05:00.000Z"})
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, statusPath):
		if len(raw) > 0 {
			g.t.Errorf("test gateway: status request with a body: %s", raw)
		}
		if g.status != nil {
			g.status(w, r)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"previewId": strings.TrimPrefix(r.URL.Path, statusPath), "status": "pending"})
	case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, cancelPath):
		if keys := sortedKeys(rec.Body); strings.Join(keys, ",") != "agentId" {
			g.t.Errorf("test gateway: cancel body keys %v, want exactly agentId", keys)
		}
		if g.cancel != nil {
			g.cancel(w, r)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"previewId": strings.TrimPrefix(r.URL.Path, cancelPath), "status": "cancelled"})
	default:
		g.t.Errorf("test gateway: unexpected %s %s", r.Method, r.URL.Path)
		http.NotFound(w, r)
	}
}

// strictPreviewBody checks a preview body against its operation's schema
// (schemas/operations, the contract as data); it returns what is wrong, or
// "".
func strictPreviewBody(op string, body map[string]any) string {
	if !operation.Known(op) {
		return "unknown operation " + op
	}
	if err := operation.Validate(op, body); err != nil {
		return err.Error()
	}
	return ""
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// reply answers with a fixed status and raw body.
func reply(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}
