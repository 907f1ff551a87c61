package tests

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fluxgit/fluxgit/internal/audit"
)

// protectedMessage is what every refusal of a protected file says (see
// credpaths.Refusal): the model learns what the file is, never where.
const protectedMessage = "protected file of the person's"

// protectedProject is a work tree holding every file fluxgit must never
// let a read tool return (issue 22, finding 1): the run directory's gateway
// state (.fluxgit-run, .gitignored), the gateway's secret directory, the
// agent policy, the audit signing key, a JWT key and the host
// configuration, each carrying a marker no answer may contain. A copy of
// the session file is committed (forced past .gitignore) and then changed
// on disk, so revisions, blame, diffs and history searches see it too.
type protectedProject struct {
	repo, runDir, secretDir, config string
	env                             []string
	markers                         []string
	committed                       string // the commit that added the copy
}

func newProtectedProject(t *testing.T) *protectedProject {
	t.Helper()
	base := canonicalTempDir(t)
	p := &protectedProject{repo: filepath.Join(base, "proj")}
	repo := p.repo
	if err := os.Mkdir(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, repo, "init", "-q", "-b", "main")
	writeFile(t, filepath.Join(repo, "README.md"), "hello\n")
	writeFile(t, filepath.Join(repo, ".gitignore"), ".fluxgit-run/\n.secrets/\n")
	git(t, repo, "add", "README.md", ".gitignore")
	git(t, repo, "commit", "-q", "-m", "one")

	p.runDir = filepath.Join(repo, ".fluxgit-run")
	p.secretDir = filepath.Join(repo, ".secrets")
	session := filepath.Join(p.runDir, "gateway", "session.json")
	// The committed copy, forced past .gitignore as a careless `git add -f` would.
	writeFile(t, session, "COMMITTED-SECRET-6\n")
	writeFile(t, filepath.Join(repo, "notes.txt"), "ordinary note\n")
	git(t, repo, "add", "notes.txt")
	git(t, repo, "add", "-f", ".fluxgit-run/gateway/session.json")
	git(t, repo, "commit", "-q", "-m", "oops: the session file")
	p.committed = strings.TrimSpace(git(t, repo, "rev-parse", "HEAD"))
	// The live session: shaped like a restore point record too, so a
	// run-directory reader tricked into parsing it would echo the marker.
	writeFile(t, session, `{"operation":"SESSION-SECRET-1","before_commit":"SESSION-SECRET-1"}`+"\n")
	writeFile(t, filepath.Join(repo, "notes.txt"), "ordinary note, edited\n")
	writeFile(t, filepath.Join(p.runDir, "gateway", "journal.db"), "JOURNAL-SECRET-7\n")
	writeFile(t, filepath.Join(p.secretDir, "session.json"), "SECRET-DIR-SECRET-2\n")
	policy := filepath.Join(repo, "agent-policy.json")
	writeFile(t, policy, `{"marker":"POLICY-SECRET-3"}`+"\n")
	p.config = filepath.Join(repo, "fluxgit.yaml")
	writeFile(t, p.config, "# CONFIG-SECRET-4\n")
	jwt := filepath.Join(repo, "jwt.pem")
	writeFile(t, jwt, "JWT-SECRET-5\n")
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signKey := filepath.Join(repo, "audit.key")
	if err := os.WriteFile(signKey, audit.MarshalPrivateKey(key), 0o600); err != nil {
		t.Fatal(err)
	}
	p.markers = []string{"SESSION-SECRET-1", "SECRET-DIR-SECRET-2", "POLICY-SECRET-3", "CONFIG-SECRET-4",
		"JWT-SECRET-5", "COMMITTED-SECRET-6", "JOURNAL-SECRET-7", "PRIVATE KEY"}
	// Ways to the same files from inside the work tree: a symlink to the
	// session, a symlinked directory, and a hard link to the secret.
	for link, target := range map[string]string{"session-link.json": session, "gwdir": filepath.Join(p.runDir, "gateway")} {
		if err := os.Symlink(target, filepath.Join(repo, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Link(filepath.Join(p.secretDir, "session.json"), filepath.Join(repo, "hard.json")); err != nil {
		t.Fatal(err)
	}
	// A restore point record hard-linked to the session file: flux.* must
	// refuse it by identity, although its name is one they own.
	if err := os.MkdirAll(filepath.Join(p.runDir, "rebase"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(session, filepath.Join(p.runDir, "rebase", "proj.json")); err != nil {
		t.Fatal(err)
	}
	p.env = append(baseEnv(t),
		"FLUXGIT_RUN_DIR="+p.runDir,
		"FLUXGIT_SECRET_DIR="+p.secretDir,
		"FLUXGIT_MCP_AGENT_POLICY="+policy,
		"FLUXGIT_MCP_AUDIT_SIGN_KEY="+signKey,
		"MCP_JWT_PUBLIC_KEY="+jwt,
		"FLUXGIT_GATEWAY_ADDR=127.0.0.1:9",
		"FLUXGIT_MCP_AUDIT_DISABLED=1",
	)
	return p
}

// leaked names the marker raw contains, "" for none.
func (p *protectedProject) leaked(raw string) string {
	for _, m := range p.markers {
		if strings.Contains(raw, m) {
			return m
		}
	}
	return ""
}

// The agent approves itself by reading the gateway's secret (issue 22,
// finding 1): every read tool, by every path that leads to a protected
// file, answers a refusal the model can read — or leaves the file out —
// and never its content. The host configuration is given with --config,
// which only the host knows: the providers must refuse it too.
func TestReadToolsRefuseProtectedFiles(t *testing.T) {
	p := newProtectedProject(t)
	s := startServer(t, p.env, "--config", p.config)
	initialize(t, s)
	id := 0
	call := func(tool string, args map[string]any) response {
		t.Helper()
		id++
		if _, ok := args["repoPath"]; !ok {
			args["repoPath"] = p.repo
		}
		return s.call(id, "tools/call", map[string]any{"name": tool, "arguments": args})
	}

	refused := []struct {
		name string
		tool string
		args map[string]any
	}{
		{"session in the run dir", "file.read", map[string]any{"worktree": true, "path": ".fluxgit-run/gateway/session.json"}},
		{"session, absolute path", "file.read", map[string]any{"worktree": true, "path": filepath.Join(p.repo, ".fluxgit-run", "gateway", "session.json")}},
		{"session, other case", "file.read", map[string]any{"worktree": true, "path": ".FLUXGIT-RUN/gateway/session.json"}},
		{"journal", "file.read", map[string]any{"worktree": true, "path": ".fluxgit-run/gateway/journal.db"}},
		{"symlink to the session", "file.read", map[string]any{"worktree": true, "path": "session-link.json"}},
		{"symlinked gateway dir", "file.read", map[string]any{"worktree": true, "path": "gwdir/session.json"}},
		{"secret dir", "file.read", map[string]any{"worktree": true, "path": ".secrets/session.json"}},
		{"hard link to the secret", "file.read", map[string]any{"worktree": true, "path": "hard.json"}},
		{"agent policy", "file.read", map[string]any{"worktree": true, "path": "agent-policy.json"}},
		{"audit signing key", "file.read", map[string]any{"worktree": true, "path": "audit.key"}},
		{"JWT key", "file.read", map[string]any{"worktree": true, "path": "jwt.pem"}},
		{"host configuration (--config)", "file.read", map[string]any{"worktree": true, "path": "fluxgit.yaml"}},
		{"committed copy at HEAD", "file.read", map[string]any{"path": ".fluxgit-run/gateway/session.json"}},
		{"committed copy at its commit", "file.read", map[string]any{"path": ".fluxgit-run/gateway/session.json", "rev": p.committed}},
		{"blame of the committed copy", "file.blame", map[string]any{"path": ".fluxgit-run/gateway/session.json"}},
		{"blame at its commit", "file.blame", map[string]any{"path": ".fluxgit-run/gateway/session.json", "rev": p.committed}},
		{"repository inside the gateway dir", "repo.status", map[string]any{"repoPath": filepath.Join(p.runDir, "gateway")}},
	}
	for _, tc := range refused {
		t.Run("refused/"+tc.name, func(t *testing.T) {
			r := call(tc.tool, tc.args)
			if m := p.leaked(r.raw); m != "" {
				t.Fatalf("%s %v leaked %s: %.400s", tc.tool, tc.args, m, r.raw)
			}
			if !strings.Contains(r.raw, protectedMessage) || !strings.Contains(r.raw, "fluxgit never reads it") {
				t.Fatalf("%s %v: want the protected-file refusal, got %.400s", tc.tool, tc.args, r.raw)
			}
			if strings.Contains(r.raw, p.runDir) || strings.Contains(r.raw, p.secretDir) {
				t.Fatalf("the refusal names the protected location: %.400s", r.raw)
			}
		})
	}

	// Tools that list or search the repository leave the protected copy
	// out instead of refusing the whole call.
	// want is text the answer must still carry: the rest of the diff.
	left := []struct {
		name string
		tool string
		args map[string]any
		want string
	}{
		{"diff of the work tree", "diff.text", map[string]any{}, "+ordinary note, edited"},
		{"diff of the work tree, stat", "diff.text", map[string]any{"mode": "stat"}, "notes.txt"},
		{"diff of the commit", "diff.text", map[string]any{"base": p.committed + "~1", "head": p.committed}, "+ordinary note"},
		{"diff naming the file", "diff.text", map[string]any{"paths": []any{".fluxgit-run"}, "base": p.committed + "~1"}, `"diff":""`},
		{"history regex over the content", "history.search", map[string]any{"regex": "COMMITTED-SECRET"}, `"commits":[]`},
		{"history text over the content", "history.search", map[string]any{"text": "COMMITTED-SECRET-6"}, `"commits":[]`},
		{"history search, control", "history.search", map[string]any{"text": "ordinary note"}, "notes.txt"},
		{"restore points from a hard-linked record", "flux.restorePoints", map[string]any{"runDir": p.runDir, "repoId": "proj"}, ""},
		{"latest restore point", "flux.latestRestorePoint", map[string]any{"runDir": p.runDir, "repoId": "proj"}, ""},
		{"safety timeline", "safety.timeline", map[string]any{"runDir": p.runDir, "repoId": "proj"}, ""},
	}
	for _, tc := range left {
		t.Run("omitted/"+tc.name, func(t *testing.T) {
			r := call(tc.tool, tc.args)
			if m := p.leaked(r.raw); m != "" {
				t.Fatalf("%s %v leaked %s: %.600s", tc.tool, tc.args, m, r.raw)
			}
			if r.Error != nil {
				t.Fatalf("%s %v: %.400s", tc.tool, tc.args, r.raw)
			}
			if txt := toolText(t, r); !strings.Contains(txt, tc.want) {
				t.Fatalf("%s %v: want %q in %.600s", tc.tool, tc.args, tc.want, txt)
			}
		})
	}

	// Controls: ordinary files still read, in both modes, and blame works.
	for _, args := range []map[string]any{
		{"worktree": true, "path": "README.md"},
		{"path": "README.md"},
		{"path": "README.md", "rev": p.committed},
	} {
		pl := toolPayload(t, call("file.read", args))
		if d, _ := pl["data"].(map[string]any); d == nil || d["content"] != "hello\n" {
			t.Fatalf("control file.read %v: %v", args, pl)
		}
	}
	if pl := toolPayload(t, call("file.blame", map[string]any{"path": "README.md"})); pl["error"] != nil {
		t.Fatalf("control file.blame: %v", pl)
	}
}

// A run directory inside the allowed roots may be named by runDir, but not
// the gateway's own directory inside it: the host refuses it before
// dispatch with the same readable message.
func TestRunDirArgumentIntoGatewayStateRefused(t *testing.T) {
	p := newProtectedProject(t)
	s := startServer(t, append(p.env, "FLUXGIT_MCP_ALLOWED_ROOTS="+p.repo))
	initialize(t, s)
	for i, tool := range []string{"flux.restorePoints", "flux.latestRestorePoint", "safety.timeline"} {
		r := s.call(i+1, "tools/call", map[string]any{"name": tool, "arguments": map[string]any{
			"repoPath": p.repo, "runDir": filepath.Join(p.runDir, "gateway"), "repoId": "proj"}})
		if m := p.leaked(r.raw); m != "" {
			t.Fatalf("%s leaked %s: %.400s", tool, m, r.raw)
		}
		if !strings.Contains(r.raw, protectedMessage) {
			t.Fatalf("%s with runDir in the gateway state: want the protected-file refusal, got %.400s", tool, r.raw)
		}
	}
}

// toolText is the result's first text content, as the model reads it.
func toolText(t testing.TB, r response) string {
	t.Helper()
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil || len(res.Content) == 0 {
		t.Fatalf("no text content: %.400s", r.raw)
	}
	return res.Content[0].Text
}

// conflict.read lists a conflicted copy of a protected file by name and
// kind but reads none of its sides and does not scan its work-tree copy;
// the other conflicted file is shown as always.
func TestConflictReadSkipsProtectedFiles(t *testing.T) {
	p := newProtectedProject(t)
	repo := p.repo
	side := func(branch, content string) {
		git(t, repo, "checkout", "-q", branch)
		writeFile(t, filepath.Join(p.runDir, "gateway", "session.json"), content+"\n")
		writeFile(t, filepath.Join(repo, "notes.txt"), content+" note\n")
		git(t, repo, "add", "-f", ".fluxgit-run/gateway/session.json", "notes.txt")
		git(t, repo, "commit", "-q", "-m", "side "+branch)
	}
	git(t, repo, "branch", "other")
	side("main", "CONFLICT-SECRET-A")
	side("other", "CONFLICT-SECRET-B")
	git(t, repo, "checkout", "-q", "main")
	cmd := exec.Command("git", "-C", repo, "merge", "-q", "other")
	cmd.Env = append(os.Environ(), "GIT_MERGE_AUTOEDIT=no")
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Fatalf("the merge did not conflict: %s", out)
	}
	s := startServer(t, p.env)
	initialize(t, s)
	r := s.call(1, "tools/call", map[string]any{"name": "conflict.read", "arguments": map[string]any{"repoPath": repo}})
	txt := toolText(t, r)
	// The ordinary file's sides say "CONFLICT-SECRET-A note"; nothing else may.
	if rest := strings.NewReplacer("CONFLICT-SECRET-A note", "", "CONFLICT-SECRET-B note", "").Replace(txt); strings.Contains(rest, "CONFLICT-SECRET") {
		t.Fatalf("conflict.read returned the protected file's content: %.800s", txt)
	}
	if !strings.Contains(txt, "not read: a protected file of the person's") || !strings.Contains(txt, "CONFLICT-SECRET-B note") {
		t.Fatalf("conflict.read: want the protected file skipped and notes.txt shown, got %.800s", txt)
	}
}
