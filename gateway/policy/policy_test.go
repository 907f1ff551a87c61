package policy

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Every way a policy file can be wrong stops Load with an error that names
// the file and what is wrong.
func TestLoadFailures(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name    string
		content string
		want    string
	}{
		{"empty", "  \n", "is empty"},
		{"yaml syntax", "version: [1\n", "not valid YAML"},
		{"json syntax", `{"version": 1,`, "not valid JSON"},
		{"json duplicate key", `{"version": 1, "version": 1}`, `repeats the key "version" in $`},
		{"yaml duplicate key", "version: 1\nversion: 1\n", "not valid YAML"},
		{"two documents", "version: 1\n---\nversion: 1\n", "more than one YAML document"},
		{"not an object", "- 1\n", "must be an object"},
		{"no version", "rules: []\n", "missing required key version"},
		{"version 2", "version: 2\n", "at /version: unsupported policy version 2"},
		{"version string", "version: \"1\"\n", "unsupported policy version \"1\""},
		{"unknown top key", "version: 1\nextra: true\n", "at /: additionalProperties 'extra' not allowed"},
		{"bad default", "version: 1\ndefault: maybe\n", "at /default:"},
		{"rule without name", "version: 1\nrules:\n  - agents: [a]\n", "at /rules/0: missing properties: 'name'"},
		{"rule without agents", "version: 1\nrules:\n  - name: r\n", "at /rules/0: missing properties: 'agents'"},
		{"empty agents", "version: 1\nrules:\n  - name: r\n    agents: []\n", "at /rules/0/agents:"},
		{"unknown operation", "version: 1\nrules:\n  - name: r\n    agents: [a]\n    operations: [amend]\n", "at /rules/0/operations/0:"},
		{"unknown rule key", "version: 1\nrules:\n  - name: r\n    agents: [a]\n    paths: [/x]\n", "additionalProperties 'paths' not allowed"},
		{"duplicate rule name", "version: 1\nrules:\n  - name: r\n    agents: [a]\n  - name: r\n    agents: [b]\n", `at /rules/1/name: rule name "r" is already used by /rules/0`},
		{"bad agent glob", "version: 1\nrules:\n  - name: r\n    agents: [\"a[\"]\n", `at /rules/0/agents/0: "a[" is not a valid glob`},
		{"bad ref glob", "version: 1\nrules:\n  - name: r\n    agents: [a]\n    refs: [main, \"x[\"]\n", "at /rules/0/refs/1:"},
		{"relative prefix", "version: 1\nrules:\n  - name: r\n    agents: [a]\n    pathConstraints: [work]\n", `at /rules/0/pathConstraints/0: path prefix "work" is not absolute`},
		{"non-string key", "version: 1\n? [a]\n: 1\n", "invalid map key"},
		{"numeric key", "version: 1\n1: x\n", "keys must be strings"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := write(t, dir, strings.ReplaceAll(tc.name, " ", "-")+".yaml", tc.content)
			p, err := Load(f)
			if err == nil {
				t.Fatalf("Load accepted %q: %v", tc.content, p)
			}
			if !strings.Contains(err.Error(), f) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not name the file and %q", err, tc.want)
			}
		})
	}
	t.Run("missing", func(t *testing.T) {
		f := filepath.Join(dir, "nope.yaml")
		_, err := Load(f)
		if err == nil || !strings.Contains(err.Error(), f) || !strings.Contains(err.Error(), "does not exist") {
			t.Fatalf("error %v, want one naming %s as missing", err, f)
		}
	})
	t.Run("directory", func(t *testing.T) {
		_, err := Load(dir)
		if err == nil || !strings.Contains(err.Error(), "is a directory") {
			t.Fatalf("error %v, want 'is a directory'", err)
		}
	})
	t.Run("parent is a file", func(t *testing.T) {
		f := write(t, dir, "plain", "version: 1\n")
		_, err := Load(filepath.Join(f, "policy.yaml"))
		if err == nil || !strings.Contains(err.Error(), "cannot be read") || !strings.Contains(err.Error(), f) {
			t.Fatalf("error %v, want 'cannot be read' naming the file", err)
		}
	})
	t.Run("unreadable", func(t *testing.T) {
		if runtime.GOOS == "windows" || os.Geteuid() == 0 {
			t.Skip("file modes do not stop this user from reading")
		}
		f := write(t, dir, "locked.yaml", "version: 1\n")
		if err := os.Chmod(f, 0); err != nil {
			t.Fatal(err)
		}
		_, err := Load(f)
		if err == nil || !strings.Contains(err.Error(), "cannot be read") {
			t.Fatalf("error %v, want 'cannot be read'", err)
		}
	})
}

