package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/fluxgit/fluxgit/host/catalog"
	"github.com/fluxgit/fluxgit/host/repopath"
	"github.com/fluxgit/fluxgit/internal/wire"
)

// recordingDispatcher answers repo.history with one commit, reports an
// ArgumentError for a commit.details call on "bad-ref", and remembers the
// client name of every call.
type recordingDispatcher struct {
	fixedDispatcher
	mu      sync.Mutex
	clients []string
}

func (d *recordingDispatcher) CallTool(_ context.Context, _ string, c *wire.Call, _ bool, _ wire.EventFunc) (*wire.Result, error) {
	d.mu.Lock()
	d.clients = append(d.clients, c.Meta.ClientName)
	d.mu.Unlock()
	if strings.Contains(string(c.Arguments), "bad-ref") {
		return nil, &wire.Failure{Kind: wire.KindInvalidArgument, Message: "Invalid params", Details: "arguments.commit names no commit the provider accepts"}
	}
	return &wire.Result{Source: "local-git", Data: json.RawMessage(`{"commits":[]}`)}, nil
}

func (d *recordingDispatcher) lastClient() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.clients) == 0 {
		return ""
	}
	return d.clients[len(d.clients)-1]
}

type memRecorder struct {
	mu   sync.Mutex
	recs []CallRecord
}

func (m *memRecorder) RecordCall(_ context.Context, r CallRecord) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.recs = append(m.recs, r)
}

func (m *memRecorder) last() CallRecord {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.recs[len(m.recs)-1]
}

func testServer(t *testing.T, roots repopath.Policy) (*Session, *recordingDispatcher, *memRecorder) {
	t.Helper()
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	d := &recordingDispatcher{}
	rec := &memRecorder{}
	return New(Options{Catalog: cat, Providers: d, Roots: roots, Name: "fluxgit", Version: "test", Recorder: rec}).NewSession(), d, rec
}

func send(t *testing.T, s *Session, method string, p any) (json.RawMessage, error) {
	t.Helper()
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	rm := json.RawMessage(raw)
	return s.dispatch(context.Background(), &jsonrpc2.Request{Method: method, Params: &rm, ID: jsonrpc2.ID{Num: 1}})
}

func initializeAs(t *testing.T, s *Session, version string, clientInfo any) {
	t.Helper()
	p := map[string]any{"protocolVersion": version, "capabilities": map[string]any{}}
	if clientInfo != nil {
		p["clientInfo"] = clientInfo
	}
	if _, err := send(t, s, "initialize", p); err != nil {
		t.Fatalf("initialize: %v", err)
	}
}

var modernMeta = map[string]any{
	"io.modelcontextprotocol/protocolVersion":    V20260728,
	"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "modern-client", "version": "1"},
}

