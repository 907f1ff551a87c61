package mcp

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/fluxgit/fluxgit/host/catalog"
)

// MCP Apps (extension io.modelcontextprotocol/ui, SEP-1865): a tool names
// a ui:// view in _meta.ui.resourceUri, and a host that renders MCP Apps
// shows that view next to the tool's results. The host serves the view's
// metadata only to clients that declare the extension, so the catalogs
// of every other client, and the tokens a model pays for them, do not
// change.
const (
	// ExtensionUI is the extension's identifier, the key under
	// capabilities.extensions on both sides.
	ExtensionUI = "io.modelcontextprotocol/ui"
	// UIMimeType is the MIME type of an HTML view, which a client lists in
	// the extension's mimeTypes to say it renders them.
	UIMimeType = "text/html;profile=mcp-app"
)

// declaresUI reports whether client capabilities declare the MCP Apps
// extension with HTML views: capabilities.extensions[ExtensionUI] is an
// object whose mimeTypes (which the extension requires) lists UIMimeType.
func declaresUI(caps map[string]json.RawMessage) bool {
	var ext map[string]json.RawMessage
	if json.Unmarshal(caps["extensions"], &ext) != nil {
		return false
	}
	var ui struct {
		MimeTypes []string `json:"mimeTypes"`
	}
	raw := bytes.TrimSpace(ext[ExtensionUI])
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &ui) != nil {
		return false
	}
	return slices.Contains(ui.MimeTypes, UIMimeType)
}

// uiListOffset separates the cached tools/list shapes with MCP Apps
// metadata from those without: the key of a shape is its listVariant,
// plus uiListOffset for a client that declared the extension.
const uiListOffset = 1000

// listKey is the cache key of tools/list shape v for generation g.
func listKey(v int, g generation) int {
	if g.caps.ui {
		return v + uiListOffset
	}
	return v
}

// uiCapabilities adds the extension to the server capabilities when the
// client declared it and the catalog has a tool with a view: the server
// says it speaks the extension only to a client that does.
func (s *Server) uiCapabilities(caps map[string]any, g generation) map[string]any {
	if !g.caps.ui || !s.hasViews() {
		return caps
	}
	ext, _ := caps["extensions"].(map[string]any)
	if ext == nil {
		ext = map[string]any{}
	}
	ext[ExtensionUI] = map[string]any{}
	caps["extensions"] = ext
	return caps
}

// hasViews reports whether a served tool names an MCP Apps view.
func (s *Server) hasViews() bool {
	return slices.ContainsFunc(s.opts.Catalog.Tools, func(t *catalog.Tool) bool { return len(t.UI) > 0 })
}

// uiMeta is the _meta member that carries a spec's ui field, or nil when
// the field is absent or has no members (a resource marked only as part
// of a view).
func uiMeta(ui json.RawMessage) map[string]any {
	if len(ui) == 0 || string(ui) == "{}" {
		return nil
	}
	return map[string]any{"ui": ui}
}

// listedTo reports whether resource r is listed to a client with
// generation g: resources of an MCP Apps view only to clients that
// render them (they stay readable by every client).
func listedTo(r *catalog.Resource, g generation) bool { return !r.AppOnly() || g.caps.ui }

// resourceSpec finds the catalog entry of a fixed-URI resource.
func (s *Server) resourceSpec(uri string) *catalog.Resource {
	for _, r := range s.opts.Catalog.Resources {
		if r.URI == uri {
			return r
		}
	}
	return nil
}
