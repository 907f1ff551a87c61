package tests

import (
	"encoding/json"
	"slices"
	"sort"
	"strings"
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

// The reference-parity run of conflict.read: with
// FLUXGIT_MCP_RESULT_SHAPE=reference the answer keeps the reference
// sidecar's shape (F§6.7) field for field — sides with sha, mode, size,
// truncated and content, marker regions, guidance — while the default is
// the lean shape (CONTRACT §3). The host validates the payload against the
// outputSchema, whose reference variant requires these fields too.
func TestConflictReadReferenceShape(t *testing.T) {
	repo := deepConflictRepo(t)
	s := startServer(t, append(baseEnv(t), "FLUXGIT_MCP_RESULT_SHAPE=reference"))
	initialize(t, s)
	p := toolPayload(t, s.call(1, "tools/call", map[string]any{"name": "conflict.read", "arguments": map[string]any{"repoPath": repo}}))
	raw, _ := json.Marshal(p["data"])
	var d struct {
		InConflict          *bool           `json:"inConflict"`
		Operation           *string         `json:"operation"`
		Ours                *map[string]any `json:"ours"`
		ConflictedFileCount *int            `json:"conflictedFileCount"`
		FileListTruncated   *bool           `json:"fileListTruncated"`
		MaxBytesPerSide     *int            `json:"maxBytesPerSide"`
		Truncated           *bool           `json:"truncated"`
		Guidance            string          `json:"guidance"`
		Files               []struct {
			Path, Kind string
			Sides      map[string]*struct {
				Sha, Mode string
				Size      *int
				Truncated *bool
				Content   *string
				Binary    bool
			}
			Regions          []map[string]int `json:"regions"`
			RegionsTruncated *bool            `json:"regionsTruncated"`
		}
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	if d.InConflict == nil || !*d.InConflict || d.Operation == nil || *d.Operation != "merge" || d.Ours == nil ||
		d.ConflictedFileCount == nil || *d.ConflictedFileCount != 3 || d.FileListTruncated == nil || d.MaxBytesPerSide == nil ||
		*d.MaxBytesPerSide != 16384 || d.Truncated == nil || !strings.Contains(d.Guidance, "MERGE_HEAD") || len(d.Files) != 3 {
		t.Fatalf("reference shape: %s", raw)
	}
	for _, f := range d.Files {
		if f.Path != "big.txt" {
			continue
		}
		ours := f.Sides["ours"]
		if ours == nil || ours.Sha == "" || ours.Mode != "100644" || ours.Content == nil || len(*ours.Content) != 16384 ||
			ours.Truncated == nil || !*ours.Truncated || f.RegionsTruncated == nil || len(f.Regions) != 2 || f.Regions[0]["sepLine"] == 0 {
			t.Fatalf("reference file: %s", raw)
		}
	}
}
