package semantic

import (
	"context"
	"errors"
	"strings"

	"github.com/fluxgit/fluxgit/internal/fluxbridge"
	"github.com/fluxgit/fluxgit/internal/gitexec"
	"github.com/fluxgit/fluxgit/plugins/gitread/repo"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// diff.semantic and diff.semanticFallbacks. The semantic engine lives in
// the FluxGit gateway: when an address is configured and the repository is
// registered with FluxGit, the changed files are sent to it
// (diff_semantic_gateway.go) and its answer, checked entry by entry, is
// served with source "fluxgit-gateway". Otherwise — and after any gateway
// failure — the provider serves the honest local fallback: supported:false
// plus ready-to-use diff.text arguments. Unsafe revisions (starting with
// '-') never reach git or the gateway: they are dropped from
// textDiffArguments and named in rejectedArguments instead of failing the
// call.

type semanticArgs struct {
	RepoPath string `json:"repoPath"`
	RepoID   string `json:"repoId"`
	Base     string `json:"base"`
	Head     string `json:"head"`
	Path     string `json:"path"`
}

// textDiffArguments are the diff.text arguments equivalent to the request.
type textDiffArguments struct {
	RepoPath string `json:"repoPath"`
	Base     string `json:"base,omitempty"`
	Head     string `json:"head,omitempty"`
	Path     string `json:"path,omitempty"`
}

// semanticData is the local diff.semantic payload.
type semanticData struct {
	Supported         bool              `json:"supported"`
	Fallback          string            `json:"fallback"`
	Reason            string            `json:"reason"`
	GatewayConfigured bool              `json:"gatewayConfigured"`
	TextDiffArguments textDiffArguments `json:"textDiffArguments"`
	RejectedArguments []string          `json:"rejectedArguments"`
}

// semanticFallback is one entry of diff.semanticFallbacks.
type semanticFallback struct {
	From              string            `json:"from"`
	To                string            `json:"to"`
	Supported         bool              `json:"supported"`
	Reason            string            `json:"reason"`
	RepoPath          string            `json:"repoPath"`
	Path              *string           `json:"path"`
	TextDiffArguments textDiffArguments `json:"textDiffArguments"`
}

// semanticFallbacksData is the local diff.semanticFallbacks payload.
type semanticFallbacksData struct {
	Fallbacks         []semanticFallback `json:"fallbacks"`
	RejectedArguments []string           `json:"rejectedArguments"`
}

// Sentences of the local fallback's reason. The first and the last are
// always there; the middle one says why the gateway did not answer, so
// an agent (or the person reading along) can tell "not configured" from
// "not registered" from "the gateway failed".
const (
	semanticReasonLocal         = "Semantic diff is computed by the FluxGit diff engine; this result is served in local sidecar fallback mode."
	semanticReasonNoGateway     = "No FluxGit gateway address is configured."
	semanticReasonUnregistered  = "The repository is not registered with FluxGit (no repoId argument, and no entry of the FluxGit run directory's repository registry names it), so the gateway was not asked."
	semanticReasonRefusedNoCall = "The gateway was not asked because a revision argument was refused."
	semanticReasonNext          = "Call diff.text with textDiffArguments for the line diff."
)

// semanticOutcome is the answer of either path: gateway set when the
// gateway served the diff, else local.
type semanticOutcome struct {
	local   *semanticData
	gateway *gatewaySemantic
}

// semanticTool wraps the shared work of both tools. Like read, it does
// the whole call again when a repository moved during a git call.
func semanticTool(render func(*semanticOutcome) any) repo.ToolFunc {
	return func(p *repo.Provider, ctx context.Context, call *sdk.Call) (*sdk.Result, error) {
		for attempt := 1; ; attempt++ {
			actx, pins := gitexec.WithPins(ctx)
			o, err := decideOutcome(p, actx, call)
			pins.Close()
			if attempt < repo.MovedAttempts && errors.Is(err, gitexec.ErrMoved) && ctx.Err() == nil {
				continue
			}
			if err != nil {
				return repo.Finish(nil, err)
			}
			if o.gateway != nil {
				return sdk.OK(sourceGateway, render(o))
			}
			return repo.Finish(render(o), nil)
		}
	}
}

// decideOutcome decides between the gateway and the local fallback.
// Only opening the repository can fail the call; everything after it
// degrades to the local fallback with the reason spelled out.
func decideOutcome(p *repo.Provider, ctx context.Context, call *sdk.Call) (*semanticOutcome, error) {
	var a semanticArgs
	if err := repo.Decode(call, &a); err != nil {
		return nil, err
	}
	r, err := p.Open(ctx, call, a.RepoPath)
	if err != nil {
		return nil, err
	}
	d := &semanticData{Fallback: "diff.text", RejectedArguments: []string{}}
	d.TextDiffArguments.RepoPath = a.RepoPath
	if d.TextDiffArguments.RepoPath == "" {
		d.TextDiffArguments.RepoPath = r.Dir()
	}
	for _, f := range []struct {
		name, val string
		dst       *string
	}{{"base", a.Base, &d.TextDiffArguments.Base}, {"head", a.Head, &d.TextDiffArguments.Head}} {
		if f.val == "" {
			continue
		}
		if repo.CheckRev(f.name, f.val) != nil {
			d.RejectedArguments = append(d.RejectedArguments, f.name)
			continue
		}
		*f.dst = f.val
	}
	d.TextDiffArguments.Path = a.Path
	addr, configured := fluxbridge.FromEnv()
	d.GatewayConfigured = configured

	var why string
	switch {
	case !configured:
		why = semanticReasonNoGateway
	case len(d.RejectedArguments) > 0:
		why = semanticReasonRefusedNoCall
	default:
		repoID := semanticRepoID(a, r.Dir())
		if repoID == "" {
			why = semanticReasonUnregistered
			break
		}
		g, failed, err := semanticViaGateway(p, ctx, addr, repoID, a, r, d.TextDiffArguments)
		if err != nil {
			return nil, err
		}
		if failed == "" {
			return &semanticOutcome{gateway: g}, nil
		}
		why = "The FluxGit gateway did not serve the semantic diff: " + failed
	}
	reasons := []string{semanticReasonLocal, why}
	if len(d.RejectedArguments) > 0 {
		reasons = append(reasons, "Refused "+strings.Join(d.RejectedArguments, " and ")+" because it starts with '-' (it could be read as a git option); it is left out of textDiffArguments.")
	}
	reasons = append(reasons, semanticReasonNext)
	d.Reason = strings.Join(reasons, " ")
	return &semanticOutcome{local: d}, nil
}

// semantic renders the diff.semantic payload.
func (o *semanticOutcome) semantic() any {
	if o.gateway != nil {
		return o.gateway.data
	}
	return o.local
}

// fallbacks renders the diff.semanticFallbacks payload: locally the whole
// request is one fallback; through the gateway only the files the engine
// (or the reply check) flagged are listed.
func (o *semanticOutcome) fallbacks() any {
	if g := o.gateway; g != nil {
		out := &gatewayFallbacksData{
			Fallbacks: []semanticFallback{}, Engine: g.data.Engine,
			AnalyzedFiles: len(g.data.Files), FilesTruncated: g.data.FilesTruncated,
			RejectedArguments: []string{},
		}
		for _, f := range g.data.Files {
			if !f.FallbackToText || f.TextDiffArguments == nil || len(out.Fallbacks) == semanticMaxFiles {
				continue
			}
			path := f.Path
			out.Fallbacks = append(out.Fallbacks, semanticFallback{
				From: "diff.semantic", To: "diff.text", Reason: f.Reason,
				RepoPath: f.TextDiffArguments.RepoPath, Path: &path, TextDiffArguments: *f.TextDiffArguments,
			})
		}
		return out
	}
	d := o.local
	fb := semanticFallback{
		From: "diff.semantic", To: "diff.text", Reason: d.Reason,
		RepoPath: d.TextDiffArguments.RepoPath, TextDiffArguments: d.TextDiffArguments,
	}
	if d.TextDiffArguments.Path != "" {
		fb.Path = &d.TextDiffArguments.Path
	}
	return &semanticFallbacksData{Fallbacks: []semanticFallback{fb}, RejectedArguments: d.RejectedArguments}
}
