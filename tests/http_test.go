package tests

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fluxgit/fluxgit/tests/gatewaytest"
)

// httpServer is one fluxgit serving Streamable HTTP.
type httpServer struct {
	t      testing.TB
	cmd    *exec.Cmd
	url    string // the MCP endpoint
	stderr *lockedBuffer
	done   chan struct{}
}

var endpointLine = regexp.MustCompile(`serving MCP over HTTP at (http://\S+)`)

// startHTTP starts `fluxgit serve --transport http` on a free loopback port
// with args added, and waits for its endpoint line.
func startHTTP(t testing.TB, env []string, args ...string) *httpServer {
	t.Helper()
	return startHTTPWith(t, env, nil, args...)
}

// startHTTPWith is startHTTP with prepare applied to the command before it
// starts (its own process group, say).
func startHTTPWith(t testing.TB, env []string, prepare func(*exec.Cmd), args ...string) *httpServer {
	t.Helper()
	cmd := exec.Command(fluxgitBin, append([]string{"serve", "--transport", "http", "--http-port", "0"}, args...)...)
	cmd.Env = env
	if prepare != nil {
		prepare(cmd)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &httpServer{t: t, cmd: cmd, stderr: &lockedBuffer{}, done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	found := make(chan string, 1)
	go func() {
		r := bufio.NewReader(stderr)
		for {
			line, err := r.ReadString('\n')
			_, _ = s.stderr.Write([]byte(line))
			if m := endpointLine.FindStringSubmatch(line); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
			if err != nil {
				return
			}
		}
	}()
	go func() { _ = cmd.Wait(); close(s.done) }()
	select {
	case s.url = <-found:
	case <-s.done:
		t.Fatalf("fluxgit exited before serving:\n%s", s.stderr)
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("fluxgit did not report its endpoint:\n%s", s.stderr)
	}
	t.Cleanup(func() { s.stop() })
	return s
}

// stop sends SIGTERM and waits for a clean exit.
func (s *httpServer) stop() {
	select {
	case <-s.done:
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(45 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
		s.t.Errorf("fluxgit did not exit on SIGTERM:\n%s", s.stderr)
	}
}

// sdkHTTP connects the official go-sdk client over its Streamable HTTP
// transport, negotiating version.
func sdkHTTP(t testing.TB, s *httpServer, version string, opts *mcp.ClientOptions) (context.Context, *mcp.ClientSession) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	client := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-http", Version: "1.0.0"}, opts)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.url, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect %s: %v\n%s", version, err, s.stderr)
	}
	t.Cleanup(func() { _ = cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("negotiated %q, want %q", got, version)
	}
	return ctx, cs
}

// allVersions is every protocol version fluxgit negotiates.
var allVersions = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"}

// The official Go SDK client over Streamable HTTP, in every negotiable
// version and every session mode: it lists tools, calls repo.status and
// reads shift://status.
func TestHTTPSDKClient(t *testing.T) {
	repo := fixtureRepo(t)
	for _, mode := range []string{"stateless", "stateful", "auto"} {
		s := startHTTP(t, baseEnv(t), "--session-mode", mode)
		for _, version := range allVersions {
			t.Run(mode+"/"+version, func(t *testing.T) {
				ctx, cs := sdkHTTP(t, s, version, nil)
				tools, err := cs.ListTools(ctx, nil)
				if err != nil {
					t.Fatalf("tools/list: %v", err)
				}
				found := false
				for _, tool := range tools.Tools {
					found = found || tool.Name == "repo.status"
				}
				if !found {
					t.Fatalf("repo.status not listed among %d tools", len(tools.Tools))
				}
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "repo.status", Arguments: map[string]any{"repoPath": repo}})
				if err != nil || res.IsError {
					t.Fatalf("repo.status: %v %+v", err, res)
				}
				var payload struct {
					Data struct {
						Branch string `json:"branch"`
					} `json:"data"`
				}
				text := res.Content[0].(*mcp.TextContent).Text
				if err := json.Unmarshal([]byte(text), &payload); err != nil || payload.Data.Branch != "main" {
					t.Fatalf("repo.status payload: %v %s", err, text)
				}
				rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "shift://status"})
				if err != nil || len(rr.Contents) != 1 || rr.Contents[0].MIMEType != "text/markdown" {
					t.Fatalf("shift://status: %v %+v", err, rr)
				}
			})
		}
	}
}

