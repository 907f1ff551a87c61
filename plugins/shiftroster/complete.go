package shiftroster

import (
	"context"
	"slices"
	"sort"
	"strings"

	"github.com/fluxgit/fluxgit/plugins/sdk"
)

var _ sdk.Completer = (*Provider)(nil)

// Complete offers the workspaces that have active workers, for the
// team_status prompt's workspace argument and the shift://status
// template's workspace variable.
func (p *Provider) Complete(ctx context.Context, req *sdk.CompleteRequest) (*sdk.Completion, error) {
	if req.Argument != "workspace" || (req.Prompt != "team_status" && req.Template != StatusTemplate) {
		return nil, sdk.NotFound("nothing to complete", "shift-roster completes the workspace of team_status and "+StatusTemplate)
	}
	var names []string
	if !p.noRosterYet() {
		store, err := p.openStore(ctx)
		if err != nil {
			return nil, err
		}
		if names, err = store.Workspaces(ctx, maxWorkspaceScan); err != nil {
			return nil, err
		}
	}
	if p.cfg.DefaultWorkspace != "" && !slices.Contains(names, p.cfg.DefaultWorkspace) {
		names = append(names, p.cfg.DefaultWorkspace)
	}
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, req.Value) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return &sdk.Completion{Values: out, Total: len(out)}, nil
}

// maxWorkspaceScan bounds the workspace names read for one completion.
const maxWorkspaceScan = 1000
