package tests

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What the model reads is the text itself: a diff with '<', '>' and '&'
// arrives with those characters, in content[0].text, in structuredContent
// and on the wire, never as \u003c-style escapes.
func TestResultTextNotHTMLEscaped(t *testing.T) {
	repo := fixtureRepo(t)
	const line = `if a < b && c > d { return "<&>" }`
	writeFile(t, filepath.Join(repo, "src", "app.go"), "package app\n\nfunc Answer() int { return 42 }\n\n// "+line+"\n")
	s := startServer(t, baseEnv(t))
	initialize(t, s)
	r := s.call(1, "tools/call", map[string]any{"name": "diff.text", "arguments": map[string]any{"repoPath": repo, "path": "src/app.go"}})
	for _, esc := range []string{`\u003c`, `\u003e`, `\u0026`} {
		if strings.Contains(r.raw, esc) {
			t.Errorf("reply contains %s: %.400s", esc, r.raw)
		}
	}
	payload := toolPayload(t, r) // also: content[0].text is the compact payload, equal to structuredContent
	data, _ := json.Marshal(payload["data"])
	var diff struct {
		Diff string `json:"diff"`
	}
	if err := json.Unmarshal(data, &diff); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(diff.Diff, "+// "+line) {
		t.Fatalf("diff does not show the added line: %s", data)
	}
	var res struct {
		Content []struct{ Text string } `json:"content"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil {
		t.Fatal(err)
	}
	// In the text the model reads, the line is JSON-string-encoded: quotes
	// escaped, angle brackets and ampersands as themselves.
	if want := `if a < b && c > d { return \"<&>\" }`; !strings.Contains(res.Content[0].Text, want) {
		t.Fatalf("content[0].text lacks %s: %.600s", want, res.Content[0].Text)
	}
}

// An argument the model got wrong is readable by the model through the
// official Go SDK client in every protocol version: a tool result with
// isError from 2025-11-25 on (and modern), an error whose message carries
// the details before. An unknown tool stays a protocol error everywhere.
func TestArgumentRefusalReachesTheModel(t *testing.T) {
	repo := fixtureRepo(t)
	const details = "arguments.limit"
	for _, tc := range []struct {
		version    string
		toolResult bool
	}{
		{"2024-11-05", false},
		{"2025-03-26", false},
		{"2025-06-18", false},
		{"2025-11-25", true},
		{"2026-07-28", true},
	} {
		t.Run(tc.version, func(t *testing.T) {
			ctx, cs := sdkSession(t, tc.version)
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "repo.history", Arguments: map[string]any{"repoPath": repo, "limit": 500}})
			if tc.toolResult {
				if err != nil {
					t.Fatalf("want a tool result, got error %v", err)
				}
				if !res.IsError || len(res.Content) == 0 {
					t.Fatalf("want isError with content: %+v", res)
				}
				text := res.Content[0].(*mcp.TextContent).Text
				var payload struct {
					Error struct {
						Code int `json:"code"`
						Data struct {
							Details string `json:"details"`
						} `json:"data"`
					} `json:"error"`
				}
				if err := json.Unmarshal([]byte(text), &payload); err != nil {
					t.Fatalf("content[0].text is not the payload: %v: %s", err, text)
				}
				if payload.Error.Code != -32602 || !strings.Contains(payload.Error.Data.Details, details) {
					t.Fatalf("payload error %+v, want -32602 naming %s", payload.Error, details)
				}
			} else {
				if err == nil {
					t.Fatalf("want a JSON-RPC error, got result %+v", res)
				}
				if !strings.Contains(err.Error(), details) {
					t.Fatalf("error the client shows lacks the details: %v", err)
				}
			}
			_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "repo.nope", Arguments: map[string]any{}})
			if err == nil || !strings.Contains(err.Error(), "Unknown tool") {
				t.Fatalf("unknown tool: want a JSON-RPC error, got %v", err)
			}
		})
	}
}