// An argument the model got wrong reaches the model: a tool result with
// isError for 2025-11-25 and modern requests, a JSON-RPC -32602 whose
// message carries the details for older legacy versions. Either way the
// ledger records the call as refused.
func TestArgumentRefusalsByGeneration(t *testing.T) {
	dir := t.TempDir()
	failures := []struct {
		name    string
		tool    string
		args    map[string]any
		details string // a substring of data.details
	}{
		{"schema type", "repo.history", map[string]any{"repoPath": dir, "limit": "ten"}, "arguments.limit"},
		{"schema maximum", "repo.history", map[string]any{"repoPath": dir, "limit": 500}, "arguments.limit"},
		{"schema extra property", "repo.status", map[string]any{"repoPath": dir, "verbose": true}, "verbose"},
		{"relative repoPath", "repo.status", map[string]any{"repoPath": "relative/repo"}, "arguments.repoPath must be an absolute path"},
		{"provider ArgumentError", "commit.details", map[string]any{"repoPath": dir, "commit": "bad-ref"}, "names no commit the provider accepts"},
	}
	generations := []struct {
		version    string // "" is a modern request
		toolResult bool
	}{
		{V20241105, false}, {V20250326, false}, {V20250618, false}, {V20251125, true}, {"", true},
	}
	for _, gen := range generations {
		for _, f := range failures {
			name := gen.version
			if name == "" {
				name = "modern"
			}
			t.Run(name+"/"+f.name, func(t *testing.T) {
				s, _, rec := testServer(t, repopath.Policy{})
				p := map[string]any{"name": f.tool, "arguments": f.args}
				if gen.version == "" {
					p["_meta"] = modernMeta
				} else {
					initializeAs(t, s, gen.version, map[string]any{"name": "c", "version": "1"})
				}
				res, err := send(t, s, "tools/call", p)
				// Refused, and without the details: they can quote the
				// arguments, which the ledger keeps only as fingerprints.
				if got := rec.last(); got.Outcome != OutcomeBlocked || got.ErrorMessage == "" || strings.Contains(got.ErrorMessage, f.details) {
					t.Errorf("ledger recorded %q %q, want blocked without the details", got.Outcome, got.ErrorMessage)
				}
				if !gen.toolResult {
					re, ok := err.(*rpcError)
					if !ok || re.Code != codeInvalidParams {
						t.Fatalf("want JSON-RPC -32602, got %v / %s", err, res)
					}
					if !strings.Contains(re.Message, f.details) {
						t.Errorf("message %q does not carry the details %q", re.Message, f.details)
					}
					if d, _ := re.Data.(map[string]any)["details"].(string); !strings.Contains(d, f.details) {
						t.Errorf("data.details %q lacks %q", d, f.details)
					}
					return
				}
				if err != nil {
					t.Fatalf("want a tool result, got error %v", err)
				}
				out := decodeToolResult(t, res)
				if !out.IsError || len(out.Content) == 0 {
					t.Fatalf("want isError with content: %s", res)
				}
				if string(out.StructuredContent) != out.Content[0].Text {
					t.Errorf("content[0].text is not the payload:\n%s\n%s", out.Content[0].Text, out.StructuredContent)
				}
				var payload struct {
					Tool  string `json:"tool"`
					Error struct {
						Code    int    `json:"code"`
						Message string `json:"message"`
						Data    struct {
							Details string `json:"details"`
						} `json:"data"`
					} `json:"error"`
				}
				if err := json.Unmarshal([]byte(out.Content[0].Text), &payload); err != nil {
					t.Fatal(err)
				}
				if payload.Tool != f.tool || payload.Error.Code != codeInvalidParams ||
					!strings.Contains(payload.Error.Data.Details, f.details) || !strings.Contains(payload.Error.Message, f.details) {
					t.Errorf("payload %+v, want -32602 naming %q", payload, f.details)
				}
			})
		}
	}
}

// What is not an argument value of a known tool stays a JSON-RPC error in
// every generation.
func TestProtocolRefusalsStayJSONRPCErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name   string
		params map[string]any
		roots  string
		code   int64
	}{
		{"unknown tool", map[string]any{"name": "repo.nope", "arguments": map[string]any{}}, "", codeInvalidParams},
		{"missing name", map[string]any{"arguments": map[string]any{}}, "", codeInvalidParams},
		{"arguments not an object", map[string]any{"name": "repo.status", "arguments": []string{dir}}, "", codeInvalidParams},
		{"outside allowed roots", map[string]any{"name": "repo.status", "arguments": map[string]any{"repoPath": dir}}, t.TempDir(), repopath.CodeOutsideRoots},
		{"bad allowed roots", map[string]any{"name": "repo.status", "arguments": map[string]any{"repoPath": dir}}, "relative", repopath.CodeBadRoots},
	} {
		for _, version := range []string{V20241105, V20250618, V20251125, ""} {
			t.Run(tc.name+"/"+version, func(t *testing.T) {
				t.Setenv(repopath.EnvAllowedRoots, tc.roots)
				s, _, rec := testServer(t, repopath.FromEnv())
				p := map[string]any{}
				for k, v := range tc.params {
					p[k] = v
				}
				if version == "" {
					p["_meta"] = modernMeta
				} else {
					initializeAs(t, s, version, nil)
				}
				res, err := send(t, s, "tools/call", p)
				re, ok := err.(*rpcError)
				if !ok || re.Code != tc.code {
					t.Fatalf("want JSON-RPC %d, got %v / %s", tc.code, err, res)
				}
				if got := rec.last(); got.Outcome != OutcomeBlocked {
					t.Errorf("ledger outcome %q", got.Outcome)
				}
			})
		}
	}
}

