package tests

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// The official MCP conformance suite (@modelcontextprotocol/conformance)
// and the official TypeScript SDK client run against `fluxgit serve
// --transport http` with tests/conformanceprovider registered by
// configuration. Both are Node programs pinned in
// tests/conformance/package.json and package-lock.json; they need Node 22
// or newer. Without it the tests skip, unless CI is set: .ci/run installs
// Node 22, so a CI run without it is broken and fails.

// conformanceDir holds the files the Node side is installed from.
const conformanceDir = "conformance"

// nodeSetup is the Node toolchain and the installed packages, made once
// per test binary.
type nodeSetup struct {
	node string // a node binary of version 22 or newer
	dir  string // holds node_modules and tsclient.mjs
	skip string // why the tests skip, when CI is unset
	err  error  // why they cannot run at all
}

var (
	nodeOnce sync.Once
	nodeEnv  nodeSetup

	confProviderOnce sync.Once
	confProviderBin  string
	confProviderErr  error
)

// requireNode returns the Node setup, skipping the test when Node 22 is
// absent outside CI and failing it inside.
func requireNode(t *testing.T) nodeSetup {
	t.Helper()
	nodeOnce.Do(func() { nodeEnv = setupNode() })
	switch {
	case nodeEnv.skip != "" && os.Getenv("CI") == "":
		t.Skip(nodeEnv.skip)
	case nodeEnv.skip != "":
		t.Fatalf("CI is set but %s; .ci/run installs Node 22 from the npm registry", nodeEnv.skip)
	case nodeEnv.err != nil:
		t.Fatal(nodeEnv.err)
	}
	return nodeEnv
}

// setupNode finds node ≥ 22 and installs the pinned packages with npm ci
// into a cache directory shared by every run with the same lock file:
// FLUXGIT_NODE_CACHE when set (.ci/run points it at a directory it
// reuses), the user's cache directory otherwise.
func setupNode() nodeSetup {
	node, err := exec.LookPath("node")
	if err != nil {
		return nodeSetup{skip: "node is not on PATH (the conformance tests need Node 22 or newer)"}
	}
	out, err := exec.Command(node, "-p", "process.versions.node").Output()
	if err != nil {
		return nodeSetup{err: fmt.Errorf("node -p process.versions.node: %w", err)}
	}
	version := strings.TrimSpace(string(out))
	major, err := strconv.Atoi(strings.SplitN(version, ".", 2)[0])
	if err != nil {
		return nodeSetup{err: fmt.Errorf("node reports version %q: %w", version, err)}
	}
	if major < 22 {
		return nodeSetup{skip: "node on PATH is " + version + ", the conformance tests need Node 22 or newer"}
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return nodeSetup{err: fmt.Errorf("node %s is on PATH but npm is not: %w", version, err)}
	}
	root := os.Getenv("FLUXGIT_NODE_CACHE")
	if root == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return nodeSetup{err: fmt.Errorf("no cache directory for the npm install (set FLUXGIT_NODE_CACHE): %w", err)}
		}
		root = filepath.Join(cache, "fluxgit", "node")
	}
	dir, err := installNodePackages(npm, root)
	if err != nil {
		return nodeSetup{err: err}
	}
	return nodeSetup{node: node, dir: dir}
}

