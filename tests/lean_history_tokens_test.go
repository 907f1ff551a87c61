package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tiktoken-go/tokenizer"
)

// lhCodec is o200k_base, the tokenizer the budgets are counted in.
var lhCodec = sync.OnceValues(func() (tokenizer.Codec, error) { return tokenizer.Get(tokenizer.O200kBase) })

func lhTokens(t *testing.T, s string) int {
	t.Helper()
	c, err := lhCodec()
	if err != nil {
		t.Fatalf("load o200k_base: %v", err)
	}
	n, err := c.Count(s)
	if err != nil {
		t.Fatalf("count tokens: %v", err)
	}
	return n
}

// lhRepo runs git in dir at a fixed clock (each command one minute after
// the last, so tag and history order is by time as in a real repository)
// and returns stdout alone, as a shell user sees it piped.
type lhRepo struct {
	t     *testing.T
	dir   string
	clock int64
}

func (r *lhRepo) git(args ...string) string {
	r.t.Helper()
	r.clock += 60
	date := fmt.Sprintf("%d +0100", r.clock)
	cmd := exec.Command("git", append([]string{"-C", r.dir}, args...)...)
	cmd.Env = append(gitEnv(), "GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		r.t.Fatalf("git %q: %v\n%s", args, err, stderr.String())
	}
	return string(out)
}

func (r *lhRepo) write(rel, content string) { writeFile(r.t, filepath.Join(r.dir, rel), content) }

// lhSource is a Go file of n functions whose bodies depend on seed, so
// each edit changes a few lines in the middle of a real-looking file.
func lhSource(pkg string, n, seed int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "package %s\n\nimport \"fmt\"\n\n", pkg)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "// Step%d applies rule %d of the %s pipeline.\nfunc Step%d(total int) int {\n\tif total > %d {\n\t\treturn total - %d\n\t}\n\tfmt.Println(\"step %d\")\n\treturn total + %d\n}\n\n", i, i, pkg, i, 100*i+seed%7, i+seed%3, i, (i*seed)%11)
	}
	return b.String()
}

