package tokenbench

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const (
	readmePath  = "../../docs/tokenbench.md"
	tableBegin  = "<!-- tokenbench:begin -->"
	tableEnd    = "<!-- tokenbench:end -->"
	regenerate  = "go test ./tests/tokenbench -run TestTokenBench -update"
	regenerateF = "go test ./tests/tokenbench -run TestTokenBench -update -full"
)

// TestTokenBench regenerates the fixtures and outputs of one mode (fast by
// default, -full for the full one) in a temporary directory and compares
// them with the committed ones: every answer within its token budget, every
// checksum equal. With -update it rewrites the committed files instead
// (with -full: both modes) and the results table of docs/tokenbench.md.
func TestTokenBench(t *testing.T) {
	modes := []bool{*full}
	if *update && *full {
		modes = []bool{false, true}
	}
	for _, isFull := range modes {
		mode := modeName(isFull)
		t.Run(mode, func(t *testing.T) {
			sz := fastSizes
			if isFull {
				sz = fullSizes
			}
			tmp := t.TempDir()
			out := filepath.Join(tmp, "out")
			res := generate(t, mode, sz, filepath.Join(tmp, "work"), out)
			checkSanity(t, res)
			dst := filepath.Join("testdata", mode)
			if *update {
				commitTree(t, out, dst)
				return
			}
			compare(t, res, out, dst)
		})
	}
	if *update {
		writeReadme(t)
	}
	checkReadme(t)
}

// checkSanity asserts what must hold for any fixture: fluxgit answered every
// call without an error, every step has a raw side, the outside check runs
// each of the eight tools, and totals add up.
func checkSanity(t *testing.T, res *results) {
	t.Helper()
	var all totals
	for _, sc := range res.Scenarios {
		if len(sc.Steps) == 0 {
			t.Errorf("%s: no steps", sc.Name)
		}
		var tt totals
		seen := map[string]bool{}
		for _, st := range sc.Steps {
			c := st.Fluxgit
			seen[c.Tool] = true
			if c.IsError {
				t.Errorf("%s: %s returned isError", sc.Name, c.Tool)
			}
			if c.Structured.O200kTokens == 0 {
				t.Errorf("%s: %s returned nothing", sc.Name, c.Tool)
			}
			if len(st.Raw) == 0 {
				t.Errorf("%s: %s has no raw git side", sc.Name, c.Tool)
			}
			tt.addStep(st)
		}
		tt.finish()
		if tt != sc.Totals {
			t.Errorf("%s: totals %+v do not add up to the steps' %+v", sc.Name, sc.Totals, tt)
		}
		if sc.Name == outsideCheck {
			for _, tool := range eightTools {
				if !seen[tool] {
					t.Errorf("%s lacks %s", outsideCheck, tool)
				}
			}
		}
		all.addTotals(tt)
	}
	all.finish()
	if all != res.Totals {
		t.Errorf("mode totals %+v do not add up to the scenarios' %+v", res.Totals, all)
	}
	if len(res.Catalog) == 0 || res.Catalog[0].Tools == 0 {
		t.Errorf("the default catalog lists no tools")
	}
}

// commitTree replaces the committed tree of a mode with the generated one;
// a full-mode tree too large to commit keeps only results.json and
// SHA256SUMS.
func commitTree(t *testing.T, out, dst string) {
	t.Helper()
	if err := os.RemoveAll(dst); err != nil {
		t.Fatal(err)
	}
	size := int64(0)
	_ = filepath.Walk(out, func(_ string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			size += info.Size()
		}
		return nil
	})
	onlySums := filepath.Base(dst) == "full" && size > fullTreeLimit
	err := filepath.Walk(out, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(out, p)
		if onlySums && rel != "results.json" && rel != "SHA256SUMS" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		writeFile(t, filepath.Join(dst, rel), b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d bytes generated; outputs committed: %v)", dst, size, !onlySums)
}

func loadResults(t *testing.T, dir string) *results {
	t.Helper()
	r, err := readResults(dir)
	if err != nil {
		t.Fatalf("no committed results: %v; generate them with: %s", err, regenerate)
	}
	return r
}