// A later initialize without a usable client name keeps the agent id the
// session has; a new good name replaces it.
func TestLaterInitializeKeepsAgentID(t *testing.T) {
	for _, tc := range []struct {
		name  string
		infos []any // clientInfo of each initialize, in order
		want  string
	}{
		{"first name", []any{map[string]any{"name": "claude-code", "version": "1"}}, "claude-code"},
		{"blank name later", []any{map[string]any{"name": "claude-code", "version": "1"}, map[string]any{"name": "", "version": "2"}}, "claude-code"},
		{"whitespace name later", []any{map[string]any{"name": "claude-code", "version": "1"}, map[string]any{"name": "  ", "version": "2"}}, "claude-code"},
		{"no clientInfo later", []any{map[string]any{"name": "claude-code", "version": "1"}, nil}, "claude-code"},
		{"malformed clientInfo later", []any{map[string]any{"name": "claude-code", "version": "1"}, "oops"}, "claude-code"},
		{"new good name wins", []any{map[string]any{"name": "claude-code", "version": "1"}, map[string]any{"name": "codex", "version": "2"}}, "codex"},
		{"name without version", []any{map[string]any{"name": "cursor"}}, "cursor"},
		{"only blank", []any{map[string]any{"name": "", "version": "1"}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, d, _ := testServer(t, repopath.Policy{})
			for _, ci := range tc.infos {
				initializeAs(t, s, V20251125, ci)
			}
			if _, err := send(t, s, "tools/call", map[string]any{"name": "repo.history", "arguments": map[string]any{"repoPath": t.TempDir()}}); err != nil {
				t.Fatal(err)
			}
			if got := d.lastClient(); got != tc.want {
				t.Fatalf("provider saw client %q, want %q", got, tc.want)
			}
		})
	}
}

// Subscriptions per connection are bounded, in both generations, and a
// refusal says what the limit is and how to free a slot.
func TestSubscriptionLimit(t *testing.T) {
	s, _, _ := testServer(t, repopath.Policy{})
	initializeAs(t, s, V20251125, nil)
	uri := func(i int) string { return fmt.Sprintf("shift://status?workspace=w%d", i) }
	subscribe := func(method string, i int) error {
		_, err := send(t, s, method, map[string]any{"uri": uri(i)})
		return err
	}
	for i := 0; i < MaxSubscriptions; i++ {
		if err := subscribe("resources/subscribe", i); err != nil {
			t.Fatalf("subscription %d refused: %v", i, err)
		}
	}
	err := subscribe("resources/subscribe", MaxSubscriptions)
	re, ok := err.(*rpcError)
	if !ok || re.Code != codeInvalidParams || !strings.Contains(re.Message, "256") || !strings.Contains(re.Message, "resources/unsubscribe") {
		t.Fatalf("subscription over the limit: %v", err)
	}
	if len(s.subs.legacy) != MaxSubscriptions {
		t.Fatalf("refused subscription stored: %d held", len(s.subs.legacy))
	}
	// Re-subscribing a held URI is not a new subscription.
	if err := subscribe("resources/subscribe", 0); err != nil {
		t.Fatalf("re-subscribe at the limit: %v", err)
	}
	// A modern listen cannot go around the bound.
	listen := func(uris []string) error {
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // an accepted listen returns at once with ctx's error
		p := map[string]any{"_meta": modernMeta, "notifications": map[string]any{"resourceSubscriptions": uris}}
		raw, _ := json.Marshal(p)
		pp, _ := decodeParams((*json.RawMessage)(&raw))
		_, err := s.subscriptionsListen(ctx, jsonrpc2.ID{Num: 9}, generation{modern: true, version: V20260728}, pp)
		return err
	}
	err = listen([]string{uri(1000)})
	if re, ok := err.(*rpcError); !ok || !strings.Contains(re.Message, "notifications/cancelled") {
		t.Fatalf("listen over the limit: %v", err)
	}
	if err := subscribe("resources/unsubscribe", 0); err != nil {
		t.Fatal(err)
	}
	if err := subscribe("resources/subscribe", MaxSubscriptions); err != nil {
		t.Fatalf("subscribe after unsubscribe: %v", err)
	}
	// One listen asking for more than the whole budget on a fresh session.
	s2, _, _ := testServer(t, repopath.Policy{})
	s = s2
	many := make([]string, MaxSubscriptions+1)
	for i := range many {
		many[i] = uri(i)
	}
	if err := listen(many); err == nil {
		t.Fatal("listen with 257 URIs accepted")
	}
	if err := listen(many[:MaxSubscriptions]); err != context.Canceled {
		t.Fatalf("listen with 256 URIs: %v", err)
	}
}

