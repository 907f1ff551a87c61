// Package tokenbench measures how many tokens an agent spends getting its
// bearings in a git repository with raw git commands and with fluxgit's
// tools, on fixtures generated deterministically from fixed seeds. See the
// "Token benchmark" section of README.md.
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

	"github.com/tiktoken-go/tokenizer"
)

var (
	update = flag.Bool("update", false, "rewrite the committed results of the mode run (with -full: both modes) and the README table")
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
}

type callResult struct {
	File      string          `json:"file"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	IsError   bool            `json:"isError"`
	counts
	SHA256 string `json:"sha256"`
	// BudgetTokens is the o200k count this answer may not exceed; -update
	// sets it to the current count, so growth shows up in review.
	BudgetTokens int `json:"budgetTokens"`
}

type sideTotal struct {
	Calls int `json:"calls"`
	counts
}

type scenarioResult struct {
	Name          string       `json:"name"`
	Seed          uint64       `json:"seed"`
	About         string       `json:"about"`
	FixtureSHA256 string       `json:"fixtureSha256"`
	Raw           []rawResult  `json:"raw"`
	Fluxgit       []callResult `json:"fluxgit"`
	RawTotal      sideTotal    `json:"rawTotal"`
	FluxgitTotal  sideTotal    `json:"fluxgitTotal"`
	// Ratio is fluxgit o200k tokens divided by raw git o200k tokens.
	Ratio float64 `json:"ratio"`
}

type results struct {
	Mode            string            `json:"mode"`
	GitVersion      string            `json:"gitVersion"`
	ProtocolVersion string            `json:"protocolVersion"`
	Tokenizers      map[string]string `json:"tokenizers"`
	PathPlaceholder string            `json:"pathPlaceholder"`
	Normalized      []string          `json:"normalized"`
	Scenarios       []scenarioResult  `json:"scenarios"`
	RawTotal        sideTotal         `json:"rawTotal"`
	FluxgitTotal    sideTotal         `json:"fluxgitTotal"`
	Ratio           float64           `json:"ratio"`
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
	t.Helper()
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
	for _, sc := range scenarios {
		sr := runScenario(t, sc, sz, filepath.Join(work, sc.name), filepath.Join(out, sc.name))
		res.Scenarios = append(res.Scenarios, sr)
		res.RawTotal.Calls += sr.RawTotal.Calls
		res.RawTotal.add(sr.RawTotal.counts)
		res.FluxgitTotal.Calls += sr.FluxgitTotal.Calls
		res.FluxgitTotal.add(sr.FluxgitTotal.counts)
	}
	res.Ratio = ratio(res.FluxgitTotal.O200kTokens, res.RawTotal.O200kTokens)
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(out, "results.json"), append(b, '\n'))
	writeFile(t, filepath.Join(out, "SHA256SUMS"), []byte(sumsOf(t, out)))
	return res
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

	env := f.gitEnv()
	for i, rc := range b.raw {
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
			t.Fatalf("%s: %v: %v", sc.name, rc.argv, err)
		}
		text := rep.Replace(buf.String())
		argv := make([]string, len(rc.argv))
		for j, a := range rc.argv {
			argv[j] = rep.Replace(a)
		}
		if code != rc.exit {
			t.Errorf("%s: %s exited %d, the fixture is built for %d:\n%s", sc.name, strings.Join(argv, " "), code, rc.exit, text)
		}
		if (text == "") != rc.empty {
			t.Errorf("%s: %s printed %d bytes; the fixture is built for empty=%v", sc.name, strings.Join(argv, " "), len(text), rc.empty)
		}
		c, err := countText(text)
		if err != nil {
			t.Fatal(err)
		}
		file := fmt.Sprintf("raw/%02d-%s.txt", i+1, slug(argv))
		writeFile(t, filepath.Join(out, filepath.FromSlash(file)), []byte(text))
		sr.Raw = append(sr.Raw, rawResult{File: file, Cwd: rep.Replace(rc.dir), Argv: argv, ExitCode: code, counts: c, SHA256: sum([]byte(text))})
		sr.RawTotal.Calls++
		sr.RawTotal.add(c)
	}

	// Every tool: some scenarios call tools outside the default core
	// toolset (worktree.list, fleet.*).
	client, err := startMCP(fluxgitBin, append(fluxgitEnv(f), "FLUXGIT_TOOLSETS=all"))
	if err != nil {
		t.Fatalf("%s: %v", sc.name, err)
	}
	defer client.close()
	for i, call := range b.calls {
		text, isErr, err := client.callTool(call.tool, call.args)
		if err != nil {
			t.Fatalf("%s: %v", sc.name, err)
		}
		text = elapsedRe.ReplaceAllString(rep.Replace(text), elapsedFixed)
		if isErr {
			t.Errorf("%s: %s returned isError:\n%s", sc.name, call.tool, text)
		}
		argsJSON, err := json.Marshal(call.args)
		if err != nil {
			t.Fatal(err)
		}
		c, err := countText(text)
		if err != nil {
			t.Fatal(err)
		}
		file := fmt.Sprintf("fluxgit/%02d-%s.txt", i+1, call.tool)
		writeFile(t, filepath.Join(out, filepath.FromSlash(file)), []byte(text))
		sr.Fluxgit = append(sr.Fluxgit, callResult{File: file, Tool: call.tool, Arguments: json.RawMessage(rep.Replace(string(argsJSON))),
			IsError: isErr, counts: c, SHA256: sum([]byte(text)), BudgetTokens: c.O200kTokens})
		sr.FluxgitTotal.Calls++
		sr.FluxgitTotal.add(c)
	}
	sr.Ratio = ratio(sr.FluxgitTotal.O200kTokens, sr.RawTotal.O200kTokens)
	return sr
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
