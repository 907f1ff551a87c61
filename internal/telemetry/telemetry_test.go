package telemetry

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/trace"
)

func TestEnabled(t *testing.T) {
	cases := []struct {
		v    string
		want bool
	}{{"", false}, {"false", false}, {"0", false}, {"off", false}, {"true", true}, {"1", true}, {" YES ", true}, {"on", true}}
	for _, c := range cases {
		t.Setenv(EnvEnabled, c.v)
		if got := Enabled(); got != c.want {
			t.Errorf("Enabled() with %q = %v, want %v", c.v, got, c.want)
		}
	}
}

// With tracing off, spans record nothing and nothing travels to providers.
func TestOffIsNoop(t *testing.T) {
	t.Setenv(EnvEnabled, "")
	shutdown, err := Setup(context.Background(), "t", false)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = shutdown(context.Background()) }()
	ctx, span := Start(context.Background(), "x", trace.SpanKindServer)
	defer span.End()
	if span.IsRecording() {
		t.Error("span records with tracing off")
	}
	if tp, ts := Inject(ctx); tp != "" || ts != "" {
		t.Errorf("Inject = %q, %q with tracing off", tp, ts)
	}
}

func TestExtractInjectRoundTrip(t *testing.T) {
	cases := []struct {
		name, traceparent, tracestate string
		valid                         bool
	}{
		{"sampled", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "", true},
		{"with state", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "vendor=v1", true},
		{"empty", "", "", false},
		{"malformed", "00-zz-00f067aa0ba902b7-01", "", false},
		{"zero trace id", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := Extract(context.Background(), c.traceparent, c.tracestate)
			if got := trace.SpanContextFromContext(ctx).IsValid(); got != c.valid {
				t.Fatalf("valid = %v, want %v", got, c.valid)
			}
			tp, ts := Inject(ctx)
			if !c.valid {
				if tp != "" {
					t.Errorf("Inject = %q from an invalid context", tp)
				}
				return
			}
			if tp != c.traceparent || ts != c.tracestate {
				t.Errorf("Inject = %q, %q; want %q, %q", tp, ts, c.traceparent, c.tracestate)
			}
		})
	}
}
