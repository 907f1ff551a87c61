package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fluxgit/fluxgit/internal/wire"
)

type testProvider struct{ Unimplemented }

func (testProvider) CallTool(ctx context.Context, c *Call) (*Result, error) {
	switch c.Tool {
	case "ok":
		return OK("test", map[string]any{"args": c.Arguments, "client": c.Meta.ClientName})
	case "fail":
		return Fail("test", 10010, "boom", map[string]any{"why": "test"}), nil
	case "badargs":
		return nil, &ArgumentError{Message: "Invalid params", Details: "arguments.x is bad"}
	case "invalid":
		return nil, fmt.Errorf("wrapped: %w", InvalidArgument("arguments.y is bad"))
	case "outside":
		return nil, OutsideRoots("outside", map[string]any{"details": "x"})
	case "unavailable":
		return nil, Unavailable("gateway down", "retry in a minute")
	case "panic":
		panic("kaboom")
	case "nil":
		return nil, nil
	}
	return nil, errors.New("internal")
}

// connect serves p over go-plugin's real gRPC transport (a unix socket) in
// this process and returns the host-side client.
func connect(t testing.TB, p Provider) *wire.Client {
	t.Helper()
	client, _ := plugin.TestPluginGRPCConn(t, false, wire.PluginSet(&handler{p: p}))
	t.Cleanup(func() { client.Close() })
	raw, err := client.Dispense(wire.PluginName)
	if err != nil {
		t.Fatal(err)
	}
	c := raw.(*wire.Client)
	if _, err := c.Describe(context.Background()); err != nil {
		t.Fatal(err)
	}
	return c
}

func failureOf(err error) *wire.Failure {
	var f *wire.Failure
	if errors.As(err, &f) {
		return f
	}
	return nil
}

func TestCallToolAcrossTheWire(t *testing.T) {
	c := connect(t, testProvider{})
	ctx := context.Background()
	tests := []struct {
		tool    string
		check   func(*wire.Result, error) bool
		explain string
	}{
		{"ok", func(r *wire.Result, err error) bool {
			return err == nil && r.Source == "test" && string(r.Data) == `{"args":{"a":1},"client":"tester"}`
		}, "data and meta round-trip"},
		{"fail", func(r *wire.Result, err error) bool {
			return err == nil && r.Error != nil && r.Error.Code == 10010 && string(r.Error.Data) == `{"why":"test"}`
		}, "tool errors travel as results"},
		{"badargs", func(r *wire.Result, err error) bool {
			f := failureOf(err)
			return f != nil && f.Kind == wire.KindInvalidArgument && f.Details == "arguments.x is bad"
		}, "an ArgumentError is an invalid_argument failure"},
		{"invalid", func(r *wire.Result, err error) bool {
			f := failureOf(err)
			return f != nil && f.Kind == wire.KindInvalidArgument && f.Message == "Invalid params" && f.Details == "arguments.y is bad"
		}, "a wrapped *Error keeps its kind"},
		{"outside", func(r *wire.Result, err error) bool {
			f := failureOf(err)
			return f != nil && f.Kind == wire.KindOutsideRoots && f.Message == "outside" && f.Data["details"] == "x"
		}, "outside_roots keeps its message and data"},
		{"unavailable", func(r *wire.Result, err error) bool {
			f := failureOf(err)
			return f != nil && f.Kind == wire.KindUnavailable && f.Details == "retry in a minute"
		}, "unavailable crosses"},
		{"panic", func(r *wire.Result, err error) bool { return status.Code(err) == codes.Internal }, "a panic is an internal error, not a dead provider"},
		{"nil", func(r *wire.Result, err error) bool { return status.Code(err) == codes.Internal }, "a nil result is an internal error"},
		{"other", func(r *wire.Result, err error) bool {
			return status.Code(err) == codes.Internal && failureOf(err) == nil
		}, "plain errors are internal"},
	}
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			r, err := c.Call(ctx, &wire.Call{ID: 1, Tool: tc.tool, Arguments: json.RawMessage(`{"a":1}`), Meta: wire.Meta{ClientName: "tester"}}, nil)
			if !tc.check(r, err) {
				t.Fatalf("%s: got %+v, %v", tc.explain, r, err)
			}
		})
	}
	// The provider survived the panic.
	if _, err := c.Call(ctx, &wire.Call{Tool: "ok", Arguments: json.RawMessage(`{}`)}, nil); err != nil {
		t.Fatalf("call after panic: %v", err)
	}
}

