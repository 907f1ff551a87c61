package httpserve

import (
	"bufio"

	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fluxgit/fluxgit/host/catalog"
	"github.com/fluxgit/fluxgit/host/mcp"
)

// newTestHandler serves an mcp.Server without providers: the transport's
// mechanics need only the protocol methods (initialize, ping, discover,
// subscriptions/listen).
func newTestHandler(t *testing.T, mode Mode, mutate func(*Options)) (*Handler, *httptest.Server) {
	t.Helper()
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	srv := mcp.New(mcp.Options{Catalog: cat, Name: "fluxgit", Version: "test"})
	t.Cleanup(srv.Close)
	opts := Options{Server: srv, Mode: mode}
	if mutate != nil {
		mutate(&opts)
	}
	h, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := h.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		ts.Close()
	})
	return h, ts
}

func do(t *testing.T, method, url, body string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"unit","version":"1"}}}`

func TestOriginAndHost(t *testing.T) {
	h := &Handler{opts: Options{AllowedHosts: []string{"mcp.internal"}, AllowedOrigins: []string{"https://app.example"}}}
	for _, c := range []struct {
		origin, host string
		status       int
	}{
		{"", "127.0.0.1:3010", 0},
		{"", "localhost:3010", 0},
		{"", "[::1]:3010", 0},
		{"", "mcp.internal:80", 0},
		{"", "evil.example:3010", http.StatusMisdirectedRequest},
		{"", "127.0.0.1.nip.io:3010", http.StatusMisdirectedRequest},
		{"http://localhost:5173", "localhost:3010", 0},
		{"http://127.0.0.1", "127.0.0.1:3010", 0},
		{"https://app.example", "127.0.0.1:3010", 0},
		{"https://evil.example", "127.0.0.1:3010", http.StatusForbidden},
		{"null", "127.0.0.1:3010", http.StatusForbidden},
		{"file://", "127.0.0.1:3010", http.StatusForbidden},
	} {
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		r.Host = c.host
		if c.origin != "" {
			r.Header.Set("Origin", c.origin)
		}
		if got, why := h.checkOrigin(r); got != c.status || (got != 0 && why == "") {
			t.Errorf("origin %q host %q: %d %q, want %d", c.origin, c.host, got, why, c.status)
		}
	}
}

func TestHeaderHelpers(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"repo.status", "repo.status", true},
		{"=?base64?SGVsbG8sIOS4lueVjA==?=", "Hello, 世界", true},
		{"=?base64?!!?=", "", false},
		// SEP-2243: Base64 only with both sentinel ends, and strictly
		// padded; any other value is literal.
		{"=?base64?SGVsbG8", "=?base64?SGVsbG8", true},
		{"SGVsbG8=?=", "SGVsbG8=?=", true},
		{"=?base64?SGVsbG8=?=", "Hello", true},
		{"=?base64?SGVsbG8?=", "", false},
		{"=?base64?SGVs!!!bG8=?=", "", false},
	} {
		if got, ok := decodeHeaderValue(c.in); got != c.want || ok != c.ok {
			t.Errorf("decode %q = %q %v", c.in, got, ok)
		}
	}
	for _, c := range []struct {
		accept      string
		jsonOK, sse bool
	}{
		{"", true, true},
		{"application/json, text/event-stream", true, true},
		{"application/json", true, false},
		{"text/event-stream", false, true},
		{"*/*", true, true},
		{"text/html", false, false},
	} {
		r := httptest.NewRequest(http.MethodPost, "/", nil)
		if c.accept != "" {
			r.Header.Set("Accept", c.accept)
		}
		if j, s := accepts(r); j != c.jsonOK || s != c.sse {
			t.Errorf("Accept %q = %v %v", c.accept, j, s)
		}
	}
	for code, want := range map[int64]int{0: 200, -32601: 404, -32602: 400, -32022: 400, -32021: 400, -32020: 400, -32603: 200} {
		if got := modernStatus(code); got != want {
			t.Errorf("status of %d = %d, want %d", code, got, want)
		}
	}
}

// A stateful session: initialize issues an id; the session answers its
// requests, holds one GET stream at a time, and ends with DELETE.
func TestStatefulSession(t *testing.T) {
	h, ts := newTestHandler(t, Stateful, nil)
	url := ts.URL + DefaultPath
	resp, body := do(t, http.MethodPost, url, initBody, nil)
	sid := resp.Header.Get(headerSession)
	if resp.StatusCode != 200 || sid == "" || !strings.Contains(body, `"protocolVersion":"2025-11-25"`) {
		t.Fatalf("initialize: %d %q %s", resp.StatusCode, sid, body)
	}
	hdr := map[string]string{headerSession: sid, headerVersion: "2025-11-25"}
	if resp, _ := do(t, http.MethodPost, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized: %d", resp.StatusCode)
	}
	if resp, body := do(t, http.MethodPost, url, `{"jsonrpc":"2.0","id":"p","method":"ping"}`, hdr); resp.StatusCode != 200 || !strings.Contains(body, `"id":"p","result":{}`) {
		t.Fatalf("ping: %d %s", resp.StatusCode, body)
	}

	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set(headerSession, sid)
	stream, err := http.DefaultClient.Do(req)
	if err != nil || stream.StatusCode != 200 || stream.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET: %v %v", err, stream)
	}
	if resp, _ := do(t, http.MethodGet, url, "", hdr); resp.StatusCode != http.StatusConflict {
		t.Fatalf("second GET: %d", resp.StatusCode)
	}
	if st := h.Stats(); st.Sessions != 1 || st.Streams != 1 {
		t.Fatalf("stats with a GET open: %+v", st)
	}
	if resp, _ := do(t, http.MethodDelete, url, "", hdr); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
	// The GET stream ends with the session.
	if _, err := io.Copy(io.Discard, stream.Body); err != nil {
		t.Fatalf("GET stream: %v", err)
	}
	stream.Body.Close()
	if resp, _ := do(t, http.MethodPost, url, `{"jsonrpc":"2.0","id":2,"method":"ping"}`, hdr); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("after DELETE: %d", resp.StatusCode)
	}
	waitFor(t, func() bool { st := h.Stats(); return st.Sessions == 0 && st.Streams == 0 })
}

// Requests a stateless server cannot honour past one request are refused
// with a reason, not silently accepted.
func TestStatelessRefusesLastingState(t *testing.T) {
	_, ts := newTestHandler(t, Stateless, nil)
	url := ts.URL + DefaultPath
	resp, body := do(t, http.MethodPost, url, initBody, nil)
	if resp.StatusCode != 200 || resp.Header.Get(headerSession) != "" {
		t.Fatalf("initialize: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	for _, m := range []string{`{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"debug"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"shift://status"}}`} {
		resp, body := do(t, http.MethodPost, url, m, map[string]string{headerVersion: "2025-11-25"})
		if resp.StatusCode != 400 || !strings.Contains(body, "needs a session") {
			t.Fatalf("%s: %d %s", m, resp.StatusCode, body)
		}
	}
	if resp, _ := do(t, http.MethodGet, url, "", nil); resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" {
		t.Fatalf("GET: %d", resp.StatusCode)
	}
}

// A 2026-07-28 subscriptions/listen streams its acknowledgement first; the
// client closing the stream cancels it and frees everything.
func TestListenEndsWithItsStream(t *testing.T) {
	h, ts := newTestHandler(t, Stateless, nil)
	body := `{"jsonrpc":"2.0","id":"l1","method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":[]},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+DefaultPath, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(headerVersion, "2026-07-28")
	req.Header.Set(headerMethod, "subscriptions/listen")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("listen: %v %v", err, resp)
	}
	r := bufio.NewReader(resp.Body)
	var ack string
	for ack == "" {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the stream: %v", err)
		}
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			ack = data
		}
	}
	var msg struct {
		Method string `json:"method"`
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if err := json.Unmarshal([]byte(ack), &msg); err != nil || msg.Method != "notifications/subscriptions/acknowledged" ||
		string(msg.Params.Meta["io.modelcontextprotocol/subscriptionId"]) != `"l1"` {
		t.Fatalf("first event %q", ack)
	}
	if st := h.Stats(); st.Streams != 1 || st.OneShots != 1 {
		t.Fatalf("stats with a listen open: %+v", st)
	}
	cancel()
	resp.Body.Close()
	waitFor(t, func() bool { st := h.Stats(); return st.Streams == 0 && st.OneShots == 0 })
}

