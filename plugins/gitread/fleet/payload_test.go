package fleet

// The host's outputSchema check on a provider answer (host/catalog, which
// only tests may import from a provider); the check itself is gittest's.

import (
	"sync"
	"testing"

	"github.com/fluxgit/fluxgit/host/catalog"
	"github.com/fluxgit/fluxgit/plugins/gitread/internal/gittest"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

var fxCatalog = sync.OnceValues(func() (*catalog.Catalog, error) { return catalog.Load() })

// fxSpec is tool's catalog entry, as gittest's payload checks take it.
func fxSpec(tool string) (gittest.Spec, bool, error) {
	cat, err := fxCatalog()
	if err != nil {
		return gittest.Spec{}, false, err
	}
	spec, ok := cat.Tool(tool)
	if !ok {
		return gittest.Spec{}, false, nil
	}
	return gittest.Spec{Tier: spec.Tier, Validate: spec.ValidatePayloadFor}, true, nil
}

// fxCheckPayload wraps a result in the host envelope and validates it
// against the tool's outputSchema, as the host does.
func fxCheckPayload(t *testing.T, tool string, res *sdk.Result, repoPath string) {
	t.Helper()
	gittest.CheckPayload(t, fxSpec, tool, res, repoPath)
}

// fxOK calls a tool, requires success, validates the envelope and decodes.
func fxOK(t *testing.T, tool string, args map[string]any, out any, roots ...string) {
	t.Helper()
	gittest.PayloadOK(t, New().CallTool, fxSpec, tool, args, out, roots...)
}

// fxBoth calls tool in the reference shape, checking that its payload is
// exactly the reference struct ref, then in the lean shape, validating the
// lean payload against outputSchema and decoding it into lean.
func fxBoth(t *testing.T, tool string, args map[string]any, ref, lean any) {
	t.Helper()
	gittest.PayloadBoth(t, New().CallTool, fxSpec, tool, args, ref, lean)
}

func shortID(t *testing.T, dir, rev string) string {
	return git(t, dir, "rev-parse", "--short", rev)
}
