package tests

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// rawConn dials the server's endpoint and writes head as is: a client
// that declares more than it sends.
func rawConn(t *testing.T, s *httpServer, head string) net.Conn {
	t.Helper()
	u, err := url.Parse(s.url)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", u.Host, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if head != "" {
		if _, err := io.WriteString(c, strings.ReplaceAll(head, "HOST", u.Host)); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// stalledPost is a POST that declares 1000 body bytes and sends one.
const stalledPost = "POST /mcp HTTP/1.1\r\nHost: HOST\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{"

// answerAndClose reads what the server sends on c until it closes the
// connection, and fails unless that happens within limit. It returns the
// status line and everything read.
func answerAndClose(t *testing.T, c net.Conn, limit time.Duration) (string, string, time.Duration) {
	t.Helper()
	start := time.Now()
	_ = c.SetReadDeadline(start.Add(limit))
	all, err := io.ReadAll(c)
	took := time.Since(start)
	if err != nil {
		t.Fatalf("the server neither answered nor closed within %s (read %q): %v", limit, all, err)
	}
	status, _, _ := strings.Cut(string(all), "\r\n")
	return status, string(all), took
}

// Finding 5 of issue 22: a client that declares a body and stalls is
// answered 408 once the body deadline passes and loses its connection;
// one that stalls inside its headers is dropped at the header deadline;
// many such clients at once do not keep the server from answering others.
// The deadlines are the test-only --http-test-timeouts, so nothing here
// waits on the real 30 s.
func TestHTTPStalledConnectionsClosed(t *testing.T) {
	s := startHTTP(t, baseEnv(t), "--http-test-timeouts", "header=400ms,body=400ms,idle=2s")
	t.Run("body", func(t *testing.T) {
		const n = 20
		conns := make([]net.Conn, n)
		for i := range conns {
			conns[i] = rawConn(t, s, stalledPost)
		}
		var wg sync.WaitGroup
		for i, c := range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				status, all, _ := answerAndClose(t, c, 10*time.Second)
				if status != "HTTP/1.1 408 Request Timeout" || !strings.Contains(all, "did not arrive within") {
					t.Errorf("connection %d: got %q, want a 408 naming the deadline", i, all)
				}
			}()
		}
		// The server keeps answering while they stall.
		resp, body := post(t, s.url, modernRequest(1, "tools/list", nil), modernHeaders("tools/list", ""))
		if resp.StatusCode != 200 {
			t.Errorf("tools/list during the stall: %d %s", resp.StatusCode, body)
		}
		wg.Wait()
	})
	t.Run("headers", func(t *testing.T) {
		c := rawConn(t, s, "POST /mcp HTTP/1.1\r\nHost: HOST\r\nContent-Le")
		_, _, took := answerAndClose(t, c, 10*time.Second)
		if took > 5*time.Second {
			t.Fatalf("a stalled header block held its connection %s", took)
		}
	})
	t.Run("idle", func(t *testing.T) {
		// One whole request on a keep-alive connection, then silence: the
		// connection closes after the idle deadline (2s here).
		body := modernRequest(1, "tools/list", nil)
		head := "POST /mcp HTTP/1.1\r\nHost: HOST\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
		for k, v := range modernHeaders("tools/list", "") {
			head += k + ": " + v + "\r\n"
		}
		c := rawConn(t, s, head+fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body))
		br := bufio.NewReader(c)
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("no answer to a whole request: %v", err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Close {
			t.Fatalf("tools/list: %d (close %v), want 200 on a kept connection", resp.StatusCode, resp.Close)
		}
		start := time.Now()
		_ = c.SetReadDeadline(start.Add(15 * time.Second))
		if n, err := br.ReadByte(); err != io.EOF {
			t.Fatalf("after the idle deadline: %q %v, want the connection closed", n, err)
		}
		if took := time.Since(start); took < time.Second || took > 10*time.Second {
			t.Fatalf("the idle connection closed after %s, want about 2s", took)
		}
	})
}

// Finding 5, jwt mode: a request without a token whose body stalls is
// answered 401 at once (before its body, long before the body deadline)
// and its connection closed, instead of being held while net/http waits
// for the body it would discard.
func TestHTTPUnauthenticatedStalledBody(t *testing.T) {
	s := startHTTP(t, jwtEnv(t, baseEnv(t)), "--http-test-timeouts", "body=20s")
	c := rawConn(t, s, stalledPost)
	status, all, took := answerAndClose(t, c, 10*time.Second)
	if status != "HTTP/1.1 401 Unauthorized" || !strings.Contains(strings.ToLower(all), "www-authenticate: bearer") {
		t.Fatalf("got %q, want 401 with a Bearer challenge", all)
	}
	if took > 3*time.Second {
		t.Fatalf("the 401 took %s: it waited for the body", took)
	}
}

