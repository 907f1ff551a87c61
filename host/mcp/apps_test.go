package mcp

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fluxgit/fluxgit/host/repopath"
)

func TestDeclaresUI(t *testing.T) {
	for _, tc := range []struct {
		caps string
		want bool
	}{
		{`{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}`, true},
		{`{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/uri-list","text/html;profile=mcp-app"]}}}`, true},
		{`{"extensions":{"io.modelcontextprotocol/ui":{}}}`, false},                                            // mimeTypes is required
		{`{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html"]}}}`, false},                   // another type
		{`{"extensions":{"io.modelcontextprotocol/ui":true}}`, false},                                          // not an object
		{`{"extensions":{"io.modelcontextprotocol/tasks":{}}}`, false},                                         // another extension
		{`{"experimental":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}`, false}, // wrong place
		{`{}`, false},
	} {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(tc.caps), &m); err != nil {
			t.Fatal(err)
		}
		if got := declaresUI(m); got != tc.want {
			t.Errorf("declaresUI(%s) = %v, want %v", tc.caps, got, tc.want)
		}
	}
}

// The MCP Apps metadata reaches only a client that declares the
// extension, in both generations: the preview tools' _meta.ui, the card
// resources in the lists, the extension in the server capabilities; a
// client without it gets exactly what it got before.
func TestUIMetadataOnlyForAppsClients(t *testing.T) {
	uiCaps := map[string]any{"extensions": map[string]any{ExtensionUI: map[string]any{"mimeTypes": []any{UIMimeType}}}}
	modern := func(caps any) map[string]any {
		m := map[string]any{}
		for k, v := range modernMeta {
			m[k] = v
		}
		m["io.modelcontextprotocol/clientCapabilities"] = caps
		return map[string]any{"_meta": m}
	}
	type view struct{ tools, resources, templates, caps string }
	get := func(t *testing.T, legacyCaps any, params map[string]any) view {
		s, _, _ := testServer(t, repopath.Policy{})
		var v view
		if legacyCaps != nil {
			res, err := send(t, s, "initialize", map[string]any{"protocolVersion": V20251125, "capabilities": legacyCaps})
			if err != nil {
				t.Fatal(err)
			}
			v.caps = string(res)
		} else {
			res, err := send(t, s, "server/discover", params)
			if err != nil {
				t.Fatal(err)
			}
			v.caps = string(res)
		}
		for _, x := range []struct {
			method string
			dst    *string
		}{{"tools/list", &v.tools}, {"resources/list", &v.resources}, {"resources/templates/list", &v.templates}} {
			res, err := send(t, s, x.method, params)
			if err != nil {
				t.Fatalf("%s: %v", x.method, err)
			}
			*x.dst = string(res)
		}
		return v
	}
	for _, tc := range []struct {
		name    string
		with    view
		without view
	}{
		{"2025-11-25", get(t, uiCaps, map[string]any{}), get(t, map[string]any{}, map[string]any{})},
		{"2026-07-28", get(t, nil, modern(uiCaps)), get(t, nil, modern(map[string]any{}))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if n := strings.Count(tc.with.tools, `"_meta":{"ui":{"resourceUri":"ui://fluxgit/proposal-card","visibility":["model"]}}`); n != 12 {
				t.Errorf("%d tools carry the card's _meta.ui, want the 12 previews", n)
			}
			if strings.Contains(tc.without.tools, `"ui"`) || strings.Contains(tc.without.tools, "ui://") {
				t.Errorf("a client without the extension sees MCP Apps metadata in tools/list")
			}
			if !strings.Contains(tc.with.resources, `"uri":"ui://fluxgit/proposal-card"`) || !strings.Contains(tc.with.resources, `"prefersBorder":true`) ||
				!strings.Contains(tc.with.templates, "fluxgit://proposals/{previewId}/card") {
				t.Errorf("the card resources are not listed to an MCP Apps client:\n%s\n%s", tc.with.resources, tc.with.templates)
			}
			if strings.Contains(tc.without.resources+tc.without.templates, "proposal-card") {
				t.Errorf("the card resources are listed to a client without the extension")
			}
			if !strings.Contains(tc.with.caps, `"io.modelcontextprotocol/ui":{}`) || strings.Contains(tc.without.caps, ExtensionUI) {
				t.Errorf("server capabilities: with %s / without %s", tc.with.caps, tc.without.caps)
			}
		})
	}
}
