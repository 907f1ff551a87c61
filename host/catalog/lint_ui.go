package catalog

import (
	"encoding/json"
	"strings"

	"github.com/fluxgit/fluxgit/spec"
)

// RuleUIView: a tool's ui.resourceUri (MCP Apps) names no resource of the
// layer or of the built-in spec that has a ui field, the ui:// scheme and the
// text/html;profile=mcp-app MIME type; or a resource with ui.csp or
// ui.prefersBorder (view settings) is not such a view. A host fetches the
// named view with resources/read, so a dangling name breaks the inline
// experience silently.
const RuleUIView = "ui-view"

// UIViewMimeType is the MIME type MCP Apps requires of an HTML view.
const UIViewMimeType = "text/html;profile=mcp-app"

// isView reports whether r is an MCP Apps HTML view.
func (r *Resource) isView() bool {
	return r.AppOnly() && strings.HasPrefix(r.URI, "ui://") && r.MimeType == UIViewMimeType
}

// views checks RuleUIView across the layer's tool and resource files.
func (l *linter) views() {
	// A layer is served on top of the built-in one, so a tool of any
	// layer may name a built-in view.
	views := map[string]bool{}
	if base, err := loadLayerFast(spec.FS); err == nil {
		for _, r := range base.Resources {
			if r.isView() {
				views[r.URI] = true
			}
		}
	}
	for _, file := range l.listing("resources") {
		doc, err := l.src.doc(file)
		o, ok := doc.(*object)
		if err != nil || !ok {
			continue // reported by resources()
		}
		r := buildResource(file, o)
		if r.isView() {
			views[r.URI] = true
		} else if len(uiMeta(r.UI)) > 0 {
			l.add(file, RuleUIView, "ui.csp and ui.prefersBorder are settings of an MCP Apps view: give the resource a ui:// uri and mimeType %s, or drop them", UIViewMimeType)
		}
	}
	for _, file := range l.listing("tools") {
		doc, err := l.src.doc(file)
		o, ok := doc.(*object)
		if err != nil || !ok {
			continue
		}
		raw := uiField(o)
		if raw == nil {
			continue
		}
		var ui struct {
			ResourceURI string `json:"resourceUri"`
		}
		if json.Unmarshal(raw, &ui) == nil && ui.ResourceURI != "" && !views[ui.ResourceURI] {
			l.add(file, RuleUIView, "ui.resourceUri %s names no view of this layer or the built-in spec: add a resources/ file with that uri, mimeType %s and a ui field", ui.ResourceURI, UIViewMimeType)
		}
	}
}

// uiMeta returns the members of a ui field that are sent as _meta.ui; nil
// when there are none.
func uiMeta(raw json.RawMessage) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || len(m) == 0 {
		return nil
	}
	return m
}
