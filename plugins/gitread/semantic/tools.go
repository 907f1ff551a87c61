// Package semantic serves git-read's semantic diff (diff.semantic,
// diff.semanticFallbacks): asked of the approval gateway over its HTTP API
// (internal/fluxbridge) when one is configured, with a local fallback that
// points the caller at diff.text; repositories are opened with the core of
// plugins/gitread/repo.
package semantic

import "github.com/fluxgit/fluxgit/plugins/gitread/repo"

// tools is the semantic family's slice of the git-read dispatch table (see
// plugins/gitread/repo/tools.go for how a line reads; semanticTool builds
// the pair's results, diff_semantic.go).
var tools = map[string]repo.ToolFunc{
	"diff.semantic":          semanticTool(func(o *semanticOutcome) any { return o.semantic() }),
	"diff.semanticFallbacks": semanticTool(func(o *semanticOutcome) any { return o.fallbacks() }),
}

// Tools returns a copy of the semantic family's slice of the table.
func Tools() map[string]repo.ToolFunc {
	out := make(map[string]repo.ToolFunc, len(tools))
	for n, fn := range tools {
		out[n] = fn
	}
	return out
}