// bare has nothing but CallTool: every optional capability is absent.
type bare struct{}

func (bare) CallTool(context.Context, *Call) (*Result, error) { return OK("bare", map[string]any{}) }

func TestOptionalCapabilitiesAbsent(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name     string
		p        Provider
		readKind string // "" means ErrNotImplemented
	}{
		{"bare provider", bare{}, ""},
		{"old provider embedding Unimplemented", testProvider{}, wire.KindNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := connect(t, tc.p)
			_, err := c.ReadResource(ctx, "x://y", wire.Meta{})
			if tc.readKind == "" {
				if !errors.Is(err, wire.ErrNotImplemented) {
					t.Fatalf("ReadResource: want ErrNotImplemented, got %v", err)
				}
			} else if f := failureOf(err); f == nil || f.Kind != tc.readKind {
				t.Fatalf("ReadResource: want a %s failure, got %v", tc.readKind, err)
			}
			if err := c.WatchResources(ctx, func(wire.ResourceChange) {}); !errors.Is(err, wire.ErrNotImplemented) {
				t.Fatalf("WatchResources: %v", err)
			}
			if _, err := c.GetPrompt(ctx, &wire.PromptRequest{Name: "p"}); !errors.Is(err, wire.ErrNotImplemented) {
				t.Fatalf("GetPrompt: %v", err)
			}
			if _, err := c.Complete(ctx, &wire.CompleteRequest{Prompt: "p", Argument: "a"}); !errors.Is(err, wire.ErrNotImplemented) {
				t.Fatalf("Complete: %v", err)
			}
		})
	}
}

type watcher struct {
	Unimplemented
	*Broadcaster
}

func (watcher) CallTool(context.Context, *Call) (*Result, error) { return nil, errors.New("none") }
func (w watcher) WatchResources(ctx context.Context, ch chan<- ResourceChange) error {
	return w.Broadcaster.WatchResources(ctx, ch)
}

func TestWatchResourcesStreams(t *testing.T) {
	b := &Broadcaster{}
	c := connect(t, watcher{Broadcaster: b})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got []string
	err := c.WatchResources(ctx, func(ev wire.ResourceChange) {
		if ev.Ready {
			// Registered: from now on nothing may be missed.
			b.Publish(ResourceChange{URI: "shift://status"})
			b.Publish(ResourceChange{URI: "shift://status?workspace=a"})
			return
		}
		got = append(got, ev.URI)
		if len(got) == 2 {
			cancel()
		}
	})
	if len(got) != 2 || got[0] != "shift://status" || got[1] != "shift://status?workspace=a" {
		t.Fatalf("events %v (err %v)", got, err)
	}
}

// full implements every optional interface.
type full struct{ watcher }

func (full) Describe() Description {
	return Description{Tools: []string{"t.one"}, Resources: []string{"x://{id}"}, Prompts: []string{"review"}}
}

func (full) GetPrompt(_ context.Context, r *PromptRequest) (*PromptResult, error) {
	if r.Name != "review" {
		return nil, NotFound("Prompt not found", "no prompt "+r.Name)
	}
	return &PromptResult{Description: "Review " + r.Arguments["branch"], Messages: []PromptMessage{
		{Role: RoleUser, Text: "Review branch " + r.Arguments["branch"] + " for " + r.Meta.ClientName},
		{Role: RoleUser, Resource: &Resource{URI: "x://1", MimeType: "text/plain", Text: "one"}},
	}}, nil
}

