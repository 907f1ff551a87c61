package tests

import (
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpSpan is one received span with the service that exported it.
type otlpSpan struct {
	service, name, traceID, spanID, parentID string
}

// otlpReceiver is a real OTLP/HTTP trace endpoint: it decodes the protobuf
// export requests the exporters send and answers as a collector does.
type otlpReceiver struct {
	mu    sync.Mutex
	spans []otlpSpan
	bad   []string
}

func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	var req coltracepb.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(body, &req)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" || err != nil {
		o.bad = append(o.bad, r.URL.Path+" "+r.Header.Get("Content-Type")+" "+errString(err))
		http.Error(w, "bad export", http.StatusBadRequest)
		return
	}
	for _, rs := range req.ResourceSpans {
		service := ""
		for _, a := range rs.GetResource().GetAttributes() {
			if a.Key == "service.name" {
				service = a.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.ScopeSpans {
			for _, sp := range ss.Spans {
				o.spans = append(o.spans, spanOf(service, sp))
			}
		}
	}
	resp, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(resp)
}

func spanOf(service string, sp *tracepb.Span) otlpSpan {
	return otlpSpan{service: service, name: sp.Name, traceID: hex.EncodeToString(sp.TraceId),
		spanID: hex.EncodeToString(sp.SpanId), parentID: hex.EncodeToString(sp.ParentSpanId)}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestOTELTraceSpansHostAndProvider: with OTEL_ENABLED and the standard
// OTLP variables pointing at a local receiver, one tools/call yields the
// host's request span, its provider-call span and the provider process's
// own span, all in one trace and parented in that order.
func TestOTELTraceSpansHostAndProvider(t *testing.T) {
	recv := &otlpReceiver{}
	ts := httptest.NewServer(recv)
	defer ts.Close()
	env := obsEnv(t, "OTEL_ENABLED=true", "OTEL_EXPORTER_OTLP_ENDPOINT="+ts.URL,
		"OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf", "OTEL_SERVICE_NAME=fluxgit-test")
	s := startServer(t, env)
	initialize(t, s)
	statusCall(t, s, 1, fixtureRepo(t))
	s.stop() // the host flushes its batch at exit; the provider exported as it went

	recv.mu.Lock()
	defer recv.mu.Unlock()
	if len(recv.bad) > 0 {
		t.Fatalf("malformed exports: %v", recv.bad)
	}
	find := func(name, service string) otlpSpan {
		t.Helper()
		for _, sp := range recv.spans {
			if sp.name == name && strings.HasPrefix(sp.service, service) {
				return sp
			}
		}
		t.Fatalf("no span %q from %s among %+v", name, service, recv.spans)
		return otlpSpan{}
	}
	request := find("tools/call", "fluxgit-test")
	call := find("provider git-read repo.status", "fluxgit-test")
	tool := find("tool repo.status", "fluxgit-test") // OTEL_SERVICE_NAME reaches providers too
	cases := []struct {
		what      string
		got, want string
	}{
		{"provider-call span trace", call.traceID, request.traceID},
		{"provider span trace", tool.traceID, request.traceID},
		{"provider-call span parent", call.parentID, request.spanID},
		{"provider span parent", tool.parentID, call.spanID},
	}
	for _, c := range cases {
		if c.got != c.want || c.got == "" {
			t.Errorf("%s = %q, want %q", c.what, c.got, c.want)
		}
	}
	if request.traceID == strings.Repeat("0", 32) {
		t.Error("trace id is all zeros")
	}
}

// TestOTELOffExportsNothing: without OTEL_ENABLED no exporter exists, even
// with an endpoint configured.
func TestOTELOffExportsNothing(t *testing.T) {
	var hits sync.Map
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Store(r.URL.Path, true) }))
	defer ts.Close()
	for _, v := range []string{"", "false", "0"} {
		t.Run("OTEL_ENABLED="+v, func(t *testing.T) {
			s := startServer(t, obsEnv(t, "OTEL_ENABLED="+v, "OTEL_EXPORTER_OTLP_ENDPOINT="+ts.URL))
			initialize(t, s)
			statusCall(t, s, 1, fixtureRepo(t))
			s.stop()
			hits.Range(func(k, _ any) bool { t.Errorf("export reached %v with tracing off", k); return true })
		})
	}
}

// TestOTELResourceReadSpan: resources/read gets the same host-side pair of
// spans (request, provider call) in one trace.
func TestOTELResourceReadSpan(t *testing.T) {
	recv := &otlpReceiver{}
	ts := httptest.NewServer(recv)
	defer ts.Close()
	s := startServer(t, append(conformanceEnv(t), "OTEL_ENABLED=true", "OTEL_EXPORTER_OTLP_ENDPOINT="+ts.URL))
	initialize(t, s)
	if r := s.call(1, "resources/read", map[string]any{"uri": "test://static-text"}); r.Error != nil {
		t.Fatal(r.raw)
	}
	s.stop()

	recv.mu.Lock()
	defer recv.mu.Unlock()
	var request, call otlpSpan
	for _, sp := range recv.spans {
		switch {
		case sp.name == "resources/read":
			request = sp
		case strings.HasPrefix(sp.name, "provider ") && strings.HasSuffix(sp.name, " resources/read"):
			call = sp
		}
	}
	if request.spanID == "" || call.spanID == "" {
		t.Fatalf("missing spans among %+v (bad exports: %v)", recv.spans, recv.bad)
	}
	if call.traceID != request.traceID || call.parentID != request.spanID {
		t.Errorf("provider span %+v is not the child of request span %+v", call, request)
	}
	if request.service != "fluxgit" {
		t.Errorf("service.name = %q, want the default fluxgit", request.service)
	}
}
