package providers

import (
	"context"

	"github.com/fluxgit/fluxgit/internal/wire"
)

// dispatcher is the host/mcp contract the Manager must meet.
type dispatcher interface {
	CallTool(ctx context.Context, provider string, call *wire.Call, retry bool, events wire.EventFunc) (*wire.Result, error)
	ReadResource(ctx context.Context, provider, uri string, meta wire.Meta) (*wire.Resource, error)
	WatchResources(ctx context.Context, provider string, fn func(wire.ResourceChange)) error
	GetPrompt(ctx context.Context, provider string, req *wire.PromptRequest) (*wire.PromptResult, error)
	Complete(ctx context.Context, provider string, req *wire.CompleteRequest) (*wire.Completion, error)
}

var _ dispatcher = (*Manager)(nil)
