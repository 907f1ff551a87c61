package tests

import (
	"slices"
	"sort"
	"testing"

	"github.com/fluxgit/fluxgit/host/catalog"
	"github.com/fluxgit/fluxgit/plugins/gitread"
)

// Every git-read tool in the spec is served by the provider and every tool
// the provider serves has a spec: tools/list can never advertise a tool
// that does not work, and no tool is unreachable.
func TestGitReadSpecParity(t *testing.T) {
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	var specced []string
	for _, tool := range cat.Tools {
		if tool.Provider == "git-read" {
			specced = append(specced, tool.Name)
		}
	}
	sort.Strings(specced)
	if served := gitread.Tools(); !slices.Equal(specced, served) {
		t.Fatalf("spec lists %v\nprovider serves %v", specced, served)
	}
}
