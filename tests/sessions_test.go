package tests

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fluxgit/fluxgit/host/mcp"
	"github.com/fluxgit/fluxgit/host/rpc"
	"github.com/fluxgit/fluxgit/host/setup"
	"github.com/fluxgit/fluxgit/plugins/builtin"
)

// inProcessServer assembles one host in this process, with real provider
// processes (the built-ins from the fluxgit binary, plus the echo and
// example providers by configuration), for tests that open several
// sessions on it.
func inProcessServer(t *testing.T) *mcp.Server {
	t.Helper()
	echoSpec, _ := filepath.Abs("testdata/echo-spec")
	exampleSpec, _ := filepath.Abs("testdata/example-spec")
	cfgPath := filepath.Join(t.TempDir(), "fluxgit.yaml")
	writeFile(t, cfgPath, "providers:\n"+
		"  - name: echo\n    command: "+echoBin+"\n    spec: "+echoSpec+"\n"+
		"  - name: example\n    command: "+exampleBin+"\n    spec: "+exampleSpec+"\n")
	cfg, err := setup.LoadConfig(cfgPath, builtin.Names())
	if err != nil {
		t.Fatal(err)
	}
	h, err := setup.Build(cfg, builtin.Names(), fluxgitBin, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	srv := mcp.New(mcp.Options{Catalog: h.Catalog, Providers: h.Providers, Name: "fluxgit", Version: "test"})
	t.Cleanup(func() { srv.Close(); h.Providers.Shutdown() })
	return srv
}

// pipeSession serves one stdio-framed session of srv over in-memory pipes
// and returns a client for it with the same helpers as a process.
func pipeSession(t *testing.T, srv *mcp.Server) *server {
	t.Helper()
	clientR, serverW := io.Pipe()
	serverR, clientW := io.Pipe()
	s := &server{t: t, stdin: clientW, lines: make(chan string, 1024), stderr: &lockedBuffer{}, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		_ = srv.Serve(context.Background(), rpc.NewStream(serverR, serverW))
		serverW.Close()
	}()
	go func() {
		defer close(s.lines)
		r := bufio.NewReader(clientR)
		for {
			line, err := r.ReadString('\n')
			if line != "" {
				s.lines <- strings.TrimRight(line, "\n")
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		clientW.Close()
		select {
		case <-s.done:
		case <-time.After(15 * time.Second):
			t.Error("session did not end after its input closed")
		}
	})
	return s
}

// notifications returns the notifications among the messages a client
// collected while waiting for replies, by method.
func notifications(s *server, method string) []map[string]any {
	var out []map[string]any
	for _, raw := range s.stray {
		var m struct {
			Method string         `json:"method"`
			Params map[string]any `json:"params"`
		}
		if json.Unmarshal([]byte(raw), &m) == nil && m.Method == method {
			out = append(out, m.Params)
		}
	}
	return out
}

// Two sessions on one server never see each other's client info, log
// level, subscriptions or cancellations.
func TestSessionsAreIsolated(t *testing.T) {
	srv := inProcessServer(t)
	a, b := pipeSession(t, srv), pipeSession(t, srv)
	for _, c := range []struct {
		s    *server
		name string
	}{{a, "alpha"}, {b, "beta"}} {
		r := c.s.call(0, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
			"clientInfo": map[string]any{"name": c.name, "version": "1"}})
		if r.Error != nil {
			t.Fatal(r.raw)
		}
	}

	// Client info.
	for _, c := range []struct {
		s    *server
		want string
	}{{a, "alpha"}, {b, "beta"}, {a, "alpha"}} {
		p := toolPayload(t, c.s.call(1, "tools/call", map[string]any{"name": "echo.say", "arguments": map[string]any{"text": "hi"}}))
		if got := p["data"].(map[string]any)["client"]; got != c.want {
			t.Fatalf("echo.say saw client %v, want %s", got, c.want)
		}
	}

	// Log levels: only a asked for log messages.
	if r := a.call(2, "logging/setLevel", map[string]any{"level": "debug"}); r.Error != nil {
		t.Fatal(r.raw)
	}
	for _, s := range []*server{a, b} {
		toolPayload(t, s.call(3, "tools/call", map[string]any{"name": "example.logs", "arguments": map[string]any{}}))
	}
	if n := len(notifications(a, "notifications/message")); n != 8 {
		t.Fatalf("session a got %d log messages, want 8", n)
	}
	if n := len(notifications(b, "notifications/message")); n != 0 {
		t.Fatalf("session b got %d log messages, want none", n)
	}

	// Subscriptions: only a subscribed; a change made by b notifies a.
	if r := a.call(4, "resources/subscribe", map[string]any{"uri": "echo://counter"}); r.Error != nil {
		t.Fatal(r.raw)
	}
	toolPayload(t, b.call(5, "tools/call", map[string]any{"name": "echo.bump", "arguments": map[string]any{"by": 1}}))
	deadline := time.Now().Add(10 * time.Second)
	for len(notifications(a, "notifications/resources/updated")) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("session a never heard of the change")
		}
		a.call(6, "ping", nil)
	}
	b.call(7, "ping", nil)
	if n := len(notifications(b, "notifications/resources/updated")); n != 0 {
		t.Fatalf("session b, not subscribed, got %d updates", n)
	}

	// Cancellation: the same request id in both sessions; a cancels its own.
	dir := t.TempDir()
	for _, c := range []struct {
		s      *server
		marker string
	}{{a, filepath.Join(dir, "a")}, {b, filepath.Join(dir, "b")}} {
		c.s.sendJSON(map[string]any{"jsonrpc": "2.0", "id": "w", "method": "tools/call",
			"params": map[string]any{"name": "example.wait", "arguments": map[string]any{"marker": c.marker}}})
		waitFile(t, c.marker+".started")
	}
	a.sendJSON(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": map[string]any{"requestId": "w"}})
	if got := string(waitFile(t, filepath.Join(dir, "a"))); got != "cancelled" {
		t.Fatalf("a's call ended %q", got)
	}
	b.call(8, "ping", nil)
	if _, err := os.Stat(filepath.Join(dir, "b")); err == nil {
		t.Fatal("a's cancellation ended b's call")
	}
	b.sendJSON(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": map[string]any{"requestId": "w"}})
	if got := string(waitFile(t, filepath.Join(dir, "b"))); got != "cancelled" {
		t.Fatalf("b's call ended %q", got)
	}
}