func (full) Complete(_ context.Context, r *CompleteRequest) (*Completion, error) {
	var vals []string
	for i := range 150 {
		if v := fmt.Sprintf("%s-%03d", r.Value, i); r.Argument == "branch" {
			vals = append(vals, v)
		}
	}
	return &Completion{Values: vals}, nil
}

func TestDescribe(t *testing.T) {
	tests := []struct {
		name string
		p    Provider
		want wire.Description
	}{
		{"bare", bare{}, wire.Description{Protocol: wire.Protocol}},
		{"old style", testProvider{}, wire.Description{Protocol: wire.Protocol, Capabilities: wire.Capabilities{Resources: true, Watch: true}}},
		{"full", full{}, wire.Description{Protocol: wire.Protocol, Declared: true, Tools: []string{"t.one"}, Resources: []string{"x://{id}"},
			Prompts: []string{"review"}, Capabilities: wire.Capabilities{Resources: true, Watch: true, Prompts: true, Completion: true}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := connect(t, tc.p).Describe(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*d, tc.want) {
				t.Fatalf("got %+v, want %+v", *d, tc.want)
			}
		})
	}
}

func TestPromptAndCompletion(t *testing.T) {
	c := connect(t, full{})
	ctx := context.Background()
	pr, err := c.GetPrompt(ctx, &wire.PromptRequest{Name: "review", Arguments: map[string]string{"branch": "main"}, Meta: wire.Meta{ClientName: "cli"}})
	if err != nil {
		t.Fatal(err)
	}
	if pr.Description != "Review main" || len(pr.Messages) != 2 {
		t.Fatalf("prompt %+v", pr)
	}
	if got := string(pr.Messages[0].Content); got != `{"type":"text","text":"Review branch main for cli"}` {
		t.Fatalf("text message content %s", got)
	}
	if got := string(pr.Messages[1].Content); got != `{"resource":{"uri":"x://1","mimeType":"text/plain","text":"one"},"type":"resource"}` {
		t.Fatalf("resource message content %s", got)
	}
	if _, err := c.GetPrompt(ctx, &wire.PromptRequest{Name: "nope"}); failureOf(err) == nil || failureOf(err).Kind != wire.KindNotFound {
		t.Fatalf("unknown prompt: %v", err)
	}
	comp, err := c.Complete(ctx, &wire.CompleteRequest{Prompt: "review", Argument: "branch", Value: "fe"})
	if err != nil {
		t.Fatal(err)
	}
	if len(comp.Values) != wire.MaxCompletions || comp.Values[0] != "fe-000" || !comp.HasMore || comp.Total != 150 {
		t.Fatalf("completion capped wrongly: %d values, first %q, hasMore %v, total %d", len(comp.Values), comp.Values[0], comp.HasMore, comp.Total)
	}
	comp, err = c.Complete(ctx, &wire.CompleteRequest{Prompt: "review", Argument: "other"})
	if err != nil || comp.Values == nil || len(comp.Values) != 0 {
		t.Fatalf("empty completion must be an empty list: %+v %v", comp, err)
	}
}

// chatty uses every call-time capability.
type chatty struct {
	elicitEnded chan error
}