// shift://status subscribed over HTTP is updated when another client
// checks in: legacy through resources/subscribe and the GET stream,
// 2026-07-28 through a subscriptions/listen response stream.
func TestHTTPRosterSubscribe(t *testing.T) {
	s := startHTTP(t, rosterEnv(t, canonicalTempDir(t), "http-team"), "--session-mode", "auto")
	for _, version := range []string{"2025-03-26", "2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			updates := make(chan string, 16)
			ctx, cs := sdkHTTP(t, s, version, &mcp.ClientOptions{
				ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
					updates <- r.Params.URI
				},
			})
			if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "shift://status"}); err != nil {
				t.Fatalf("subscribe: %v", err)
			}
			// Another agent checks in through its own client.
			ctx2, other := sdkHTTP(t, s, "2026-07-28", nil)
			res, err := other.CallTool(ctx2, &mcp.CallToolParams{Name: "shift_check_in", Arguments: map[string]any{"gist": "subscribed over HTTP " + version}})
			if err != nil || res.IsError {
				t.Fatalf("check-in: %v %+v", err, res)
			}
			select {
			case uri := <-updates:
				if uri != "shift://status" {
					t.Fatalf("update for %q", uri)
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("no notifications/resources/updated for shift://status\n%s", s.stderr)
			}
			rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "shift://status"})
			if err != nil || !strings.Contains(rr.Contents[0].Text, "subscribed over HTTP "+version) {
				t.Fatalf("roster after the check-in: %v %+v", err, rr)
			}
		})
	}
}

