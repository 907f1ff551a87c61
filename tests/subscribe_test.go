package tests

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

type notification struct {
	Method string `json:"method"`
	Params struct {
		URI           string              `json:"uri"`
		Meta          map[string]any      `json:"_meta"`
		Notifications map[string][]string `json:"notifications"`
	} `json:"params"`
}

// notifications drains every notification already collected plus those
// arriving within d.
func (s *server) notifications(d time.Duration) []notification {
	s.t.Helper()
	var out []notification
	take := func(line string) {
		var m map[string]json.RawMessage
		if json.Unmarshal([]byte(line), &m) != nil {
			s.t.Fatalf("bad line %q", line)
		}
		if _, isReply := m["id"]; isReply {
			s.t.Fatalf("unexpected reply: %s", line)
		}
		var n notification
		_ = json.Unmarshal([]byte(line), &n)
		out = append(out, n)
	}
	for _, l := range s.stray {
		take(l)
	}
	s.stray = nil
	deadline := time.After(d)
	for {
		select {
		case l, ok := <-s.lines:
			if !ok {
				return out
			}
			take(l)
		case <-deadline:
			return out
		}
	}
}

func bump(t *testing.T, s *server, id any, by int, meta map[string]any) {
	t.Helper()
	p := map[string]any{"name": "echo.bump", "arguments": map[string]any{"by": by}}
	if meta != nil {
		p["_meta"] = meta
	}
	if pl := toolPayload(t, s.call(id, "tools/call", p)); pl["error"] != nil {
		t.Fatalf("bump: %v", pl)
	}
}

// Legacy resources/subscribe: exactly one notifications/resources/updated
// per real change, none for a no-op, none after unsubscribe.
func TestLegacySubscription(t *testing.T) {
	s := startServer(t, echoEnv(t))
	r := s.call(0, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "sub", "version": "1"}})
	if !strings.Contains(string(r.Result), `"subscribe":true`) {
		t.Fatalf("resources.subscribe capability missing: %s", r.raw)
	}
	if r := s.call(1, "resources/list", nil); !strings.Contains(string(r.Result), `"echo://counter"`) {
		t.Fatalf("resources/list: %s", r.raw)
	}
	if r := s.call(2, "resources/subscribe", map[string]any{"uri": "echo://nope"}); r.Error == nil || r.Error.Code != -32002 {
		t.Fatalf("subscribe to unknown resource: %s", r.raw)
	}
	if r := s.call(3, "resources/subscribe", map[string]any{"uri": "echo://counter"}); r.Error != nil {
		t.Fatalf("subscribe: %s", r.raw)
	}
	bump(t, s, 4, 2, nil)
	got := s.notifications(1500 * time.Millisecond)
	if len(got) != 1 || got[0].Method != "notifications/resources/updated" || got[0].Params.URI != "echo://counter" || got[0].Params.Meta != nil {
		t.Fatalf("after a change: want one untagged update, got %+v", got)
	}
	if r := s.call(5, "resources/read", map[string]any{"uri": "echo://counter"}); !strings.Contains(string(r.Result), `"text":"2"`) {
		t.Fatalf("read after bump: %s", r.raw)
	}
	bump(t, s, 6, 0, nil)
	if got := s.notifications(500 * time.Millisecond); len(got) != 0 {
		t.Fatalf("no-op change notified: %+v", got)
	}
	if r := s.call(7, "resources/unsubscribe", map[string]any{"uri": "echo://counter"}); r.Error != nil {
		t.Fatalf("unsubscribe: %s", r.raw)
	}
	bump(t, s, 8, 1, nil)
	if got := s.notifications(500 * time.Millisecond); len(got) != 0 {
		t.Fatalf("notified after unsubscribe: %+v", got)
	}
}

// Modern subscriptions/listen: the acknowledgement comes first and lists
// only what is honoured; every update is tagged with the subscription id;
// notifications/cancelled ends the stream without a reply.
func TestModernListen(t *testing.T) {
	s := startServer(t, echoEnv(t))
	meta := modernMeta()
	s.sendJSON(map[string]any{"jsonrpc": "2.0", "id": "listen-1", "method": "subscriptions/listen", "params": map[string]any{
		"_meta": meta,
		"notifications": map[string]any{"toolsListChanged": true,
			"resourceSubscriptions": []string{"echo://counter", "echo://unknown"}},
	}})
	ack := s.notifications(3 * time.Second)
	if len(ack) != 1 || ack[0].Method != "notifications/subscriptions/acknowledged" ||
		ack[0].Params.Meta["io.modelcontextprotocol/subscriptionId"] != "listen-1" {
		t.Fatalf("acknowledgement: %+v", ack)
	}
	if subs := ack[0].Params.Notifications; len(subs) != 1 || len(subs["resourceSubscriptions"]) != 1 || subs["resourceSubscriptions"][0] != "echo://counter" {
		t.Fatalf("ack must list only honoured subscriptions: %+v", subs)
	}
	bump(t, s, "b1", 1, meta)
	got := s.notifications(1500 * time.Millisecond)
	if len(got) != 1 || got[0].Method != "notifications/resources/updated" || got[0].Params.URI != "echo://counter" ||
		got[0].Params.Meta["io.modelcontextprotocol/subscriptionId"] != "listen-1" {
		t.Fatalf("after a change: want one tagged update, got %+v", got)
	}
	bump(t, s, "b2", 0, meta)
	if got := s.notifications(500 * time.Millisecond); len(got) != 0 {
		t.Fatalf("no-op change notified: %+v", got)
	}
	s.sendJSON(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": map[string]any{"requestId": "listen-1"}})
	bump(t, s, "b3", 1, meta)
	if got := s.notifications(500 * time.Millisecond); len(got) != 0 {
		t.Fatalf("notified after the listen was cancelled (or it was answered): %+v", got)
	}
}
