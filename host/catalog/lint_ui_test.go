package catalog

import (
	"encoding/json"
	"strings"
	"testing"
	"testing/fstest"
)

const viewResource = `uri: ui://demo/view
name: demo-view
description: A view.
mimeType: text/html;profile=mcp-app
provider: git-read
ui:
  csp: {connectDomains: []}
  prefersBorder: true
`

// TestLintUIView: a tool's ui.resourceUri must name a view of the layer,
// and view settings belong to views only; a consistent pair is clean and
// loads with its ui fields as served JSON.
func TestLintUIView(t *testing.T) {
	withUI := mutate(t, "inputSchema:\n", "ui:\n  resourceUri: ui://demo/view\n  visibility: [model]\ninputSchema:\n")
	for _, tc := range []struct {
		name string
		fsys fstest.MapFS
		want string
	}{
		{"view present", fstest.MapFS{"tools/demo.echo.yaml": {Data: withUI}, "resources/view.yaml": {Data: []byte(viewResource)}}, ""},
		{"no such view", fstest.MapFS{"tools/demo.echo.yaml": {Data: withUI}}, "names no view of this layer"},
		{"not html", fstest.MapFS{"tools/demo.echo.yaml": {Data: withUI}, "resources/view.yaml": {Data: []byte(strings.Replace(viewResource, "text/html;profile=mcp-app", "text/html", 1))}}, "settings of an MCP Apps view"},
		{"settings on data", fstest.MapFS{"resources/view.yaml": {Data: []byte(strings.Replace(viewResource, "ui://demo/view", "demo://data", 1))}}, "settings of an MCP Apps view"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, f := range Lint(tc.fsys, knownProviders) {
				if f.Rule == RuleUIView {
					got = append(got, f.Message)
				}
			}
			if (tc.want == "") != (len(got) == 0) || (tc.want != "" && !strings.Contains(strings.Join(got, "\n"), tc.want)) {
				t.Errorf("findings %q, want %q", got, tc.want)
			}
		})
	}
	c, err := Load(fstest.MapFS{"tools/demo.echo.yaml": {Data: withUI}, "resources/view.yaml": {Data: []byte(viewResource)}})
	if err != nil {
		t.Fatal(err)
	}
	tool, _ := c.Tool("demo.echo")
	if string(tool.UI) != `{"resourceUri":"ui://demo/view","visibility":["model"]}` {
		t.Errorf("tool UI %s", tool.UI)
	}
	if len(c.Resources) != 1 || !c.Resources[0].AppOnly() || !json.Valid(c.Resources[0].UI) || !strings.Contains(string(c.Resources[0].UI), `"prefersBorder":true`) {
		t.Errorf("resource UI %s", c.Resources[0].UI)
	}
}
