// Package familytest holds the test provider the git-read families other
// than repo share: it serves one family's slice of the dispatch table and
// the repository reads the way plugins/gitread does, which a family
// cannot import. It lives apart from internal/gittest because it imports
// plugins/gitread/repo, whose own tests import gittest.
package familytest

import (
	"context"
	"errors"

	"github.com/fluxgit/fluxgit/plugins/gitread/repo"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// Provider serves a family's tools, else the repository reads.
type Provider struct {
	core  *repo.Provider
	tools map[string]repo.ToolFunc
}

// New returns a fresh Provider serving tools before repo.Tools().
func New(tools map[string]repo.ToolFunc) *Provider {
	return &Provider{core: repo.New(), tools: tools}
}

// CallTool dispatches call to the family's table, else the repository
// reads'.
func (p *Provider) CallTool(ctx context.Context, call *sdk.Call) (*sdk.Result, error) {
	if call == nil {
		return nil, errors.New("gitread: nil call")
	}
	fn, ok := p.tools[call.Tool]
	if !ok {
		if fn, ok = repo.Tools()[call.Tool]; !ok {
			return nil, repo.Invalid("unknown tool: " + call.Tool)
		}
	}
	return p.core.Call(ctx, call, fn)
}
