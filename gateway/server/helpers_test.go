package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/fluxgit/fluxgit/gateway/execute"
	"github.com/fluxgit/fluxgit/gateway/journal"
	"github.com/fluxgit/fluxgit/internal/audit"
	"github.com/fluxgit/fluxgit/internal/credpaths"
)

// TestMain gives every test a private secret directory: no test may write
// the person's own ($XDG_RUNTIME_DIR/fluxgit, ~/.cache/fluxgit/secret).
func TestMain(m *testing.M) {
	d, err := os.MkdirTemp("", "fluxgit-secret-")
	if err != nil {
		panic(err)
	}
	if d, err = filepath.EvalSymlinks(d); err != nil {
		panic(err)
	}
	os.Setenv(credpaths.EnvSecretDir, d)
	code := m.Run()
	os.RemoveAll(d)
	os.Exit(code)
}

// gw is a gateway under test, serving on 127.0.0.1 and a free port.
type gw struct {
	t      testing.TB
	s      *Server
	runDir string
	out    *syncBuffer
	ledger string
	stop   func()
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// start serves a gateway on runDir ("" for a fresh one); edit adjusts
// the configuration first.
func start(t testing.TB, runDir string, edit func(*Config)) *gw {
	t.Helper()
	if runDir == "" {
		runDir = realDir(t, t.TempDir())
	}
	ledgerPath := filepath.Join(runDir, "audit", "mcp.jsonl")
	led, err := audit.Open(audit.Options{Path: ledgerPath})
	if err != nil {
		t.Fatal(err)
	}
	out := &syncBuffer{}
	cfg := Config{Addr: "127.0.0.1:0", RunDir: runDir, Out: out, Ledger: led}
	if edit != nil {
		edit(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		led.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	g := &gw{t: t, s: s, runDir: runDir, out: out, ledger: ledgerPath}
	var once sync.Once
	g.stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Serve: %v", err)
			}
			led.Close()
		})
	}
	t.Cleanup(g.stop)
	// Serve announces itself once start-up is done.
	waitFor(t, "the start-up lines", func() bool { return strings.Contains(out.String(), "Approval page:") })
	return g
}

func realDir(t testing.TB, d string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(d)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// waitFor polls cond until it holds; the deadline only bounds a hung test.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// reply is a decoded response.
type reply struct {
	status int
	header http.Header
	body   map[string]any
	raw    []byte
}

func (r reply) errText() string { s, _ := r.body["error"].(string); return s }

// req sends a request to the gateway with the right Host unless headers
// say otherwise ("Host" is honoured).
func (g *gw) req(method, path string, body []byte, headers map[string]string) reply {
	g.t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	r, err := http.NewRequest(method, "http://"+g.s.Addr()+path, rd)
	if err != nil {
		g.t.Fatal(err)
	}
	if body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		if k == "Host" {
			r.Host = v
			continue
		}
		r.Header.Set(k, v)
	}
	resp, err := (&http.Client{Transport: &http.Transport{Proxy: nil}}).Do(r)
	if err != nil {
		g.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	out := reply{status: resp.StatusCode, header: resp.Header, raw: raw}
	_ = json.Unmarshal(raw, &out.body)
	return out
}

func (g *gw) post(path string, v any) reply {
	g.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		g.t.Fatal(err)
	}
	return g.req(http.MethodPost, path, b, nil)
}

func (g *gw) status(id string) reply {
	g.t.Helper()
	return g.req(http.MethodGet, statusPrefix+id, nil, nil)
}

// waitStatus polls the agent's status read until the proposal is in want.
func (g *gw) waitStatus(id string, want journal.Status) reply {
	g.t.Helper()
	var r reply
	waitFor(g.t, "proposal "+id+" to be "+string(want), func() bool {
		r = g.status(id)
		return r.body["status"] == string(want)
	})
	return r
}

func (g *gw) client() *Client {
	g.t.Helper()
	c, err := NewClient(g.runDir)
	if err != nil {
		g.t.Fatal(err)
	}
	return c
}

// ledgerEntries reads the audit ledger's entries.
func (g *gw) ledgerEntries() []map[string]any {
	g.t.Helper()
	b, err := os.ReadFile(g.ledger)
	if err != nil {
		g.t.Fatal(err)
	}
	var out []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			g.t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// newRepo makes a repository with one commit on main.
func newRepo(t testing.TB) string {
	t.Helper()
	dir := realDir(t, t.TempDir())
	git(t, dir, "init", "-q", "-b", "main")
	commitFile(t, dir, "a.txt", "one\n")
	return dir
}

func commitFile(t testing.TB, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", name)
	git(t, dir, "commit", "-q", "-m", "change "+name)
}

func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func hasBranch(t testing.TB, dir, name string) bool {
	t.Helper()
	cmd := exec.Command("git", "-C", dir, "rev-parse", "--verify", "-q", "refs/heads/"+name)
	return cmd.Run() == nil
}

// body is a preview body as the handshake provider builds it.
func body(op, repo, agent, key string, fields map[string]any) map[string]any {
	b := map[string]any{
		"previewId":      uuid.NewString(),
		"agentId":        agent,
		"idempotencyKey": op + ":client:" + key,
		"operationType":  op,
		"repoPath":       repo,
		"reason":         "the test asks for it",
		"requestedAt":    time.Now().UTC().Format("2006-01-02T15:04:05.000Z"),
	}
	for k, v := range fields {
		b[k] = v
	}
	return b
}

// branchBody proposes creating branch name without checking it out.
func branchBody(repo, agent, key, name string) map[string]any {
	return body("branch", repo, agent, key, map[string]any{"name": name, "checkout": false})
}

// propose submits b and returns the previewId, failing unless 202.
func (g *gw) propose(b map[string]any) string {
	g.t.Helper()
	op := b["operationType"].(string)
	r := g.post(previewPrefix+op, b)
	if r.status != http.StatusAccepted {
		g.t.Fatalf("preview %s: %d %s", op, r.status, r.raw)
	}
	id, _ := r.body["previewId"].(string)
	if id != b["previewId"] || r.body["status"] != "pending" || r.body["expiresAt"] == nil {
		g.t.Fatalf("preview reply %s", r.raw)
	}
	return id
}

func confirmBranch(name string) execute.Confirmations {
	return execute.Confirmations{TypedBranch: name}
}

func newExecutorForTest(runDir string) *execute.Executor {
	return execute.New(execute.Options{RunDir: runDir})
}
