package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// busyRepo builds the issue-23 busy work tree: a feature branch two commits
// ahead of its upstream and one behind, a stash, a merge of another branch
// stopped on a conflict, and beside it a staged new file, an unstaged edit,
// a staged-then-edited file and untracked files.
func busyRepo(t testing.TB) string {
	t.Helper()
	root := canonicalTempDir(t)
	origin, dir := filepath.Join(root, "origin.git"), filepath.Join(root, "webshop")
	git(t, root, "init", "-q", "--bare", "-b", "main", origin)
	git(t, root, "clone", "-q", origin, dir)
	files := map[string]string{
		"README.md":              "# webshop\n",
		"go.mod":                 "module example.com/webshop\n\ngo 1.22\n",
		"src/cart/totals.go":     "package cart\n\nfunc Total(xs []int) (n int) {\n\tfor _, x := range xs {\n\t\tn += x\n\t}\n\treturn n\n}\n",
		"src/cart/cart_test.go":  "package cart\n",
		"src/checkout/pay.go":    "package checkout\n\nconst Currency = \"EUR\"\n",
		"docs/architecture.md":   "# Architecture\n",
		"internal/config/env.go": "package config\n",
	}
	for p, c := range files {
		writeFile(t, filepath.Join(dir, p), c)
	}
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "Initial import of the webshop")
	for i, subj := range []string{"Add currency to checkout", "Document the architecture", "Read the config from the environment", "Tidy the cart tests"} {
		writeFile(t, filepath.Join(dir, "docs", "log.md"), strings.Repeat("entry\n", i+1))
		git(t, dir, "add", "-A")
		git(t, dir, "commit", "-q", "-m", subj)
	}
	for i := 1; i <= 10; i++ {
		git(t, dir, "tag", fmt.Sprintf("v1.%d.0", i))
	}
	git(t, dir, "push", "-q", "origin", "main")
	git(t, dir, "checkout", "-q", "-b", "feature/cart-totals")
	git(t, dir, "push", "-q", "-u", "origin", "feature/cart-totals")
	// One commit on the upstream the branch does not have (behind 1).
	other := filepath.Join(root, "other")
	git(t, root, "clone", "-q", "-b", "feature/cart-totals", origin, other)
	writeFile(t, filepath.Join(other, "docs", "upstream.md"), "from a colleague\n")
	git(t, other, "add", "-A")
	git(t, other, "commit", "-q", "-m", "Note from a colleague")
	git(t, other, "push", "-q", "origin", "feature/cart-totals")
	git(t, dir, "fetch", "-q", "origin")
	// Two local commits (ahead 2), one of them touching pay.go.
	writeFile(t, filepath.Join(dir, "src", "cart", "totals.go"), files["src/cart/totals.go"]+"\n// Totals are in cents.\n")
	git(t, dir, "commit", "-q", "-am", "Compute totals in cents")
	writeFile(t, filepath.Join(dir, "src", "checkout", "pay.go"), "package checkout\n\nconst Currency = \"USD\"\n")
	git(t, dir, "commit", "-q", "-am", "Switch checkout to dollars")
	// A branch off main that changes pay.go the other way.
	git(t, dir, "branch", "pricing", "main")
	git(t, dir, "checkout", "-q", "pricing")
	writeFile(t, filepath.Join(dir, "src", "checkout", "pay.go"), "package checkout\n\nconst Currency = \"GBP\"\n")
	writeFile(t, filepath.Join(dir, "src", "checkout", "rates.go"), "package checkout\n\nconst Rate = 1\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "Price in pounds")
	git(t, dir, "checkout", "-q", "feature/cart-totals")
	// A stash.
	writeFile(t, filepath.Join(dir, "README.md"), "# webshop\n\nWork in progress.\n")
	git(t, dir, "stash", "-q")
	// The merge stops on pay.go (rates.go is staged by the merge).
	cmd := exec.Command("git", "-C", dir, "merge", "-q", "pricing")
	cmd.Env = gitEnv()
	if err := cmd.Run(); err == nil {
		t.Fatal("merge did not conflict")
	}
	// Work beside the conflict.
	writeFile(t, filepath.Join(dir, "src", "cart", "discount.go"), "package cart\n")
	git(t, dir, "add", "src/cart/discount.go")
	writeFile(t, filepath.Join(dir, "internal", "config", "env.go"), "package config\n\n// Env is read once.\n")
	git(t, dir, "add", "internal/config/env.go")
	writeFile(t, filepath.Join(dir, "internal", "config", "env.go"), "package config\n\n// Env is read once, at start.\n")
	writeFile(t, filepath.Join(dir, "src", "cart", "cart_test.go"), "package cart\n\n// TODO: table tests\n")
	writeFile(t, filepath.Join(dir, "notes", "todo.md"), "- totals\n")
	writeFile(t, filepath.Join(dir, "scratch.txt"), "scratch\n")
	return dir
}

// countTokens counts s in o200k_base tokens (the tokenizer of
// catalog_tokens_test.go).
func countTokens(t testing.TB, s string) int {
	t.Helper()
	return o200kTokens(t, s)
}

// leanEnvelope is the compact JSON the model receives once the host sends
// the lean envelope: tool, readOnly and data only (tier, source: local-git
// and repoPath are the host's to leave out; counted without them here so
// this test measures the data shapes whichever host it runs against).
func leanEnvelope(t testing.TB, text string) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(struct {
		Tool     json.RawMessage `json:"tool"`
		ReadOnly json.RawMessage `json:"readOnly"`
		Data     json.RawMessage `json:"data"`
	}{m["tool"], m["readOnly"], m["data"]}); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// callText is the compact JSON payload of one tools/call.
