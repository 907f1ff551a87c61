package semantic

import "testing"

func TestSemanticFallback(t *testing.T) {
	repo := newRepo(t)
	t.Setenv("FLUXGIT_MCP_HANDSHAKE_ADDR", "")
	t.Setenv("FLUXGIT_GATEWAY_ADDR", "")
	t.Setenv("FLUXGIT_GATEWAY_URL", "")
	var d semanticData
	fxOK(t, "diff.semantic", map[string]any{"repoPath": repo, "base": "HEAD", "path": "a.txt"}, &d)
	want := textDiffArguments{RepoPath: repo, Base: "HEAD", Path: "a.txt"}
	if d.Supported || d.Fallback != "diff.text" || d.TextDiffArguments != want || d.GatewayConfigured {
		t.Fatalf("%+v", d)
	}
	var f semanticFallbacksData
	fxOK(t, "diff.semanticFallbacks", map[string]any{"repoPath": repo}, &f)
	if len(f.Fallbacks) != 1 || f.Fallbacks[0].Path != nil || f.Fallbacks[0].To != "diff.text" {
		t.Fatalf("%+v", f)
	}
	mustFail(t, "diff.semantic", map[string]any{"repoPath": tempDir(t)})
}