// post sends one raw JSON-RPC POST and returns the response and its body.
func post(t testing.TB, url string, body []byte, headers map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func modernRequest(id any, method string, params map[string]any) []byte {
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = modernMeta()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	return b
}

func modernHeaders(method, name string) map[string]string {
	h := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
	if name != "" {
		h["Mcp-Name"] = name
	}
	return h
}

// Refusals at the HTTP layer: each is refused with the status the MCP
// transports name, a JSON-RPC error body where one helps, and the server
// answers normally afterwards.
func TestHTTPSecurity(t *testing.T) {
	s := startHTTP(t, baseEnv(t), "--session-mode", "stateful")
	list := modernRequest(1, "tools/list", nil)
	initBody := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sec","version":"1"}}}`)
	host := strings.TrimPrefix(strings.TrimSuffix(s.url, "/mcp"), "http://")
	for _, c := range []struct {
		name    string
		method  string
		body    []byte
		headers map[string]string
		status  int
		code    int64 // JSON-RPC error code in the body, 0 for none checked
	}{
		{"foreign origin", "POST", list, merge(modernHeaders("tools/list", ""), map[string]string{"Origin": "https://evil.example"}), 403, -32600},
		{"null origin", "POST", list, merge(modernHeaders("tools/list", ""), map[string]string{"Origin": "null"}), 403, -32600},
		{"rebinding host", "POST", initBody, map[string]string{"Host": "evil.example:" + strings.Split(host, ":")[1], "Origin": "http://evil.example"}, 403, -32600},
		{"rebinding host, no origin", "POST", initBody, map[string]string{"Host": "attacker.example"}, 421, -32600},
		{"loopback origin", "POST", initBody, map[string]string{"Origin": "http://localhost:" + strings.Split(host, ":")[1], "Host": "localhost:" + strings.Split(host, ":")[1]}, 200, 0},
		{"oversize body", "POST", bytes.Repeat([]byte(" "), 8<<20+1), modernHeaders("tools/list", ""), 413, -32600},
		{"unknown legacy version", "POST", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), map[string]string{"MCP-Protocol-Version": "1999-01-01"}, 400, -32600},
		{"modern without version header", "POST", list, map[string]string{"Mcp-Method": "tools/list"}, 400, -32020},
		{"modern method header mismatch", "POST", list, modernHeaders("tools/call", ""), 400, -32020},
		{"modern name header missing", "POST", modernRequest(2, "tools/call", map[string]any{"name": "repo.status", "arguments": map[string]any{}}), modernHeaders("tools/call", ""), 400, -32020},
		{"modern unknown version", "POST", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"1900-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`), map[string]string{"MCP-Protocol-Version": "1900-01-01", "Mcp-Method": "tools/list"}, 400, -32022},
		{"modern removed method", "POST", modernRequest(3, "ping", nil), modernHeaders("ping", ""), 404, -32601},
		{"legacy without session", "POST", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), nil, 400, -32600},
		{"unknown session", "POST", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), map[string]string{"Mcp-Session-Id": "NOPE"}, 404, -32600},
		{"not JSON", "POST", []byte(`{"jsonrpc":`), map[string]string{"Mcp-Session-Id": ""}, 400, 0},
		{"wrong content type", "POST", list, merge(modernHeaders("tools/list", ""), map[string]string{"Content-Type": "text/plain"}), 415, -32600},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, body := post(t, s.url, c.body, c.headers)
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, c.status, body)
			}
			if c.code != 0 {
				var r struct {
					Error *struct {
						Code    int64  `json:"code"`
						Message string `json:"message"`
					} `json:"error"`
				}
				if err := json.Unmarshal(body, &r); err != nil || r.Error == nil || r.Error.Code != c.code || r.Error.Message == "" {
					t.Fatalf("body %s, want error code %d", body, c.code)
				}
			}
		})
	}
	// GET and DELETE without a session are refused too.
	for _, m := range []string{http.MethodGet, http.MethodDelete, http.MethodPut} {
		req, _ := http.NewRequest(m, s.url, nil)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode < 400 || resp.StatusCode >= 500 {
			t.Fatalf("%s without a session: %d", m, resp.StatusCode)
		}
	}
	// Healthy after all of it.
	resp, body := post(t, s.url, list, modernHeaders("tools/list", ""))
	if resp.StatusCode != 200 || !bytes.Contains(body, []byte(`"repo.status"`)) {
		t.Fatalf("tools/list after the refusals: %d %s", resp.StatusCode, body)
	}
}

func merge(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// A fluxgit refuses to listen beyond loopback without authentication.
func TestHTTPRefusesOpenBind(t *testing.T) {
	for _, host := range []string{"0.0.0.0", "::", "192.0.2.1"} {
		cmd := exec.Command(fluxgitBin, "serve", "--transport", "http", "--http-port", "0", "--http-host", host)
		cmd.Env = baseEnv(t)
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "without authentication") {
			t.Fatalf("%s: err %v, output %s", host, err, out)
		}
	}
	// The environment works as the flags do, and a flag wins over it.
	cmd := exec.Command(fluxgitBin)
	cmd.Env = append(baseEnv(t), "MCP_TRANSPORT_TYPE=http", "MCP_HTTP_HOST=0.0.0.0", "MCP_HTTP_PORT=0")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "without authentication") {
		t.Fatalf("environment: err %v, output %s", err, out)
	}
	s := startHTTP(t, append(baseEnv(t), "MCP_HTTP_HOST=0.0.0.0", "MCP_SESSION_MODE=bogus"), "--http-host", "127.0.0.1", "--session-mode", "stateless")
	if !strings.HasPrefix(s.url, "http://127.0.0.1:") {
		t.Fatalf("flag did not win: %s", s.url)
	}
}

