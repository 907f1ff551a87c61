package wire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// fake is a Handler written against the wire directly.
type fake struct {
	protocol int
	// late receives the stream of a call after it returned.
	late chan *Stream
}

func (f *fake) Describe(context.Context) (*Description, error) {
	return &Description{Protocol: f.protocol, Declared: true, Tools: []string{"t"}}, nil
}

func (f *fake) Call(ctx context.Context, c *Call, s *Stream) (*Result, error) {
	switch c.Tool {
	case "burst":
		// Many goroutines emit at once; all must arrive, whole, before
		// the result.
		var wg sync.WaitGroup
		for i := range 50 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_ = s.Emit(Event{Progress: &Progress{Progress: float64(i)}})
			}()
		}
		wg.Wait()
		return &Result{Data: json.RawMessage(`{"n":50}`)}, nil
	case "ask":
		// Echo the answer; the call id is deliberately shared by two
		// concurrent calls in the test.
		res, err := s.Request(ctx, MethodElicitation, json.RawMessage(`{"message":`+string(c.Arguments)+`}`))
		if err != nil {
			return nil, err
		}
		return &Result{Data: res}, nil
	case "late":
		f.late <- s
		return &Result{Data: json.RawMessage(`{}`)}, nil
	case "fail":
		return nil, fmt.Errorf("wrapped: %w", &Failure{Kind: KindOutsideRoots, Message: "outside", Data: map[string]any{"details": "d"}})
	case "panic":
		panic("boom")
	}
	return nil, errors.New("plain")
}

func (f *fake) ReadResource(_ context.Context, uri string, _ Meta) (*Resource, error) {
	return nil, &Failure{Kind: KindNotFound, Message: "Resource not found", Details: uri}
}

func (f *fake) WatchResources(context.Context, chan<- ResourceChange) error { return ErrNotImplemented }

func (f *fake) GetPrompt(context.Context, *PromptRequest) (*PromptResult, error) {
	return nil, ErrNotImplemented
}

func (f *fake) Complete(_ context.Context, r *CompleteRequest) (*Completion, error) {
	return &Completion{Values: []string{r.Value + "1"}}, nil
}

func dial(t *testing.T, h Handler) *Client {
	t.Helper()
	client, _ := plugin.TestPluginGRPCConn(t, false, PluginSet(h))
	t.Cleanup(func() { client.Close() })
	raw, err := client.Dispense(PluginName)
	if err != nil {
		t.Fatal(err)
	}
	return raw.(*Client)
}

func TestDescribeChecksProtocol(t *testing.T) {
	tests := []struct {
		protocol int
		wantErr  string
	}{
		{Protocol, ""},
		{1, "provider speaks wire protocol 1, host speaks 2: rebuild the provider"},
	}
	for _, tc := range tests {
		d, err := dial(t, &fake{protocol: tc.protocol}).Describe(context.Background())
		switch {
		case tc.wantErr == "" && (err != nil || !d.Declared || d.Tools[0] != "t"):
			t.Errorf("protocol %d: %+v %v", tc.protocol, d, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("protocol %d: want %q, got %v", tc.protocol, tc.wantErr, err)
		}
	}
}

func TestEventsArriveBeforeTheResult(t *testing.T) {
	c := dial(t, &fake{protocol: Protocol})
	seen := map[float64]bool{}
	res, err := c.Call(context.Background(), &Call{Tool: "burst"}, func(ev Event) {
		if ev.Progress == nil || seen[ev.Progress.Progress] {
			t.Errorf("bad or repeated event %+v", ev)
			return
		}
		seen[ev.Progress.Progress] = true
	})
	if err != nil || string(res.Data) != `{"n":50}` {
		t.Fatalf("result %+v %v", res, err)
	}
	if len(seen) != 50 {
		t.Fatalf("%d of 50 events arrived before the result", len(seen))
	}
}

func TestAnswersRouteToTheirRequest(t *testing.T) {
	c := dial(t, &fake{protocol: Protocol})
	ctx := context.Background()
	var wg sync.WaitGroup
	results := make([]string, 2)
	for i, who := range []string{"first", "second"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := c.Call(ctx, &Call{ID: 5, Tool: "ask", Arguments: json.RawMessage(`"` + who + `"`)}, func(ev Event) {
				var p struct{ Message string }
				_ = json.Unmarshal(ev.Request.Params, &p)
				go c.Answer(ctx, &Answer{CallID: 5, RequestID: ev.Request.ID, Result: json.RawMessage(`"answer for ` + p.Message + `"`)})
			})
			if err != nil {
				t.Errorf("%s: %v", who, err)
				return
			}
			results[i] = string(res.Data)
		}()
	}
	wg.Wait()
	if results[0] != `"answer for first"` || results[1] != `"answer for second"` {
		t.Fatalf("answers crossed: %q", results)
	}
	// An answer carrying a failure ends the request with it.
	_, err := c.Call(ctx, &Call{ID: 6, Tool: "ask", Arguments: json.RawMessage(`"x"`)}, func(ev Event) {
		go c.Answer(ctx, &Answer{CallID: 6, RequestID: ev.Request.ID, Failure: &Failure{Kind: KindClientCapability, Message: "no"}})
	})
	var f *Failure
	if !errors.As(err, &f) || f.Kind != KindClientCapability {
		t.Fatalf("failed answer: %v", err)
	}
	// Nobody waits for a made-up request.
	if err := c.Answer(ctx, &Answer{CallID: 99, RequestID: 99}); status.Code(err) != codes.NotFound {
		t.Fatalf("stray answer: %v", err)
	}
}