// installNodePackages installs tests/conformance into root/<hash>, the
// hash covering every file copied, so a changed lock file or script gets
// a fresh directory and an unchanged one is reused. The install happens in
// a private directory renamed into place, so concurrent test binaries
// never see half an install.
func installNodePackages(npm, root string) (string, error) {
	files := []string{"package.json", "package-lock.json", "tsclient.mjs"}
	h := sha256.New()
	contents := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(conformanceDir, f))
		if err != nil {
			return "", fmt.Errorf("read %s: %w", f, err)
		}
		contents[f] = b
		fmt.Fprintf(h, "%s %d\n", f, len(b))
		h.Write(b)
	}
	dir := filepath.Join(root, hex.EncodeToString(h.Sum(nil))[:16])
	if _, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json")); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("create npm cache root: %w", err)
	}
	tmp, err := os.MkdirTemp(root, "install-")
	if err != nil {
		return "", fmt.Errorf("create npm install directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	for f, b := range contents {
		if err := os.WriteFile(filepath.Join(tmp, f), b, 0o644); err != nil {
			return "", fmt.Errorf("copy %s: %w", f, err)
		}
	}
	cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts")
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "npm_config_cache="+filepath.Join(root, "npm-cache"), "npm_config_update_notifier=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("npm ci in %s: %w\n%s", tmp, err, out)
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another test binary installed the same hash first.
		if _, statErr := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json")); statErr == nil {
			return dir, nil
		}
		return "", fmt.Errorf("move npm install into place: %w", err)
	}
	return dir, nil
}

// conformanceProvider builds tests/conformanceprovider once.
func conformanceProvider(t *testing.T) string {
	t.Helper()
	confProviderOnce.Do(func() {
		confProviderBin = filepath.Join(filepath.Dir(fluxgitBin), "conformanceprovider")
		if out, err := exec.Command("go", "build", "-o", confProviderBin, "./conformanceprovider").CombinedOutput(); err != nil {
			confProviderErr = fmt.Errorf("build conformanceprovider: %w\n%s", err, out)
		}
	})
	if confProviderErr != nil {
		t.Fatal(confProviderErr)
	}
	return confProviderBin
}

// conformanceEnv registers tests/conformanceprovider through a
// configuration file, as docs/providers.md describes.
func conformanceEnv(t *testing.T) []string {
	t.Helper()
	spec, err := filepath.Abs("conformanceprovider/spec")
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "fluxgit.yaml")
	writeFile(t, cfg, "providers:\n  - name: conformance\n    command: "+conformanceProvider(t)+"\n    spec: "+spec+"\n")
	return append(baseEnv(t), "FLUXGIT_CONFIG="+cfg)
}

// The fixture provider's spec lints clean with the provider configured,
// like any third-party spec.
func TestConformanceProviderSpecLint(t *testing.T) {
	if out, errOut, code := runCLI(t, conformanceEnv(t), "spec", "lint", "conformanceprovider/spec"); code != 0 {
		t.Fatalf("conformance provider spec: exit %d\n%s%s", code, out, errOut)
	}
}

// The fixtures answer as the conformance scenarios expect, checked over
// stdio so that a broken fixture shows up without Node too.
func TestConformanceProviderFixtures(t *testing.T) {
	s := startServer(t, conformanceEnv(t))
	meta := modernMeta()
	tests := []struct {
		method string
		params map[string]any
		want   []string
	}{
		{"tools/call", map[string]any{"name": "test_simple_text", "arguments": map[string]any{}},
			[]string{`"text":"This is a simple text response for testing."`}},
		{"tools/call", map[string]any{"name": "test_error_handling", "arguments": map[string]any{}},
			[]string{`"isError":true`, `"text":"This tool intentionally returns an error for testing"`}},
		{"resources/read", map[string]any{"uri": "test://static-text"},
			[]string{`"text":"This is the content of the static text resource."`, `"mimeType":"text/plain"`}},
		{"resources/read", map[string]any{"uri": "test://static-binary"},
			[]string{`"blob":"iVBORw0KGgo`, `"mimeType":"image/png"`}}, // the PNG signature, base64
		{"resources/read", map[string]any{"uri": "test://template/123/data"},
			[]string{`"uri":"test://template/123/data"`, `Data for ID: 123`}},
		{"prompts/get", map[string]any{"name": "test_prompt_with_arguments", "arguments": map[string]any{"arg1": "hello", "arg2": "world"}},
			[]string{`Prompt with arguments: arg1='hello', arg2='world'`}},
		{"prompts/get", map[string]any{"name": "test_prompt_with_embedded_resource", "arguments": map[string]any{"resourceUri": "test://example-resource"}},
			[]string{`"type":"resource"`, `"uri":"test://example-resource"`, `Please process the embedded resource above.`}},
		// json-schema-2020-12: the schema's own $defs (with its $anchor) and
		// its ref into them, allOf/anyOf and if/then/else are served as
		// written (SEP-1613, SEP-2106); x-mcp-header reaches the client
		// (SEP-2243).
		{"tools/list", map[string]any{},
			[]string{`"name":"json_schema_2020_12_tool"`, `"$defs":{"address":{"$anchor":"addressDef","type":"object"`,
				`"address":{"$ref":"#/$defs/address","description":"Where the named one lives."}`,
				`"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}]`,
				`"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},"then":{"required":["phone"]},"else":{"required":["email"]}`,
				`"x-mcp-header":"Region"`}},
		{"completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "test_prompt_with_arguments"},
			"argument": map[string]any{"name": "arg1", "value": "testV"}},
			[]string{`"values":["testValue1","testValue2"]`}},
	}
	for i, tc := range tests {
		tc.params["_meta"] = meta
		r := s.call(i+1, tc.method, tc.params)
		got := r.raw
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s %v: reply lacks %s\n%s", tc.method, tc.params["name"], w, got)
			}
		}
	}
}

