package catalog

// Result shapes (FLUXGIT_MCP_RESULT_SHAPE, package internal/resultshape):
// the lean shape is the default; the reference shape is the reference
// sidecar's, for programmatic clients written against it.
//
// A tool spec's outputSchema describes the lean shape and, when the spec
// has no referenceOutputSchema, the reference shape too; a spec whose data
// differs between the two carries referenceOutputSchema for the reference
// shape. An example marked shape: reference is checked against
// referenceOutputSchema; every other example against outputSchema, both as
// written and as the lean envelope (LeanEnvelope), so one example written
// with the reference's envelope fields proves that both envelopes pass.
const (
	// ShapeLean is the example shape (and result shape) by default.
	ShapeLean = "lean"
	// ShapeReference marks an example written in the reference's shape.
	ShapeReference = "reference"
)

// LocalGitSource is the envelope source of tools answered by the local git
// CLI. The lean envelope leaves it out: it is what a model assumes.
const LocalGitSource = "local-git"

// LeanOmits are the envelope fields the lean shape leaves out (source only
// when it is LocalGitSource). No outputSchema may require them (lint rule
// lean-envelope).
var LeanOmits = []string{"tier", "repoPath", "source"}

// LeanEnvelope returns a copy of a reference result envelope as the lean
// host sends it: without tier and repoPath, without source when it is
// LocalGitSource, and without a null error.data. Data is not changed: a
// tool whose data differs between the shapes has a referenceOutputSchema.
func LeanEnvelope(env map[string]any) map[string]any {
	out := make(map[string]any, len(env))
	for k, v := range env {
		switch k {
		case "tier", "repoPath":
			continue
		case "source":
			if v == LocalGitSource {
				continue
			}
		case "error":
			if e, ok := v.(map[string]any); ok {
				if d, has := e["data"]; has && d == nil {
					c := make(map[string]any, len(e))
					for ek, ev := range e {
						if ek != "data" {
							c[ek] = ev
						}
					}
					v = c
				}
			}
		}
		out[k] = v
	}
	return out
}