// Finding 5: the body deadline binds bodies only. A session's GET stream
// and a subscriptions/listen stream stay open well past it and keep
// getting their SSE keep-alive comments. The session comes from the
// default session mode (no --session-mode: new-user point of issue 22).
func TestHTTPStreamsOutliveBodyDeadline(t *testing.T) {
	s := startHTTP(t, baseEnv(t), "--http-test-timeouts", "body=300ms,keepalive=150ms")
	if !strings.Contains(s.stderr.String(), "(session mode auto)") {
		t.Fatalf("the default session mode is not auto:\n%s", s.stderr)
	}
	resp, body := post(t, s.url, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"streams","version":"1"}}}`), nil)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || sid == "" {
		t.Fatalf("initialize: %d %s (session %q)", resp.StatusCode, body, sid)
	}
	hdr := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"}
	if resp, body := post(t, s.url, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), hdr); resp.StatusCode != 202 {
		t.Fatalf("initialized: %d %s", resp.StatusCode, body)
	}
	// What the MCP Inspector sends first, refused before sessions were the
	// default ("logging/setLevel needs a session").
	if resp, body := post(t, s.url, []byte(`{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"debug"}}`), hdr); resp.StatusCode != 200 || bytes.Contains(body, []byte(`"error"`)) {
		t.Fatalf("logging/setLevel in the default mode: %d %s", resp.StatusCode, body)
	}
	streams := map[string]*http.Request{}
	get, _ := http.NewRequest(http.MethodGet, s.url, nil)
	get.Header.Set("Accept", "text/event-stream")
	for k, v := range hdr {
		get.Header.Set(k, v)
	}
	streams["GET stream"] = get
	listen, _ := http.NewRequest(http.MethodPost, s.url, bytes.NewReader(modernRequest(3, "subscriptions/listen", map[string]any{"notifications": map[string]any{"resourceSubscriptions": []string{"shift://status"}}})))
	listen.Header.Set("Content-Type", "application/json")
	listen.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range modernHeaders("subscriptions/listen", "") {
		listen.Header.Set(k, v)
	}
	streams["subscriptions/listen"] = listen
	for name, req := range streams {
		t.Run(name, func(t *testing.T) {
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != 200 {
				b, _ := io.ReadAll(resp.Body)
				t.Fatalf("%d %s", resp.StatusCode, b)
			}
			start := time.Now()
			lines := make(chan string)
			go func() {
				defer close(lines)
				r := bufio.NewReader(resp.Body)
				for {
					l, err := r.ReadString('\n')
					if err != nil {
						return
					}
					lines <- l
				}
			}()
			late := 0
			for timeout := time.After(1500 * time.Millisecond); ; {
				select {
				case l, ok := <-lines:
					if !ok {
						t.Fatalf("the stream ended after %s (body deadline 300ms)", time.Since(start))
					}
					if l == ":\n" && time.Since(start) > 600*time.Millisecond {
						late++
					}
					continue
				case <-timeout:
				}
				break
			}
			if late == 0 {
				t.Fatalf("no keep-alive comment after the body deadline passed")
			}
		})
	}
}

// Finding 5: the connection cap is total (every loopback client is
// 127.0.0.1). Over it a connection is refused at once with a 503 that
// says why, not queued; a freed slot serves again.
func TestHTTPConnectionCap(t *testing.T) {
	s := startHTTP(t, baseEnv(t), "--http-max-connections", "3", "--http-test-timeouts", "header=20s")
	held := make([]net.Conn, 3)
	for i := range held {
		held[i] = rawConn(t, s, "")
	}
	// The server has accepted them once a fourth is refused; retry briefly
	// in case the accepts lag the dials.
	var all string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		c := rawConn(t, s, "POST /mcp HTTP/1.1\r\nHost: HOST\r\nContent-Length: 0\r\n\r\n")
		var status string
		status, all, _ = answerAndClose(t, c, 5*time.Second)
		if status == "HTTP/1.1 503 Service Unavailable" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("over the cap: %q, want 503", all)
		}
	}
	if !strings.Contains(all, "too many connections (3, the limit)") || !strings.Contains(all, "Retry-After:") {
		t.Fatalf("the refusal does not say why: %q", all)
	}
	_ = held[0].Close()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		req, _ := http.NewRequest(http.MethodPost, s.url, bytes.NewReader(modernRequest(1, "tools/list", nil)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range modernHeaders("tools/list", "") {
			req.Header.Set(k, v)
		}
		req.Close = true
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
			err = fmt.Errorf("%d %s", resp.StatusCode, b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("a freed slot does not serve: %v", err)
		}
	}
}
