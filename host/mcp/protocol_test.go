package mcp

import (
	"encoding/json"
	"testing"
)

func TestNegotiate(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"2024-11-05", "2024-11-05"},
		{"2025-03-26", "2025-03-26"},
		{"2025-06-18", "2025-06-18"},
		{"2025-11-25", "2025-11-25"},
		{"2026-07-28", "2025-11-25"}, // modern is per request, never negotiated
		{"1.0", "2025-11-25"},
		{"", "2025-11-25"},
	} {
		if got := negotiate(tc.in); got != tc.want {
			t.Errorf("negotiate(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestGenerationGates(t *testing.T) {
	for _, tc := range []struct {
		g                       generation
		annotations, structured bool
	}{
		{generation{version: V20241105}, false, false},
		{generation{version: V20250326}, true, false},
		{generation{version: V20250618}, true, true},
		{generation{version: V20251125}, true, true},
		{generation{modern: true, version: V20260728}, true, true},
	} {
		if tc.g.annotations() != tc.annotations || tc.g.structured() != tc.structured {
			t.Errorf("%+v: annotations=%v structured=%v", tc.g, tc.g.annotations(), tc.g.structured())
		}
	}
}

func TestSpliceFields(t *testing.T) {
	for _, tc := range []struct {
		in   string
		kv   []any
		want string
	}{
		{`{}`, []any{"resultType", "complete"}, `{"resultType":"complete"}`},
		{`{ }`, []any{"a", 1}, `{"a":1 }`},
		{`{"tools":[]}`, []any{"resultType", "complete", "ttlMs", 5}, `{"resultType":"complete","ttlMs":5,"tools":[]}`},
		{`{"x":1}`, nil, `{"x":1}`},
	} {
		got, err := spliceFields(json.RawMessage(tc.in), tc.kv...)
		if err != nil || string(got) != tc.want {
			t.Errorf("spliceFields(%s, %v) = %s, %v; want %s", tc.in, tc.kv, got, err, tc.want)
		}
		if !json.Valid(got) {
			t.Errorf("spliceFields(%s) produced invalid JSON %s", tc.in, got)
		}
	}
	if _, err := spliceFields(json.RawMessage(`[]`), "a", 1); err == nil {
		t.Error("spliceFields accepted a non-object")
	}
}

func TestGenerationClassification(t *testing.T) {
	s := New(Options{}).NewSession()
	meta := func(m string) params { return params{"_meta": json.RawMessage(m)} }
	for _, tc := range []struct {
		name     string
		p        params
		modern   bool
		wantCode int64 // 0: no error
	}{
		{"no meta is legacy", params{}, false, 0},
		{"meta without version is legacy", meta(`{"progressToken":1}`), false, 0},
		{"modern", meta(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`), true, 0},
		{"unknown version", meta(`{"io.modelcontextprotocol/protocolVersion":"2030-01-01","io.modelcontextprotocol/clientCapabilities":{}}`), true, codeUnsupportedVersion},
		{"old version in meta", meta(`{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}}`), true, codeUnsupportedVersion},
		{"version not a string", meta(`{"io.modelcontextprotocol/protocolVersion":true}`), true, codeInvalidParams},
		{"caps missing", meta(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`), true, codeInvalidParams},
		{"caps not object", meta(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":[]}`), true, codeInvalidParams},
		{"clientInfo blank version", meta(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"a","version":""}}`), true, codeInvalidParams},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := s.generation("tools/list", tc.p)
			if tc.wantCode != 0 {
				re, ok := err.(*rpcError)
				if !ok || re.Code != tc.wantCode {
					t.Fatalf("want code %d, got %v", tc.wantCode, err)
				}
				return
			}
			if err != nil || g.modern != tc.modern {
				t.Fatalf("modern=%v err=%v, want modern=%v", g.modern, err, tc.modern)
			}
		})
	}
}

func TestTemplateMatches(t *testing.T) {
	for _, tc := range []struct {
		tmpl, uri string
		want      bool
	}{
		{"shift://status{?workspace}", "shift://status", true},
		{"shift://status{?workspace}", "shift://status?workspace=a%20b", true},
		{"shift://status{?workspace}", "shift://statusX", false},
		{"shift://status{?workspace}", "other://status", false},
		{"file:///{path}", "file:///etc/x", true},
		{"file:///{path}", "file:///", false},
		{"repo://x{/id}", "repo://x/1", true},
		{"fixed://a", "fixed://a", true},
	} {
		if got := templateMatches(tc.tmpl, tc.uri); got != tc.want {
			t.Errorf("templateMatches(%q, %q) = %v", tc.tmpl, tc.uri, got)
		}
	}
}
