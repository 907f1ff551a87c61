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
	readmePath  = "../../README.md"
	tableBegin  = "<!-- tokenbench:begin -->"
	tableEnd    = "<!-- tokenbench:end -->"
	regenerate  = "go test ./tests/tokenbench -run TestTokenBench -update"
	regenerateF = "go test ./tests/tokenbench -run TestTokenBench -update -full"
)

// TestTokenBench regenerates the fixtures and outputs of one mode (fast by
// default, -full for the full one) in a temporary directory and compares
// them with the committed ones: every answer within its token budget, every
// checksum equal. With -update it rewrites the committed files instead
// (with -full: both modes) and the README table.
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
// call without an error and totals add up.
func checkSanity(t *testing.T, res *results) {
	t.Helper()
	var raw, flux sideTotal
	for _, sc := range res.Scenarios {
		if len(sc.Raw) == 0 || len(sc.Fluxgit) == 0 {
			t.Errorf("%s: %d raw commands and %d fluxgit calls; both sides need at least one", sc.Name, len(sc.Raw), len(sc.Fluxgit))
		}
		var r, f sideTotal
		for _, c := range sc.Raw {
			r.Calls++
			r.add(c.counts)
		}
		for _, c := range sc.Fluxgit {
			if c.IsError {
				t.Errorf("%s: %s returned isError", sc.Name, c.Tool)
			}
			if c.O200kTokens == 0 {
				t.Errorf("%s: %s returned no text", sc.Name, c.Tool)
			}
			f.Calls++
			f.add(c.counts)
		}
		if r != sc.RawTotal || f != sc.FluxgitTotal {
			t.Errorf("%s: totals %+v/%+v do not add up to the calls' %+v/%+v", sc.Name, sc.RawTotal, sc.FluxgitTotal, r, f)
		}
		raw.Calls += r.Calls
		raw.add(r.counts)
		flux.Calls += f.Calls
		flux.add(f.counts)
	}
	if raw != res.RawTotal || flux != res.FluxgitTotal {
		t.Errorf("mode totals %+v/%+v do not add up to the scenarios' %+v/%+v", res.RawTotal, res.FluxgitTotal, raw, flux)
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
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatalf("no committed results: %v; generate them with: %s", err, regenerate)
	}
	var r results
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s/results.json: %v", dir, err)
	}
	return &r
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
		for _, c := range sc.Fluxgit {
			budgets[sc.Name+"/"+c.File] = c.BudgetTokens
		}
	}
	for _, sc := range res.Scenarios {
		for _, c := range sc.Fluxgit {
			b, ok := budgets[sc.Name+"/"+c.File]
			if !ok {
				t.Errorf("%s %s in %s has no recorded budget; record one with: %s", c.File, c.Tool, sc.Name, how)
				continue
			}
			if c.O200kTokens > b {
				t.Errorf("%s in %s grew from %d to %d tokens (o200k_base; %s); if that is intended, rerun: %s", c.Tool, sc.Name, b, c.O200kTokens, c.File, how)
			}
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

// table renders the README table of one mode.
func table(r *results) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| Scenario | git commands | git tokens | fluxgit calls | fluxgit tokens | fluxgit / git |\n")
	fmt.Fprintf(&b, "|---|---:|---:|---:|---:|---:|\n")
	for _, sc := range r.Scenarios {
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %.2f |\n", sc.Name, sc.RawTotal.Calls, sc.RawTotal.O200kTokens,
			sc.FluxgitTotal.Calls, sc.FluxgitTotal.O200kTokens, sc.Ratio)
	}
	fmt.Fprintf(&b, "| **all** | %d | %d | %d | %d | %.2f |\n", r.RawTotal.Calls, r.RawTotal.O200kTokens,
		r.FluxgitTotal.Calls, r.FluxgitTotal.O200kTokens, r.Ratio)
	return b.String()
}

// readmeBlock is the generated text between the README markers, built from
// the committed results of both modes.
func readmeBlock(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(tableBegin + "\n")
	for _, mode := range []string{"full", "fast"} {
		r := loadResults(t, filepath.Join("testdata", mode))
		label := "Full mode"
		if mode == "fast" {
			label = "Fast mode (the CI fixtures)"
		}
		fmt.Fprintf(&b, "\n%s — %s, tokens counted with o200k_base:\n\n", label, r.GitVersion)
		b.WriteString(table(r))
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
		t.Fatalf("README.md lacks the %s … %s markers in its Token benchmark section", tableBegin, tableEnd)
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

// checkReadme fails when the README table is not the one the committed
// results give.
func checkReadme(t *testing.T) {
	t.Helper()
	_, block, _ := readmeParts(t)
	if want := readmeBlock(t); block != want {
		t.Errorf("the README token benchmark table is stale; regenerate it with: %s\nwant:\n%s", regenerate, want)
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
	b.ReportMetric(float64(res.RawTotal.O200kTokens), "raw-o200k-tokens")
	b.ReportMetric(float64(res.FluxgitTotal.O200kTokens), "fluxgit-o200k-tokens")
	b.ReportMetric(float64(res.FluxgitTotal.O200kTokens)/float64(res.RawTotal.O200kTokens), "fluxgit/raw")
}
