// Package tokenbench measures how many tokens an agent spends getting its
// bearings in a git repository with raw git commands and with fluxgit's
// tools, on fixtures generated deterministically from fixed seeds. See the
// results section of docs/tokenbench.md.
package tokenbench

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tiktoken-go/tokenizer"
)

var (
	update = flag.Bool("update", false, "rewrite the committed results of the mode run (with -full: both modes) and the results table of docs/tokenbench.md")
	full   = flag.Bool("full", false, "run FULL mode (realistic fixture sizes, not run in CI)")
)

// fullTreeLimit is the size above which full mode commits only results.json
// and SHA256SUMS, not the outputs and fixture manifests.
const fullTreeLimit = 3 << 20

const tokenizerModule = "github.com/tiktoken-go/tokenizer v0.10.0"

var fluxgitBin string

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "fluxgit-tokenbench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fluxgitBin = filepath.Join(dir, "fluxgit")
	if out, err := exec.Command("go", "build", "-o", fluxgitBin, "../../cmd/fluxgit").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build fluxgit: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// counts is the size of one output or of a sum of outputs.
type counts struct {
	Bytes        int `json:"bytes"`
	ApproxTokens int `json:"approxTokens"`
	O200kTokens  int `json:"o200kTokens"`
}

func (c *counts) add(o counts) {
	c.Bytes += o.Bytes
	c.ApproxTokens += o.ApproxTokens
	c.O200kTokens += o.O200kTokens
}

type rawResult struct {
	File     string   `json:"file"`
	Cwd      string   `json:"cwd"`
	Argv     []string `json:"argv"`
	ExitCode int      `json:"exitCode"`
	counts
	SHA256 string `json:"sha256"`
	// CommandTokens is what the model writes to run it: the command line.
	CommandTokens int `json:"commandTokens"`
}

