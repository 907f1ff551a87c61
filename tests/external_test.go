package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// echoEnv registers the echo test provider through a configuration file.
func echoEnv(t testing.TB) []string {
	t.Helper()
	spec, err := filepath.Abs("testdata/echo-spec")
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "fluxgit.yaml")
	writeFile(t, cfg, "providers:\n  - name: echo\n    command: "+echoBin+"\n    spec: "+spec+"\n")
	return append(baseEnv(t), "FLUXGIT_CONFIG="+cfg)
}

// A third-party provider (an executable plus its own spec files,
// registered by configuration) is listed and called through the host.
func TestExternalProvider(t *testing.T) {
	s := startServer(t, echoEnv(t))
	initialize(t, s)
	list := s.call(1, "tools/list", nil)
	if !strings.Contains(string(list.Result), `"echo.say"`) || !strings.Contains(string(list.Result), `"repo.status"`) {
		t.Fatalf("tools/list lacks echo.say or built-ins: %s", list.raw)
	}
	p := toolPayload(t, s.call(2, "tools/call", map[string]any{"name": "echo.say", "arguments": map[string]any{"text": "héllo"}}))
	data, _ := p["data"].(map[string]any)
	if data["text"] != "héllo" || data["client"] != "lifecycle" || p["source"] != "echo" || p["tool"] != "echo.say" {
		t.Fatalf("echo.say payload: %v", p)
	}
	// The host validated the arguments before the provider saw them.
	bad := s.call(3, "tools/call", map[string]any{"name": "echo.say", "arguments": map[string]any{"text": ""}})
	if code, text := refusal(t, bad); code != -32602 || !strings.Contains(text, "arguments.text") {
		t.Fatalf("empty text: want -32602 naming arguments.text, got %s", bad.raw)
	}
}

// A response over the 8 MiB frame limit becomes -32603 with the same id,
// and the session goes on.
func TestOversizeResponse(t *testing.T) {
	s := startServer(t, echoEnv(t))
	initialize(t, s)
	r := s.call(1, "tools/call", map[string]any{"name": "echo.blob", "arguments": map[string]any{"bytes": 5 << 20}})
	if r.Error == nil || r.Error.Code != -32603 || !strings.Contains(string(r.Error.Data), `"limitBytes":8388608`) {
		t.Fatalf("want -32603 frame-limit error, got %.300s", r.raw)
	}
	ok := s.call(2, "tools/call", map[string]any{"name": "echo.blob", "arguments": map[string]any{"bytes": 10}})
	if ok.Error != nil {
		t.Fatalf("small blob after oversize: %s", ok.raw)
	}
}

// notifications/cancelled reaches the provider: its context is cancelled,
// no reply is sent for the cancelled request, and serving continues.
func TestCancellationReachesProvider(t *testing.T) {
	s := startServer(t, echoEnv(t))
	initialize(t, s)
	marker := filepath.Join(t.TempDir(), "marker")
	s.sendJSON(map[string]any{"jsonrpc": "2.0", "id": 77, "method": "tools/call",
		"params": map[string]any{"name": "echo.sleep", "arguments": map[string]any{"ms": 60000, "marker": marker}}})
	// Wait until the provider is really inside the call.
	deadline0 := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(marker + ".started"); err == nil {
			break
		}
		if time.Now().After(deadline0) {
			t.Fatal("the provider never started the call")
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.sendJSON(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": map[string]any{"requestId": 77}})
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(marker)
		if err == nil {
			if string(b) != "cancelled" {
				t.Fatalf("provider call ended %q, want cancelled", b)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("provider never saw the cancellation")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if r := s.call(78, "ping", nil); r.Error != nil {
		t.Fatalf("ping after cancel: %s", r.raw)
	}
	s.quiet(300 * time.Millisecond)
	if len(s.stray) != 0 {
		t.Fatalf("the cancelled request was answered: %v", s.stray)
	}
}