func (p chatty) CallTool(ctx context.Context, c *Call) (*Result, error) {
	switch c.Tool {
	case "work":
		c.Progress(1, 3, "first")
		c.Progress(1, 3, "not increasing: dropped")
		for _, l := range []Level{LevelDebug, LevelInfo, LevelNotice, LevelWarning, LevelError, LevelCritical, LevelAlert, LevelEmergency, "bogus"} {
			c.Log(l, "chatty", map[string]any{"level": string(l)})
		}
		s, err := c.Sample(ctx, &SamplingRequest{Messages: []SamplingMessage{{Role: RoleUser, Content: TextContent("summarise")}}, MaxTokens: 50})
		if err != nil {
			return nil, err
		}
		c.Progress(2, 0, "sampled")
		e, err := c.Elicit(ctx, &ElicitRequest{Message: "which branch?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"branch":{"type":"string"}}}`)})
		if err != nil {
			return nil, err
		}
		return OK("chatty", map[string]any{"sampled": s.Content.Text, "model": s.Model, "action": e.Action, "branch": e.Content["branch"]})
	case "refused":
		_, err := c.Elicit(ctx, &ElicitRequest{Message: "ok?", RequestedSchema: json.RawMessage(`{"type":"object"}`)})
		return nil, err
	case "block":
		_, err := c.Elicit(ctx, &ElicitRequest{Message: "never answered", RequestedSchema: json.RawMessage(`{"type":"object"}`)})
		p.elicitEnded <- err
		return nil, err
	}
	return nil, errors.New("unknown tool")
}

func TestCallEventsAndClientRequests(t *testing.T) {
	c := connect(t, chatty{})
	ctx := context.Background()
	var (
		mu     sync.Mutex
		seen   []string
		params []string
		// answers is waited for before the test ends: the provider can
		// finish the call before the Answer RPC's own reply arrives, and
		// closing the connection under it would fail that reply.
		answers sync.WaitGroup
	)
	defer answers.Wait()
	call := &wire.Call{ID: 7, Tool: "work", Arguments: json.RawMessage(`{}`), Meta: wire.Meta{
		Progress: true, LogLevel: "warning", Client: wire.ClientCaps{Sampling: true, Elicitation: true},
	}}
	res, err := c.Call(ctx, call, func(ev wire.Event) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case ev.Progress != nil:
			total := "?"
			if ev.Progress.Total != nil {
				total = fmt.Sprint(*ev.Progress.Total)
			}
			seen = append(seen, fmt.Sprintf("progress %v/%s %s", ev.Progress.Progress, total, ev.Progress.Message))
		case ev.Log != nil:
			seen = append(seen, fmt.Sprintf("log %s %s %s", ev.Log.Level, ev.Log.Logger, ev.Log.Data))
		case ev.Request != nil:
			seen = append(seen, "request "+ev.Request.Method)
			params = append(params, string(ev.Request.Params))
			answer := `{"role":"assistant","content":{"type":"text","text":"all good"},"model":"m1","stopReason":"endTurn"}`
			if ev.Request.Method == wire.MethodElicitation {
				answer = `{"action":"accept","content":{"branch":"main"}}`
			}
			// Answer from another goroutine, as a host waiting on its
			// client would.
			answers.Add(1)
			go func(id uint64) {
				defer answers.Done()
				if err := c.Answer(ctx, &wire.Answer{CallID: 7, RequestID: id, Result: json.RawMessage(answer)}); err != nil {
					t.Errorf("answer: %v", err)
				}
			}(ev.Request.ID)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"progress 1/3 first",
		`log warning chatty {"level":"warning"}`,
		`log error chatty {"level":"error"}`,
		`log critical chatty {"level":"critical"}`,
		`log alert chatty {"level":"alert"}`,
		`log emergency chatty {"level":"emergency"}`,
		"request " + wire.MethodSampling,
		"progress 2/? sampled",
		"request " + wire.MethodElicitation,
	}
	if !reflect.DeepEqual(seen, want) {
		t.Fatalf("events in order:\n got %q\nwant %q", seen, want)
	}
	if string(res.Data) != `{"action":"accept","branch":"main","model":"m1","sampled":"all good"}` {
		t.Fatalf("result %s", res.Data)
	}
	wantParams := []string{
		`{"messages":[{"role":"user","content":{"type":"text","text":"summarise"}}],"maxTokens":50}`,
		`{"message":"which branch?","requestedSchema":{"type":"object","properties":{"branch":{"type":"string"}}}}`,
	}
	if !reflect.DeepEqual(params, wantParams) {
		t.Fatalf("client request params (MCP shapes):\n got %q\nwant %q", params, wantParams)
	}
}

func TestClientRequestFailureAndCapability(t *testing.T) {
	c := connect(t, chatty{})
	ctx := context.Background()
	tests := []struct {
		name     string
		caps     wire.ClientCaps
		answer   *wire.Failure
		wantKind string
		wantData string
	}{
		{"no capability: refused before asking", wire.ClientCaps{Sampling: true}, nil, wire.KindClientCapability, `{"requiredCapabilities":{"elicitation":{}}}`},
		{"host answers with a failure", wire.ClientCaps{Elicitation: true}, &wire.Failure{Kind: wire.KindUnavailable, Message: "client timed out"}, wire.KindUnavailable, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			asked := false
			var answered sync.WaitGroup
			defer answered.Wait()
			_, err := c.Call(ctx, &wire.Call{ID: 9, Tool: "refused", Meta: wire.Meta{Client: tc.caps}}, func(ev wire.Event) {
				if ev.Request != nil {
					asked = true
					answered.Add(1)
					go func() {
						defer answered.Done()
						// Its reply may race the call's end; the call's
						// outcome below is what this case checks.
						_ = c.Answer(ctx, &wire.Answer{CallID: 9, RequestID: ev.Request.ID, Failure: tc.answer})
					}()
				}
			})
			f := failureOf(err)
			if f == nil || f.Kind != tc.wantKind {
				t.Fatalf("want a %s failure, got %v", tc.wantKind, err)
			}
			if asked != (tc.answer != nil) {
				t.Fatalf("client asked: %v", asked)
			}
			if tc.wantData != "" {
				if b, _ := json.Marshal(f.Data); string(b) != tc.wantData {
					t.Fatalf("data %s, want %s", b, tc.wantData)
				}
			}
		})
	}
}

func TestCancelEndsBlockedElicit(t *testing.T) {
	p := chatty{elicitEnded: make(chan error, 1)}
	c := connect(t, p)
	ctx, cancel := context.WithCancel(context.Background())
	var reqID uint64
	_, err := c.Call(ctx, &wire.Call{ID: 11, Tool: "block", Meta: wire.Meta{Client: wire.ClientCaps{Elicitation: true}}}, func(ev wire.Event) {
		if ev.Request != nil {
			reqID = ev.Request.ID
			cancel() // the client cancelled the tool call instead of answering
		}
	})
	if status.Code(err) != codes.Canceled {
		t.Fatalf("call: want Canceled, got %v", err)
	}
	if perr := <-p.elicitEnded; !errors.Is(perr, context.Canceled) {
		t.Fatalf("provider's Elicit ended with %v, want context.Canceled", perr)
	}
	// The request is gone: a late answer finds nobody waiting.
	if err := c.Answer(context.Background(), &wire.Answer{CallID: 11, RequestID: reqID, Result: json.RawMessage(`{}`)}); status.Code(err) != codes.NotFound {
		t.Fatalf("late answer: want NotFound, got %v", err)
	}
}

func TestHandBuiltCallIsSafe(t *testing.T) {
	c := &Call{Tool: "x", Meta: Meta{Progress: true, LogLevel: LevelDebug, Client: ClientCapabilities{Sampling: true, Elicitation: true}}}
	c.Progress(1, 2, "no handle")
	c.Log(LevelError, "t", "no handle")
	var nilCall *Call
	nilCall.Progress(1, 1, "")
	nilCall.Log(LevelError, "", nil)
	tests := []struct {
		name string
		run  func() error
		cap  string
	}{
		{"sample", func() error { _, err := c.Sample(context.Background(), &SamplingRequest{MaxTokens: 1}); return err }, "sampling"},
		{"elicit", func() error { _, err := c.Elicit(context.Background(), &ElicitRequest{Message: "?"}); return err }, "elicitation"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var e *Error
			if err := tc.run(); !errors.As(err, &e) || e.Kind != KindClientCapability {
				t.Fatalf("want a client-capability error, got %v", err)
			}
			req, _ := e.Data["requiredCapabilities"].(map[string]any)
			if _, ok := req[tc.cap]; !ok || len(req) != 1 {
				t.Fatalf("requiredCapabilities %v, want only %s", e.Data, tc.cap)
			}
		})
	}
}