// Shutdown ends long-lived streams and lets a request in flight finish.
func TestShutdownEndsStreams(t *testing.T) {
	h, ts := newTestHandler(t, Auto, func(o *Options) { o.MaxStreams = 1 })
	url := ts.URL + DefaultPath
	resp, _ := do(t, http.MethodPost, url, initBody, nil)
	sid := resp.Header.Get(headerSession)
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set(headerSession, sid)
	stream, err := http.DefaultClient.Do(req)
	if err != nil || stream.StatusCode != 200 {
		t.Fatalf("GET: %v %v", err, stream)
	}
	defer stream.Body.Close()
	// The one stream allowed is taken.
	listen := `{"jsonrpc":"2.0","id":9,"method":"subscriptions/listen","params":{"notifications":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	if resp, body := do(t, http.MethodPost, url, listen, map[string]string{headerVersion: "2026-07-28", headerMethod: "subscriptions/listen"}); resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "too many open streams") {
		t.Fatalf("listen beyond the limit: %d %s", resp.StatusCode, body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, stream.Body); err != nil {
		t.Fatalf("GET stream after shutdown: %v", err)
	}
	if resp, _ := do(t, http.MethodPost, url, initBody, nil); resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("POST after shutdown: %d", resp.StatusCode)
	}
}

// An authenticated subject becomes the session's agent and owns it: a
// request with another subject cannot use the session.
func TestSubjectOwnsSession(t *testing.T) {
	type key struct{}
	_, ts := newTestHandler(t, Stateful, func(o *Options) {
		o.Middleware = func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), key{}, r.Header.Get("X-Test-Subject"))))
			})
		}
		o.Subject = func(ctx context.Context) (string, bool) {
			s, _ := ctx.Value(key{}).(string)
			return s, s != ""
		}
	})
	url := ts.URL + DefaultPath
	resp, _ := do(t, http.MethodPost, url, initBody, map[string]string{"X-Test-Subject": "alice"})
	sid := resp.Header.Get(headerSession)
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	if resp, _ := do(t, http.MethodPost, url, ping, map[string]string{headerSession: sid, "X-Test-Subject": "alice"}); resp.StatusCode != 200 {
		t.Fatalf("owner: %d", resp.StatusCode)
	}
	if resp, _ := do(t, http.MethodPost, url, ping, map[string]string{headerSession: sid, "X-Test-Subject": "mallory"}); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("other subject: %d", resp.StatusCode)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
	}
}

// Requests outside a session beyond MaxInFlight are refused with 503 and
// Retry-After while the others run.
func TestInFlightLimit(t *testing.T) {
	h, ts := newTestHandler(t, Stateless, func(o *Options) { o.MaxInFlight = 1 })
	listen := `{"jsonrpc":"2.0","id":"l","method":"subscriptions/listen","params":{"notifications":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+DefaultPath, strings.NewReader(listen))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(headerVersion, "2026-07-28")
	req.Header.Set(headerMethod, "subscriptions/listen")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("listen: %v %v", err, resp)
	}
	defer resp.Body.Close()
	waitFor(t, func() bool { return h.Stats().OneShots == 1 })
	ping := `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	r2, body := do(t, http.MethodPost, ts.URL+DefaultPath, ping, map[string]string{headerVersion: "2026-07-28", headerMethod: "server/discover"})
	if r2.StatusCode != http.StatusServiceUnavailable || r2.Header.Get("Retry-After") == "" || !strings.Contains(body, "too many requests in flight") {
		t.Fatalf("beyond the limit: %d %s", r2.StatusCode, body)
	}
	cancel()
	waitFor(t, func() bool { return h.Stats().OneShots == 0 })
	if r3, body := do(t, http.MethodPost, ts.URL+DefaultPath, ping, map[string]string{headerVersion: "2026-07-28", headerMethod: "server/discover"}); r3.StatusCode != 200 || !strings.Contains(body, "supportedVersions") {
		t.Fatalf("after: %d %s", r3.StatusCode, body)
	}
}

// SEP-2243: each argument a tool mirrors (x-mcp-header) that the body
// sets must come with its Mcp-Param-* header, equal after decoding.
func TestCheckParamHeaders(t *testing.T) {
	marks := mcp.ParamHeadersOf(json.RawMessage(`{"properties":{"region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer","x-mcp-header":"N"}}}`))
	for _, tc := range []struct {
		name    string
		args    string
		headers map[string]string
		want    string // in the refusal; "" accepts
	}{
		{"plain match", `{"region":"us-west1"}`, map[string]string{"Mcp-Param-Region": "us-west1"}, ""},
		{"base64 match", `{"region":"Hello"}`, map[string]string{"Mcp-Param-Region": "=?base64?SGVsbG8=?="}, ""},
		{"integer match", `{"region":"x","n":42}`, map[string]string{"Mcp-Param-Region": "x", "Mcp-Param-N": "42"}, ""},
		{"lower-case header name", `{"region":"x"}`, map[string]string{"mcp-param-region": "x"}, ""},
		{"null argument needs no header", `{"region":null}`, nil, ""},
		{"absent argument needs no header", `{}`, nil, ""},
		{"literal without the suffix", `{"region":"=?base64?SGVsbG8="}`, map[string]string{"Mcp-Param-Region": "=?base64?SGVsbG8="}, ""},
		{"missing header", `{"region":"us-west1"}`, nil, "the Mcp-Param-Region header is required"},
		{"mismatch", `{"region":"us-west1"}`, map[string]string{"Mcp-Param-Region": "eu-west1"}, "does not match"},
		{"bad padding", `{"region":"Hello"}`, map[string]string{"Mcp-Param-Region": "=?base64?SGVsbG8?="}, "invalid =?base64?"},
		{"bad characters", `{"region":"Hello"}`, map[string]string{"Mcp-Param-Region": "=?base64?SGVs!!!bG8=?="}, "invalid =?base64?"},
		{"non-ASCII", `{"region":"é"}`, map[string]string{"Mcp-Param-Region": "é"}, "outside visible ASCII"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
			for k, v := range tc.headers {
				r.Header.Set(k, v)
			}
			got := checkParamHeaders(r, marks, json.RawMessage(tc.args))
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}