// Every served tool answers an argument refusal with a result, never
// -32603; structuredContent, when present, satisfies the outputSchema
// (the git tools' schemas foresee the refusal, so they carry it).
func TestArgumentRefusalForEveryTool(t *testing.T) {
	s, _, _ := testServer(t, repopath.Policy{})
	for _, tool := range s.srv.opts.Catalog.Tools {
		res, isErr, err := s.srv.argumentRefused(tool, generation{modern: true, version: V20260728}, msgInvalidParams, "arguments.x is not allowed")
		if res == nil || !isErr {
			t.Errorf("%s: no tool result: %v", tool.Name, err)
			continue
		}
		var out struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			StructuredContent json.RawMessage `json:"structuredContent"`
		}
		if err := json.Unmarshal(res, &out); err != nil || len(out.Content) != 1 || !strings.Contains(out.Content[0].Text, "arguments.x is not allowed") {
			t.Errorf("%s: %s", tool.Name, res)
			continue
		}
		if out.StructuredContent != nil && !admits(tool, out.StructuredContent, false) {
			t.Errorf("%s: structuredContent violates the outputSchema", tool.Name)
		}
		if out.StructuredContent == nil && tool.Provider == "git-read" {
			t.Errorf("%s: git tool refusal without structuredContent", tool.Name)
		}
	}
}

// failingDispatcher fails every call the way a crashed provider does.
type failingDispatcher struct {
	fixedDispatcher
	retries []bool
}

func (d *failingDispatcher) CallTool(_ context.Context, _ string, _ *wire.Call, retry bool, _ wire.EventFunc) (*wire.Result, error) {
	d.retries = append(d.retries, retry)
	return nil, fmt.Errorf("provider exited")
}

// A provider failure on a write proposal is neither replayed nor reported
// retryable (the proposal may have reached the gateway); on a read it is.
func TestWriteFailureIsNotRetryable(t *testing.T) {
	s, _, _ := testServer(t, repopath.Policy{})
	d := &failingDispatcher{}
	s.srv.opts.Providers = d
	repo := t.TempDir()
	for _, tc := range []struct {
		tool      string
		args      map[string]any
		retryable bool
	}{
		{"operation.preview.reset", map[string]any{"repoPath": repo, "targetRef": "HEAD~1", "reason": "undo"}, false},
		{"repo.status", map[string]any{"repoPath": repo}, true},
	} {
		_, err := send(t, s, "tools/call", map[string]any{"name": tc.tool, "arguments": tc.args})
		re, ok := err.(*rpcError)
		if !ok || re.Code != codeInternal {
			t.Fatalf("%s: %v", tc.tool, err)
		}
		if got := re.Data.(map[string]any)["retryable"]; got != tc.retryable {
			t.Fatalf("%s: retryable %v, want %v", tc.tool, got, tc.retryable)
		}
		if last := d.retries[len(d.retries)-1]; last != tc.retryable {
			t.Fatalf("%s: dispatched with replay %v", tc.tool, last)
		}
	}
	if !strings.Contains(s.srv.instructions(), "operation.status") {
		t.Fatal("instructions do not explain write proposals although they are served")
	}
}