func TestLevelOrder(t *testing.T) {
	tests := []struct {
		l, min Level
		want   bool
	}{
		{LevelDebug, LevelDebug, true},
		{LevelInfo, LevelDebug, true},
		{LevelDebug, LevelInfo, false},
		{LevelWarning, LevelNotice, true},
		{LevelNotice, LevelWarning, false},
		{LevelEmergency, LevelAlert, true},
		{"warn", LevelDebug, false},
		{LevelError, "", false},
	}
	for _, tc := range tests {
		if got := tc.l.AtLeast(tc.min); got != tc.want {
			t.Errorf("%q.AtLeast(%q) = %v, want %v", tc.l, tc.min, got, tc.want)
		}
	}
	for i, l := range []Level{LevelDebug, LevelInfo, LevelNotice, LevelWarning, LevelError, LevelCritical, LevelAlert, LevelEmergency} {
		if l.Severity() != i {
			t.Errorf("%s severity %d, want %d", l, l.Severity(), i)
		}
	}
}

func TestLoggerSpeaksHclogJSON(t *testing.T) {
	var buf bytes.Buffer
	newLogger(&buf, "roster").Warn("store unavailable", "dir", "/x")
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("not one JSON line: %q", buf.String())
	}
	for k, want := range map[string]string{"@level": "warn", "@message": "store unavailable", "@module": "roster", "dir": "/x"} {
		if line[k] != want {
			t.Errorf("%s = %v, want %q (line %s)", k, line[k], want, strings.TrimSpace(buf.String()))
		}
	}
	if ts, _ := line["@timestamp"].(string); len(ts) < len("2006-01-02T15:04:05.000000Z") || ts[19] != '.' {
		t.Errorf("@timestamp %q is not in the host's layout", ts)
	}
}

