package gitread

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func TestRefInjectionRefused(t *testing.T) {
	referenceShape(t) // asserts the reference shape; fleet/lean_fleet_test.go covers the lean one
	repo := newRepo(t)
	git(t, repo, "update-ref", "refs/heads/--output=pwned", "HEAD")
	for _, f := range []string{"currentRef", "targetRef"} {
		args := map[string]any{"repoPath": repo, "targetRef": "main", f: "--output=pwned"}
		mustArgError(t, "repo.conflictPreflight", args, "arguments."+f+" must not start with '-'")
	}
	for _, tool := range []string{"diff.semantic", "diff.semanticFallbacks"} {
		var d map[string]any
		fxOK(t, tool, map[string]any{"repoPath": repo, "base": "--output=pwned", "head": "-p"}, &d)
		if fmt.Sprint(d["rejectedArguments"]) != "[base head]" {
			t.Fatalf("%s: %v", tool, d)
		}
	}
	// The ref exists; tools that enumerate refs or reflogs must not pass it on.
	var r map[string]any
	fxOK(t, "fleet.radar", map[string]any{"repoPaths": []string{repo}}, &r)
	var dg map[string]any
	fxOK(t, "fleet.digest", map[string]any{"repoPaths": []string{repo}, "sinceMs": 0}, &dg)
	assertNoPwned(t, repo)
	if _, err := os.Stat(filepath.Join(repo, "pwned")); err == nil {
		t.Fatal("pwned written")
	}
}