// stats reads the server's counts (FLUXGIT_HTTP_STATS=1).
type serverStats struct {
	Goroutines int `json:"goroutines"`
	Sessions   int `json:"sessions"`
	OneShots   int `json:"oneShots"`
	Streams    int `json:"streams"`
}

func (s *httpServer) stats(t testing.TB) serverStats {
	t.Helper()
	resp, err := http.Get(s.url + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st serverStats
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatalf("stats: %v", err)
	}
	return st
}

// fds counts the server's open file descriptors (Linux), -1 elsewhere.
func (s *httpServer) fds() int {
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", s.cmd.Process.Pid))
	if err != nil {
		return -1
	}
	return len(entries)
}

// settle waits until the server's goroutines and descriptors are back to
// at most base plus slack, and returns the last reading.
func (s *httpServer) settle(t testing.TB, base serverStats, baseFDs int) (serverStats, int) {
	t.Helper()
	var st serverStats
	fds := -1
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		http.DefaultClient.CloseIdleConnections()
		st, fds = s.stats(t), s.fds()
		if st.Goroutines <= base.Goroutines+5 && st.Streams == 0 && st.OneShots == 0 && (fds < 0 || fds <= baseFDs+5) {
			break
		}
	}
	return st, fds
}

// warm starts what lives as long as the process (the roster provider and
// its resource watch) with one check-in and one listen stream read to its
// acknowledgement, and returns the baseline counts after.
func (s *httpServer) warm(t testing.TB, listen []byte, hdr map[string]string) (serverStats, int) {
	t.Helper()
	ctx, cs := sdkHTTP(t, s, "2026-07-28", nil)
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "shift_check_in", Arguments: map[string]any{"gist": "warm-up"}}); err != nil || res.IsError {
		t.Fatalf("warm-up check-in: %v %+v", err, res)
	}
	_ = cs.Close()
	req, _ := http.NewRequest(http.MethodPost, s.url, bytes.NewReader(listen))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(resp.Body).ReadString('\n')
	if resp.StatusCode != 200 || !strings.HasPrefix(line, "event: message") {
		t.Fatalf("warm-up listen: %d %q", resp.StatusCode, line)
	}
	resp.Body.Close()
	st, fds := s.settle(t, serverStats{Goroutines: 1 << 20}, 1<<20)
	return st, fds
}

// A client that opens 1,000 streams and never reads them is bounded: the
// server refuses streams beyond its limit, keeps answering others, and
// gives back every goroutine and descriptor when the client goes away.
func TestHTTPNeverReadStreams(t *testing.T) {
	s := startHTTP(t, append(rosterEnv(t, canonicalTempDir(t), "flood"), "FLUXGIT_HTTP_STATS=1"), "--session-mode", "auto")
	listen := modernRequest("listen", "subscriptions/listen", map[string]any{
		"notifications": map[string]any{"resourceSubscriptions": []string{"shift://status"}}})
	hdr := modernHeaders("subscriptions/listen", "")
	base, baseFDs := s.warm(t, listen, hdr)
	var (
		mu     sync.Mutex
		bodies []io.ReadCloser
		status = map[int]int{}
	)
	tr := &http.Transport{MaxConnsPerHost: 0, MaxIdleConnsPerHost: 1, DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 50)
	for i := 0; i < 1000; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			req, _ := http.NewRequest(http.MethodPost, s.url, bytes.NewReader(listen))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range hdr {
				req.Header.Set(k, v)
			}
			resp, err := client.Do(req)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				status[-1]++
				return
			}
			status[resp.StatusCode]++
			bodies = append(bodies, resp.Body) // never read
		}()
	}
	wg.Wait()
	st := s.stats(t)
	t.Logf("1,000 listen streams: statuses %v; server: %+v, fds %d (baseline %+v, fds %d)", status, st, s.fds(), base, baseFDs)
	if status[200] == 0 || status[503] == 0 || status[200]+status[503] != 1000 {
		t.Fatalf("want some streams accepted and the rest refused with 503, got %v", status)
	}
	if st.Streams > 512 {
		t.Fatalf("%d streams open, more than the limit", st.Streams)
	}
	// Changes are pushed at the unread streams while others are served.
	_, other := sdkHTTP(t, s, "2026-07-28", nil)
	for i := 0; i < 20; i++ {
		res, err := other.CallTool(context.Background(), &mcp.CallToolParams{Name: "shift_check_in", Arguments: map[string]any{"gist": fmt.Sprintf("flood %d", i)}})
		if err != nil || res.IsError {
			t.Fatalf("check-in %d while flooded: %v %+v", i, err, res)
		}
	}
	for _, b := range bodies {
		_ = b.Close()
	}
	tr.CloseIdleConnections()
	_ = other.Close()
	after, fds := s.settle(t, base, baseFDs)
	t.Logf("after the client left: %+v, fds %d", after, fds)
	if after.Streams != 0 || after.Goroutines > base.Goroutines+5 || (fds >= 0 && fds > baseFDs+5) {
		t.Fatalf("not back to baseline: %+v fds %d (baseline %+v fds %d)", after, fds, base, baseFDs)
	}
}