func TestLoadAccepts(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, content, want string
	}{
		{"minimal yaml", "version: 1\n", "(0 rules, default allow)"},
		{"yaml float version", "version: 1.0\ndefault: deny\n", "(0 rules, default deny)"},
		{"json", `{"version": 1, "default": "deny", "rules": [{"name": "r", "agents": ["a*"], "operations": ["merge"], "refs": ["main"], "pathConstraints": ["/"]}]}`, "(1 rules, default deny)"},
		{"full yaml", "version: 1\nrules:\n  - name: a\n    agents: [\"claude-code*\"]\n    operations: [merge, commit]\n    refs: [\"feature/*\", main]\n    pathConstraints: [/home/me/work/]\n  - name: b\n    agents: [\"*\"]\n", "(2 rules, default allow)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := write(t, dir, strings.ReplaceAll(tc.name, " ", "-"), tc.content)
			p, err := Load(f)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(p.String(), tc.want) || p.File() != f {
				t.Fatalf("String() = %q, File() = %q; want suffix %q and %s", p, p.File(), tc.want, f)
			}
		})
	}
}

func TestFromEnv(t *testing.T) {
	t.Setenv(EnvPolicy, "")
	if p, err := FromEnv(); p != nil || err != nil {
		t.Fatalf("unset: got %v, %v; want no policy and no error", p, err)
	}
	dir := t.TempDir()
	t.Setenv(EnvPolicy, write(t, dir, "p.yaml", "version: 1\ndefault: deny\n"))
	if p, err := FromEnv(); err != nil || p == nil || p.Check(Request{AgentID: "a", OperationType: "merge"}) == nil {
		t.Fatalf("set: got %v, %v; want a deny-all policy", p, err)
	}
	t.Setenv(EnvPolicy, filepath.Join(dir, "missing.yaml"))
	if _, err := FromEnv(); err == nil || !strings.Contains(err.Error(), EnvPolicy) {
		t.Fatalf("missing file: error %v, want one naming %s", err, EnvPolicy)
	}
}