// callResult is one fluxgit call, counted for each client style.
type callResult struct {
	// File holds the compact JSON of structuredContent; TextFile the text
	// content when it is not byte-identical to it.
	File      string          `json:"file"`
	TextFile  string          `json:"textFile,omitempty"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	IsError   bool            `json:"isError"`
	// Structured is the JSON of structuredContent (what Claude Code, Codex
	// and opencode hand the model); Text the text content items; BothTokens
	// the two together, as GitHub Copilot CLI forwards them.
	Structured       counts `json:"structuredContent"`
	Text             counts `json:"text"`
	TextIsStructured bool   `json:"textIsStructured"`
	BothTokens       int    `json:"bothTokens"`
	// ArgumentTokens is what the model writes: the JSON of arguments.
	ArgumentTokens int `json:"argumentTokens"`
	// ReferenceTokens is the structuredContent of the same call with
	// FLUXGIT_MCP_RESULT_SHAPE=reference (the "before" shape).
	ReferenceTokens int `json:"referenceTokens"`
	// Truncated says the answer reports leaving something out
	// ("truncated":true), so it may carry less than the raw side.
	Truncated bool   `json:"truncated"`
	SHA256    string `json:"sha256"`
	// BudgetTokens is the structuredContent o200k count this answer may not
	// exceed; -update sets it to the current count, so growth shows up in
	// review.
	BudgetTokens int `json:"budgetTokens"`
}

// stepResult pairs a fluxgit call with the expert's raw commands.
type stepResult struct {
	Fluxgit callResult `json:"fluxgit"`
	// Raw names the files of the scenario's raw commands this step counts.
	Raw              []string `json:"raw"`
	RawTokens        int      `json:"rawTokens"`
	RawCommandTokens int      `json:"rawCommandTokens"`
	// Ratio is structuredContent tokens over raw tokens.
	Ratio float64 `json:"ratio"`
}

// totals sums steps (o200k tokens). Ratios are fluxgit over raw:
// Ratio for structuredContent, TextRatio for text, BothRatio for both,
// WrittenRatio with what the model writes added on both sides (the
// arguments, the command lines), ReferenceRatio for the reference shape.
type totals struct {
	Steps          int     `json:"steps"`
	Fluxgit        int     `json:"fluxgit"`
	Text           int     `json:"text"`
	Both           int     `json:"both"`
	Arguments      int     `json:"arguments"`
	Reference      int     `json:"reference"`
	Raw            int     `json:"raw"`
	RawCommands    int     `json:"rawCommands"`
	Truncated      int     `json:"truncated"`
	Ratio          float64 `json:"ratio"`
	TextRatio      float64 `json:"textRatio"`
	BothRatio      float64 `json:"bothRatio"`
	WrittenRatio   float64 `json:"writtenRatio"`
	ReferenceRatio float64 `json:"referenceRatio"`
}

func (t *totals) addStep(s stepResult) {
	t.Steps++
	t.Fluxgit += s.Fluxgit.Structured.O200kTokens
	t.Text += s.Fluxgit.Text.O200kTokens
	t.Both += s.Fluxgit.BothTokens
	t.Arguments += s.Fluxgit.ArgumentTokens
	t.Reference += s.Fluxgit.ReferenceTokens
	t.Raw += s.RawTokens
	t.RawCommands += s.RawCommandTokens
	if s.Fluxgit.Truncated {
		t.Truncated++
	}
}

func (t *totals) addTotals(o totals) {
	t.Steps += o.Steps
	t.Fluxgit += o.Fluxgit
	t.Text += o.Text
	t.Both += o.Both
	t.Arguments += o.Arguments
	t.Reference += o.Reference
	t.Raw += o.Raw
	t.RawCommands += o.RawCommands
	t.Truncated += o.Truncated
}

func (t *totals) finish() {
	t.Ratio = ratio(t.Fluxgit, t.Raw)
	t.TextRatio = ratio(t.Text, t.Raw)
	t.BothRatio = ratio(t.Both, t.Raw)
	t.WrittenRatio = ratio(t.Fluxgit+t.Arguments, t.Raw+t.RawCommands)
	t.ReferenceRatio = ratio(t.Reference, t.Raw)
}

type scenarioResult struct {
	Name          string       `json:"name"`
	Seed          uint64       `json:"seed"`
	About         string       `json:"about"`
	FixtureSHA256 string       `json:"fixtureSha256"`
	Raw           []rawResult  `json:"raw"`
	Steps         []stepResult `json:"steps"`
	Totals        totals       `json:"totals"`
	// ConflictSides says whether conflict.read showed both sides of the
	// deep conflict (outside check only).
	ConflictSides *bool `json:"conflictSides,omitempty"`
}

// toolResult sums one tool's steps over every scenario.
type toolSummary struct {
	Tool string `json:"tool"`
	totals
}

// catalogResult is one tools/list configuration. Model is the part a model
// reads (each tool's name, title, description and inputSchema, as served,
// compact JSON of the array); Served is the whole tools array.
type catalogResult struct {
	Name   string   `json:"name"`
	Env    []string `json:"env"`
	Tools  int      `json:"tools"`
	Model  counts   `json:"model"`
	Served counts   `json:"served"`
	// Reference* are the same with FLUXGIT_MCP_RESULT_SHAPE=reference
	// (default and gateway configurations only; 0 elsewhere).
	ReferenceModelTokens  int    `json:"referenceModelTokens"`
	ReferenceServedTokens int    `json:"referenceServedTokens"`
	File                  string `json:"file,omitempty"`
	SHA256                string `json:"sha256"`
	// BudgetTokens bounds Model.O200kTokens, like a call's budget.
	BudgetTokens int `json:"budgetTokens"`
	// Refused is why the binary did not start in this configuration.
	Refused string `json:"refused,omitempty"`
}

// oneLine squeezes an error (the binary's stderr included) onto one
// table-safe line of at most 200 bytes.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(strings.ReplaceAll(s, "|", "/")), " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

type results struct {
	Mode            string            `json:"mode"`
	GitVersion      string            `json:"gitVersion"`
	ProtocolVersion string            `json:"protocolVersion"`
	Tokenizers      map[string]string `json:"tokenizers"`
	PathPlaceholder string            `json:"pathPlaceholder"`
	Normalized      []string          `json:"normalized"`
	Catalog         []catalogResult   `json:"catalog"`
	Scenarios       []scenarioResult  `json:"scenarios"`
	Tools           []toolSummary     `json:"tools"`
	Totals          totals            `json:"totals"`
	Targets         targetReport      `json:"targets"`
}

// elapsedMs fields report how long fleet.radar and fleet.digest took; they
// are the only clock-dependent fields, so they alone are rewritten.
var (
	elapsedRe       = regexp.MustCompile(`"elapsedMs":[0-9]+`)
	elapsedFixed    = `"elapsedMs":100`
	normalizedNotes = []string{`"elapsedMs":N in fleet.radar and fleet.digest answers (wall-clock durations) is replaced by "elapsedMs":100`}
)

var (
	codecOnce sync.Once
	codec     tokenizer.Codec
	codecErr  error
)

func countText(s string) (counts, error) {
	codecOnce.Do(func() { codec, codecErr = tokenizer.Get(tokenizer.O200kBase) })
	if codecErr != nil {
		return counts{}, fmt.Errorf("load o200k_base: %w", codecErr)
	}
	n, err := codec.Count(s)
	if err != nil {
		return counts{}, fmt.Errorf("count o200k tokens: %w", err)
	}
	return counts{Bytes: len(s), ApproxTokens: (len(s) + 3) / 4, O200kTokens: n}, nil
}

func ratio(fluxgit, raw int) float64 {
	if raw == 0 {
		return 0
	}
	return math.Round(float64(fluxgit)/float64(raw)*100) / 100
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// replacer swaps the fixture's temporary directory for the placeholder, in
// plain and JSON-escaped form.
func replacer(base string) *strings.Replacer {
	esc, _ := json.Marshal(base)
	escaped := strings.Trim(string(esc), `"`)
	pairs := []string{base, placeholderRoot}
	if escaped != base {
		pairs = append(pairs, escaped, placeholderRoot)
	}
	return strings.NewReplacer(pairs...)
}

