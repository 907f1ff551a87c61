// Package gitread is the git-read provider: read-only tools answered from
// the local git CLI, in four families that each keep their own slice of
// the dispatch table —
//
//   - plugins/gitread/repo: the core (repository resolution, confinement,
//     the hardened git runner, status internals) and the repository reads
//     (repo.*, commit.details, history.search, diff.text, file.*,
//     conflict.read, worktree.*, submodule.status);
//   - plugins/gitread/fleet: fleet.radar and fleet.digest over the run
//     directory's repository registry;
//   - plugins/gitread/restore: flux.* restore points and the safety.*
//     timeline over restore records;
//   - plugins/gitread/semantic: diff.semantic and diff.semanticFallbacks
//     over the approval gateway's HTTP API.
//
// This package only joins the slices into one provider (plugins/builtin
// serves it as "git-read").
package gitread

import (
	"context"
	"errors"
	"sort"

	"github.com/fluxgit/fluxgit/plugins/gitread/fleet"
	"github.com/fluxgit/fluxgit/plugins/gitread/repo"
	"github.com/fluxgit/fluxgit/plugins/gitread/restore"
	"github.com/fluxgit/fluxgit/plugins/gitread/semantic"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// Provider serves the git-read tools.
type Provider struct {
	core *repo.Provider
}

// New returns a Provider using the shared hardened git runner.
func New() *Provider { return &Provider{core: repo.New()} }

var (
	_ sdk.Provider  = (*Provider)(nil)
	_ sdk.Describer = (*Provider)(nil)
	_ sdk.Completer = (*Provider)(nil)
)

// RestorePoint is a FluxGit restore point (restore.RestorePoint), as
// flux.* tools report it.
type RestorePoint = restore.RestorePoint

// RestorePointMetadata is a restore point's remaining record fields
// (restore.RestorePointMetadata).
type RestorePointMetadata = restore.RestorePointMetadata

// LatestRestorePointData is the flux.latestRestorePoint payload
// (restore.LatestRestorePointData).
type LatestRestorePointData = restore.LatestRestorePointData

// tools is the whole dispatch table: the families' slices joined. A name
// in two slices panics here, at init, so such a build fails every test;
// tests/parity_test.go checks the table against the spec.
var tools = join(repo.Tools(), fleet.Tools(), restore.Tools(), semantic.Tools())

func join(slices ...map[string]repo.ToolFunc) map[string]repo.ToolFunc {
	out := map[string]repo.ToolFunc{}
	for _, s := range slices {
		for name, fn := range s {
			if _, dup := out[name]; dup {
				panic("gitread: tool " + name + " is registered by two families")
			}
			out[name] = fn
		}
	}
	return out
}

// Tools lists the served tool names, sorted (for tests and `fluxgit
// providers`).
func Tools() []string {
	names := make([]string, 0, len(tools))
	for n := range tools {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Describe lists the registered tools, so the host can refuse to start
// against a spec that names a tool this build does not serve.
func (p *Provider) Describe() sdk.Description { return sdk.Description{Tools: Tools()} }

// CallTool dispatches one tool call. Git failures and refusals come back as
// 10010 tool errors; arguments that passed the schema but are still unsafe
// come back as *sdk.ArgumentError; anything else is an internal error.
func (p *Provider) CallTool(ctx context.Context, call *sdk.Call) (*sdk.Result, error) {
	if call == nil {
		return nil, errors.New("gitread: nil call")
	}
	fn, ok := tools[call.Tool]
	if !ok {
		return nil, repo.Invalid("unknown tool: " + call.Tool)
	}
	return p.core.Call(ctx, call, fn)
}

// Complete offers values for the prompt arguments the spec marks
// completable (branch names, unmerged paths); the repository reads' core
// answers them (repo.Provider.Complete).
func (p *Provider) Complete(ctx context.Context, req *sdk.CompleteRequest) (*sdk.Completion, error) {
	return p.core.Complete(ctx, req)
}
