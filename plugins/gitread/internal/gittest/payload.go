package gittest

// The host's outputSchema check on a provider answer. The schemas live in
// host/catalog, which only tests may import from under plugins/, so each
// test package passes its catalog lookup in as a SpecFunc.

import (
	"encoding/json"
	"testing"

	"github.com/fluxgit/fluxgit/internal/resultshape"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// Spec is what a payload check needs of a tool's catalog entry: its tier
// and its outputSchema check (reference selects the reference shape's
// schema).
type Spec struct {
	Tier     string
	Validate func(payload any, reference bool) error
}

// SpecFunc looks up tool's Spec; ok is false when the catalog has none,
// err is a catalog that did not load.
type SpecFunc func(tool string) (spec Spec, ok bool, err error)

// CheckPayload wraps a result in the host envelope and validates it
// against the tool's outputSchema, as the host does.
func CheckPayload(t testing.TB, specs SpecFunc, tool string, res *sdk.Result, repoPath string) {
	t.Helper()
	spec, ok, err := specs(tool)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		t.Fatalf("no spec for %s", tool)
	}
	decoded, b := Envelope(t, tool, spec.Tier, res, repoPath)
	// The schema of the shape the provider answered in (resultshape).
	if err := spec.Validate(decoded, !resultshape.Lean()); err != nil {
		t.Fatalf("%s payload violates outputSchema: %v\n%s", tool, err, b)
	}
}

// PayloadOK calls a tool, requires success, validates the envelope and
// decodes.
func PayloadOK(t testing.TB, c Caller, specs SpecFunc, tool string, args map[string]any, out any, roots ...string) {
	t.Helper()
	res, err := Call(t, c, tool, args, roots...)
	if err != nil {
		t.Fatalf("%s: Go error %v", tool, err)
	}
	if res.Error != nil {
		t.Fatalf("%s: tool error %d %s %s", tool, res.Error.Code, res.Error.Message, res.Error.Data)
	}
	rp, _ := args["repoPath"].(string)
	CheckPayload(t, specs, tool, res, rp)
	if err := json.Unmarshal(res.Data, out); err != nil {
		t.Fatal(err)
	}
}

// PayloadBoth calls tool in the reference shape, checking that its payload
// is exactly the reference struct ref, then in the lean shape, validating
// the lean payload against outputSchema and decoding it into lean.
func PayloadBoth(t testing.TB, c Caller, specs SpecFunc, tool string, args map[string]any, ref, lean any) {
	t.Helper()
	t.Setenv(resultshape.Env, "reference")
	var raw json.RawMessage
	PayloadOK(t, c, specs, tool, args, &raw)
	StrictDecode(t, string(raw), ref)
	t.Setenv(resultshape.Env, "")
	PayloadOK(t, c, specs, tool, args, lean)
}