func gitVersion(t testing.TB) string {
	out, err := exec.Command("git", "version").Output()
	if err != nil {
		t.Fatalf("git version: %v", err)
	}
	return strings.TrimSpace(string(out))
}

func modeName(isFull bool) string {
	if isFull {
		return "full"
	}
	return "fast"
}

// generate builds every scenario of a mode under work and writes the mode's
// tree (fixture manifests, outputs, results.json, SHA256SUMS) to out.
func generate(t testing.TB, mode string, sz sizes, work, out string) *results {
	res := &results{
		Mode:            mode,
		GitVersion:      gitVersion(t),
		ProtocolVersion: protocolVersion,
		Tokenizers: map[string]string{
			"approxTokens": "ceil(bytes / 4)",
			"o200kTokens":  "o200k_base, " + tokenizerModule,
		},
		PathPlaceholder: placeholderRoot,
		Normalized:      normalizedNotes,
	}
	start := time.Now()
	res.Catalog = measureCatalog(t, filepath.Join(work, "catalog"), out)
	t.Logf("catalog: %v", time.Since(start).Round(time.Millisecond))
	byTool := map[string]*totals{}
	for _, sc := range scenarios {
		start := time.Now()
		sr := runScenario(t, sc, sz, filepath.Join(work, sc.name), filepath.Join(out, sc.name))
		t.Logf("%s: %v", sc.name, time.Since(start).Round(time.Millisecond))
		for _, st := range sr.Steps {
			tt := byTool[st.Fluxgit.Tool]
			if tt == nil {
				tt = &totals{}
				byTool[st.Fluxgit.Tool] = tt
			}
			tt.addStep(st)
		}
		res.Totals.addTotals(sr.Totals)
		res.Scenarios = append(res.Scenarios, sr)
	}
	res.Totals.finish()
	for _, name := range toolOrder(byTool) {
		tt := byTool[name]
		tt.finish()
		res.Tools = append(res.Tools, toolSummary{Tool: name, totals: *tt})
	}
	res.Targets = targets(res)
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(out, "results.json"), append(b, '\n'))
	writeFile(t, filepath.Join(out, "SHA256SUMS"), []byte(sumsOf(t, out)))
	return res
}