// servingRE matches the line fluxgit serve prints once it listens.
var servingRE = regexp.MustCompile(`serving MCP over HTTP at (http://\S+)`)

// startConformanceServer runs `fluxgit serve --transport http` on a free
// loopback port with the conformance provider registered by a
// configuration file, in a fresh directory (its default workspace), and
// returns the endpoint URL. The process is stopped when the test ends.
func startConformanceServer(t *testing.T, sessionMode string) string {
	t.Helper()
	args := []string{"serve", "--transport", "http", "--http-port", "0"}
	// auto is the default: its runs pass no flag, so the suite shows that
	// the default serves the conformance suite and the SDK clients.
	if sessionMode != "auto" {
		args = append(args, "--session-mode", sessionMode)
	}
	cmd := exec.Command(fluxgitBin, args...)
	cmd.Dir = canonicalTempDir(t)
	cmd.Env = conformanceEnv(t)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start fluxgit serve: %v", err)
	}
	logs := &lockedBuffer{}
	urls := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			logs.Write([]byte(line + "\n"))
			if m := servingRE.FindStringSubmatch(line); m != nil {
				select {
				case urls <- m[1]:
				default:
				}
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("fluxgit serve stderr:\n%s", logs.String())
		}
	})
	select {
	case u := <-urls:
		return u
	case <-done:
		t.Fatalf("fluxgit serve exited before listening:\n%s", logs.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("fluxgit serve did not report its address:\n%s", logs.String())
	}
	return ""
}

// check is one entry of a scenario's checks.json.
type check struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	ErrorMessage string `json:"errorMessage"`
}

// scenarioResult is what one scenario produced.
type scenarioResult struct {
	checks []check
}

// passed applies the suite's own baseline rule: a scenario fails when any
// of its checks is a FAILURE or a WARNING.
func (r scenarioResult) passed() bool {
	return !slices.ContainsFunc(r.checks, func(c check) bool { return c.Status == "FAILURE" || c.Status == "WARNING" })
}

// problems lists the failing and warning checks, for messages.
func (r scenarioResult) problems() string {
	var out []string
	for _, c := range r.checks {
		if c.Status == "FAILURE" || c.Status == "WARNING" {
			out = append(out, fmt.Sprintf("%s %s: %s", c.Status, c.ID, c.ErrorMessage))
		}
	}
	return strings.Join(out, "; ")
}

