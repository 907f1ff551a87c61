package gitread

import (
	"context"
	"strings"

	"github.com/fluxgit/fluxgit/plugins/gateway"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// diff.semantic and diff.semanticFallbacks. The semantic engine lives in
// the FluxGit gateway; this provider serves the honest local fallback:
// supported:false plus ready-to-use diff.text arguments. Unsafe revisions
// (starting with '-') never reach git: they are dropped from
// textDiffArguments and named in rejectedArguments instead of failing the
// call.

func init() {
	register("diff.semantic", (*Provider).diffSemantic)
	register("diff.semanticFallbacks", (*Provider).diffSemanticFallbacks)
}

type semanticArgs struct {
	RepoPath string `json:"repoPath"`
	RepoID   string `json:"repoId"`
	Base     string `json:"base"`
	Head     string `json:"head"`
	Path     string `json:"path"`
}

// TextDiffArguments are the diff.text arguments equivalent to the request.
type TextDiffArguments struct {
	RepoPath string `json:"repoPath"`
	Base     string `json:"base,omitempty"`
	Head     string `json:"head,omitempty"`
	Path     string `json:"path,omitempty"`
}

// SemanticData is the local diff.semantic payload.
type SemanticData struct {
	Supported         bool              `json:"supported"`
	Fallback          string            `json:"fallback"`
	Reason            string            `json:"reason"`
	GatewayConfigured bool              `json:"gatewayConfigured"`
	TextDiffArguments TextDiffArguments `json:"textDiffArguments"`
	RejectedArguments []string          `json:"rejectedArguments"`
}

// SemanticFallback is one entry of diff.semanticFallbacks.
type SemanticFallback struct {
	From              string            `json:"from"`
	To                string            `json:"to"`
	Supported         bool              `json:"supported"`
	Reason            string            `json:"reason"`
	RepoPath          string            `json:"repoPath"`
	Path              *string           `json:"path"`
	TextDiffArguments TextDiffArguments `json:"textDiffArguments"`
}

// SemanticFallbacksData is the local diff.semanticFallbacks payload.
type SemanticFallbacksData struct {
	Fallbacks         []SemanticFallback `json:"fallbacks"`
	RejectedArguments []string           `json:"rejectedArguments"`
}

func (p *Provider) semanticFallback(ctx context.Context, call *sdk.Call) (*SemanticData, error) {
	var a semanticArgs
	if err := decode(call, &a); err != nil {
		return nil, err
	}
	r, err := p.open(ctx, call, a.RepoPath)
	if err != nil {
		return nil, err
	}
	d := &SemanticData{Fallback: "diff.text", RejectedArguments: []string{}}
	d.TextDiffArguments.RepoPath = a.RepoPath
	if d.TextDiffArguments.RepoPath == "" {
		d.TextDiffArguments.RepoPath = r.dir
	}
	for _, f := range []struct {
		name, val string
		dst       *string
	}{{"base", a.Base, &d.TextDiffArguments.Base}, {"head", a.Head, &d.TextDiffArguments.Head}} {
		if f.val == "" {
			continue
		}
		if checkRev(f.name, f.val) != nil {
			d.RejectedArguments = append(d.RejectedArguments, f.name)
			continue
		}
		*f.dst = f.val
	}
	d.TextDiffArguments.Path = a.Path
	_, d.GatewayConfigured = gateway.FromEnv()
	reasons := []string{"Semantic diff is computed by the FluxGit diff engine; this result is served in local sidecar fallback mode."}
	if !d.GatewayConfigured {
		reasons = append(reasons, "No FluxGit gateway address is configured.")
	} else {
		reasons = append(reasons, "Gateway enrichment is not available in this build.")
	}
	if len(d.RejectedArguments) > 0 {
		reasons = append(reasons, "Refused "+strings.Join(d.RejectedArguments, " and ")+" because it starts with '-' (it could be read as a git option); it is left out of textDiffArguments.")
	}
	reasons = append(reasons, "Call diff.text with textDiffArguments for the line diff.")
	d.Reason = strings.Join(reasons, " ")
	return d, nil
}

func (p *Provider) diffSemantic(ctx context.Context, call *sdk.Call) (any, error) {
	return p.semanticFallback(ctx, call)
}

func (p *Provider) diffSemanticFallbacks(ctx context.Context, call *sdk.Call) (any, error) {
	d, err := p.semanticFallback(ctx, call)
	if err != nil {
		return nil, err
	}
	fb := SemanticFallback{
		From: "diff.semantic", To: "diff.text", Reason: d.Reason,
		RepoPath: d.TextDiffArguments.RepoPath, TextDiffArguments: d.TextDiffArguments,
	}
	if d.TextDiffArguments.Path != "" {
		fb.Path = &d.TextDiffArguments.Path
	}
	return &SemanticFallbacksData{Fallbacks: []SemanticFallback{fb}, RejectedArguments: d.RejectedArguments}, nil
}