func TestSamplingResultAcceptsContentLists(t *testing.T) {
	tests := []struct{ in, text string }{
		{`{"role":"assistant","content":{"type":"text","text":"one"},"model":"m"}`, "one"},
		{`{"role":"assistant","content":[{"type":"image","data":"AA==","mimeType":"image/png"},{"type":"text","text":"two"}],"model":"m"}`, "two"},
	}
	for _, tc := range tests {
		var r SamplingResult
		if err := json.Unmarshal([]byte(tc.in), &r); err != nil || r.Content.Text != tc.text || r.Model != "m" {
			t.Errorf("%s: got %+v, %v", tc.in, r, err)
		}
	}
}

// BenchmarkCallTool is the provider hop alone: JSON codec over a gRPC
// server stream on a unix socket, as go-plugin sets it up.
func BenchmarkCallTool(b *testing.B) {
	c := connect(b, testProvider{})
	call := &wire.Call{Tool: "ok", Arguments: json.RawMessage(`{"repoPath":"/tmp/x"}`)}
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.Call(ctx, call, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkProgressEvent is one progress report from a provider to the
// host's event callback.
func BenchmarkProgressEvent(b *testing.B) {
	c := connect(b, progresser{n: b.N})
	b.ResetTimer()
	got := 0
	if _, err := c.Call(context.Background(), &wire.Call{Tool: "p", Meta: wire.Meta{Progress: true}}, func(wire.Event) { got++ }); err != nil {
		b.Fatal(err)
	}
	if got != b.N {
		b.Fatalf("%d events, want %d", got, b.N)
	}
}

type progresser struct{ n int }

func (p progresser) CallTool(_ context.Context, c *Call) (*Result, error) {
	for i := range p.n {
		c.Progress(float64(i+1), 0, "")
	}
	return OK("p", map[string]any{})
}

func TestErrorKindsMatchTheWire(t *testing.T) {
	for kind, w := range map[ErrorKind]string{
		KindInvalidArgument: wire.KindInvalidArgument, KindOutsideRoots: wire.KindOutsideRoots, KindNotFound: wire.KindNotFound,
		KindClientCapability: wire.KindClientCapability, KindUnavailable: wire.KindUnavailable, KindInternal: wire.KindInternal,
	} {
		if string(kind) != w {
			t.Errorf("sdk kind %q, wire kind %q", kind, w)
		}
	}
}