// expectedFailures reads tests/conformance/expected-failures.yaml: per
// session mode, the scenarios known to fail and why.
func expectedFailures(t *testing.T) map[string]map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(conformanceDir, "expected-failures.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]map[string]string
	if err := yaml.Unmarshal(b, &out); err != nil {
		t.Fatalf("expected-failures.yaml: %v", err)
	}
	for mode, entries := range out {
		for scenario, reason := range entries {
			if strings.TrimSpace(reason) == "" {
				t.Fatalf("expected-failures.yaml: %s/%s has no reason; every entry says why it fails", mode, scenario)
			}
		}
	}
	return out
}

// The two pinned versions of the suite (tests/conformance/package.json):
// 0.1.16 runs every server scenario of the 2025-11-25 generation in each
// session mode; 0.2.0-alpha.12, installed under the npm alias
// conformance-0.2, runs the frozen 2026-07-28 requirements.
const (
	suite01 = "@modelcontextprotocol/conformance"
	suite02 = "conformance-0.2"
)

// conformanceCLI is the 0.1.16 suite's command line, run with the Node
// found.
func conformanceCLI(ctx context.Context, env nodeSetup, args ...string) *exec.Cmd {
	return suiteCLI(ctx, env, suite01, args...)
}

// suiteCLI is the command line of the suite installed as pkg.
func suiteCLI(ctx context.Context, env nodeSetup, pkg string, args ...string) *exec.Cmd {
	bin := filepath.Join(env.dir, "node_modules", filepath.FromSlash(pkg), "dist", "index.js")
	return exec.CommandContext(ctx, env.node, append([]string{bin}, args...)...)
}

// serverScenarios asks the suite for its server scenarios.
func serverScenarios(t *testing.T, env nodeSetup) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := conformanceCLI(ctx, env, "list", "--server").Output()
	if err != nil {
		t.Fatalf("conformance list --server: %v", err)
	}
	var names []string
	for _, line := range strings.Split(string(out), "\n") {
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), "- "); ok {
			names = append(names, strings.Fields(name)[0])
		}
	}
	if len(names) == 0 {
		t.Fatalf("conformance list --server named no scenarios:\n%s", out)
	}
	return names
}

// resultDirRE splits a result directory, server-<scenario>-<ISO time with
// : and . replaced by ->, into its scenario.
var resultDirRE = regexp.MustCompile(`^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$`)

// runConformance runs every server scenario of the 0.1.16 suite (pending
// ones included) and returns the results by scenario.
func runConformance(t *testing.T, env nodeSetup, url string) map[string]scenarioResult {
	t.Helper()
	return runSuite(t, env, suite01, "--url", url, "--suite", "all")
}

// runSuite runs the server scenarios of the suite installed as pkg that
// args select and returns the results by scenario.
func runSuite(t *testing.T, env nodeSetup, pkg string, args ...string) map[string]scenarioResult {
	t.Helper()
	outDir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := suiteCLI(ctx, env, pkg, append(append([]string{"server"}, args...), "--output-dir", outDir)...)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	// The exit status only says whether something failed; the per-scenario
	// results below say what, and are compared with the expectations.
	if err := cmd.Run(); err != nil && ctx.Err() != nil {
		t.Fatalf("conformance suite timed out: %v\n%s", err, log.String())
	}
	entries, err := os.ReadDir(outDir)
	if err != nil {
		t.Fatal(err)
	}
	results := map[string]scenarioResult{}
	for _, e := range entries {
		m := resultDirRE.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(outDir, e.Name(), "checks.json"))
		if err != nil {
			t.Fatalf("scenario %s: %v\n%s", m[1], err, log.String())
		}
		var checks []check
		if err := json.Unmarshal(b, &checks); err != nil {
			t.Fatalf("scenario %s: checks.json: %v", m[1], err)
		}
		results[m[1]] = scenarioResult{checks: checks}
	}
	if len(results) == 0 {
		t.Fatalf("the conformance suite wrote no results:\n%s", log.String())
	}
	return results
}

