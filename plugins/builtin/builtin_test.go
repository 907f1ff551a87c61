package builtin

import (
	"testing"

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
