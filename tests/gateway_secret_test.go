package tests

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Issue 22, finding 1: the agent approved its own proposal by reading the
// gateway's secret with file.read from a run directory inside a work tree.
// These tests run the real binaries.

// withoutEnv is env without the variables named.
func withoutEnv(env []string, names ...string) []string {
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, n := range names {
			drop = drop || k == n
		}
		if !drop {
			out = append(out, kv)
		}
	}
	return out
}

// runGatewayExpectRefusal starts `fluxgit gateway` and wants it to exit
// non-zero before announcing itself, saying each of says.
func runGatewayExpectRefusal(t *testing.T, env []string, says ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, fluxgitBin, "gateway", "--addr", "127.0.0.1:0")
	cmd.Env = env
	b, err := cmd.CombinedOutput()
	out := string(b)
	if err == nil || strings.Contains(out, "Approval page:") {
		t.Fatalf("the gateway started (%v):\n%s", err, out)
	}
	for _, s := range says {
		if !strings.Contains(out, s) {
			t.Errorf("the refusal does not say %q:\n%s", s, out)
		}
	}
	return out
}

// The gateway refuses to start when what it keeps or reads lies where the
// agent's read tools reach: the run directory inside the project (even
// .gitignored), $HOME a dotfiles repository with the default locations,
// the agent policy or the signing key inside a work tree. Each refusal
// names the path, why and the fix, and nothing is written.
func TestGatewayRefusesReachableState(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the Unix defaults ($HOME, XDG_*) are exercised here")
	}
	project := e2eRepo(t)
	writeFile(t, filepath.Join(project, ".gitignore"), ".fluxgit-run/\n")
	for _, tc := range []struct {
		name string
		env  func(base []string) []string
		says []string
	}{
		{"run dir inside the project", func(base []string) []string {
			return append(withoutEnv(base, "FLUXGIT_RUN_DIR"), "FLUXGIT_RUN_DIR="+filepath.Join(project, ".fluxgit-run"))
		}, []string{filepath.Join(project, ".fluxgit-run", "gateway"), "inside git work tree " + project, "set FLUXGIT_RUN_DIR"}},
		{"run dir inside an allowed root", func(base []string) []string {
			root := canonicalTempDir(t)
			return append(withoutEnv(base, "FLUXGIT_RUN_DIR"), "FLUXGIT_RUN_DIR="+filepath.Join(root, "run"), "FLUXGIT_MCP_ALLOWED_ROOTS="+root)
		}, []string{"inside allowed root", "set FLUXGIT_RUN_DIR"}},
		{"home is a dotfiles repository", func(base []string) []string {
			env := withoutEnv(base, "FLUXGIT_RUN_DIR", "FLUXGIT_SECRET_DIR", "HOME", "XDG_RUNTIME_DIR", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "TMPDIR")
			// TMPDIR: macOS' per-user candidate, inside the dotfiles as well.
			return append(env, "HOME="+project, "TMPDIR="+filepath.Join(project, "tmp"))
		}, []string{"nowhere private", "inside git work tree " + project, "FLUXGIT_SECRET_DIR", "FLUXGIT_RUN_DIR"}},
		{"agent policy inside the project", func(base []string) []string {
			f := filepath.Join(project, "policy.yaml")
			writeFile(t, f, "version: 1\nrules: []\n")
			return append(base, "FLUXGIT_MCP_AGENT_POLICY="+f)
		}, []string{"agent policy " + filepath.Join(project, "policy.yaml"), "inside git work tree", "FLUXGIT_MCP_AGENT_POLICY"}},
		{"secret dir inside the project", func(base []string) []string {
			return append(withoutEnv(base, "FLUXGIT_SECRET_DIR"), "FLUXGIT_SECRET_DIR="+filepath.Join(project, ".secret"))
		}, []string{"inside git work tree " + project, "FLUXGIT_SECRET_DIR"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := loopEnv(t)
			env := tc.env(base)
			runGatewayExpectRefusal(t, env, append(tc.says, "did not start")...)
			// Nothing written: no gateway state in the project.
			if _, err := os.Stat(filepath.Join(project, ".fluxgit-run", "gateway")); !os.IsNotExist(err) {
				t.Fatalf("the refused gateway left its state in the project: %v", err)
			}
			if _, err := os.Stat(filepath.Join(project, ".secret")); !os.IsNotExist(err) {
				t.Fatalf("the refused gateway made its secret directory in the project: %v", err)
			}
			// Doctor fails the same configuration, on its credentials row.
			cmd := exec.Command(fluxgitBin, "doctor")
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			if err == nil || !strings.Contains(string(out), "credentials") || !strings.Contains(string(out), "FAIL") {
				t.Fatalf("doctor passed a reachable gateway state (%v):\n%s", err, out)
			}
		})
	}
}

