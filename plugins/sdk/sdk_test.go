package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/hashicorp/go-plugin"
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
	case "refused":
		return nil, &RefusedError{Code: -32011, Message: "outside", Data: map[string]any{"details": "x"}}
	case "panic":
		panic("kaboom")
	case "nil":
		return nil, nil
	}
	return nil, errors.New("internal")
}

// connect serves p over go-plugin's real gRPC transport (a unix socket) in
// this process and returns the host-side client.
func connect(t testing.TB, p Provider) *Client {
	t.Helper()
	client, _ := plugin.TestPluginGRPCConn(t, false, map[string]plugin.Plugin{PluginName: &GRPCPlugin{Impl: p}})
	t.Cleanup(func() { client.Close() })
	raw, err := client.Dispense(PluginName)
	if err != nil {
		t.Fatal(err)
	}
	c := raw.(*Client)
	if err := c.Describe(context.Background()); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCallToolAcrossTheWire(t *testing.T) {
	c := connect(t, testProvider{})
	ctx := context.Background()
	tests := []struct {
		tool    string
		check   func(*Result, error) bool
		explain string
	}{
		{"ok", func(r *Result, err error) bool {
			return err == nil && r.Source == "test" && string(r.Data) == `{"args":{"a":1},"client":"tester"}`
		}, "data and meta round-trip"},
		{"fail", func(r *Result, err error) bool {
			return err == nil && r.Error != nil && r.Error.Code == 10010 && string(r.Error.Data) == `{"why":"test"}`
		}, "tool errors travel as results"},
		{"badargs", func(r *Result, err error) bool {
			var ae *ArgumentError
			return errors.As(err, &ae) && ae.Details == "arguments.x is bad"
		}, "argument errors keep their type"},
		{"refused", func(r *Result, err error) bool {
			var re *RefusedError
			return errors.As(err, &re) && re.Code == -32011 && re.Data["details"] == "x"
		}, "refusals keep their code and data"},
		{"panic", func(r *Result, err error) bool { return err != nil }, "a panic is an error, not a dead provider"},
		{"nil", func(r *Result, err error) bool { return err != nil }, "a nil result is an error"},
		{"other", func(r *Result, err error) bool { return err != nil }, "internal errors surface"},
	}
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			r, err := c.CallTool(ctx, &Call{Tool: tc.tool, Arguments: json.RawMessage(`{"a":1}`), Meta: Meta{ClientName: "tester"}})
			if !tc.check(r, err) {
				t.Fatalf("%s: got %+v, %v", tc.explain, r, err)
			}
		})
	}
	// The provider survived the panic.
	if _, err := c.CallTool(ctx, &Call{Tool: "ok", Arguments: json.RawMessage(`{}`)}); err != nil {
		t.Fatalf("call after panic: %v", err)
	}
}

func TestResourcesDefaults(t *testing.T) {
	c := connect(t, testProvider{})
	if _, err := c.ReadResource(context.Background(), "x://y", Meta{}); !errors.Is(err, ErrResourceNotFound) {
		t.Fatalf("ReadResource: %v", err)
	}
	if err := c.WatchResources(context.Background(), func(ResourceChange) {}); !errors.Is(err, ErrNotImplemented) {
		t.Fatalf("WatchResources: %v", err)
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
	err := c.WatchResources(ctx, func(ev ResourceChange) {
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

// BenchmarkCallTool is the provider hop alone: JSON codec over gRPC on a
// unix socket, as go-plugin sets it up.
func BenchmarkCallTool(b *testing.B) {
	c := connect(b, testProvider{})
	call := &Call{Tool: "ok", Arguments: json.RawMessage(`{"repoPath":"/tmp/x"}`)}
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.CallTool(ctx, call); err != nil {
			b.Fatal(err)
		}
	}
}