func TestCheck(t *testing.T) {
	root := t.TempDir()
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r // macOS: /var is a link to /private/var
	}
	work := filepath.Join(root, "work")
	for _, d := range []string{work + "/a", root + "/workshop", root + "/elsewhere"} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	// A link inside the allowed tree that leads out of it, and one outside
	// that leads in.
	if err := os.Symlink(root+"/elsewhere", work+"/escape"); err != nil {
		t.Skip("symbolic links unavailable:", err)
	}
	if err := os.Symlink(work+"/a", root+"/inlink"); err != nil {
		t.Fatal(err)
	}
	f := write(t, root, "policy.yaml", `version: 1
default: deny
rules:
  - name: claude-main-only
    agents: ["claude-code*"]
    operations: [merge, commit, worktree]
    refs: ["feature/*", main]
    pathConstraints: [`+work+`/]
  - name: anything
    agents: [codex, "bot-?"]
`)
	p, err := Load(f)
	if err != nil {
		t.Fatal(err)
	}
	ok := func(r Request) Request {
		if r.AgentID == "" {
			r.AgentID = "claude-code"
		}
		if r.OperationType == "" {
			r.OperationType = "merge"
		}
		if r.RepoPaths == nil {
			r.RepoPaths = []string{work + "/a"}
		}
		return r
	}
	for _, tc := range []struct {
		name string
		req  Request
		rule string // "" = allowed
		want string
	}{
		{"allowed", ok(Request{Refs: []string{"feature/x", "main"}}), "", ""},
		{"agent glob suffix", ok(Request{AgentID: "claude-code-2"}), "", ""},
		{"no refs named", ok(Request{OperationType: "commit"}), "", ""},
		{"prefix itself", ok(Request{RepoPaths: []string{work}}), "", ""},
		{"unclean path inside", ok(Request{RepoPaths: []string{work + "/a/../a/"}}), "", ""},
		{"link from outside into the tree", ok(Request{RepoPaths: []string{root + "/inlink"}}), "", ""},
		{"new worktree path under the tree", ok(Request{OperationType: "worktree", RepoPaths: []string{work + "/a", work + "/new/wt"}}), "", ""},
		{"operation", ok(Request{OperationType: "reset"}), "claude-main-only", "operation reset is not allowed for agent claude-code; allowed: merge, commit, worktree"},
		{"ref", ok(Request{Refs: []string{"main", "release/1"}}), "claude-main-only", `ref "release/1" is not allowed for agent claude-code; every ref must match one of: feature/*, main`},
		{"glob does not cross slash", ok(Request{Refs: []string{"feature/a/b"}}), "claude-main-only", `ref "feature/a/b"`},
		{"sibling with common prefix", ok(Request{RepoPaths: []string{root + "/workshop"}}), "claude-main-only", "path " + root + "/workshop is outside"},
		{"dot-dot escape", ok(Request{RepoPaths: []string{work + "/../elsewhere"}}), "claude-main-only", "is outside"},
		{"link escaping the tree", ok(Request{RepoPaths: []string{work + "/escape"}}), "claude-main-only", "resolves to " + root + "/elsewhere"},
		{"worktree path escaping", ok(Request{OperationType: "worktree", RepoPaths: []string{work + "/a", work + "/escape/wt"}}), "claude-main-only", "is outside"},
		{"second rule", Request{AgentID: "bot-1", OperationType: "reset", RepoPaths: []string{"/"}}, "", ""},
		{"default deny", Request{AgentID: "bot-12", OperationType: "merge"}, "default", "agent bot-12 matches no rule"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := p.Check(tc.req)
			if tc.rule == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var v *Violation
			if !errors.As(err, &v) {
				t.Fatalf("got %v, want a *Violation", err)
			}
			if v.Rule != tc.rule || !strings.Contains(v.Reason, tc.want) {
				t.Fatalf("violation %q (rule %s), want rule %s and %q", v.Reason, v.Rule, tc.rule, tc.want)
			}
			if !strings.HasPrefix(err.Error(), "rule "+tc.rule+": ") {
				t.Fatalf("Error() = %q", err)
			}
		})
	}
}

func TestNilPolicyAllows(t *testing.T) {
	var p *Policy
	if err := p.Check(Request{AgentID: "x", OperationType: "reset", RepoPaths: []string{"/"}}); err != nil {
		t.Fatal(err)
	}
	if p.String() != "no agent policy" {
		t.Fatalf("String() = %q", p.String())
	}
}

