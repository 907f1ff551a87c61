// Package telemetry is fluxgit's OpenTelemetry tracing: a span per MCP
// request and per provider call, with the W3C trace context carried to
// providers in the wire metadata. It is off unless OTEL_ENABLED is truthy;
// off, no exporter exists and every span is the no-op one.
package telemetry

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// EnvEnabled turns tracing on; the exporter itself is configured by the
// standard OTEL_EXPORTER_OTLP_* and OTEL_SERVICE_NAME variables.
const EnvEnabled = "OTEL_ENABLED"

// instrumentation names the tracer, as OpenTelemetry asks: the module path.
const instrumentation = "github.com/fluxgit/fluxgit"

// tracer is the no-op tracer until Setup installs a real one, so a process
// with tracing off pays one interface call per span and allocates nothing.
var tracer atomic.Pointer[tracerBox]

// tracerBox lets atomic.Pointer hold an interface whose concrete type
// changes from the no-op tracer to the SDK's.
type tracerBox struct{ t trace.Tracer }

func init() { tracer.Store(&tracerBox{noop.NewTracerProvider().Tracer(instrumentation)}) }

var propagator = propagation.TraceContext{}

// Enabled reports whether OTEL_ENABLED asks for tracing.
func Enabled() bool {
	switch strings.ToLower(strings.TrimSpace(os.Getenv(EnvEnabled))) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// Setup installs an OTLP/HTTP exporter when tracing is enabled and returns
// the function that flushes and stops it; when tracing is off it does
// nothing and returns a no-op. service is the default service.name
// (OTEL_SERVICE_NAME wins). sync exports each span as it ends: providers
// need it because the host ends them by killing the process, which leaves
// no moment to flush a batch.
func Setup(ctx context.Context, service string, sync bool) (func(context.Context) error, error) {
	if !Enabled() {
		return func(context.Context) error { return nil }, nil
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: OTLP exporter: %w (check OTEL_EXPORTER_OTLP_ENDPOINT)", EnvEnabled, err)
	}
	// Later options win: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES
	// override the default name.
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", service)),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(),
	)
	if err != nil {
		return nil, fmt.Errorf("%s: resource from OTEL_RESOURCE_ATTRIBUTES: %w", EnvEnabled, err)
	}
	opt := sdktrace.WithBatcher(exp)
	if sync {
		opt = sdktrace.WithSyncer(exp)
	}
	tp := sdktrace.NewTracerProvider(opt, sdktrace.WithResource(res))
	tracer.Store(&tracerBox{tp.Tracer(instrumentation)})
	return func(ctx context.Context) error {
		if err := tp.Shutdown(ctx); err != nil {
			return fmt.Errorf("flush traces: %w", err)
		}
		return nil
	}, nil
}

// Start begins a span under the tracer Setup installed (or the no-op one).
func Start(ctx context.Context, name string, kind trace.SpanKind, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return tracer.Load().t.Start(ctx, name, trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
}

// End records err (if any) on span and ends it.
func End(span trace.Span, err error) {
	if err != nil && span.IsRecording() {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// Inject returns the W3C traceparent and tracestate of ctx's span, or empty
// strings when there is none (tracing off), so the wire carries nothing.
func Inject(ctx context.Context) (traceparent, tracestate string) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return "", ""
	}
	c := propagation.MapCarrier{}
	propagator.Inject(ctx, c)
	return c["traceparent"], c["tracestate"]
}

// Extract returns ctx carrying the remote span context the host sent, so a
// provider's spans join the host's trace.
func Extract(ctx context.Context, traceparent, tracestate string) context.Context {
	if traceparent == "" {
		return ctx
	}
	return propagator.Extract(ctx, propagation.MapCarrier{"traceparent": traceparent, "tracestate": tracestate})
}
