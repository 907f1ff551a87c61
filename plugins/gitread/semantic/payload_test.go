package semantic

// The host's outputSchema check on a provider answer (host/catalog, which
// only tests may import from a provider).

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/fluxgit/fluxgit/host/catalog"
	"github.com/fluxgit/fluxgit/internal/resultshape"
	"github.com/fluxgit/fluxgit/plugins/gitread/internal/gittest"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

var fxCatalog = sync.OnceValues(func() (*catalog.Catalog, error) { return catalog.Load() })

// fxCheckPayload wraps a result in the host envelope and validates it
// against the tool's outputSchema, as the host does.
func fxCheckPayload(t *testing.T, tool string, res *sdk.Result, repoPath string) {
	t.Helper()
	cat, err := fxCatalog()
	if err != nil {
		t.Fatal(err)
	}
	spec, ok := cat.Tool(tool)
	if !ok {
		t.Fatalf("no spec for %s", tool)
	}
	decoded, b := gittest.Envelope(t, tool, spec.Tier, res, repoPath)
	// The schema of the shape the provider answered in (resultshape).
	if err := spec.ValidatePayloadFor(decoded, !resultshape.Lean()); err != nil {
		t.Fatalf("%s payload violates outputSchema: %v\n%s", tool, err, b)
	}
}

// fxOK calls a tool, requires success, validates the envelope and decodes.
func fxOK(t *testing.T, tool string, args map[string]any, out any, roots ...string) {
	t.Helper()
	res, err := call(t, tool, args, roots...)
	if err != nil {
		t.Fatalf("%s: Go error %v", tool, err)
	}
	if res.Error != nil {
		t.Fatalf("%s: tool error %d %s %s", tool, res.Error.Code, res.Error.Message, res.Error.Data)
	}
	rp, _ := args["repoPath"].(string)
	fxCheckPayload(t, tool, res, rp)
	if err := json.Unmarshal(res.Data, out); err != nil {
		t.Fatal(err)
	}
}