// SIGTERM lets a call in flight finish: the client gets its result, the
// ledger records it, and the process exits cleanly.
func TestHTTPGracefulShutdown(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	ledger := filepath.Join(dir, "mcp.jsonl")
	env := append(echoEnv(t), "FLUXGIT_MCP_AUDIT_LOG="+ledger)
	s := startHTTP(t, env)
	got, marker := startSleepCall(t, s)
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	// New requests are refused while the call finishes.
	var r sleepResult
	select {
	case r = <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("no reply to the call in flight")
	}
	if r.status != 200 || !bytes.Contains(r.body, []byte(`\"slept\":1500`)) {
		t.Fatalf("call in flight: %d %s", r.status, r.body)
	}
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("no exit after SIGTERM:\n%s", s.stderr)
	}
	if b, _ := os.ReadFile(marker); string(b) != "finished" {
		t.Fatalf("the provider call ended %q, want finished", b)
	}
	raw, err := os.ReadFile(ledger)
	if err != nil || !bytes.Contains(raw, []byte("echo.sleep")) {
		t.Fatalf("ledger lacks the call: %v\n%s\n%s", err, raw, s.stderr)
	}
}

// Write proposals over HTTP reach the gateway with the client's name as
// agentId, in both generations.
func TestHTTPGatewayPreview(t *testing.T) {
	g := gatewaytest.New(t)
	repo := fixtureRepo(t)
	args := minimalArgs(repo)
	s := startHTTP(t, handshakeEnv(t, g), "--session-mode", "auto")
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			g.ResetRecords()
			ctx, cs := sdkHTTP(t, s, version, nil)
			g.Script(gatewaytest.Plan{Statuses: []string{"completed"}})
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "operation.preview.branch", Arguments: withPreviewBase(args["branch"], repo)})
			if err != nil || res.IsError {
				t.Fatalf("preview: %v %+v", err, res)
			}
			sc, _ := json.Marshal(res.StructuredContent)
			if !bytes.Contains(sc, []byte(`"status":"completed"`)) {
				t.Fatalf("preview result: %s", sc)
			}
			reqs := g.RequestsTo(gatewaytest.Preview)
			if len(reqs) != 1 || reqs[0].JSON()["agentId"] != "go-sdk-http" {
				t.Fatalf("gateway saw %s", describe(reqs))
			}
			noViolations(t, g)
		})
	}
}

