package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/fluxgit/fluxgit/host/repopath"
	"github.com/fluxgit/fluxgit/internal/wire"
)

// askingDispatcher asks the client one question per call and answers the
// call with what the client said: a provider blocked in Call.Elicit.
type askingDispatcher struct {
	fixedDispatcher
	mu    sync.Mutex
	ended []error // how each call ended
}

func (d *askingDispatcher) CallTool(ctx context.Context, _ string, c *wire.Call, _ bool, events wire.EventFunc) (*wire.Result, error) {
	got := make(chan *wire.Answer, 1)
	events(wire.Event{Request: &wire.ClientRequest{ID: 1, Method: wire.MethodElicitation, Params: json.RawMessage(`{"message":"name?"}`)}},
		func(_ context.Context, a *wire.Answer) error { got <- a; return nil })
	select {
	case a := <-got:
		d.end(nil)
		if a.Failure != nil {
			return nil, a.Failure
		}
		return &wire.Result{Source: "local-git", Data: json.RawMessage(`{"commits":[]}`)}, nil
	case <-ctx.Done():
		d.end(ctx.Err())
		return nil, ctx.Err()
	}
}

func (d *askingDispatcher) end(err error) {
	d.mu.Lock()
	d.ended = append(d.ended, err)
	d.mu.Unlock()
}

func modernWith(caps map[string]any) map[string]any {
	return map[string]any{
		"io.modelcontextprotocol/protocolVersion":    V20260728,
		"io.modelcontextprotocol/clientCapabilities": caps,
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "modern-client", "version": "1"},
	}
}

// A modern call whose provider asks the client returns input_required; a
// retry with the state and the answers completes it; the state is single
// use and bound to the tool and arguments.
func TestInputRequiredRoundTrip(t *testing.T) {
	s, _, rec := testServer(t, repopath.Policy{})
	d := &askingDispatcher{}
	s.srv.opts.Providers = d
	dir := t.TempDir()
	call := func(args map[string]any, extra map[string]any) (map[string]json.RawMessage, error) {
		p := map[string]any{"name": "repo.history", "arguments": args, "_meta": modernWith(map[string]any{"elicitation": map[string]any{}})}
		for k, v := range extra {
			p[k] = v
		}
		raw, err := send(t, s, "tools/call", p)
		if err != nil {
			return nil, err
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		return m, nil
	}
	args := map[string]any{"repoPath": dir}
	first, err := call(args, nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(first["resultType"]) != `"input_required"` || !strings.Contains(string(first["inputRequests"]), `"q1":{"method":"elicitation/create"`) {
		t.Fatalf("first leg: %v", first)
	}
	var state string
	_ = json.Unmarshal(first["requestState"], &state)
	if len(state) != 32 {
		t.Fatalf("requestState %q", state)
	}
	if n := len(rec.recs); n != 0 {
		t.Fatalf("a call waiting for input was recorded (%d records)", n)
	}

	// Different arguments with that state: refused, and the call ends.
	_, err = call(map[string]any{"repoPath": dir, "limit": 2}, map[string]any{"requestState": state, "inputResponses": map[string]any{"q1": map[string]any{"action": "accept"}}})
	if re, ok := err.(*rpcError); !ok || re.Code != codeInvalidParams || !strings.Contains(re.Data.(map[string]any)["details"].(string), "different call") {
		t.Fatalf("mismatched retry: %v", err)
	}
	// The state is gone with it.
	_, err = call(args, map[string]any{"requestState": state, "inputResponses": map[string]any{"q1": map[string]any{"action": "accept"}}})
	if re, ok := err.(*rpcError); !ok || !strings.Contains(re.Data.(map[string]any)["details"].(string), "unknown or expired") {
		t.Fatalf("reused state: %v", err)
	}

	// A clean round trip.
	first, _ = call(args, nil)
	_ = json.Unmarshal(first["requestState"], &state)
	// An answer to a question that was not asked is ignored (MCP: a
	// server ignores what it does not recognise) and the question is
	// asked again under a new state.
	again, err := call(args, map[string]any{"requestState": state, "inputResponses": map[string]any{"q9": map[string]any{"action": "accept"}}})
	if err != nil || string(again["resultType"]) != `"input_required"` || !strings.Contains(string(again["inputRequests"]), `"q1":`) {
		t.Fatalf("unasked answer: %v %v", again, err)
	}
	var state2 string
	_ = json.Unmarshal(again["requestState"], &state2)
	if state2 == state || state2 == "" {
		t.Fatalf("re-asked under the same state %q", state2)
	}
	state = state2
	done, err := call(args, map[string]any{"requestState": state, "inputResponses": map[string]any{"q1": map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if string(done["resultType"]) != `"complete"` || done["structuredContent"] == nil {
		t.Fatalf("second leg: %v", done)
	}
	if last := rec.last(); last.Outcome != OutcomeSuccess || last.Tool != "repo.history" {
		t.Fatalf("recorded %+v", last)
	}
}

// Without the capability the question fails at once and the provider's
// failure is -32021 naming it.
func TestClientCapabilityMissing(t *testing.T) {
	s, _, _ := testServer(t, repopath.Policy{})
	s.srv.opts.Providers = &askingDispatcher{}
	for _, meta := range []map[string]any{modernWith(map[string]any{}), nil} {
		p := map[string]any{"name": "repo.history", "arguments": map[string]any{"repoPath": t.TempDir()}}
		if meta != nil {
			p["_meta"] = meta
		} else {
			initializeAs(t, s, V20251125, nil)
		}
		_, err := send(t, s, "tools/call", p)
		re, ok := err.(*rpcError)
		if !ok || re.Code != codeMissingCapability {
			t.Fatalf("want -32021, got %v", err)
		}
		if req := re.Data.(map[string]any)["requiredCapabilities"]; req == nil {
			t.Fatalf("no requiredCapabilities: %v", re.Data)
		}
	}
}
