package mcp

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/fluxgit/fluxgit/host/catalog"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// fixedDispatcher answers every call with the same result, so benchmarks
// and tests see the host's own work only.
type fixedDispatcher struct{ res *sdk.Result }

func (d fixedDispatcher) CallTool(context.Context, string, *sdk.Call, bool) (*sdk.Result, error) {
	return d.res, nil
}

func (d fixedDispatcher) WatchResources(context.Context, string, func(sdk.ResourceChange)) error {
	return sdk.ErrNotImplemented
}

func (d fixedDispatcher) ReadResource(context.Context, string, string, sdk.Meta) (*sdk.Resource, error) {
	return nil, sdk.ErrResourceNotFound
}

// BenchmarkToolsCallHostOnly is everything the host does for a tools/call
// except the provider hop and stdio: argument validation, path
// canonicalization, envelope, payload validation and result rendering.
func BenchmarkToolsCallHostOnly(b *testing.B) {
	cat, err := catalog.Load()
	if err != nil {
		b.Fatal(err)
	}
	data := `{"commits":[{"hash":"b76762b8a3d88bf4c2e065e3716e9d0408ef08b3","shortHash":"b76762b","authorName":"Ada","authorEmail":"ada@example.com","authorTime":1767323045,"subject":"docs: add notes"}],"nextCursor":null}`
	s := New(Options{Catalog: cat, Providers: fixedDispatcher{&sdk.Result{Source: "local-git", Data: json.RawMessage(data)}}, Name: "fluxgit", Version: "bench"})
	p := params{"name": json.RawMessage(`"repo.history"`), "arguments": json.RawMessage(`{"repoPath":"/tmp","limit":1}`)}
	g := generation{version: V20251125}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := s.toolsCall(ctx, g, p); err != nil {
			b.Fatal(err)
		}
	}
}
