package tokenbench

import (
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// enforceTargets makes TestTargets fail when the outside check misses a
// target of issue 23. The figures hold since the lean shapes landed, so it
// is on: a change that breaks a target must lower it deliberately here,
// with the reason.
const enforceTargets = true

var targetsFlag = flag.Bool("targets", false, "fail TestTargets when the outside check misses a target (default: report only; see enforceTargets)")

// The issue-23 acceptance targets.
const (
	toolLimit           = 1.5  // each of the eight tools, fluxgit / expert raw git
	togetherLimit       = 1.0  // the eight together
	catalogLimit        = 5000 // default tools/list, model view, o200k tokens
	gatewayCatalogLimit = 8000 // the same with a gateway address set
)

// eightTools are the everyday tools of the outside check, in its order.
var eightTools = []string{"repo.brief", "repo.status", "repo.history", "repo.refs", "diff.text", "commit.details", "worktree.changes", "conflict.read"}

type targetTool struct {
	Tool    string  `json:"tool"`
	Fluxgit int     `json:"fluxgit"`
	Raw     int     `json:"raw"`
	Ratio   float64 `json:"ratio"`
	OK      bool    `json:"ok"`
}

// targetReport is the outside check: the eight tools on its fixture, the
// catalog, and whether conflict.read shows both sides of the deep conflict.
type targetReport struct {
	Scenario       string       `json:"scenario"`
	Tools          []targetTool `json:"tools"`
	Together       targetTool   `json:"together"`
	Catalog        int          `json:"catalogTokens"`
	CatalogOK      bool         `json:"catalogOk"`
	GatewayCatalog int          `json:"gatewayCatalogTokens"`
	GatewayOK      bool         `json:"gatewayCatalogOk"`
	ConflictSides  bool         `json:"conflictSides"`
	// Overall is the mode's ratio over every scenario; the full mode must
	// reach at most 1.0.
	Overall float64 `json:"overallRatio"`
	AllOK   bool    `json:"allOk"`
}

func targets(res *results) targetReport {
	rep := targetReport{Scenario: outsideCheck, Together: targetTool{Tool: "the eight together"}, Overall: res.Totals.Ratio}
	for _, sc := range res.Scenarios {
		if sc.Name != outsideCheck {
			continue
		}
		for _, tool := range eightTools {
			tt := targetTool{Tool: tool}
			for _, st := range sc.Steps {
				if st.Fluxgit.Tool == tool {
					tt.Fluxgit += st.Fluxgit.Structured.O200kTokens
					tt.Raw += st.RawTokens
				}
			}
			tt.Ratio = ratio(tt.Fluxgit, tt.Raw)
			tt.OK = tt.Raw > 0 && float64(tt.Fluxgit) <= toolLimit*float64(tt.Raw)
			rep.Tools = append(rep.Tools, tt)
			rep.Together.Fluxgit += tt.Fluxgit
			rep.Together.Raw += tt.Raw
		}
		rep.ConflictSides = sc.ConflictSides != nil && *sc.ConflictSides
	}
	rep.Together.Ratio = ratio(rep.Together.Fluxgit, rep.Together.Raw)
	rep.Together.OK = rep.Together.Raw > 0 && float64(rep.Together.Fluxgit) <= togetherLimit*float64(rep.Together.Raw)
	for _, c := range res.Catalog {
		switch c.Name {
		case "default":
			rep.Catalog, rep.CatalogOK = c.Model.O200kTokens, c.Model.O200kTokens <= catalogLimit
		case "gateway":
			rep.GatewayCatalog, rep.GatewayOK = c.Model.O200kTokens, c.Model.O200kTokens <= gatewayCatalogLimit
		}
	}
	rep.AllOK = rep.Together.OK && rep.CatalogOK && rep.GatewayOK && rep.ConflictSides
	for _, tt := range rep.Tools {
		rep.AllOK = rep.AllOK && tt.OK
	}
	return rep
}

// misses lists the targets a report does not reach.
func (r targetReport) misses() []string {
	var out []string
	for _, tt := range r.Tools {
		if !tt.OK {
			out = append(out, fmt.Sprintf("%s costs %.2f× the expert's raw git (%d / %d tokens), above %.1f×", tt.Tool, tt.Ratio, tt.Fluxgit, tt.Raw, toolLimit))
		}
	}
	if !r.Together.OK {
		out = append(out, fmt.Sprintf("the eight together cost %.2f× (%d / %d tokens), above %.1f×", r.Together.Ratio, r.Together.Fluxgit, r.Together.Raw, togetherLimit))
	}
	if !r.CatalogOK {
		out = append(out, fmt.Sprintf("the default catalog costs %d tokens, above %d", r.Catalog, catalogLimit))
	}
	if !r.GatewayOK {
		out = append(out, fmt.Sprintf("the catalog with a gateway address costs %d tokens, above %d", r.GatewayCatalog, gatewayCatalogLimit))
	}
	if !r.ConflictSides {
		out = append(out, fmt.Sprintf("conflict.read does not show both sides of the conflict at line %d of the %d-line file", conflictLine, bigLines))
	}
	return out
}

// TestTargets reports the outside check from the committed results (fast
// mode; the outside-check fixture is the same in both modes) and the full
// mode's overall ratio. It fails only with enforceTargets or -targets.
func TestTargets(t *testing.T) {
	fast := loadResults(t, filepath.Join("testdata", "fast"))
	rep := targets(fast)
	misses := rep.misses()
	if fullRes, ok := tryLoadResults(filepath.Join("testdata", "full")); ok {
		if fullRes.Totals.Ratio > togetherLimit {
			misses = append(misses, fmt.Sprintf("full mode costs %.2f× raw git overall, above %.1f×", fullRes.Totals.Ratio, togetherLimit))
		}
	}
	for _, tt := range rep.Tools {
		t.Logf("%-17s %6d / %6d tokens = %.2f×  (≤ %.1f×: %v)", tt.Tool, tt.Fluxgit, tt.Raw, tt.Ratio, toolLimit, tt.OK)
	}
	t.Logf("%-17s %6d / %6d tokens = %.2f×  (≤ %.1f×: %v)", "together", rep.Together.Fluxgit, rep.Together.Raw, rep.Together.Ratio, togetherLimit, rep.Together.OK)
	t.Logf("catalog %d tokens (≤ %d: %v), with a gateway %d (≤ %d: %v); conflict.read shows both sides: %v",
		rep.Catalog, catalogLimit, rep.CatalogOK, rep.GatewayCatalog, gatewayCatalogLimit, rep.GatewayOK, rep.ConflictSides)
	if len(misses) == 0 {
		t.Log("every target holds")
		return
	}
	msg := "targets missed:\n- " + strings.Join(misses, "\n- ")
	if enforceTargets || *targetsFlag {
		t.Error(msg)
	} else {
		t.Log(msg + "\n(reported only: set enforceTargets in targets_test.go, or pass -targets, to fail on them)")
	}
}
