package tests

import (
	"strings"
	"testing"
)

// TestRefusalsSayHowToStartTheGateway: with no gateway address, every
// refusal that needs one tells the model how the person starts fluxgit's
// own (`fluxgit gateway`, then FLUXGIT_MCP_HANDSHAKE_ADDR), not only the
// FluxGit app.
func TestRefusalsSayHowToStartTheGateway(t *testing.T) {
	repo := fixtureRepo(t)
	s := startServer(t, baseEnv(t))
	initialize(t, s)
	tests := []struct {
		tool  string
		args  map[string]any
		code  float64
		field string
	}{
		{"operation.preview.branch", map[string]any{"repoPath": repo, "reason": "try", "name": "x"}, 10003, "agentRecommendation"},
		{"operation.status", map[string]any{"previewId": "p-1"}, 10003, "agentRecommendation"},
		{"flux.latestRestorePoint", map[string]any{"repoPath": repo}, 10001, "upgradeHint"},
	}
	for i, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			r := s.call(i+1, "tools/call", map[string]any{"name": tt.tool, "arguments": tt.args})
			p := toolPayload(t, r)
			e, _ := p["error"].(map[string]any)
			if e == nil || e["code"] != tt.code {
				t.Fatalf("want %v, got %s", tt.code, r.raw)
			}
			d, _ := e["data"].(map[string]any)
			text, _ := d[tt.field].(string)
			for _, want := range []string{"`fluxgit gateway`", "FLUXGIT_MCP_HANDSHAKE_ADDR", "FluxGit app"} {
				if !strings.Contains(text, want) {
					t.Errorf("%s does not say %q: %q", tt.field, want, text)
				}
			}
			if strings.Contains(text, "Operations › Agent Control") {
				t.Errorf("%s still sends the user to the FluxGit app's menus only: %q", tt.field, text)
			}
			if id, ok := tt.args["previewId"]; ok && d["previewId"] != id {
				t.Errorf("the refusal does not name the previewId it was asked about: %v", d)
			}
		})
	}
}

// TestUnknownPreviewIDNamed: operation.status for an id fluxgit's own
// gateway never issued answers 10005, and the message names that id (the
// reference's does), as data.previewId does.
func TestUnknownPreviewIDNamed(t *testing.T) {
	l := newLoop(t)
	p, isErr := l.tool("operation.status", map[string]any{"previewId": "never-issued-42"})
	e, _ := p["error"].(map[string]any)
	if !isErr || e == nil || e["code"] != float64(10005) {
		t.Fatalf("want 10005, got %s", jsonOf(p))
	}
	d, _ := e["data"].(map[string]any)
	if msg, _ := e["message"].(string); !strings.Contains(msg, "never-issued-42") || d["previewId"] != "never-issued-42" {
		t.Fatalf("the error does not name the previewId: %s", jsonOf(e))
	}
}