func callText(t testing.TB, s *server, id int, tool string, args map[string]any) (string, map[string]any) {
	t.Helper()
	r := s.call(id, "tools/call", map[string]any{"name": tool, "arguments": args})
	p := toolPayload(t, r)
	if p["error"] != nil {
		t.Fatalf("%s: %v", tool, p["error"])
	}
	b, _ := json.Marshal(p["data"])
	var data map[string]any
	if err := json.Unmarshal(b, &data); err != nil {
		t.Fatal(err)
	}
	var res struct {
		Content []struct{ Text string } `json:"content"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil {
		t.Fatal(err)
	}
	return res.Content[0].Text, data
}

// On the busy work tree, repo.status, worktree.changes and repo.brief in
// the default (lean) shape carry every fact an agent needs and cost at
// most 1.5x the o200k tokens of the raw git an expert runs for the same
// facts.
func TestLeanStatusToolsCostLikeRawGit(t *testing.T) {
	repo := busyRepo(t)
	raw := func(cmds ...[]string) (string, int) {
		var all strings.Builder
		for _, c := range cmds {
			all.WriteString(git(t, repo, c...))
		}
		return all.String(), countTokens(t, all.String())
	}
	s := startServer(t, baseEnv(t))
	defer s.stop()
	initialize(t, s)
	args := map[string]any{"repoPath": repo}
	anyString := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	for i, tc := range []struct {
		tool  string
		raw   [][]string
		facts []string // substrings of the data's JSON
	}{
		{"repo.status", [][]string{{"status", "-sb"}},
			[]string{`"branch":"feature/cart-totals"`, `"upstream":"origin/feature/cart-totals"`, `"ahead":2`, `"behind":1`,
				`"UU src/checkout/pay.go"`, `"A  src/checkout/rates.go"`, `"A  src/cart/discount.go"`, `"MM internal/config/env.go"`,
				`" M src/cart/cart_test.go"`, `"?? notes/"`, `"?? scratch.txt"`}},
		{"worktree.changes", [][]string{{"status", "--short"}},
			[]string{`"entries":["MM internal/config/env.go"," M src/cart/cart_test.go","A  src/cart/discount.go","A  src/checkout/rates.go","UU src/checkout/pay.go","?? notes/","?? scratch.txt"]`}},
		{"repo.brief", [][]string{{"status", "-sb"}, {"log", "--oneline", "-10"}, {"stash", "list"}},
			[]string{`"branch":"feature/cart-totals"`, `"upstream":"origin/feature/cart-totals"`, `"ahead":2`, `"behind":1`,
				`"operationInProgress":"merge"`, `"staged":3`, `"unstaged":2`, `"untracked":2`, `"conflicted":1`, `"stashes":1`,
				`Switch checkout to dollars"`, `Initial import of the webshop"`}}, // no conflict.read hint: conflicted says it
	} {
		t.Run(tc.tool, func(t *testing.T) {
			text, data := callText(t, s, i+2, tc.tool, args)
			js := anyString(data)
			for _, f := range tc.facts {
				if !strings.Contains(js, f) {
					t.Errorf("lean data lacks %s:\n%s", f, js)
				}
			}
			lean := leanEnvelope(t, text)
			got := countTokens(t, lean)
			rawText, want := raw(tc.raw...)
			t.Logf("%s: %d o200k tokens (payload %d), raw git %d (%.2fx)\n%s\n--- raw:\n%s", tc.tool, got, countTokens(t, text), want, float64(got)/float64(want), lean, rawText)
			if float64(got) > 1.5*float64(want) {
				t.Errorf("%s costs %d tokens, more than 1.5x the %d of raw git", tc.tool, got, want)
			}
		})
	}
}

// With FLUXGIT_MCP_RESULT_SHAPE=reference the three tools answer in the
// reference's full shapes, which the host validates against their
// referenceOutputSchema.
func TestStatusToolsReferenceShape(t *testing.T) {
	repo := busyRepo(t)
	s := startServer(t, append(baseEnv(t), "FLUXGIT_MCP_RESULT_SHAPE=reference"))
	defer s.stop()
	initialize(t, s)
	args := map[string]any{"repoPath": repo}
	for i, tc := range []struct {
		tool string
		keys []string
	}{
		{"repo.status", []string{"branch", "detached", "oid", "upstream", "ahead", "behind", "clean", "changedFiles", "entries", "truncated"}},
		{"worktree.changes", []string{"staged", "unstaged", "untracked", "stagedCount", "unstagedCount", "untrackedCount", "truncated"}},
		{"repo.brief", []string{"head", "operationInProgress", "workingTree", "stashes", "submodules", "recentCommits", "conventions", "hints", "truncated"}},
	} {
		text, data := callText(t, s, i+2, tc.tool, args)
		for _, k := range tc.keys {
			if _, ok := data[k]; !ok {
				t.Errorf("%s: reference data lacks %s: %s", tc.tool, k, text)
			}
		}
		if len(data) != len(tc.keys) {
			t.Errorf("%s: reference data has %d fields, want %d: %s", tc.tool, len(data), len(tc.keys), text)
		}
	}
}