// toolOrder lists the eight everyday tools first, in the outside check's
// order, then the others by name.
func toolOrder(byTool map[string]*totals) []string {
	var names []string
	for _, n := range eightTools {
		if byTool[n] != nil {
			names = append(names, n)
		}
	}
	var rest []string
	for n := range byTool {
		if !contains(eightTools, n) {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	return append(names, rest...)
}

func writeFile(t testing.TB, p string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// sumsOf lists every file under dir except SHA256SUMS in sha256sum -c
// format, sorted by path.
func sumsOf(t testing.TB, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == "SHA256SUMS" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		lines = append(lines, sum(b)+"  "+filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(lines, func(i, j int) bool { return lines[i][66:] < lines[j][66:] })
	return strings.Join(lines, "\n") + "\n"
}

var slugRe = regexp.MustCompile(`[^a-z0-9]+`)

// slug names a raw output file after its command; absolute paths shrink to
// their last element.
func slug(argv []string) string {
	var parts []string
	for _, a := range argv {
		if strings.HasPrefix(a, placeholderRoot+"/") {
			a = filepath.Base(a)
		}
		parts = append(parts, a)
	}
	s := strings.Trim(slugRe.ReplaceAllString(strings.ToLower(strings.Join(parts, " ")), "-"), "-")
	if len(s) > 60 {
		s = strings.TrimRight(s[:60], "-")
	}
	return s
}

// commandLine is what the model types to run argv: the words joined, the
// script alone for sh -c.
func commandLine(argv []string) string {
	if len(argv) == 3 && argv[0] == "sh" && argv[1] == "-c" {
		return argv[2]
	}
	return strings.Join(argv, " ")
}

var truncatedRe = regexp.MustCompile(`"truncated":true`)

func runScenario(t testing.TB, sc scenario, sz sizes, work, out string) scenarioResult {
	t.Helper()
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(work)
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, filepath.Join(real, "src"), sc.seed)
	b := sc.build(f, sz)
	rep := replacer(f.base)
	sr := scenarioResult{Name: sc.name, Seed: sc.seed, About: sc.about}

	manifest := rep.Replace(fixtureManifest(f, b.repos))
	writeFile(t, filepath.Join(out, "fixture.txt"), []byte(manifest))
	sr.FixtureSHA256 = sum([]byte(manifest))

	// Each distinct raw command runs once; the steps that share it count it.
	env := f.gitEnv()
	ran := map[string]int{}
	for _, st := range b.steps {
		for _, rc := range st.raw {
			key := rc.dir + "\x00" + strings.Join(rc.argv, "\x00")
			if _, ok := ran[key]; ok {
				continue
			}
			ran[key] = len(sr.Raw)
			sr.Raw = append(sr.Raw, runRaw(t, sc.name, rc, env, rep, len(sr.Raw)+1, out))
		}
	}

	// The two shapes run side by side on two processes: the calls only read.
	// Every tool is served: some scenarios call tools outside the default
	// core toolset (worktree.list, fleet.*).
	const allTools = "FLUXGIT_TOOLSETS=all"
	var lean, reference []toolResult
	var leanErr, refErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		reference, refErr = callAll(b.steps, append(fluxgitEnv(f), allTools, resultShapeEnv+"=reference"), rep)
	}()
	lean, leanErr = callAll(b.steps, append(fluxgitEnv(f), allTools), rep)
	wg.Wait()
	if leanErr != nil {
		t.Fatalf("%s: %v", sc.name, leanErr)
	}
	if refErr != nil {
		t.Fatalf("%s, %s=reference: %v", sc.name, resultShapeEnv, refErr)
	}
	for i, st := range b.steps {
		res := lean[i]
		argsJSON, err := json.Marshal(st.call.args)
		if err != nil {
			t.Fatal(err)
		}
		args := rep.Replace(string(argsJSON))
		cr := callResult{Tool: st.call.tool, Arguments: json.RawMessage(args), IsError: res.isError,
			Structured: mustCount(t, res.structured), Text: mustCount(t, res.text), TextIsStructured: res.text == res.structured,
			ArgumentTokens: mustCount(t, args).O200kTokens, ReferenceTokens: mustCount(t, reference[i].structured).O200kTokens,
			Truncated: truncatedRe.MatchString(res.structured), SHA256: sum([]byte(res.structured))}
		cr.BothTokens = cr.Structured.O200kTokens + cr.Text.O200kTokens
		cr.BudgetTokens = cr.Structured.O200kTokens
		cr.File = fmt.Sprintf("fluxgit/%02d-%s.json", i+1, st.call.tool)
		writeFile(t, filepath.Join(out, filepath.FromSlash(cr.File)), []byte(res.structured))
		if !cr.TextIsStructured {
			cr.TextFile = fmt.Sprintf("fluxgit/%02d-%s.text.txt", i+1, st.call.tool)
			writeFile(t, filepath.Join(out, filepath.FromSlash(cr.TextFile)), []byte(res.text))
		}
		if res.isError {
			t.Errorf("%s: %s returned isError:\n%s", sc.name, st.call.tool, res.text)
		}
		sres := stepResult{Fluxgit: cr}
		for _, rc := range st.raw {
			r := sr.Raw[ran[rc.dir+"\x00"+strings.Join(rc.argv, "\x00")]]
			sres.Raw = append(sres.Raw, r.File)
			sres.RawTokens += r.O200kTokens
			sres.RawCommandTokens += r.CommandTokens
		}
		sres.Ratio = ratio(cr.Structured.O200kTokens, sres.RawTokens)
		sr.Steps = append(sr.Steps, sres)
		sr.Totals.addStep(sres)
		if st.call.tool == "conflict.read" && len(b.sides) > 0 {
			ok := true
			for _, side := range b.sides {
				if !strings.Contains(res.structured, jsonInner(side)) {
					ok = false
				}
			}
			sr.ConflictSides = &ok
		}
	}
	sr.Totals.finish()
	return sr
}

// jsonInner is s as it appears inside a JSON string.
func jsonInner(s string) string {
	b, _ := json.Marshal(s)
	return strings.Trim(string(b), `"`)
}

func mustCount(t testing.TB, s string) counts {
	t.Helper()
	c, err := countText(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// runRaw runs one raw command and saves its output as raw/NN-<slug>.txt.
func runRaw(t testing.TB, scenario string, rc rawCmd, env []string, rep *strings.Replacer, n int, out string) rawResult {
	t.Helper()
	cmd := exec.Command(rc.argv[0], rc.argv[1:]...)
	cmd.Dir = rc.dir
	cmd.Env = env
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v: %v", scenario, rc.argv, err)
	}
	text := rep.Replace(buf.String())
	argv := make([]string, len(rc.argv))
	for j, a := range rc.argv {
		argv[j] = rep.Replace(a)
	}
	if code != rc.exit {
		t.Errorf("%s: %s exited %d, the fixture is built for %d:\n%s", scenario, strings.Join(argv, " "), code, rc.exit, text)
	}
	if (text == "") != rc.empty {
		t.Errorf("%s: %s printed %d bytes; the fixture is built for empty=%v", scenario, strings.Join(argv, " "), len(text), rc.empty)
	}
	c := mustCount(t, text)
	file := fmt.Sprintf("raw/%02d-%s.txt", n, slug(argv))
	writeFile(t, filepath.Join(out, filepath.FromSlash(file)), []byte(text))
	return rawResult{File: file, Cwd: rep.Replace(rc.dir), Argv: argv, ExitCode: code, counts: c, SHA256: sum([]byte(text)),
		CommandTokens: mustCount(t, commandLine(argv)).O200kTokens}
}

// resultShapeEnv selects the reference's full result shapes in the binary
// (internal/resultshape.Env); a binary that does not read it answers the
// same in both runs.
const resultShapeEnv = "FLUXGIT_MCP_RESULT_SHAPE"

// callAll runs every step's call on one fluxgit process and returns the
// answers with the fixture path and clock fields normalized.
func callAll(steps []step, env []string, rep *strings.Replacer) ([]toolResult, error) {
	client, err := startMCP(fluxgitBin, env)
	if err != nil {
		return nil, err
	}
	defer client.close()
	var out []toolResult
	for _, st := range steps {
		res, err := client.callTool(st.call.tool, st.call.args)
		if err != nil {
			return nil, err
		}
		norm := func(s string) string { return elapsedRe.ReplaceAllString(rep.Replace(s), elapsedFixed) }
		res.text = norm(res.text)
		if res.structured == "" {
			res.structured = res.text // no structuredContent: the text is all there is
		} else {
			res.structured = norm(res.structured)
		}
		out = append(out, res)
	}
	return out, nil
}

// catalogConfigs are the tools/list configurations measured. The gateway
// address points at a port nothing listens on: tools/list never dials it.
var catalogConfigs = []struct {
	name      string
	env       []string
	reference bool
	save      bool
}{
	{"default", nil, true, true},
	{"gateway", []string{"FLUXGIT_GATEWAY_ADDR=127.0.0.1:9"}, true, true},
	{"toolsets=all", []string{"FLUXGIT_TOOLSETS=all"}, false, false},
	{"read-only", []string{"FLUXGIT_READ_ONLY=1"}, false, false},
	{"toolsets=git", []string{"FLUXGIT_TOOLSETS=git"}, false, false},
	{"toolsets=fleet", []string{"FLUXGIT_TOOLSETS=fleet"}, false, false},
	{"toolsets=proposals", []string{"FLUXGIT_TOOLSETS=proposals"}, false, false},
	{"toolsets=restore", []string{"FLUXGIT_TOOLSETS=restore"}, false, false},
}

// modelView keeps, per tool, what a model reads of the catalog: name,
// title, description and inputSchema, in that order, as served.
func modelView(tools []json.RawMessage) (string, error) {
	var parts []string
	for _, raw := range tools {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return "", fmt.Errorf("decode tool: %w", err)
		}
		var fields []string
		for _, k := range []string{"name", "title", "description", "inputSchema"} {
			if v, ok := m[k]; ok {
				var buf bytes.Buffer
				if err := json.Compact(&buf, v); err != nil {
					return "", fmt.Errorf("compact %s: %w", k, err)
				}
				fields = append(fields, fmt.Sprintf("%q:%s", k, buf.String()))
			}
		}
		parts = append(parts, "{"+strings.Join(fields, ",")+"}")
	}
	return "[" + strings.Join(parts, ",") + "]", nil
}

func servedView(tools []json.RawMessage) (string, error) {
	var buf bytes.Buffer
	b, err := json.Marshal(tools)
	if err != nil {
		return "", err
	}
	if err := json.Compact(&buf, b); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// catalogView is one tools/list answer: the model view, the whole array
// and the number of tools.
type catalogView struct {
	model, served string
	tools         int
	err           error
}

func listCatalog(env []string) catalogView {
	client, err := startMCP(fluxgitBin, env)
	if err != nil {
		return catalogView{err: err}
	}
	defer client.close()
	tools, err := client.listTools()
	if err != nil {
		return catalogView{err: err}
	}
	v := catalogView{tools: len(tools)}
	if v.model, v.err = modelView(tools); v.err != nil {
		return v
	}
	v.served, v.err = servedView(tools)
	return v
}

// measureCatalog counts tools/list in each configuration and saves the
// model view of the default and gateway catalogs.
func measureCatalog(t testing.TB, work, out string) []catalogResult {
	t.Helper()
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, filepath.Join(work, "src"), 1)
	base := fluxgitEnv(f)
	// The configurations are listed concurrently: each is a process start
	// and one request, mostly waiting.
	views := make([]catalogView, len(catalogConfigs))
	refs := make([]catalogView, len(catalogConfigs))
	var wg sync.WaitGroup
	for i, cfg := range catalogConfigs {
		env := append(append([]string(nil), base...), cfg.env...)
		wg.Add(1)
		go func() { defer wg.Done(); views[i] = listCatalog(env) }()
		if cfg.reference {
			wg.Add(1)
			go func() { defer wg.Done(); refs[i] = listCatalog(append(env, resultShapeEnv+"=reference")) }()
		}
	}
	wg.Wait()
	var res []catalogResult
	for i, cfg := range catalogConfigs {
		v := views[i]
		if v.err != nil && i < 2 {
			t.Fatalf("catalog %s: %v", cfg.name, v.err)
		}
		if v.err != nil {
			// A configuration the binary no longer accepts (a toolset
			// renamed, say) is recorded, not fatal: the row says so and the
			// committed results differ until catalogConfigs is updated.
			res = append(res, catalogResult{Name: cfg.name, Env: append([]string{}, cfg.env...), Refused: oneLine(v.err.Error())})
			continue
		}
		cr := catalogResult{Name: cfg.name, Env: append([]string{}, cfg.env...), Tools: v.tools,
			Model: mustCount(t, v.model), Served: mustCount(t, v.served), SHA256: sum([]byte(v.model))}
		cr.BudgetTokens = cr.Model.O200kTokens
		if cfg.reference {
			if refs[i].err != nil {
				t.Fatalf("catalog %s, %s=reference: %v", cfg.name, resultShapeEnv, refs[i].err)
			}
			cr.ReferenceModelTokens = mustCount(t, refs[i].model).O200kTokens
			cr.ReferenceServedTokens = mustCount(t, refs[i].served).O200kTokens
		}
		if cfg.save {
			cr.File = "catalog/" + cfg.name + ".json"
			writeFile(t, filepath.Join(out, filepath.FromSlash(cr.File)), []byte(v.model))
		}
		res = append(res, cr)
	}
	return res
}

// fluxgitEnv runs the server with the fixture's git environment, a private
// run directory, and the audit ledger, presence files and agent detection
// off, so nothing outside the fixture shapes an answer.
func fluxgitEnv(f *fixture) []string {
	run := filepath.Join(filepath.Dir(f.base), "run")
	return append(f.gitEnv(),
		"FLUXGIT_RUN_DIR="+run, "SHIFT_STATE_DIR="+filepath.Join(run, "shift"),
		"FLUXGIT_MCP_AUDIT_DISABLED=1", "FLUXGIT_MCP_PRESENCE_DISABLED=1", "FLUXGIT_MCP_AGENT_DETECTION_DISABLED=1",
		"FLUXGIT_MCP_ALLOWED_ROOTS="+f.base)
}

// stateFiles are the git-directory files that describe an operation in
// progress.
var stateFiles = []string{"AUTO_MERGE", "CHERRY_PICK_HEAD", "MERGE_HEAD", "MERGE_MODE", "MERGE_MSG", "ORIG_HEAD", "REBASE_HEAD", "REVERT_HEAD"}

// fixtureManifest describes the built repositories canonically: refs with
// object ids, HEAD, the index, every work-tree file with its SHA-256 and
// the in-progress state files.
func fixtureManifest(f *fixture, repos []string) string {
	f.t.Helper()
	var b strings.Builder
	for _, repo := range repos {
		fmt.Fprintf(&b, "== repository %s\n", repo)
		head := strings.TrimSpace(f.gitCodeAny(repo, "symbolic-ref", "-q", "HEAD"))
		if head == "" {
			head = "(detached)"
		}
		fmt.Fprintf(&b, "HEAD %s %s", head, f.git(repo, "rev-parse", "HEAD"))
		gitDir := strings.TrimSpace(f.git(repo, "rev-parse", "--absolute-git-dir"))
		common := strings.TrimSpace(f.git(repo, "rev-parse", "--path-format=absolute", "--git-common-dir"))
		if gitDir == common {
			b.WriteString("-- refs\n")
			b.WriteString(f.git(repo, "for-each-ref", "--format=%(objectname) %(refname)"))
			if strings.TrimSpace(f.gitCodeAny(repo, "rev-parse", "-q", "--verify", "refs/stash")) != "" {
				b.WriteString("-- stash reflog\n")
				b.WriteString(f.git(repo, "log", "-g", "--format=%H", "refs/stash"))
			}
		}
		b.WriteString("-- index\n")
		b.WriteString(f.git(repo, "ls-files", "-s"))
		b.WriteString("-- work tree\n")
		var files []string
		err := filepath.WalkDir(repo, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.Name() == ".git" {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				if p != repo && isRepo(p) {
					return filepath.SkipDir // a nested work tree is listed on its own
				}
				return nil
			}
			body, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(repo, p)
			files = append(files, sum(body)+"  "+filepath.ToSlash(rel))
			return nil
		})
		if err != nil {
			f.t.Fatal(err)
		}
		sort.Slice(files, func(i, j int) bool { return files[i][66:] < files[j][66:] })
		for _, l := range files {
			b.WriteString(l + "\n")
		}
		var state []string
		for _, name := range stateFiles {
			if body, err := os.ReadFile(filepath.Join(gitDir, name)); err == nil {
				state = append(state, stateSum(f, body)+"  "+name)
			}
		}
		rb := filepath.Join(gitDir, "rebase-merge")
		_ = filepath.WalkDir(rb, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			body, err := os.ReadFile(p)
			if err == nil {
				rel, _ := filepath.Rel(gitDir, p)
				state = append(state, stateSum(f, body)+"  "+filepath.ToSlash(rel))
			}
			return nil
		})
		if len(state) > 0 {
			b.WriteString("-- operation state\n")
			for _, l := range state {
				b.WriteString(l + "\n")
			}
		}
	}
	return b.String()
}

// stateSum hashes a state file with the fixture path replaced, since some
// (rebase-merge/*) record absolute paths.
func stateSum(f *fixture, body []byte) string {
	return sum([]byte(replacer(f.base).Replace(string(body))))
}

func isRepo(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, ".git"))
	return err == nil
}

// gitCodeAny runs a read-only git query and returns its output whatever the
// exit code (used where "not found" is an answer).
func (f *fixture) gitCodeAny(dir string, args ...string) string {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = f.gitEnv()
	out, _ := cmd.Output()
	return string(out)
}
