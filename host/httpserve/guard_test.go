package httpserve

import (
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// A stalled body, declared by length or sent chunked, is answered 408
// after BodyTimeout and its connection closed; a refusal before the body
// (a bad Content-Type here) leaves at once and closes too.
func TestStalledBodyAnswered(t *testing.T) {
	_, ts := newTestHandler(t, Auto, func(o *Options) { o.BodyTimeout = 200 * time.Millisecond })
	host := strings.TrimPrefix(ts.URL, "http://")
	for _, c := range []struct {
		name, req, status string
		within            time.Duration
	}{
		{"length", "POST /mcp HTTP/1.1\r\nHost: " + host + "\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{", "HTTP/1.1 408", 5 * time.Second},
		{"chunked", "POST /mcp HTTP/1.1\r\nHost: " + host + "\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"a\"", "HTTP/1.1 408", 5 * time.Second},
		{"refused before the body", "POST /mcp HTTP/1.1\r\nHost: " + host + "\r\nContent-Type: text/plain\r\nContent-Length: 1000\r\n\r\n{", "HTTP/1.1 415", 150 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", host)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := io.WriteString(conn, c.req); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_ = conn.SetReadDeadline(start.Add(10 * time.Second))
			all, err := io.ReadAll(conn)
			if err != nil {
				t.Fatalf("not answered and closed: %v (%q)", err, all)
			}
			if !strings.HasPrefix(string(all), c.status) || !strings.Contains(string(all), "Connection: close") {
				t.Fatalf("got %q, want %s with Connection: close", all, c.status)
			}
			if took := time.Since(start); took > c.within {
				t.Fatalf("answered after %s, want within %s", took, c.within)
			}
		})
	}
}

// LimitListener refuses a connection over the cap with a 503 and gives a
// slot back exactly once per connection, however often it is closed.
func TestLimitListener(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := LimitListener(inner, 1)
	defer ln.Close()
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	dial := func() net.Conn {
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	dial()
	first := <-accepted
	over := dial()
	_ = over.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, _ := io.ReadAll(over)
	if !strings.HasPrefix(string(b), "HTTP/1.1 503") || !strings.Contains(string(b), "too many connections (1, the limit)") {
		t.Fatalf("over the cap: %q", b)
	}
	_ = first.Close()
	_ = first.Close() // a second Close must not free a second slot
	dial()
	select {
	case <-accepted:
	case <-time.After(5 * time.Second):
		t.Fatal("the freed slot was not reused")
	}
	third := dial()
	_ = third.SetReadDeadline(time.Now().Add(5 * time.Second))
	if b, _ := io.ReadAll(third); !strings.HasPrefix(string(b), "HTTP/1.1 503") {
		t.Fatalf("a double Close freed two slots: %q", b)
	}
}