func readResults(dir string) (*results, error) {
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		return nil, err
	}
	var r results
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s/results.json: %w", dir, err)
	}
	return &r, nil
}

func tryLoadResults(dir string) (*results, bool) {
	r, err := readResults(dir)
	return r, err == nil
}

func parseSums(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v; generate it with: %s", path, err, regenerate)
	}
	m := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		h, name, ok := strings.Cut(line, "  ")
		if !ok {
			t.Fatalf("%s: malformed line %q", path, line)
		}
		m[name] = h
	}
	return m
}

// compare checks the regenerated mode against the committed one: budgets
// first (the clearer failure), then every checksum.
func compare(t *testing.T, res *results, out, dst string) {
	t.Helper()
	old := loadResults(t, dst)
	how := regenerate
	if res.Mode == "full" {
		how = regenerateF
	}
	budgets := map[string]int{}
	for _, sc := range old.Scenarios {
		for _, st := range sc.Steps {
			budgets[sc.Name+"/"+st.Fluxgit.File] = st.Fluxgit.BudgetTokens
		}
	}
	for _, c := range old.Catalog {
		budgets["catalog/"+c.Name] = c.BudgetTokens
	}
	for _, sc := range res.Scenarios {
		for _, st := range sc.Steps {
			c := st.Fluxgit
			b, ok := budgets[sc.Name+"/"+c.File]
			if !ok {
				t.Errorf("%s %s in %s has no recorded budget; record one with: %s", c.File, c.Tool, sc.Name, how)
				continue
			}
			if c.Structured.O200kTokens > b {
				t.Errorf("%s in %s grew from %d to %d tokens (o200k_base, structuredContent; %s); if that is intended, rerun: %s", c.Tool, sc.Name, b, c.Structured.O200kTokens, c.File, how)
			}
		}
	}
	for _, c := range res.Catalog {
		b, ok := budgets["catalog/"+c.Name]
		if !ok {
			t.Errorf("catalog %s has no recorded budget; record one with: %s", c.Name, how)
			continue
		}
		if c.Refused != "" {
			t.Errorf("catalog %s: the binary refused this configuration (%s); update catalogConfigs in tokenbench_test.go", c.Name, c.Refused)
		}
		if c.Model.O200kTokens > b {
			t.Errorf("the %s catalog (tools/list: name, title, description, inputSchema) grew from %d to %d tokens; if that is intended, rerun: %s", c.Name, b, c.Model.O200kTokens, how)
		}
	}
	want := parseSums(t, filepath.Join(dst, "SHA256SUMS"))
	checkCommitted(t, dst, want, how)
	got := parseSums(t, filepath.Join(out, "SHA256SUMS"))
	var names []string
	for n := range want {
		names = append(names, n)
	}
	for n := range got {
		if _, ok := want[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	bad := 0
	for _, n := range names {
		switch w, g := want[n], got[n]; {
		case w == g:
		case w == "":
			t.Errorf("%s/%s is new (not in the committed SHA256SUMS)", res.Mode, n)
			bad++
		case g == "":
			t.Errorf("%s/%s is committed but no longer generated", res.Mode, n)
			bad++
		default:
			t.Errorf("%s/%s changed: sha256 %s, recorded %s", res.Mode, n, g, w)
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%d files differ from the committed %s results (recorded with %s, now %s); the fixture or an output changed. "+
			"Review the difference and regenerate with: %s", bad, res.Mode, old.GitVersion, res.GitVersion, how)
	}
}

// checkCommitted verifies the committed tree against its own SHA256SUMS,
// as sha256sum -c would, so a hand-edited output or budget is caught even
// though the regenerated tree is compared with SHA256SUMS alone. Files
// listed but absent are allowed: a large full-mode tree commits only
// results.json and SHA256SUMS.
func checkCommitted(t *testing.T, dst string, want map[string]string, how string) {
	t.Helper()
	err := filepath.Walk(dst, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dst, p)
		rel = filepath.ToSlash(rel)
		if rel == "SHA256SUMS" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		switch w, ok := want[rel]; {
		case !ok:
			t.Errorf("%s/%s is not listed in its SHA256SUMS; remove it or regenerate with: %s", dst, rel, how)
		case w != sum(b):
			t.Errorf("%s/%s does not match its SHA256SUMS entry (edited by hand?); regenerate with: %s", dst, rel, how)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}

// outsideTable renders the outside check of one mode.
func outsideTable(r *results) string {
	var b strings.Builder
	rep := r.Targets
	ref := map[string]int{}
	for _, sc := range r.Scenarios {
		if sc.Name == outsideCheck {
			for _, st := range sc.Steps {
				ref[st.Fluxgit.Tool] += st.Fluxgit.ReferenceTokens
			}
		}
	}
	b.WriteString("| Tool | reference shape | fluxgit | expert raw git | fluxgit / raw | target | holds |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---|\n")
	refAll := 0
	for _, tt := range rep.Tools {
		refAll += ref[tt.Tool]
		fmt.Fprintf(&b, "| `%s` | %d | %d | %d | %.2f | ≤ %.1f | %s |\n", tt.Tool, ref[tt.Tool], tt.Fluxgit, tt.Raw, tt.Ratio, toolLimit, yesNo(tt.OK))
	}
	fmt.Fprintf(&b, "| **the eight together** | %d | %d | %d | %.2f | ≤ %.1f | %s |\n", refAll, rep.Together.Fluxgit, rep.Together.Raw, rep.Together.Ratio, togetherLimit, yesNo(rep.Together.OK))
	fmt.Fprintf(&b, "\nDefault catalog: %d tokens (target ≤ %d: %s); with a gateway address: %d (≤ %d: %s). "+
		"`conflict.read` shows both sides of the line-%d conflict: %s.\n",
		rep.Catalog, catalogLimit, yesNo(rep.CatalogOK), rep.GatewayCatalog, gatewayCatalogLimit, yesNo(rep.GatewayOK), conflictLine, yesNo(rep.ConflictSides))
	return b.String()
}

// toolTable renders the per-tool sums of one mode over every scenario.
func toolTable(r *results) string {
	var b strings.Builder
	b.WriteString("| Tool | calls | reference shape | fluxgit | expert raw git | fluxgit / raw | text / raw | both / raw (Copilot CLI) | with the call written |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	row := func(name string, t totals) {
		trunc := ""
		if t.Truncated > 0 {
			trunc = fmt.Sprintf(" (%d truncated)", t.Truncated)
		}
		fmt.Fprintf(&b, "| %s | %d%s | %d | %d | %d | %.2f | %.2f | %.2f | %.2f |\n", name, t.Steps, trunc, t.Reference, t.Fluxgit, t.Raw,
			t.Ratio, t.TextRatio, t.BothRatio, t.WrittenRatio)
	}
	for _, tt := range r.Tools {
		row("`"+tt.Tool+"`", tt.totals)
	}
	row("**all**", r.Totals)
	return b.String()
}

// scenarioTable renders the per-scenario sums of one mode.
func scenarioTable(r *results) string {
	var b strings.Builder
	b.WriteString("| Scenario | fluxgit calls | git commands | reference shape | fluxgit | expert raw git | fluxgit / raw |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|\n")
	for _, sc := range r.Scenarios {
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %.2f |\n", sc.Name, sc.Totals.Steps, len(sc.Raw), sc.Totals.Reference,
			sc.Totals.Fluxgit, sc.Totals.Raw, sc.Totals.Ratio)
	}
	fmt.Fprintf(&b, "| **all** | %d | | %d | %d | %d | %.2f |\n", r.Totals.Steps, r.Totals.Reference, r.Totals.Fluxgit, r.Totals.Raw, r.Totals.Ratio)
	return b.String()
}

// catalogTable renders the catalog sizes of one mode.
func catalogTable(r *results) string {
	var b strings.Builder
	b.WriteString("| Configuration | tools | model view | reference shape | whole `tools` array |\n")
	b.WriteString("|---|---:|---:|---:|---:|\n")
	for _, c := range r.Catalog {
		env := "no configuration"
		if len(c.Env) > 0 {
			env = "`" + strings.Join(c.Env, " ") + "`"
		}
		if c.Refused != "" {
			fmt.Fprintf(&b, "| %s (%s) | refused: %s | | | |\n", c.Name, env, c.Refused)
			continue
		}
		ref := "—"
		if c.ReferenceModelTokens > 0 {
			ref = fmt.Sprint(c.ReferenceModelTokens)
		}
		fmt.Fprintf(&b, "| %s (%s) | %d | %d | %s | %d |\n", c.Name, env, c.Tools, c.Model.O200kTokens, ref, c.Served.O200kTokens)
	}
	return b.String()
}

// readmeBlock is the generated text between the markers of docs/tokenbench.md, built from
// the committed results of both modes.
func readmeBlock(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(tableBegin + "\n")
	fast := loadResults(t, filepath.Join("testdata", "fast"))
	full := loadResults(t, filepath.Join("testdata", "full"))
	fmt.Fprintf(&b, "\n**Outside check** (scenario `%s`, the same fixture in both modes; %s; o200k_base tokens of `structuredContent`):\n\n", outsideCheck, fast.GitVersion)
	b.WriteString(outsideTable(fast))
	fmt.Fprintf(&b, "\n**Catalog** (`tools/list`; model view = each tool's name, title, description and inputSchema as served, compact JSON):\n\n")
	b.WriteString(catalogTable(fast))
	for _, r := range []*results{full, fast} {
		label := "Full mode"
		if r.Mode == "fast" {
			label = "Fast mode (the CI fixtures)"
		}
		fmt.Fprintf(&b, "\n**%s, per tool** — %s:\n\n", label, r.GitVersion)
		b.WriteString(toolTable(r))
		fmt.Fprintf(&b, "\n**%s, per scenario:**\n\n", label)
		b.WriteString(scenarioTable(r))
	}
	b.WriteString("\n" + tableEnd)
	return b.String()
}

func readmeParts(t *testing.T) (before, block, after string) {
	t.Helper()
	b, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i, j := strings.Index(s, tableBegin), strings.Index(s, tableEnd)
	if i < 0 || j < i {
		t.Fatalf("docs/tokenbench.md lacks the %s … %s markers in its Results section", tableBegin, tableEnd)
	}
	return s[:i], s[i : j+len(tableEnd)], s[j+len(tableEnd):]
}

func writeReadme(t *testing.T) {
	t.Helper()
	before, _, after := readmeParts(t)
	if err := os.WriteFile(readmePath, []byte(before+readmeBlock(t)+after), 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkReadme fails when the table in docs/tokenbench.md is not the one the committed
// results give.
func checkReadme(t *testing.T) {
	t.Helper()
	_, block, _ := readmeParts(t)
	if want := readmeBlock(t); block != want {
		t.Errorf("the results table in docs/tokenbench.md is stale; regenerate it with: %s\nwant:\n%s", regenerate, want)
	}
}

// BenchmarkTokenBench regenerates the fast mode and reports its token
// totals as metrics (it reports, never asserts; the test does the checking).
func BenchmarkTokenBench(b *testing.B) {
	var res *results
	for i := 0; i < b.N; i++ {
		tmp := b.TempDir()
		res = generate(b, "fast", fastSizes, filepath.Join(tmp, "work"), filepath.Join(tmp, "out"))
	}
	b.ReportMetric(float64(res.Totals.Raw), "raw-o200k-tokens")
	b.ReportMetric(float64(res.Totals.Fluxgit), "fluxgit-o200k-tokens")
	b.ReportMetric(res.Totals.Ratio, "fluxgit/raw")
	b.ReportMetric(res.Targets.Together.Ratio, "outside-check-ratio")
	if len(res.Catalog) > 0 {
		b.ReportMetric(float64(res.Catalog[0].Model.O200kTokens), "catalog-o200k-tokens")
	}
}