// compareConformance holds the results against the expectations of one
// session mode. It returns the scenarios that failed as expected and one
// problem per deviation: a scenario without a result, a failure not
// listed, a listed scenario that passes.
func compareConformance(scenarios []string, results map[string]scenarioResult, want map[string]string) (expectedFails, problems []string) {
	for _, scenario := range scenarios {
		r, ran := results[scenario]
		reason, listed := want[scenario]
		switch {
		case !ran:
			problems = append(problems, scenario+": the suite recorded no result")
		case r.passed() && listed:
			problems = append(problems, fmt.Sprintf("%s passes now but expected-failures.yaml lists it (%s); remove the entry", scenario, reason))
		case !r.passed() && !listed:
			problems = append(problems, fmt.Sprintf("%s fails: %s", scenario, r.problems()))
		case !r.passed():
			expectedFails = append(expectedFails, scenario)
		}
	}
	sort.Strings(expectedFails)
	return expectedFails, problems
}

// TestCompareConformance pins the comparison rules without Node.
func TestCompareConformance(t *testing.T) {
	pass := scenarioResult{checks: []check{{ID: "a", Status: "SUCCESS"}, {ID: "b", Status: "INFO"}}}
	fail := scenarioResult{checks: []check{{ID: "a", Status: "SUCCESS"}, {ID: "b", Status: "FAILURE", ErrorMessage: "boom"}}}
	warn := scenarioResult{checks: []check{{ID: "w", Status: "WARNING", ErrorMessage: "no session"}}}
	tests := []struct {
		name         string
		results      map[string]scenarioResult
		want         map[string]string
		wantExpected []string
		wantProblems []string
	}{
		{"all pass, nothing listed", map[string]scenarioResult{"s1": pass, "s2": pass}, nil, nil, nil},
		{"listed failure is expected", map[string]scenarioResult{"s1": fail, "s2": pass}, map[string]string{"s1": "why"}, []string{"s1"}, nil},
		{"a warning counts as a failure", map[string]scenarioResult{"s1": warn, "s2": pass}, map[string]string{"s1": "why"}, []string{"s1"}, nil},
		{"unlisted failure is a regression", map[string]scenarioResult{"s1": fail, "s2": pass}, nil, nil, []string{"s1 fails: FAILURE b: boom"}},
		{"unlisted warning is a regression", map[string]scenarioResult{"s1": pass, "s2": warn}, nil, nil, []string{"s2 fails: WARNING w: no session"}},
		{"listed pass is stale", map[string]scenarioResult{"s1": pass, "s2": pass}, map[string]string{"s2": "why"}, nil,
			[]string{"s2 passes now but expected-failures.yaml lists it (why); remove the entry"}},
		{"missing result", map[string]scenarioResult{"s1": pass}, nil, nil, []string{"s2: the suite recorded no result"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gotExpected, gotProblems := compareConformance([]string{"s1", "s2"}, tc.results, tc.want)
			if !slices.Equal(gotExpected, tc.wantExpected) || !slices.Equal(gotProblems, tc.wantProblems) {
				t.Errorf("got expected %q problems %q, want %q %q", gotExpected, gotProblems, tc.wantExpected, tc.wantProblems)
			}
		})
	}
}

// TestResultDirNames pins how a result directory names its scenario.
func TestResultDirNames(t *testing.T) {
	tests := []struct{ dir, scenario string }{
		{"server-tools-call-image-2026-11-30T22-30-08-038Z", "tools-call-image"},
		{"server-server-sse-polling-2026-11-30T22-30-18-101Z", "server-sse-polling"},
		{"server-ping-2026-01-02T03-04-05-006Z", "ping"},
		{"client-initialize-2026-01-02T03-04-05-006Z", ""},
		{"server-ping", ""},
	}
	for _, tc := range tests {
		got := ""
		if m := resultDirRE.FindStringSubmatch(tc.dir); m != nil {
			got = m[1]
		}
		if got != tc.scenario {
			t.Errorf("%s: got scenario %q, want %q", tc.dir, got, tc.scenario)
		}
	}
}

