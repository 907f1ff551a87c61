package repo

import (
	"path/filepath"
	"testing"

	"github.com/fluxgit/fluxgit/internal/credpaths"
)

// protectedFilter matches git's repository-relative names of a protected
// location inside the work tree (any case, the location and below) and
// nothing else; a work tree inside a protected location is refused.
func TestProtectedFilter(t *testing.T) {
	top := canonicalDir(t.TempDir())
	t.Setenv(credpaths.EnvRunDir, filepath.Join(top, ".fluxgit-run"))
	t.Setenv(credpaths.EnvSecretDir, filepath.Join(t.TempDir(), "secret"))
	t.Setenv(credpaths.EnvList, credpaths.Export([]credpaths.Path{{Label: "agent policy", Path: filepath.Join(top, "policy.json")}}))
	guarded, err := protectedFilter("arguments.repoPath", &Repo{dir: top})
	if err != nil || guarded == nil {
		t.Fatalf("protectedFilter: filter %v, err %v", guarded != nil, err)
	}
	for rel, want := range map[string]bool{
		".fluxgit-run/gateway":              true,
		".fluxgit-run/gateway/session.json": true,
		".FLUXGIT-RUN/Gateway/journal.db":   true,
		"policy.json":                       true,
		".fluxgit-run/repos/x.path":         false,
		".fluxgit-run/gatewayx":             false,
		"policy.json.bak":                   false,
		"src/policy.json":                   false,
	} {
		if got := guarded(rel); got != want {
			t.Errorf("guarded(%q) = %v, want %v", rel, got, want)
		}
	}
	if _, err := protectedFilter("arguments.repoPath", &Repo{dir: filepath.Join(top, ".fluxgit-run", "gateway", "r")}); err == nil {
		t.Error("a work tree inside the gateway's state was not refused")
	}
	// Spelled in another case the gateway's state is the same directory on
	// a case-insensitive file system (Windows, macOS, a vfat or casefold
	// mount on Linux): a work tree below it is refused on every system,
	// as the names inside are matched (pathwithin.WithinAnyCase; before
	// issue 24 only an equal top was folded).
	if _, err := protectedFilter("arguments.repoPath", &Repo{dir: filepath.Join(top, ".FLUXGIT-RUN", "Gateway", "r")}); err == nil {
		t.Error("a work tree inside the gateway's state spelled in another case was not refused")
	}
	// No protected location inside the work tree: nothing to filter.
	if g, err := protectedFilter("arguments.repoPath", &Repo{dir: canonicalDir(t.TempDir())}); g != nil || err != nil {
		t.Errorf("unrelated work tree: filter %v, err %v", g != nil, err)
	}
}
