package builtin

import (
	"context"
	"testing"

	"github.com/fluxgit/fluxgit/plugins/proposals"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// TestHandshakeRegistered checks the handshake provider is built in and no
// longer only planned, and that it describes its fourteen tools.
func TestHandshakeRegistered(t *testing.T) {
	f, ok := Factories["handshake"]
	if !ok {
		t.Fatal("handshake is not a built-in provider")
	}
	for _, n := range Planned {
		if n == "handshake" {
			t.Fatal("handshake is still listed as planned")
		}
	}
	d, ok := f().(sdk.Describer)
	if !ok {
		t.Fatal("handshake provider does not describe itself")
	}
	if tools := d.Describe().Tools; len(tools) != 14 {
		t.Fatalf("handshake describes %d tools: %v", len(tools), tools)
	}
	found := false
	for _, n := range Names() {
		found = found || n == "handshake"
	}
	if !found {
		t.Fatalf("Names() = %v lacks handshake", Names())
	}
}

// The handshake provider is built with the otherAgents hint, and
// FLUXGIT_MCP_AGENT_DETECTION_DISABLED removes it; agents-presence is
// built in, no longer planned.
func TestOtherAgentsWired(t *testing.T) {
	h, ok := Factories["handshake"]().(*proposals.Provider)
	if !ok || h.OtherAgents == nil {
		t.Fatal("the handshake provider has no otherAgents hint")
	}
	t.Setenv("FLUXGIT_MCP_AGENT_DETECTION_DISABLED", "1")
	if hint := h.OtherAgents(context.Background(), t.TempDir(), []string{"a.go"}); hint != nil {
		t.Fatalf("hint %s while detection is disabled", hint)
	}
	if _, ok := Factories["agents-presence"]; !ok || len(Planned) != 0 {
		t.Fatalf("agents-presence built in: %v; planned: %v", ok, Planned)
	}
}