// TestConformanceSuite runs the official MCP conformance suite's server
// scenarios against fluxgit over HTTP in each session mode and compares
// the outcome with tests/conformance/expected-failures.yaml: a scenario
// that fails without being listed is a regression, and a listed scenario
// that passes means the file must be updated.
func TestConformanceSuite(t *testing.T) {
	env := requireNode(t)
	expected := expectedFailures(t)
	scenarios := serverScenarios(t, env)
	modes := []string{"stateful", "auto", "stateless"}
	for mode := range expected {
		if !slices.Contains(modes, mode) {
			t.Errorf("expected-failures.yaml names session mode %q; the modes tested are %v", mode, modes)
		}
	}
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			want := expected[mode]
			for scenario := range want {
				if !slices.Contains(scenarios, scenario) {
					t.Errorf("expected-failures.yaml: %s/%s is not a server scenario of this suite version; remove it", mode, scenario)
				}
			}
			results := runConformance(t, env, startConformanceServer(t, mode))
			failed, problems := compareConformance(scenarios, results, want)
			for _, p := range problems {
				t.Error(p)
			}
			t.Logf("session mode %s: %d scenarios, %d deviations, expected failures: %v", mode, len(scenarios), len(problems), failed)
		})
	}
}

// requirements2026 is what the 0.2 suite's frozen list for 2026-07-28
// (requirements/2026-07-28.yaml in its package) says of server scenarios.
type requirements2026 struct {
	scored    []string // conformance requires every one to pass
	notScored []string // run and reported, never counted (extension, pending)
}