// Load: 200 concurrent clients × 50 tools/call each against one process,
// half legacy sessions and half 2026-07-28: no errors, and the server's
// goroutines and descriptors return to their baseline after.
func TestHTTPLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	s := startHTTP(t, append(echoEnv(t), "FLUXGIT_HTTP_STATS=1"), "--session-mode", "auto")
	listen := modernRequest("listen", "subscriptions/listen", map[string]any{
		"notifications": map[string]any{"resourceSubscriptions": []string{"shift://status"}}})
	// The echo provider starts with its first call and lives on.
	wctx, warm := sdkHTTP(t, s, "2026-07-28", nil)
	if _, err := warm.CallTool(wctx, &mcp.CallToolParams{Name: "echo.say", Arguments: map[string]any{"text": "warm"}}); err != nil {
		t.Fatal(err)
	}
	_ = warm.Close()
	base, baseFDs := s.warm(t, listen, modernHeaders("subscriptions/listen", ""))
	const clients, calls = 200, 50
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []string
	)
	start := time.Now()
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			version := "2026-07-28"
			if c%2 == 1 {
				version = "2025-11-25"
			}
			ctx, cs := sdkHTTP(t, s, version, nil)
			defer cs.Close()
			for i := 0; i < calls; i++ {
				text := fmt.Sprintf("c%d-%d", c, i)
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo.say", Arguments: map[string]any{"text": text}})
				if err == nil && (res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, text)) {
					err = fmt.Errorf("unexpected result %+v", res)
				}
				if err != nil {
					mu.Lock()
					errs = append(errs, fmt.Sprintf("client %d call %d: %v", c, i, err))
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if len(errs) > 0 {
		t.Fatalf("%d errors, first: %s", len(errs), errs[0])
	}
	after, fds := s.settle(t, base, baseFDs)
	t.Logf("%d calls in %s (%.0f/s); after: %+v fds %d; baseline %+v fds %d",
		clients*calls, elapsed.Round(time.Millisecond), float64(clients*calls)/elapsed.Seconds(), after, fds, base, baseFDs)
	if after.Sessions != 0 || after.OneShots != 0 || after.Goroutines > base.Goroutines+5 || (fds >= 0 && fds > baseFDs+5) {
		t.Fatalf("not back to baseline: %+v fds %d (baseline %+v fds %d)", after, fds, base, baseFDs)
	}
}

// A legacy client that loses a request's SSE stream resumes it with GET
// and Last-Event-ID and receives the reply it missed; disconnecting did
// not cancel the call.
func TestHTTPResumeStream(t *testing.T) {
	s := startHTTP(t, echoEnv(t), "--session-mode", "stateful")
	resp, body := post(t, s.url, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"resumer","version":"1"}}}`), nil)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || sid == "" {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	marker := filepath.Join(t.TempDir(), "sleep")
	call, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "slow", "method": "tools/call",
		"params": map[string]any{"name": "echo.sleep", "arguments": map[string]any{"ms": 800, "marker": marker}}})
	req, _ := http.NewRequest(http.MethodPost, s.url, bytes.NewReader(call))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	tr := &http.Transport{}
	stream, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil || stream.StatusCode != 200 {
		t.Fatalf("POST: %v %v", err, stream)
	}
	r := bufio.NewReader(stream.Body)
	var lastID string
	for lastID == "" {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the priming event: %v", err)
		}
		if id, ok := strings.CutPrefix(strings.TrimSpace(line), "id: "); ok {
			lastID = id
		}
	}
	// The connection drops before the reply.
	stream.Body.Close()
	tr.CloseIdleConnections()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if b, _ := os.ReadFile(marker); len(b) > 0 {
			if string(b) != "finished" {
				t.Fatalf("the call ended %q: disconnecting cancelled it", b)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the call did not end")
		}
	}
	get, _ := http.NewRequest(http.MethodGet, s.url, nil)
	get.Header.Set("Accept", "text/event-stream")
	get.Header.Set("Mcp-Session-Id", sid)
	get.Header.Set("Last-Event-ID", lastID)
	resumed, err := http.DefaultClient.Do(get)
	if err != nil || resumed.StatusCode != 200 {
		t.Fatalf("resume: %v %v", err, resumed)
	}
	all, _ := io.ReadAll(resumed.Body)
	resumed.Body.Close()
	if !bytes.Contains(all, []byte(`"id":"slow"`)) || !bytes.Contains(all, []byte(`\"slept\":800`)) {
		t.Fatalf("resumed stream: %s", all)
	}
	// The stream ended with its reply: resuming again finds nothing.
	again, _ := http.DefaultClient.Do(get)
	again.Body.Close()
	if again.StatusCode != http.StatusNotFound {
		t.Fatalf("second resume: %d", again.StatusCode)
	}
}