func TestDefaultAllow(t *testing.T) {
	f := write(t, t.TempDir(), "p.json", `{"version":1,"rules":[{"name":"r","agents":["a"],"operations":["commit"]}]}`)
	p, err := Load(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Check(Request{AgentID: "b", OperationType: "reset"}); err != nil {
		t.Fatalf("an unmatched agent under default allow was refused: %v", err)
	}
	if err := p.Check(Request{AgentID: "a", OperationType: "reset"}); err == nil {
		t.Fatal("the matching rule did not apply")
	}
}

// Every load error, as the gateway prints it after its own "agent policy
// (FLUXGIT_MCP_AGENT_POLICY): ", says "agent policy" and the parser's name
// once (issue 22: policy errors repeated their prefix).
func TestFromEnvErrorsSayTheirPrefixOnce(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, content string }{
		{"malformed YAML", "version: 1\nrules: [\n"},
		{"unsupported version", "version: 7\n"},
		{"unknown key", "version: 1\nrules:\n  - name: x\n    agents: [a]\n    colour: red\n"},
		{"empty", ""},
		{"bad JSON", "{\"version\": 1,"},
		{"missing", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".yaml")
			if tc.name != "missing" {
				if err := os.WriteFile(f, []byte(tc.content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			t.Setenv(EnvPolicy, f)
			_, err := FromEnv()
			if err == nil {
				t.Fatal("no error")
			}
			var le *LoadError
			if !errors.As(err, &le) || le.File != f {
				t.Fatalf("not a LoadError for %s: %v", f, err)
			}
			full := "agent policy (" + EnvPolicy + "): " + err.Error()
			for _, word := range []string{"agent policy", "yaml:", f} {
				if n := strings.Count(full, word); n > 1 {
					t.Errorf("%q appears %d times in %q", word, n, full)
				}
			}
		})
	}
}

// autoPolicy is a policy file with the autoApprove list in auto (YAML,
// indented as a top-level value) and a permissive rule for everyone else.
func autoPolicy(t *testing.T, auto string) (string, error) {
	t.Helper()
	f := write(t, t.TempDir(), "policy.yaml", "version: 1\nautoApprove:\n"+auto)
	_, err := Load(f)
	return f, err
}

// An autoApprove rule is refused, with the reason and the fix, unless it
// names only low-risk operations of the risk table, refs and paths;
// every high- or medium-risk operation is refused by name.
func TestAutoApproveValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		auto string
		want string // "" = accepted
	}{
		{"commit", "  - name: a\n    agents: [x]\n    operations: [commit, branch, worktree]\n    refs: [\"agent/*\"]\n    paths: [\"/w/*\"]\n", ""},
		{"reset", "  - name: a\n    agents: [x]\n    operations: [commit, reset]\n    refs: [\"*\"]\n    paths: [\"/w\"]\n", "at /autoApprove/0/operations/1: operation reset is high risk in the gateway's risk table and can never be approved by policy; autoApprove takes only the low-risk operations worktree, commit, branch"},
		{"discard", "  - name: a\n    agents: [x]\n    operations: [discard]\n    refs: [\"*\"]\n    paths: [\"/w\"]\n", "operation discard is high risk"},
		{"push", "  - name: a\n    agents: [x]\n    operations: [push]\n    refs: [\"*\"]\n    paths: [\"/w\"]\n", "operation push is medium risk"},
		{"branchDelete", "  - name: a\n    agents: [x]\n    operations: [branchDelete]\n    refs: [\"*\"]\n    paths: [\"/w\"]\n", "operation branchDelete is medium risk"},
		{"rebase", "  - name: a\n    agents: [x]\n    operations: [rebase]\n    refs: [\"*\"]\n    paths: [\"/w\"]\n", "remove rebase from this rule"},
		{"merge", "  - name: a\n    agents: [x]\n    operations: [merge]\n    refs: [\"*\"]\n    paths: [\"/w\"]\n", "operation merge is medium risk"},
		{"patch", "  - name: a\n    agents: [x]\n    operations: [patch]\n    refs: [\"*\"]\n    paths: [\"/w\"]\n", "operation patch is medium risk"},
		{"plan", "  - name: a\n    agents: [x]\n    operations: [plan]\n    refs: [\"*\"]\n    paths: [\"/w\"]\n", "operation plan is medium risk"},
		{"unknown op", "  - name: a\n    agents: [x]\n    operations: [amend]\n    refs: [\"*\"]\n    paths: [\"/w\"]\n", "at /autoApprove/0/operations/0:"},
		{"no refs", "  - name: a\n    agents: [x]\n    operations: [commit]\n    paths: [\"/w\"]\n", "missing properties: 'refs'"},
		{"no paths", "  - name: a\n    agents: [x]\n    operations: [commit]\n    refs: [\"*\"]\n", "missing properties: 'paths'"},
		{"no operations", "  - name: a\n    agents: [x]\n    refs: [\"*\"]\n    paths: [\"/w\"]\n", "missing properties: 'operations'"},
		{"relative path", "  - name: a\n    agents: [x]\n    operations: [commit]\n    refs: [\"*\"]\n    paths: [\"w/*\"]\n", `at /autoApprove/0/paths/0: path glob "w/*" is not absolute`},
		{"bad ref glob", "  - name: a\n    agents: [x]\n    operations: [commit]\n    refs: [\"a[\"]\n    paths: [\"/w\"]\n", `at /autoApprove/0/refs/0: "a[" is not a valid glob`},
		{"duplicate name", "  - name: a\n    agents: [x]\n    operations: [commit]\n    refs: [\"*\"]\n    paths: [\"/w\"]\n  - name: a\n    agents: [y]\n    operations: [commit]\n    refs: [\"*\"]\n    paths: [\"/w\"]\n", `at /autoApprove/1/name: rule name "a" is already used`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := autoPolicy(t, tc.auto)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), f) {
				t.Fatalf("got %v, want an error naming %s and saying %q", err, f, tc.want)
			}
		})
	}
}

