package tests

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

// On a 2025-11-25 session the fixtures that ask for input put the same
// questions as client requests on the connection: a tool's batch
// (elicitation, sampling, roots/list) and a prompt that asks before it
// renders, each answered by the test as a client would.
func TestConformanceProviderLegacyInput(t *testing.T) {
	answers := map[string]any{
		"elicitation/create":     map[string]any{"action": "accept", "content": map[string]any{"name": "Ada", "context": "merging"}},
		"sampling/createMessage": map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": "Good day"}, "model": "m"},
		"roots/list":             map[string]any{"roots": []any{map[string]any{"uri": "file:///work", "name": "work"}}},
	}
	tests := []struct {
		name   string
		method string
		params map[string]any
		asks   []string // the client requests expected, sorted
		want   string   // in the final reply
	}{
		{"a tool's batch", "tools/call", map[string]any{"name": "test_input_required_result_multiple_inputs", "arguments": map[string]any{}},
			[]string{"elicitation/create", "roots/list", "sampling/createMessage"}, `Good day Ada (roots: file:///work)`},
		{"a prompt that asks first", "prompts/get", map[string]any{"name": "test_input_required_result_prompt"},
			[]string{"elicitation/create"}, `Answer with this context in mind: merging`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := startServer(t, conformanceEnv(t))
			if r := s.call(0, "initialize", map[string]any{"protocolVersion": "2025-11-25",
				"capabilities": map[string]any{"elicitation": map[string]any{}, "sampling": map[string]any{}, "roots": map[string]any{}},
				"clientInfo":   map[string]any{"name": "c", "version": "1"}}); r.Error != nil {
				t.Fatal(r.raw)
			}
			s.sendJSON(map[string]any{"jsonrpc": "2.0", "id": "q", "method": tc.method, "params": tc.params})
			var asked []string
			for {
				line := s.next(20 * time.Second)
				var msg struct {
					ID     json.RawMessage `json:"id"`
					Method string          `json:"method"`
					Result json.RawMessage `json:"result"`
					Error  json.RawMessage `json:"error"`
				}
				if err := json.Unmarshal([]byte(line), &msg); err != nil {
					t.Fatalf("%v: %s", err, line)
				}
				if msg.Method == "" {
					if string(msg.ID) != `"q"` || msg.Error != nil || !strings.Contains(string(msg.Result), tc.want) {
						t.Fatalf("reply lacks %q: %s", tc.want, line)
					}
					break
				}
				answer, ok := answers[msg.Method]
				if !ok {
					t.Fatalf("unexpected request: %s", line)
				}
				asked = append(asked, msg.Method)
				s.sendJSON(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": answer})
			}
			slices.Sort(asked)
			if strings.Join(asked, ",") != strings.Join(tc.asks, ",") {
				t.Fatalf("asked %v, want %v", asked, tc.asks)
			}
		})
	}
}