// busyHistoryRepo is the busy fixture, as far as these four tools
// read it: 24 commits on main with 10 tags, a remote with its tracking
// branches, a feature branch 3 commits ahead of main (checked out, its
// last commit a rename with a body), a stash, and a dirty work tree.
func busyHistoryRepo(t *testing.T) string {
	r := &lhRepo{t: t, dir: filepath.Join(canonicalTempDir(t), "shop"), clock: 1767225600}
	if err := os.Mkdir(r.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	r.git("init", "-q", "-b", "main")
	pkgs := []string{"cart", "checkout", "payment", "catalog"}
	scopes := []string{"feat", "fix", "refactor", "docs", "test", "chore"}
	verbs := []string{"round totals half-up", "validate the coupon code", "cache the price list", "retry declined cards once", "log the order id", "split the tax table", "drop the legacy discount path", "explain the refund rules"}
	for i := 0; i < 24; i++ {
		p := pkgs[i%len(pkgs)]
		r.write("src/"+p+"/"+p+".go", lhSource(p, 12, i))
		if i%5 == 0 {
			r.write("docs/"+p+".md", fmt.Sprintf("# %s\n\nRevision %d of the %s notes.\n", p, i, p))
		}
		r.git("add", "-A")
		r.git("commit", "-q", "-m", fmt.Sprintf("%s(%s): %s", scopes[i%len(scopes)], p, verbs[i%len(verbs)]))
		if i >= 14 {
			if i%2 == 0 {
				r.git("tag", "-a", fmt.Sprintf("v1.%d.0", i-14), "-m", fmt.Sprintf("release 1.%d.0", i-14))
			} else {
				r.git("tag", fmt.Sprintf("v1.%d.0", i-14))
			}
		}
	}
	bare := filepath.Join(canonicalTempDir(t), "origin.git")
	r.git("init", "-q", "--bare", bare)
	r.git("remote", "add", "origin", bare)
	r.git("push", "-q", "origin", "main", "main:refs/heads/release/1.x")
	r.git("fetch", "-q", "origin")
	r.git("remote", "set-head", "origin", "main")
	r.git("checkout", "-q", "-b", "feature/gift-cards")
	for i := 0; i < 2; i++ {
		r.write("src/giftcard/giftcard.go", lhSource("giftcard", 6+i, 40+i))
		r.git("add", "-A")
		r.git("commit", "-q", "-m", fmt.Sprintf("feat(giftcard): gift card balance, step %d", i+1))
	}
	r.git("mv", "docs/cart.md", "docs/basket.md")
	r.write("src/cart/cart.go", lhSource("cart", 12, 99))
	r.write("src/giftcard/redeem.go", lhSource("giftcard", 3, 7))
	r.git("add", "-A")
	r.git("commit", "-q", "-m", "feat(giftcard): redeem gift cards at checkout\n\nThe basket doc replaces the cart doc; totals use the new rounding.\n\nRefs: SHOP-204")
	r.write("src/payment/payment.go", lhSource("payment", 12, 55))
	r.git("stash", "-q")
	// The dirty tree: two modified files, one staged change, one untracked.
	r.write("src/checkout/checkout.go", lhSource("checkout", 12, 61))
	r.write("src/catalog/catalog.go", lhSource("catalog", 12, 62))
	r.write("docs/payment.md", "# payment\n\nStaged note.\n")
	r.git("add", "docs/payment.md")
	r.write("notes.txt", "untracked\n")
	return r.dir
}

// TestLeanHistoryToolsCostAtMostRawGit: on the busy fixture, repo.history,
// repo.refs, diff.text and commit.details through the real binary, in the
// default (lean) shape, cost at most 1.5x the o200k tokens of the raw git
// an expert would run for the same facts, and every fact of the raw output
// is in the result.
func TestLeanHistoryToolsCostAtMostRawGit(t *testing.T) {
	repo := busyHistoryRepo(t)
	r := &lhRepo{t: t, dir: repo}
	s := startServer(t, append(baseEnv(t), "FLUXGIT_MCP_AUDIT_DISABLED=1"))
	initialize(t, s)
	id := 0
	call := func(tool string, args map[string]any) (string, map[string]any) {
		t.Helper()
		id++
		args["repoPath"] = repo
		resp := s.call(id, "tools/call", map[string]any{"name": tool, "arguments": args})
		p := toolPayload(t, resp)
		if p["error"] != nil {
			t.Fatalf("%s: %v", tool, p["error"])
		}
		// toolPayload checked that content[0].text is the compact JSON of
		// structuredContent: what the model receives, counted as sent.
		var res struct {
			Content []struct{ Text string } `json:"content"`
		}
		if err := json.Unmarshal(resp.Result, &res); err != nil {
			t.Fatal(err)
		}
		data, _ := p["data"].(map[string]any)
		return res.Content[0].Text, data
	}

	headID := strings.TrimSpace(r.git("rev-parse", "HEAD"))
	cases := []struct {
		tool  string
		args  map[string]any
		raw   [][]string
		facts func(t *testing.T, raw []string, data map[string]any)
	}{
		{"repo.history", map[string]any{"limit": 10}, [][]string{{"log", "--oneline", "-10"}},
			func(t *testing.T, raw []string, d map[string]any) {
				want := strings.Split(strings.TrimSuffix(raw[0], "\n"), "\n")
				got := lhStrings(d["commits"])
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("commits %q, want git log --oneline's %q", got, want)
				}
				if d["nextCursor"] != "10" {
					t.Errorf("nextCursor %v, want 10", d["nextCursor"])
				}
			}},
		{"repo.refs", map[string]any{}, [][]string{{"branch", "-a"}, {"tag", "--sort=-creatordate"}, {"stash", "list"}},
			func(t *testing.T, raw []string, d map[string]any) {
				if d["head"] != "feature/gift-cards" {
					t.Errorf("head %v", d["head"])
				}
				for _, want := range []struct {
					key  string
					list string
				}{
					{"branches", "feature/gift-cards main"},
					{"remoteBranches", "origin/main origin/release/1.x"},
					{"tags", strings.Join(strings.Fields(raw[1]), " ")},
					{"remotes", ""}, // origin/main and origin/release/1.x say origin
				} {
					if got := strings.Join(lhStrings(d[want.key]), " "); got != want.list {
						t.Errorf("%s = %q, want %q", want.key, got, want.list)
					}
				}
				stash := lhStrings(d["stashes"])
				if len(stash) != 1 || !strings.Contains(raw[2], "stash@{0}: "+stash[0]) {
					t.Errorf("stashes %q, git stash list %q", stash, raw[2])
				}
				if _, ok := d["omitted"]; ok {
					t.Errorf("nothing was cut, yet omitted = %v", d["omitted"])
				}
			}},
		{"diff.text", map[string]any{}, [][]string{{"diff"}},
			func(t *testing.T, raw []string, d map[string]any) {
				if want := lhWithoutRepeatedHeaders(raw[0]); d["diff"] != want {
					t.Errorf("diff differs from git diff without the headers that repeat the diff line:\n%v\n---\n%s", d["diff"], want)
				}
				if len(d) != 1 {
					t.Errorf("an uncut diff carries only diff: %v", d)
				}
			}},
		{"commit.details", map[string]any{"commit": "HEAD"}, [][]string{{"show", "--name-status", "HEAD"}},
			func(t *testing.T, raw []string, d map[string]any) {
				parent := strings.TrimSpace(r.git("rev-parse", "--short", "HEAD^"))
				if d["commit"] != headID || strings.Join(lhStrings(d["parents"]), " ") != parent {
					t.Errorf("commit %v parents %v, want %s %s", d["commit"], d["parents"], headID, parent)
				}
				if d["author"] != "Ada Lovelace <ada@example.com>" || !strings.HasPrefix(fmt.Sprint(d["time"]), "2026-01-01T") {
					t.Errorf("author %v time %v", d["author"], d["time"])
				}
				if !strings.Contains(fmt.Sprint(d["message"]), "Refs: SHOP-204") {
					t.Errorf("message %q", d["message"])
				}
				want := []string{"R100 docs/cart.md -> docs/basket.md", "M src/cart/cart.go", "A src/giftcard/redeem.go"}
				if got := lhStrings(d["files"]); strings.Join(got, "|") != strings.Join(want, "|") {
					t.Errorf("files %q, want %q", got, want)
				}
			}},
	}
	var sumFlux, sumRaw int
	for _, c := range cases {
		t.Run(c.tool, func(t *testing.T) {
			var raws []string
			rawTokens := 0
			var cmds []string
			for _, argv := range c.raw {
				out := r.git(argv...)
				raws = append(raws, out)
				rawTokens += lhTokens(t, out)
				cmds = append(cmds, "git "+strings.Join(argv, " "))
			}
			text, data := call(c.tool, c.args)
			c.facts(t, raws, data)
			got := lhTokens(t, text)
			sumFlux += got
			sumRaw += rawTokens
			ratio := float64(got) / float64(rawTokens)
			t.Logf("%s: %d o200k tokens; raw (%s): %d; ratio %.2f", c.tool, got, strings.Join(cmds, " + "), rawTokens, ratio)
			if ratio > 1.5 {
				t.Errorf("%s costs %d tokens, %.2fx the raw git's %d (budget 1.5x):\n%s", c.tool, got, ratio, rawTokens, text)
			}
		})
	}
	// The 1.0x is for eight tools together; these four are logged.
	t.Logf("together: %d vs raw %d, ratio %.2f", sumFlux, sumRaw, float64(sumFlux)/float64(sumRaw))
}

// lhStrings returns a JSON array of strings as a Go slice (nil otherwise).
func lhStrings(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, e := range list {
		s, _ := e.(string)
		out = append(out, s)
	}
	return out
}

// lhWithoutRepeatedHeaders is git's patch minus exactly the header lines the
// lean diff.text leaves out: in each file's header (from its "diff " line to
// its first "@@"), index lines without a mode other than 100644 and the
// ---/+++ lines (the fixture has no renames, new or deleted files, so each
// of them names the diff line's paths).
func lhWithoutRepeatedHeaders(patch string) string {
	var b strings.Builder
	header := false
	for _, line := range strings.SplitAfter(patch, "\n") {
		switch {
		case strings.HasPrefix(line, "diff "):
			header = true
		case strings.HasPrefix(line, "@@"):
			header = false
		case header && (strings.HasPrefix(line, "--- ") || strings.HasPrefix(line, "+++ ")):
			continue
		case header && strings.HasPrefix(line, "index "):
			if f := strings.Fields(line); len(f) == 2 || (len(f) == 3 && f[2] == "100644") {
				continue
			}
		}
		b.WriteString(line)
	}
	return b.String()
}