// The secret is never under the run directory, an old gateway's
// session.json there is removed at start, and the agent's read tools get
// nothing from the old path or the secret directory, by relative path,
// absolute path or a symbolic link planted in the work tree.
func TestGatewaySecretOutOfAgentReach(t *testing.T) {
	env := loopEnv(t)
	var runDir, secretDir string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "FLUXGIT_RUN_DIR="); ok {
			runDir = v
		}
		if v, ok := strings.CutPrefix(kv, "FLUXGIT_SECRET_DIR="); ok {
			secretDir = v
		}
	}
	legacy := filepath.Join(runDir, "gateway", "session.json")
	if err := os.MkdirAll(filepath.Dir(legacy), 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, legacy, `{"addr":"127.0.0.1:1","secret":"left-by-an-old-gateway"}`)
	g := startGateway(t, env)
	u, err := url.Parse(g.page)
	if err != nil {
		t.Fatal(err)
	}
	secret := u.Query().Get("s")
	if len(secret) < 32 {
		t.Fatalf("no secret in the page address %s", g.page)
	}
	if _, err := os.Stat(legacy); !os.IsNotExist(err) {
		t.Fatalf("the old session file in the run directory survived the start: %v", err)
	}
	_ = filepath.WalkDir(runDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), secret) {
				t.Errorf("%s, in the run directory, holds the secret", p)
			}
		}
		return nil
	})
	sessions, _ := filepath.Glob(filepath.Join(secretDir, "gateway-*.json"))
	if len(sessions) != 1 {
		t.Fatalf("session files in the secret directory: %v", sessions)
	}
	session := sessions[0]
	if b, _ := os.ReadFile(session); !strings.Contains(string(b), secret) {
		t.Fatalf("the session file %s does not hold the secret", session)
	}

	ctx, cs := sdkSessionEnv(t, "2025-11-25", g.mcpEnv())
	l := &loop{t: t, g: g, ctx: ctx, cs: cs}
	project := e2eRepo(t)
	id := l.propose("branch", project, map[string]any{"name": "self-approved"})
	rel := func(p string) string {
		r, err := filepath.Rel(project, p)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if runtime.GOOS != "windows" {
		if err := os.Symlink(session, filepath.Join(project, "leak")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(secretDir, filepath.Join(project, "leakdir")); err != nil {
			t.Fatal(err)
		}
	}
	for _, path := range []string{
		rel(legacy), legacy,
		rel(session), session,
		"leak", filepath.Join("leakdir", filepath.Base(session)),
	} {
		for _, wt := range []bool{true, false} {
			p, isErr := l.tool("file.read", map[string]any{"repoPath": project, "path": path, "worktree": wt})
			if b, _ := json.Marshal(p); strings.Contains(string(b), secret) {
				t.Fatalf("file.read %s (worktree %v) returned the gateway's secret: %s", path, wt, b)
			} else if !isErr && p["error"] == nil {
				t.Errorf("file.read %s (worktree %v) answered without an error: %s", path, wt, b)
			}
		}
	}
	if d := l.status(id); d["status"] != "pending" {
		t.Fatalf("the proposal moved: %s", jsonOf(d))
	}
}

// `fluxgit gateway approve` from a process without a terminal — an
// agent's non-interactive shell — is refused, whatever its stdin says;
// on a terminal, the person's typed yes approves and anything else
// changes nothing.
func TestGatewayApproveNeedsTheTerminal(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("sessions without a controlling terminal: Unix")
	}
	l := newLoop(t)
	repo := e2eRepo(t)
	id := l.propose("branch", repo, map[string]any{"name": "topic"})
	for _, verb := range [][]string{{"approve", id}, {"reject", id, "--reason", "agent says no"}, {"reconcile", id, "--as", "completed"}, {"undo", "--repo", repo}} {
		t.Run("no terminal "+verb[0], func(t *testing.T) {
			cmd := exec.Command(fluxgitBin, append([]string{"gateway"}, verb...)...)
			cmd.Env = l.g.env
			cmd.Stdin = strings.NewReader("yes\nyes\n")
			// A new session has no controlling terminal, as an agent's
			// tool runner gives its commands.
			withoutTerminal(cmd)
			out, err := cmd.CombinedOutput()
			if err == nil || !strings.Contains(string(out), "needs a person at an interactive terminal") || !strings.Contains(string(out), "approval page") {
				t.Fatalf("gateway %s without a terminal: %v\n%s", verb[0], err, out)
			}
			if d := l.status(id); d["status"] != "pending" {
				t.Fatalf("a refused %s changed the proposal: %s", verb[0], jsonOf(d))
			}
		})
	}
	if !havePTY {
		t.Skip("no pseudo-terminal helper on this system")
	}
	t.Run("terminal answer no", func(t *testing.T) {
		screen, out, err := runOnTerminal(t, l.g.env, "no\n", "gateway", "approve", id)
		if err == nil || !strings.Contains(out, "not confirmed") || !strings.Contains(screen, id) {
			t.Fatalf("approve answered no: %v\n%s\nterminal:\n%s", err, out, screen)
		}
		if d := l.status(id); d["status"] != "pending" {
			t.Fatalf("an unconfirmed approve changed the proposal: %s", jsonOf(d))
		}
	})
	t.Run("terminal answer yes", func(t *testing.T) {
		screen, out, err := runOnTerminal(t, l.g.env, "yes\n", "gateway", "approve", id)
		if err != nil || !strings.Contains(out, "Approved "+id) {
			t.Fatalf("approve answered yes: %v\n%s\nterminal:\n%s", err, out, screen)
		}
		for _, s := range []string{id, "branch", repo, "Type yes to approve"} {
			if !strings.Contains(screen, s) {
				t.Errorf("the terminal did not show %q:\n%s", s, screen)
			}
		}
		l.awaitStatus(id, "completed")
	})
}

// A confirmation the approval needs and the command line lacks is named by
// its flag, before the person is asked anything.
func TestGatewayApproveNamesTheFlag(t *testing.T) {
	l := newLoop(t)
	repo := e2eRepo(t)
	id := l.propose("reset", repo, map[string]any{"targetRef": "HEAD~1", "mode": "hard"})
	cmd := exec.Command(fluxgitBin, "gateway", "approve", id)
	cmd.Env = l.g.env
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--confirm-branch main") {
		t.Fatalf("approve without --confirm-branch: %v\n%s", err, out)
	}
	if d := l.status(id); d["status"] != "pending" {
		t.Fatalf("the proposal moved: %s", jsonOf(d))
	}
}
