package mcp

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/fluxgit/fluxgit/host/catalog"
	"github.com/fluxgit/fluxgit/internal/wire"
)

// fixedDispatcher answers every call with the same result, so benchmarks
// and tests see the host's own work only.
type fixedDispatcher struct{ res *wire.Result }

func (d fixedDispatcher) CallTool(context.Context, string, *wire.Call, bool, wire.EventFunc) (*wire.Result, error) {
	return d.res, nil
}

func (d fixedDispatcher) WatchResources(context.Context, string, func(wire.ResourceChange)) error {
	return wire.ErrNotImplemented
}

func (d fixedDispatcher) ReadResource(context.Context, string, string, wire.Meta) (*wire.Resource, error) {
	return nil, &wire.Failure{Kind: wire.KindNotFound, Message: "resource not found"}
}

func (d fixedDispatcher) GetPrompt(context.Context, string, *wire.PromptRequest) (*wire.PromptResult, error) {
	return nil, wire.ErrNotImplemented
}

func (d fixedDispatcher) Complete(context.Context, string, *wire.CompleteRequest) (*wire.Completion, error) {
	return nil, wire.ErrNotImplemented
}

// BenchmarkToolsCallHostOnly is everything the host does for a tools/call
// except the provider hop and stdio: argument validation, path
// canonicalization, envelope, payload validation and result rendering.
func BenchmarkToolsCallHostOnly(b *testing.B) {
	cat, err := catalog.Load()
	if err != nil {
		b.Fatal(err)
	}
	data := `{"commits":["b76762b docs: add notes"]}` // repo.history's lean shape
	s := New(Options{Catalog: cat, Providers: fixedDispatcher{&wire.Result{Source: "local-git", Data: json.RawMessage(data)}}, Name: "fluxgit", Version: "bench"})
	p := params{"name": json.RawMessage(`"repo.history"`), "arguments": json.RawMessage(`{"repoPath":"/tmp","limit":1}`)}
	g := generation{version: V20251125}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := s.toolsCall(ctx, &request{gen: g}, p); err != nil {
			b.Fatal(err)
		}
	}
}