// loadRequirements2026 reads the frozen list from the installed package,
// so the test holds fluxgit to exactly what the pinned suite requires.
func loadRequirements2026(t *testing.T, env nodeSetup) requirements2026 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(env.dir, "node_modules", suite02, "requirements", "2026-07-28.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Server    []string `yaml:"server"`
		NotScored []struct {
			Scenario string `yaml:"scenario"`
			Leg      string `yaml:"leg"`
		} `yaml:"not_scored"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("requirements/2026-07-28.yaml: %v", err)
	}
	req := requirements2026{scored: doc.Server}
	for _, n := range doc.NotScored {
		if n.Leg == "server" {
			req.notScored = append(req.notScored, n.Scenario)
		}
	}
	if len(req.scored) == 0 {
		t.Fatal("requirements/2026-07-28.yaml lists no scored server scenarios")
	}
	return req
}

// expectedFailures2026 reads tests/conformance/expected-failures-2026-07-28.yaml:
// the not-scored scenarios known to fail, each with its reason. A scored
// scenario may not be listed: conformance needs all of them.
func expectedFailures2026(t *testing.T, req requirements2026) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(conformanceDir, "expected-failures-2026-07-28.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]string
	if err := yaml.Unmarshal(b, &out); err != nil {
		t.Fatalf("expected-failures-2026-07-28.yaml: %v", err)
	}
	for scenario, reason := range out {
		switch {
		case strings.TrimSpace(reason) == "":
			t.Errorf("expected-failures-2026-07-28.yaml: %s has no reason; every entry says why it fails", scenario)
		case slices.Contains(req.scored, scenario):
			t.Errorf("expected-failures-2026-07-28.yaml: %s is scored for 2026-07-28 and must pass; it cannot be an expected failure", scenario)
		case !slices.Contains(req.notScored, scenario):
			t.Errorf("expected-failures-2026-07-28.yaml: %s is not a server scenario of the 2026-07-28 requirements; remove it", scenario)
		}
	}
	return out
}

// TestConformance2026 runs the 0.2 suite's 2026-07-28 requirements
// (`server --requirements 2026-07-28`) against fluxgit in its default
// session mode. The session mode only changes how legacy requests are
// served; every scenario here speaks 2026-07-28, so one mode covers them.
// Every scored scenario must pass; the not-scored ones (extensions,
// pending) are held to expected-failures-2026-07-28.yaml, and a listed
// one that passes fails the test.
func TestConformance2026(t *testing.T) {
	env := requireNode(t)
	req := loadRequirements2026(t, env)
	want := expectedFailures2026(t, req)
	start := time.Now()
	results := runSuite(t, env, suite02, "--url", startConformanceServer(t, "auto"), "--requirements", "2026-07-28")
	all := append(slices.Clone(req.scored), req.notScored...)
	failed, problems := compareConformance(all, results, want)
	for _, p := range problems {
		t.Error(p)
	}
	passed := 0
	for _, s := range req.scored {
		if r, ok := results[s]; ok && r.passed() {
			passed++
		}
	}
	t.Logf("2026-07-28 requirements in %s: %d/%d scored scenarios pass; not scored: %d run, expected failures: %v",
		time.Since(start).Round(time.Millisecond), passed, len(req.scored), len(req.notScored), failed)
}

// tsClientReport is what tests/conformance/tsclient.mjs prints.
type tsClientReport struct {
	ProtocolVersion string   `json:"protocolVersion"`
	SessionID       string   `json:"sessionId"`
	ServerName      string   `json:"serverName"`
	Tools           []string `json:"tools"`
	SimpleText      string   `json:"simpleText"`
	StatusBefore    string   `json:"statusBefore"`
	CheckInError    bool     `json:"checkInError"`
	WorkerID        string   `json:"workerId"`
	UpdatedURI      string   `json:"updatedUri"`
	StatusAfter     string   `json:"statusAfter"`
	Error           string   `json:"error"`
}

// TestTypeScriptSDKClient drives fluxgit over legacy Streamable HTTP with
// the official TypeScript SDK client: list and call tools, read
// shift://status, subscribe to it and see the update a check-in causes.
func TestTypeScriptSDKClient(t *testing.T) {
	env := requireNode(t)
	for _, mode := range []string{"stateful", "auto"} {
		t.Run(mode, func(t *testing.T) {
			url := startConformanceServer(t, mode)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, env.node, filepath.Join(env.dir, "tsclient.mjs"), url)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			runErr := cmd.Run()
			var got tsClientReport
			if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &got); err != nil {
				t.Fatalf("tsclient output: %v (run: %v)\nstdout: %s\nstderr: %s", err, runErr, stdout.String(), stderr.String())
			}
			if runErr != nil || got.Error != "" {
				t.Fatalf("tsclient failed: %v: %s\nstderr: %s", runErr, got.Error, stderr.String())
			}
			checks := []struct {
				what string
				ok   bool
				got  any
			}{
				{"a session id (legacy Streamable HTTP)", got.SessionID != "", got.SessionID},
				{"a negotiated protocol version", got.ProtocolVersion != "", got.ProtocolVersion},
				{"server name fluxgit", got.ServerName == "fluxgit", got.ServerName},
				{"tools/list names the built-in and the provider's tools",
					slices.Contains(got.Tools, "shift_check_in") && slices.Contains(got.Tools, "repo.status") && slices.Contains(got.Tools, "test_simple_text"), got.Tools},
				{"the provider's tool answers", got.SimpleText == "This is a simple text response for testing.", got.SimpleText},
				{"an empty roster before the check-in", strings.Contains(got.StatusBefore, "No agents are currently active."), got.StatusBefore},
				{"check-in succeeds with a worker id", !got.CheckInError && len(got.WorkerID) == 6, got.WorkerID},
				{"the subscription reports shift://status updated", got.UpdatedURI == "shift://status", got.UpdatedURI},
				{"the roster read after shows the worker", got.WorkerID != "" && strings.Contains(got.StatusAfter, got.WorkerID) &&
					strings.Contains(got.StatusAfter, "typescript sdk client over http"), got.StatusAfter},
			}
			for _, c := range checks {
				if !c.ok {
					t.Errorf("want %s, got %v", c.what, c.got)
				}
			}
		})
	}
}