// The schema's list of operations an autoApprove rule may name is the risk
// table's low-risk list, so the two cannot drift.
func TestAutoApproveSchemaIsTheRiskTable(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "schemas", "agent-policy.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Properties struct {
			AutoApprove struct {
				Items struct {
					Properties struct {
						Operations struct {
							Items struct {
								Enum []string `json:"enum"`
							} `json:"items"`
						} `json:"operations"`
					} `json:"properties"`
				} `json:"items"`
			} `json:"autoApprove"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	got := doc.Properties.AutoApprove.Items.Properties.Operations.Items.Enum
	if want := LowRisk(); !slices.Equal(got, want) || len(want) == 0 {
		t.Fatalf("schema autoApprove operations %v, risk table's low-risk operations %v", got, want)
	}
}

// AutoApprove approves only what the first matching rule's operations,
// refs and paths all cover; without autoApprove (or without a policy)
// nothing is approved in advance.
func TestAutoApprove(t *testing.T) {
	dir := t.TempDir()
	work := Canonical(dir)
	repo := filepath.Join(work, "shop")
	if err := os.Mkdir(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	glob := filepath.Join(work, "*")
	body := "version: 1\nautoApprove:\n" +
		"  - name: evil-first\n    agents: [\"claude-code-evil\"]\n    operations: [branch]\n    refs: [\"none/*\"]\n    paths: [\"/nowhere\"]\n" +
		"  - name: agent-commits\n    agents: [\"claude-code*\"]\n    operations: [commit, branch]\n    refs: [\"agent/*\"]\n    paths: [" + strconv.Quote(glob) + "]\n"
	p, err := Load(write(t, dir, "auto.yaml", body))
	if err != nil {
		t.Fatal(err)
	}
	if !p.AutoApproves() {
		t.Fatal("AutoApproves is false with two rules")
	}
	off, err := Load(write(t, dir, "off.yaml", "version: 1\nrules:\n  - name: r\n    agents: [\"*\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	ok := Request{AgentID: "claude-code", OperationType: "commit", RepoPaths: []string{repo}, Refs: []string{"agent/work"}}
	with := func(f func(*Request)) Request { r := ok; f(&r); return r }
	for _, tc := range []struct {
		name string
		pol  *Policy
		req  Request
		want string // "" = waits for the person
	}{
		{"commit on agent/*", p, ok, "agent-commits"},
		{"branch", p, with(func(r *Request) { r.OperationType = "branch" }), "agent-commits"},
		{"worktree not named", p, with(func(r *Request) { r.OperationType = "worktree" }), ""},
		{"medium-risk op", p, with(func(r *Request) { r.OperationType = "merge" }), ""},
		{"ref outside globs", p, with(func(r *Request) { r.Refs = []string{"agent/work", "main"} }), ""},
		{"* does not cross /", p, with(func(r *Request) { r.Refs = []string{"agent/a/b"} }), ""},
		{"no refs", p, with(func(r *Request) { r.Refs = nil }), ""},
		{"path outside globs", p, with(func(r *Request) { r.RepoPaths = []string{repo, "/elsewhere/shop"} }), ""},
		{"path glob does not cross /", p, with(func(r *Request) { r.RepoPaths = []string{filepath.Join(repo, "sub")} }), ""},
		{"no paths", p, with(func(r *Request) { r.RepoPaths = nil }), ""},
		{"other agent", p, with(func(r *Request) { r.AgentID = "cursor" }), ""},
		{"first matching rule only", p, with(func(r *Request) { r.AgentID = "claude-code-evil" }), ""},
		{"no autoApprove", off, ok, ""},
		{"no policy", nil, ok, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, approved := tc.pol.AutoApprove(tc.req)
			if got != tc.want || approved != (tc.want != "") {
				t.Fatalf("AutoApprove = %q, %v; want %q", got, approved, tc.want)
			}
		})
	}
	if off.AutoApproves() || (*Policy)(nil).AutoApproves() {
		t.Fatal("AutoApproves without autoApprove rules")
	}
}