// Over HTTP the framework works as over stdio: progress and log lines
// reach the client on the stream of their request, and a provider's
// elicitation and sampling are answered (legacy: server requests on the
// POST stream, answered by POSTs; 2026-07-28: input_required rounds).
func TestHTTPFramework(t *testing.T) {
	s := startHTTP(t, exampleEnv(t), "--session-mode", "stateful")
	for _, version := range []string{"2025-06-18", "2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			seen := &clientLog{}
			ctx, cs := sdkHTTP(t, s, version, exampleClientOptions(seen, false))
			params := &mcp.CallToolParams{Name: "example.count", Arguments: map[string]any{"steps": 3}}
			params.SetProgressToken("count-http")
			res, err := cs.CallTool(ctx, params)
			if err != nil {
				t.Fatal(err)
			}
			if d := exampleData(t, res); d["steps"] != float64(3) {
				t.Fatalf("count data: %v", d)
			}
			if got := settle(seen, func(e seenEvents) bool { return len(e.progress) >= 4 }).progress; len(got) != 4 || got[3] != 3 {
				t.Fatalf("progress %v", got)
			}
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "example.ask", Arguments: map[string]any{"topic": "http"}})
			if err != nil {
				t.Fatal(err)
			}
			if d := exampleData(t, res); d["name"] != "Ada" || d["model"] != "test-model" {
				t.Fatalf("ask data: %v", d)
			}
			if got := seen.snapshot(); len(got.elicits) != 1 || got.samples != 1 {
				t.Fatalf("client saw %d elicitations and %d samplings", len(got.elicits), got.samples)
			}
			if version == "2026-07-28" {
				return // logging/setLevel is a legacy method
			}
			if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "warning"}); err != nil {
				t.Fatal(err)
			}
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "example.logs", Arguments: map[string]any{}}); err != nil {
				t.Fatal(err)
			}
			if got := settle(seen, func(e seenEvents) bool { return len(e.logLevels) >= 5 }).logLevels; len(got) != 5 || got[0] != "warning" {
				t.Fatalf("log levels at warning: %v", got)
			}
		})
	}
}

// sleepResult is the HTTP answer to the echo.sleep call startSleepCall makes.
type sleepResult struct {
	status int
	body   []byte
}

// startSleepCall posts a 1.5 s echo.sleep call (id 7) to s and returns once
// the provider has started it, so a test can stop the server with the call
// in flight; the answer arrives on the channel, and the provider writes
// "finished" to the marker file it returns when the sleep ends.
func startSleepCall(t *testing.T, s *httpServer) (<-chan sleepResult, string) {
	t.Helper()
	marker := filepath.Join(t.TempDir(), "sleep")
	got := make(chan sleepResult, 1)
	go func() {
		resp, body := post(t, s.url, modernRequest(7, "tools/call", map[string]any{"name": "echo.sleep",
			"arguments": map[string]any{"ms": 1500, "marker": marker}}), modernHeaders("tools/call", "echo.sleep"))
		got <- sleepResult{resp.StatusCode, body}
	}()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(marker + ".started"); err == nil {
			return got, marker
		}
		if time.Now().After(deadline) {
			t.Fatalf("the call never started:\n%s", s.stderr)
		}
	}
}