// refusal reports how a call was refused, in either form the protocol
// version calls for: a JSON-RPC error, or a tool result whose payload error
// carries the code (argument refusals on 2025-11-25 and modern requests).
// text is the message and data, for matching details. code is 0 when the
// call returned a result without an error.
func refusal(t testing.TB, r response) (code int, text string) {
	t.Helper()
	if r.Error != nil {
		return r.Error.Code, r.Error.Message + " " + string(r.Error.Data)
	}
	p := toolPayload(t, r)
	e, ok := p["error"].(map[string]any)
	if !ok {
		return 0, ""
	}
	c, _ := e["code"].(float64)
	b, _ := json.Marshal(e)
	return int(c), string(b)
}

// codeOf is refusal's code alone.
func codeOf(t testing.TB, r response) int {
	t.Helper()
	code, _ := refusal(t, r)
	return code
}

// A later initialize with a blank or missing clientInfo.name keeps the
// agent id the session already has; the provider (and so the ledger and
// the roster) keeps seeing the same caller.
func TestReinitializeKeepsAgentID(t *testing.T) {
	for _, tc := range []struct {
		name   string
		second map[string]any // params of the second initialize
		want   string
	}{
		{"blank name", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "", "version": "2"}}, "claude-code"},
		{"no clientInfo", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}}, "claude-code"},
		{"another agent", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "codex", "version": "1"}}, "codex"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startServer(t, echoEnv(t))
			if r := s.call(1, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
				"clientInfo": map[string]any{"name": "claude-code", "version": "1"}}); r.Error != nil {
				t.Fatal(r.raw)
			}
			if r := s.call(2, "initialize", tc.second); r.Error != nil {
				t.Fatal(r.raw)
			}
			p := toolPayload(t, s.call(3, "tools/call", map[string]any{"name": "echo.say", "arguments": map[string]any{"text": "who"}}))
			if got := p["data"].(map[string]any)["client"]; got != tc.want {
				t.Fatalf("provider saw client %v, want %s", got, tc.want)
			}
		})
	}
}

// One connection holds at most 256 resource subscriptions, legacy and
// modern together; the refusal names the limit and how to free a slot.
func TestSubscriptionLimitThroughTheBinary(t *testing.T) {
	s := startServer(t, baseEnv(t))
	initialize(t, s)
	uri := func(i int) string { return "shift://status?workspace=w" + strconv.Itoa(i) }
	for i := 0; i < 256; i++ {
		if r := s.call(10+i, "resources/subscribe", map[string]any{"uri": uri(i)}); r.Error != nil {
			t.Fatalf("subscription %d refused: %s", i, r.raw)
		}
	}
	r := s.call(1000, "resources/subscribe", map[string]any{"uri": uri(256)})
	if r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, "256") || !strings.Contains(r.Error.Message, "resources/unsubscribe") {
		t.Fatalf("257th subscription: %s", r.raw)
	}
	r = s.call(1001, "subscriptions/listen", map[string]any{"_meta": modernMeta(),
		"notifications": map[string]any{"resourceSubscriptions": []string{uri(300)}}})
	if r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, "256") {
		t.Fatalf("listen over the limit: %s", r.raw)
	}
	if r := s.call(1002, "resources/unsubscribe", map[string]any{"uri": uri(0)}); r.Error != nil {
		t.Fatal(r.raw)
	}
	if r := s.call(1003, "resources/subscribe", map[string]any{"uri": uri(256)}); r.Error != nil {
		t.Fatalf("subscribe after unsubscribe: %s", r.raw)
	}
	if len(s.stray) != 0 {
		t.Fatalf("unexpected messages: %v", s.stray)
	}
}

// The roster tools' refusals reach the model too, though their
// outputSchema does not describe a refusal: the text alone, no
// structuredContent that would contradict the schema.
func TestRosterArgumentRefusal(t *testing.T) {
	s := startServer(t, baseEnv(t))
	initialize(t, s)
	r := s.call(1, "tools/call", map[string]any{"name": "shift_check_in", "arguments": map[string]any{"gist": "g", "files": "not-a-list"}})
	if r.Error != nil {
		t.Fatalf("want a tool result: %s", r.raw)
	}
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError           bool            `json:"isError"`
		StructuredContent json.RawMessage `json:"structuredContent"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil {
		t.Fatal(err)
	}
	if !res.IsError || len(res.Content) == 0 || !strings.Contains(res.Content[0].Text, "arguments.files") || !strings.Contains(res.Content[0].Text, "-32602") {
		t.Fatalf("refusal not readable: %s", r.raw)
	}
}