func TestEventsAfterTheResultAreRefused(t *testing.T) {
	h := &fake{protocol: Protocol, late: make(chan *Stream, 1)}
	c := dial(t, h)
	if _, err := c.Call(context.Background(), &Call{Tool: "late"}, func(Event) { t.Error("no event expected") }); err != nil {
		t.Fatal(err)
	}
	if err := (<-h.late).Emit(Event{Log: &Log{Level: "info"}}); !errors.Is(err, ErrCallEnded) {
		t.Fatalf("late emit: %v", err)
	}
}

func TestErrorsCrossTheWire(t *testing.T) {
	c := dial(t, &fake{protocol: Protocol})
	ctx := context.Background()
	tests := []struct {
		name  string
		run   func() error
		check func(error) bool
	}{
		{"failure keeps kind and data", func() error { _, err := c.Call(ctx, &Call{Tool: "fail"}, nil); return err }, func(err error) bool {
			var f *Failure
			return errors.As(err, &f) && f.Kind == KindOutsideRoots && f.Data["details"] == "d"
		}},
		{"panic is internal", func() error { _, err := c.Call(ctx, &Call{Tool: "panic"}, nil); return err },
			func(err error) bool { return status.Code(err) == codes.Internal }},
		{"plain error is internal", func() error { _, err := c.Call(ctx, &Call{Tool: "other"}, nil); return err },
			func(err error) bool {
				return status.Code(err) == codes.Internal && strings.Contains(err.Error(), "plain")
			}},
		{"unary failure", func() error { _, err := c.ReadResource(ctx, "x://1", Meta{}); return err }, func(err error) bool {
			var f *Failure
			return errors.As(err, &f) && f.Kind == KindNotFound && f.Details == "x://1"
		}},
		{"unimplemented prompt", func() error { _, err := c.GetPrompt(ctx, &PromptRequest{Name: "p"}); return err },
			func(err error) bool { return errors.Is(err, ErrNotImplemented) }},
		{"unimplemented watch", func() error { return c.WatchResources(ctx, func(ResourceChange) {}) },
			func(err error) bool { return errors.Is(err, ErrNotImplemented) }},
		{"completion", func() error {
			r, err := c.Complete(ctx, &CompleteRequest{Value: "ma"})
			if err == nil && (len(r.Values) != 1 || r.Values[0] != "ma1") {
				return fmt.Errorf("values %v", r.Values)
			}
			return err
		}, func(err error) bool { return err == nil }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.run(); !tc.check(err) {
				t.Fatalf("got %v", err)
			}
		})
	}
}
