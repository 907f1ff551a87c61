package gateway_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The gateway imports nothing MCP-shaped: not the host, not the MCP SDKs,
// not a provider's SDK or transport. What it shares with the MCP server
// lives in internal/ (ledger, run directory) and internal/gitexec (the one
// git runner).
func TestGatewayImportsNothingMCPShaped(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not on PATH")
	}
	out, err := exec.Command(gobin, "list", "-deps", "-f", "{{.ImportPath}}", "github.com/fluxgit/fluxgit/gateway/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	forbidden := []string{
		"github.com/fluxgit/fluxgit/host/",
		"github.com/fluxgit/fluxgit/internal/wire",
		"github.com/fluxgit/fluxgit/plugins/sdk",
		"github.com/fluxgit/fluxgit/plugins/proposals",
		"github.com/fluxgit/fluxgit/plugins/gitread",
		"github.com/modelcontextprotocol/",
		"github.com/sourcegraph/jsonrpc2",
		"github.com/hashicorp/go-plugin",
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 {
		t.Fatal("go list printed no packages")
	}
	for _, dep := range deps {
		for _, f := range forbidden {
			if strings.HasPrefix(dep, f) {
				t.Errorf("gateway/ depends on %s", dep)
			}
		}
	}
}
