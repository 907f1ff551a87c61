package tests

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fluxgit/fluxgit/tests/browser"
)

// updateScreenshot rewrites the README's screenshot of the approval page.
var updateScreenshot = flag.Bool("screenshot", false, "rewrite tests/screenshots/approval-page.png from the browser test")

// gatewayProc is one running `fluxgit gateway`.
type gatewayProc struct {
	t      testing.TB
	cmd    *exec.Cmd
	addr   string // ip:port
	page   string // the approval page address with the person's secret
	runDir string
	env    []string
	out    *lockedBuffer
	stderr *lockedBuffer // the gateway's stderr alone: logs and the person's notice lines
	done   chan struct{}
}

// loopEnv is the environment of one approval loop: a run directory and a
// home directory (with the person's git identity) that the gateway, the
// MCP server and the CLI share.
func loopEnv(t testing.TB) []string {
	t.Helper()
	home := canonicalTempDir(t)
	writeFile(t, filepath.Join(home, ".gitconfig"), "[user]\n\tname = Grace Hopper\n\temail = grace@example.com\n")
	var env []string
	for _, kv := range baseEnv(t) {
		if strings.HasPrefix(kv, "HOME=") || strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			continue
		}
		env = append(env, kv)
	}
	// The gateway keeps its session secret in a private directory of its
	// own, never in the run directory.
	secret := canonicalTempDir(t)
	if err := os.Chmod(secret, 0o700); err != nil {
		t.Fatal(err)
	}
	return append(env, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "FLUXGIT_SECRET_DIR="+secret)
}

// startGateway runs `fluxgit gateway` on a free loopback port and waits for
// the two lines it prints for the person.
func startGateway(t testing.TB, env []string, args ...string) *gatewayProc {
	t.Helper()
	g := &gatewayProc{t: t, env: env, out: &lockedBuffer{}, stderr: &lockedBuffer{}, done: make(chan struct{})}
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "FLUXGIT_RUN_DIR="); ok {
			g.runDir = v
		}
	}
	g.cmd = exec.Command(fluxgitBin, append([]string{"gateway", "--addr", "127.0.0.1:0"}, args...)...)
	g.cmd.Env = env
	stdout, err := g.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	g.cmd.Stderr = io.MultiWriter(g.out, g.stderr)
	if err := g.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			g.out.Write([]byte(sc.Text() + "\n"))
			lines <- sc.Text()
		}
		close(lines)
	}()
	go func() { _ = g.cmd.Wait(); close(g.done) }()
	t.Cleanup(g.stop)
	deadline := time.After(30 * time.Second)
	for g.addr == "" || g.page == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("gateway exited before it was ready:\n%s", g.out.String())
			}
			if v, ok := strings.CutPrefix(l, "FLUXGIT_MCP_HANDSHAKE_ADDR="); ok {
				g.addr = strings.TrimSpace(v)
			}
			if v, ok := strings.CutPrefix(l, "Approval page: "); ok {
				g.page = strings.TrimSpace(v)
			}
		case <-deadline:
			t.Fatalf("gateway did not print its address and page:\n%s", g.out.String())
		}
	}
	go func() {
		for range lines {
		}
	}()
	return g
}

// stop asks the gateway to stop (interrupt) and waits, killing after a grace.
func (g *gatewayProc) stop() {
	select {
	case <-g.done:
		return
	default:
	}
	_ = g.cmd.Process.Signal(os.Interrupt)
	select {
	case <-g.done:
	case <-time.After(10 * time.Second):
		_ = g.cmd.Process.Kill()
		<-g.done
	}
}

// kill stops the gateway with SIGKILL, as a crash would.
func (g *gatewayProc) kill() {
	_ = g.cmd.Process.Kill()
	<-g.done
}

// mcpEnv is the MCP server's environment for this gateway.
func (g *gatewayProc) mcpEnv() []string {
	return append(append([]string(nil), g.env...), "FLUXGIT_MCP_HANDSHAKE_ADDR="+g.addr)
}

// cli runs `fluxgit gateway <args>` against this gateway.
func (g *gatewayProc) cli(args ...string) (string, error) {
	cmd := exec.Command(fluxgitBin, append([]string{"gateway"}, args...)...)
	cmd.Env = g.env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// decide runs a person's decision, `fluxgit gateway <verb> <id> <flags>`,
// the way a person does: on a terminal, typing yes (Linux, through a
// pseudo-terminal). Where the tests have no pseudo-terminal it makes the
// same decision on the approval page instead. It fails the test unless
// the gateway accepted the decision.
func (g *gatewayProc) decide(t *testing.T, verb, id string, flags ...string) {
	t.Helper()
	if havePTY {
		screen, out, err := runOnTerminal(t, g.env, "yes\n", append([]string{"gateway", verb, id}, flags...)...)
		if err != nil {
			t.Fatalf("gateway %s %s on a terminal: %v\n%s\nterminal:\n%s", verb, id, err, out, screen)
		}
		return
	}
	pc := newPersonClient(t, g)
	body := map[string]any{}
	for i := 0; i < len(flags); i++ {
		switch flags[i] {
		case "--confirm-branch":
			i++
			body["typedBranch"] = flags[i]
		case "--force-push":
			body["forcePush"] = true
		case "--override-guard":
			body["overrideGuard"] = true
		case "--steps":
			i++
			var steps []int
			for _, s := range strings.Split(flags[i], ",") {
				n, _ := strconv.Atoi(s)
				steps = append(steps, n)
			}
			body["steps"] = steps
		case "--as":
			i++
			body["as"] = flags[i]
		case "--note":
			i++
			body["note"] = flags[i]
		default:
			t.Fatalf("decide: no page equivalent for %s", flags[i])
		}
	}
	if code := pc.post(t, "/ui/api/proposals/"+id+"/"+verb, body, true, pc.csrf, pc.base, ""); code != http.StatusOK {
		t.Fatalf("%s %s on the approval page: HTTP %d", verb, id, code)
	}
}

// loop is an agent (the official SDK client over stdio) connected to
// fluxgit, connected to a gateway.
type loop struct {
	t   *testing.T
	g   *gatewayProc
	ctx context.Context
	cs  *mcp.ClientSession
}

func newLoop(t *testing.T, args ...string) *loop {
	t.Helper()
	g := startGateway(t, loopEnv(t), args...)
	ctx, cs := sdkSessionEnv(t, "2025-11-25", g.mcpEnv())
	return &loop{t: t, g: g, ctx: ctx, cs: cs}
}

// tool calls a tool and returns its structured payload and isError.
func (l *loop) tool(name string, args map[string]any) (map[string]any, bool) {
	l.t.Helper()
	res, err := l.cs.CallTool(l.ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		l.t.Fatalf("%s: %v", name, err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var p map[string]any
	if err := json.Unmarshal(b, &p); err != nil || p == nil {
		l.t.Fatalf("%s: no structured content: %s", name, b)
	}
	return p, res.IsError
}

// propose calls operation.preview.<op> and returns the previewId of the
// live (pending) proposal.
func (l *loop) propose(op, repo string, args map[string]any) string {
	l.t.Helper()
	a := map[string]any{"repoPath": repo, "reason": "The branch is reviewed and its tests pass."}
	for k, v := range args {
		a[k] = v
	}
	p, isErr := l.tool("operation.preview."+op, a)
	if isErr || p["status"] != "pending" || p["accepted"] != true {
		l.t.Fatalf("preview %s: want a pending accepted proposal, got %s", op, jsonOf(p))
	}
	return p["previewId"].(string)
}

// status reads operation.status once.
func (l *loop) status(id string) map[string]any {
	l.t.Helper()
	p, isErr := l.tool("operation.status", map[string]any{"previewId": id})
	if isErr {
		l.t.Fatalf("operation.status %s: %s", id, jsonOf(p))
	}
	data, _ := p["data"].(map[string]any)
	if data == nil {
		l.t.Fatalf("operation.status %s: no data: %s", id, jsonOf(p))
	}
	return data
}

// awaitStatus polls operation.status, as an agent does, until want or a
// terminal status other than want.
func (l *loop) awaitStatus(id, want string) map[string]any {
	l.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		d := l.status(id)
		s, _ := d["status"].(string)
		if s == want {
			return d
		}
		switch s {
		case "completed", "failed", "rejected", "expired", "cancelled":
			l.t.Fatalf("proposal %s ended %s, want %s: %s", id, s, want, jsonOf(d))
		}
		if time.Now().After(deadline) {
			l.t.Fatalf("proposal %s still %s, want %s", id, s, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// e2eRepo is a repository with main checked out and a branch feature one
// commit ahead, committed as the test's fixed identity.
func e2eRepo(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(canonicalTempDir(t), "shop")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "init", "-q", "-b", "main")
	writeFile(t, filepath.Join(dir, "README.md"), "# shop\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "initial")
	git(t, dir, "checkout", "-q", "-b", "feature")
	writeFile(t, filepath.Join(dir, "cart.go"), "package shop\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "feat: cart")
	git(t, dir, "checkout", "-q", "main")
	writeFile(t, filepath.Join(dir, "NOTES.md"), "notes\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "docs: notes")
	return dir
}

func revParse(t testing.TB, repo, rev string) string {
	t.Helper()
	return strings.TrimSpace(git(t, repo, "rev-parse", "--verify", "--end-of-options", rev))
}

// card is the selector of a proposal's pending card.
func card(id string) string { return `article.card[data-preview-id="` + id + `"]` }

// The whole loop with a person in a real browser: an agent proposes a
// merge through fluxgit, the person approves it on the page, git really
// merges, the agent sees completed with the merge commit, the restore
// point is there to undo, and the person's undo restores the branch.
func TestGatewayApproveMergeInBrowser(t *testing.T) {
	b := browser.Start(t)
	l := newLoop(t)
	repo := e2eRepo(t)
	before, feature := revParse(t, repo, "main"), revParse(t, repo, "feature")

	id := l.propose("merge", repo, map[string]any{"sourceRef": "feature", "targetRef": "main"})
	b.Navigate(l.g.page)
	c := b.WaitFor(card(id), 0)
	if s := c.Attr("data-status"); s != "pending" {
		t.Fatalf("card status %q, want pending", s)
	}
	if text := c.Text(); !strings.Contains(text, "feature") || !strings.Contains(text, "main") {
		t.Fatalf("the card does not name the refs: %q", text)
	}
	if *updateScreenshot {
		// A second card, so the picture shows more than one kind.
		l.propose("reset", repo, map[string]any{"targetRef": "HEAD~1", "mode": "hard"})
		b.WaitFor(`article.card[data-status="pending"] input[name="confirmBranch"]`, 0)
		b.SaveScreenshot(filepath.Join("screenshots", "approval-page.png"))
	}
	c.Find(`button[data-action="approve"]`).Click()

	d := l.awaitStatus(id, "completed")
	res, _ := d["result"].(map[string]any)
	head := revParse(t, repo, "main")
	if head == before || res["mergeCommit"] != head {
		t.Fatalf("main %s (was %s), result %s", head, before, jsonOf(res))
	}
	if revParse(t, repo, "main^1") != before || revParse(t, repo, "main^2") != feature {
		t.Fatal("main's new commit is not the merge of main and feature")
	}
	b.WaitFor(`section#history li[data-preview-id="`+id+`"][data-status="completed"]`, 0)

	rp, isErr := l.tool("flux.latestRestorePoint", map[string]any{"repoPath": repo})
	latest := latestRestorePoint(rp)
	if isErr || latest == nil || latest["canUndo"] != true || latest["before"] != before || latest["after"] != head {
		t.Fatalf("flux.latestRestorePoint: %s", jsonOf(rp))
	}

	checkSharedLedger(t, l.g, id, repo)

	// Undo asks first: the click shows what will happen, and nothing is
	// undone until the person confirms in the page.
	b.WaitClick(`button[data-action="undo"][data-repo="`+repo+`"]`, 0)
	b.WaitText(`li.restore[data-repo="`+repo+`"] .rp-confirm`, "Undo the merge on refs/heads/main?", 0)
	time.Sleep(700 * time.Millisecond)
	if revParse(t, repo, "main") != head {
		t.Fatal("the Undo button undid without asking for confirmation")
	}
	b.WaitClick(`button[data-action="cancel-undo"]`, 0)
	b.WaitClick(`button[data-action="undo"][data-repo="`+repo+`"]`, 0)
	b.WaitClick(`button[data-action="confirm-undo"][data-repo="`+repo+`"]`, 0)
	waitRev(t, repo, "main", before, "undo did not restore main")
	rp, _ = l.tool("flux.latestRestorePoint", map[string]any{"repoPath": repo})
	latest = latestRestorePoint(rp)
	if latest == nil || latest["canUndo"] != false || latest["canRedo"] != true {
		t.Fatalf("after undo: %s", jsonOf(rp))
	}
	b.WaitFor(`li.restore-action[data-action="undo"][data-ok="true"]`, 0)
	b.WaitText(`li.restore[data-repo="`+repo+`"] [data-why="undo"]`, "Cannot undo", 0)
	// Redo asks too, and puts the merge back.
	b.WaitClick(`button[data-action="redo"][data-repo="`+repo+`"]`, 0)
	b.WaitClick(`button[data-action="confirm-redo"][data-repo="`+repo+`"]`, 0)
	waitRev(t, repo, "main", head, "redo did not put the merge back")
	b.WaitFor(`li.restore-action[data-action="redo"][data-ok="true"]`, 0)
	if *updateScreenshot {
		b.WaitClick(`button[data-action="undo"][data-repo="`+repo+`"]`, 0)
		b.WaitFor(`button[data-action="confirm-undo"]`, 0)
		b.SaveScreenshot(filepath.Join("screenshots", "undo-confirm.png"))
	}
}

// waitRev waits until rev names want in repo.
func waitRev(t *testing.T, repo, rev, want, msg string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for revParse(t, repo, rev) != want {
		if time.Now().After(deadline) {
			t.Fatal(msg)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkSharedLedger: the MCP server's tool calls and the gateway's human
// decision and execution outcome are entries of one hash chain in the run
// directory's ledger, which `fluxgit verify-audit` accepts whole; the
// entries name the agent and the operation but hold neither the
// repository path nor the reason in clear.
func checkSharedLedger(t *testing.T, g *gatewayProc, id, repo string) {
	t.Helper()
	path := filepath.Join(g.runDir, "audit", "mcp.jsonl")
	deadline := time.Now().Add(30 * time.Second)
	var kinds map[string]bool
	var raw []byte
	for {
		raw, _ = os.ReadFile(path)
		kinds = map[string]bool{}
		for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
			var e map[string]any
			if json.Unmarshal([]byte(line), &e) == nil {
				kinds[e["event_type"].(string)+" "+e["tool"].(string)] = true
			}
		}
		if kinds["human_decision operation.preview.merge"] && kinds["operation_execution operation.preview.merge"] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the ledger lacks the decision or the outcome: %v", kinds)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !kinds["write_proposal operation.preview.merge"] || !kinds["tool_call operation.status"] {
		t.Fatalf("the MCP server's entries are not in the same ledger: %v", kinds)
	}
	for _, secret := range []string{repo, "tests pass", id} {
		if strings.Contains(string(raw), secret) {
			t.Fatalf("the ledger holds %q in clear", secret)
		}
	}
	out, err := exec.Command(fluxgitBin, "verify-audit", path).CombinedOutput()
	if err != nil {
		t.Fatalf("verify-audit: %v\n%s", err, out)
	}
}

// latestRestorePoint is data.latestRestorePoint of a flux.latestRestorePoint payload.
func latestRestorePoint(p map[string]any) map[string]any {
	data, _ := p["data"].(map[string]any)
	rp, _ := data["latestRestorePoint"].(map[string]any)
	return rp
}

// The other ways a proposal ends, each seen by the agent through
// operation.status and by the person on the page, with the repository
// checked after: reject, expire, cancel, a conflict that leaves the
// repository as it was, and a plan that stops at its failing step.
func TestGatewayOutcomesInBrowser(t *testing.T) {
	b := browser.Start(t)
	l := newLoop(t, "--proposal-ttl", "4s")
	b.Navigate(l.g.page)
	b.WaitFor("main", 0)
	history := func(id, status string) string {
		return `section#history li[data-preview-id="` + id + `"][data-status="` + status + `"]`
	}

	t.Run("reject", func(t *testing.T) {
		b := b.For(t)
		repo := e2eRepo(t)
		head := revParse(t, repo, "main")
		id := l.propose("merge", repo, map[string]any{"sourceRef": "feature", "targetRef": "main"})
		c := b.WaitFor(card(id), 0)
		c.Find(`textarea[name="reason"]`).Type("Wait for the release branch first.")
		c.Find(`button[data-action="reject"]`).Click()
		d := l.awaitStatus(id, "rejected")
		if d["rejectionReason"] != "Wait for the release branch first." {
			t.Fatalf("rejectionReason: %s", jsonOf(d))
		}
		b.WaitFor(history(id, "rejected"), 0)
		if revParse(t, repo, "main") != head {
			t.Fatal("a rejected merge changed main")
		}
	})

	t.Run("expire", func(t *testing.T) {
		b := b.For(t)
		repo := e2eRepo(t)
		id := l.propose("branch", repo, map[string]any{"name": "topic"})
		b.WaitFor(card(id), 0)
		l.awaitStatus(id, "expired")
		b.WaitGone(card(id), 0)
		b.WaitFor(history(id, "expired"), 0)
		if gitCmd(repo, "rev-parse", "--verify", "--quiet", "refs/heads/topic").Run() == nil {
			t.Fatal("an expired proposal created its branch")
		}
	})

	t.Run("cancel", func(t *testing.T) {
		b := b.For(t)
		repo := e2eRepo(t)
		id := l.propose("branch", repo, map[string]any{"name": "topic"})
		b.WaitFor(card(id), 0)
		p, isErr := l.tool("operation.cancel", map[string]any{"previewId": id})
		if isErr || p["status"] != "cancelled" {
			t.Fatalf("operation.cancel: %s", jsonOf(p))
		}
		b.WaitGone(card(id), 0)
		b.WaitFor(history(id, "cancelled"), 0)
		if d := l.status(id); d["status"] != "cancelled" {
			t.Fatalf("status after cancel: %s", jsonOf(d))
		}
	})

	t.Run("conflict leaves the repository as it was", func(t *testing.T) {
		b := b.For(t)
		repo := e2eRepo(t)
		writeFile(t, filepath.Join(repo, "README.md"), "# shop, main's words\n")
		git(t, repo, "commit", "-q", "-am", "main readme")
		git(t, repo, "checkout", "-q", "feature")
		writeFile(t, filepath.Join(repo, "README.md"), "# shop, feature's words\n")
		git(t, repo, "commit", "-q", "-am", "feature readme")
		git(t, repo, "checkout", "-q", "main")
		head := revParse(t, repo, "main")
		id := l.propose("merge", repo, map[string]any{"sourceRef": "feature", "targetRef": "main"})
		b.WaitFor(card(id), 0).Find(`button[data-action="approve"]`).Click()
		d := l.awaitStatus(id, "failed")
		res, _ := d["result"].(map[string]any)
		if res == nil || res["status"] != "failed" || !strings.Contains(strings.ToLower(jsonOf(res["message"])), "conflict") {
			t.Fatalf("result: %s", jsonOf(d))
		}
		if revParse(t, repo, "HEAD") != head || strings.TrimSpace(git(t, repo, "status", "--porcelain")) != "" {
			t.Fatalf("the repository changed: %s", git(t, repo, "status"))
		}
		if _, err := os.Stat(filepath.Join(repo, ".git", "MERGE_HEAD")); err == nil {
			t.Fatal("a merge is left in progress")
		}
		b.WaitFor(history(id, "failed"), 0)
	})

	t.Run("plan stops at its failing step", func(t *testing.T) {
		b := b.For(t)
		repo := e2eRepo(t)
		head := revParse(t, repo, "main")
		id := l.propose("plan", repo, map[string]any{"steps": []any{
			map[string]any{"operationType": "merge", "sourceRef": "feature", "targetRef": "main"},
			map[string]any{"operationType": "patch", "patchContent": "diff --git a/missing.txt b/missing.txt\n--- a/missing.txt\n+++ b/missing.txt\n@@ -1 +1 @@\n-old\n+new\n"},
			map[string]any{"operationType": "reset", "targetRef": "HEAD~1", "mode": "soft"},
		}})
		c := b.WaitFor(card(id), 0)
		for _, box := range c.FindAll(`input[name="step"]`) {
			box.Click()
		}
		c.Find(`button[data-action="approve"]`).Click()
		d := l.awaitStatus(id, "failed")
		res, _ := d["result"].(map[string]any)
		steps, _ := res["steps"].([]any)
		var got []string
		for _, s := range steps {
			got = append(got, s.(map[string]any)["status"].(string))
		}
		if strings.Join(got, ",") != "completed,failed,skipped" {
			t.Fatalf("step statuses %v: %s", got, jsonOf(res))
		}
		if revParse(t, repo, "main^2") != revParse(t, repo, "feature") || revParse(t, repo, "main^1") != head {
			t.Fatal("the first step's merge is not on main")
		}
	})
}

// personClient is what a page in a browser would send, made by hand so
// that each part can be left out or forged: the session cookie, the CSRF
// token, the Origin and the Host.
type personClient struct {
	base   string // http://ip:port
	cookie *http.Cookie
	csrf   string
}

func newPersonClient(t *testing.T, g *gatewayProc) *personClient {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(g.page)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	pc := &personClient{base: "http://" + g.addr}
	for _, ck := range resp.Cookies() {
		pc.cookie = ck
	}
	if pc.cookie == nil || !pc.cookie.HttpOnly || pc.cookie.SameSite != http.SameSiteStrictMode {
		t.Fatalf("the page address set no HttpOnly SameSite=Strict cookie: %v", resp.Cookies())
	}
	req, _ := http.NewRequest(http.MethodGet, pc.base+"/ui/api/state", nil)
	req.AddCookie(pc.cookie)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct {
		CSRF string `json:"csrf"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || st.CSRF == "" {
		t.Fatalf("state: %v %d", err, resp.StatusCode)
	}
	pc.csrf = st.CSRF
	return pc
}

// post sends one decision; each field left empty is left out.
func (pc *personClient) post(t *testing.T, path string, body any, cookie bool, csrf, origin, host string) int {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, pc.base+path, strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/json")
	if cookie {
		req.AddCookie(pc.cookie)
	}
	if csrf != "" {
		req.Header.Set("X-CSRF-Token", csrf)
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	if host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// Only the person can decide: a decision without the secret's cookie, with
// a wrong CSRF token, from a foreign Origin or to a foreign Host is
// refused and changes nothing; the agent's API has no way to approve; a
// proposal outside the agent policy is refused before any card exists.
func TestGatewayDecisionsNeedThePerson(t *testing.T) {
	l := newLoop(t)
	repo := e2eRepo(t)
	id := l.propose("branch", repo, map[string]any{"name": "topic"})
	pc := newPersonClient(t, l.g)
	origin := pc.base
	approve := "/ui/api/proposals/" + id + "/approve"
	for _, tc := range []struct {
		name         string
		cookie       bool
		csrf, origin string
		host         string
	}{
		{name: "no secret cookie", cookie: false, csrf: pc.csrf, origin: origin},
		{name: "wrong CSRF token", cookie: true, csrf: "forged", origin: origin},
		{name: "no CSRF token", cookie: true, origin: origin},
		{name: "foreign Origin", cookie: true, csrf: pc.csrf, origin: "http://evil.example"},
		{name: "no Origin", cookie: true, csrf: pc.csrf},
		{name: "foreign Host", cookie: true, csrf: pc.csrf, origin: origin, host: "evil.example"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if code := pc.post(t, approve, map[string]any{}, tc.cookie, tc.csrf, tc.origin, tc.host); code != http.StatusForbidden {
				t.Fatalf("status %d, want 403", code)
			}
			if d := l.status(id); d["status"] != "pending" {
				t.Fatalf("the refused decision changed the proposal: %s", jsonOf(d))
			}
		})
	}
	t.Run("the agent API cannot approve", func(t *testing.T) {
		for _, path := range []string{
			"/v1/mcp/operation/approve/" + id,
			"/v1/mcp/operation/status/" + id + "/approve",
			"/v1/mcp/operation/preview/approve",
			approve, // the page's route, without the person's credentials, as an agent would call it
		} {
			resp, err := http.Post(pc.base+path, "application/json", strings.NewReader(`{"agentId":"go-sdk-test"}`))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode < 400 {
				t.Fatalf("POST %s: %d", path, resp.StatusCode)
			}
		}
		if d := l.status(id); d["status"] != "pending" {
			t.Fatalf("status %s", jsonOf(d))
		}
	})
	t.Run("the real decision passes", func(t *testing.T) {
		if code := pc.post(t, approve, map[string]any{}, true, pc.csrf, origin, ""); code != http.StatusOK {
			t.Fatalf("status %d", code)
		}
		l.awaitStatus(id, "completed")
		if revParse(t, repo, "topic") != revParse(t, repo, "main") {
			t.Fatal("branch topic was not created at main")
		}
	})
}

// A policy that confines this agent to one directory refuses a proposal
// for a repository elsewhere with 10006 before a card opens, and lets one
// inside through; a policy file that is not valid stops the gateway.
func TestGatewayAgentPolicy(t *testing.T) {
	env := loopEnv(t)
	allowed := canonicalTempDir(t)
	inside := filepath.Join(allowed, "shop")
	outside := e2eRepo(t)
	git(t, canonicalTempDir(t), "clone", "-q", outside, inside)
	policyFile := filepath.Join(canonicalTempDir(t), "policy.yaml")
	writeFile(t, policyFile, "version: 1\ndefault: deny\nrules:\n  - name: sdk-in-allowed-dir\n    agents: [\"go-sdk-*\"]\n    operations: [branch, merge]\n    pathConstraints: [\""+allowed+"\"]\n")
	env = append(env, "FLUXGIT_MCP_AGENT_POLICY="+policyFile)
	g := startGateway(t, env)
	ctx, cs := sdkSessionEnv(t, "2025-11-25", g.mcpEnv())
	l := &loop{t: t, g: g, ctx: ctx, cs: cs}

	p, isErr := l.tool("operation.preview.branch", map[string]any{"repoPath": outside, "reason": "r", "name": "topic"})
	code, _ := errorOf(t, p)
	if !isErr || code != 10006 || !strings.Contains(jsonOf(p), "sdk-in-allowed-dir") && !strings.Contains(jsonOf(p), "policy") {
		t.Fatalf("outside the policy: %s", jsonOf(p))
	}
	pc := newPersonClient(t, g)
	req, _ := http.NewRequest(http.MethodGet, pc.base+"/ui/api/state", nil)
	req.AddCookie(pc.cookie)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Proposals []any `json:"proposals"`
		History   []any `json:"history"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if len(st.Proposals) != 0 || len(st.History) != 0 {
		t.Fatalf("a refused proposal reached the page: %+v", st)
	}
	l.propose("branch", inside, map[string]any{"name": "topic"})
	p, isErr = l.tool("operation.preview.reset", map[string]any{"repoPath": inside, "reason": "r", "targetRef": "HEAD"})
	if code, _ := errorOf(t, p); !isErr || code != 10006 {
		t.Fatalf("an operation the rule does not list: %s", jsonOf(p))
	}

	for _, bad := range []struct{ name, content string }{
		{"malformed", "version: 1\nrules: [\n"},
		{"unsupported version", "version: 7\nrules: []\n"},
		{"unknown key", "version: 1\nrules:\n  - name: x\n    agents: [a]\n    colour: red\n"},
	} {
		t.Run(bad.name, func(t *testing.T) {
			f := filepath.Join(canonicalTempDir(t), "policy.yaml")
			writeFile(t, f, bad.content)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, fluxgitBin, "gateway", "--addr", "127.0.0.1:0")
			cmd.Env = append(loopEnv(t), "FLUXGIT_MCP_AGENT_POLICY="+f)
			out, err := cmd.CombinedOutput()
			if err == nil || !strings.Contains(string(out), "policy") {
				t.Fatalf("the gateway started with a bad policy: %v\n%s", err, out)
			}
		})
	}
	t.Run("missing", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, fluxgitBin, "gateway", "--addr", "127.0.0.1:0")
		cmd.Env = append(loopEnv(t), "FLUXGIT_MCP_AGENT_POLICY="+filepath.Join(t.TempDir(), "none.yaml"))
		if out, err := cmd.CombinedOutput(); err == nil {
			t.Fatalf("the gateway started without its policy file:\n%s", out)
		}
	})
}

// A crash (SIGKILL) of the gateway while one proposal is executing and two
// are approved and waiting: after a restart the executing one is shown for
// reconciliation and never re-run; an approved one whose repository is
// unchanged resumes and completes; an approved one whose ref moved while
// the gateway was down fails re-validation instead of running; the journal
// passes SQLite's integrity check.
func TestGatewayCrashRecovery(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("SIGKILL and shell hooks: Unix")
	}
	env := loopEnv(t)
	g := startGateway(t, env)
	ctx, cs := sdkSessionEnv(t, "2025-11-25", g.mcpEnv())
	l := &loop{t: t, g: g, ctx: ctx, cs: cs}

	// A: a commit whose pre-commit hook (the user's hooks run for commit)
	// records each run and then hangs, so the commit is executing when
	// the gateway dies.
	slow := e2eRepo(t)
	marker := filepath.Join(canonicalTempDir(t), "hook-runs")
	writeFile(t, filepath.Join(slow, ".git", "hooks", "pre-commit"), "#!/bin/sh\necho run >> '"+marker+"'\nsleep 20\nexit 1\n")
	if err := os.Chmod(filepath.Join(slow, ".git", "hooks", "pre-commit"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(slow, "todo.txt"), "ship it\n")
	p1 := l.propose("commit", slow, map[string]any{"message": "chore: todo", "paths": []any{"todo.txt"}})
	// B: a branch to create, approved while A runs.
	quiet := e2eRepo(t)
	p2 := l.propose("branch", quiet, map[string]any{"name": "topic", "checkout": false})
	// C: a merge, approved while A runs; its source moves while the gateway is down.
	moving := e2eRepo(t)
	p3 := l.propose("merge", moving, map[string]any{"sourceRef": "feature", "targetRef": "main"})

	g.decide(t, "approve", p1)
	l.awaitStatus(p1, "executing")
	waitFile(t, marker)
	for _, id := range []string{p2, p3} {
		g.decide(t, "approve", id)
		if d := l.status(id); d["status"] != "approved" {
			t.Fatalf("%s: %s", id, jsonOf(d))
		}
	}
	g.kill()

	git(t, moving, "checkout", "-q", "feature")
	writeFile(t, filepath.Join(moving, "more.go"), "package shop\n")
	git(t, moving, "add", "-A")
	git(t, moving, "commit", "-q", "-m", "feat: more")
	git(t, moving, "checkout", "-q", "main")
	mainBefore := revParse(t, moving, "main")

	g2 := startGateway(t, env)
	ctx2, cs2 := sdkSessionEnv(t, "2025-11-25", g2.mcpEnv())
	l2 := &loop{t: t, g: g2, ctx: ctx2, cs: cs2}
	l2.awaitStatus(p2, "completed")
	if revParse(t, quiet, "topic") != revParse(t, quiet, "main") {
		t.Fatal("the resumed proposal did not create its branch")
	}
	d := l2.awaitStatus(p3, "failed")
	if !strings.Contains(strings.ToLower(jsonOf(d)), "moved") || revParse(t, moving, "main") != mainBefore {
		t.Fatalf("a proposal whose ref moved was not stopped: %s", jsonOf(d))
	}
	d = l2.status(p1)
	if d["status"] != "executing" || d["reconciliationRequired"] != true {
		t.Fatalf("the interrupted proposal: %s", jsonOf(d))
	}
	out, err := g2.cli("list")
	if err != nil || !strings.Contains(out, p1) || !strings.Contains(strings.ToLower(out), "reconcil") {
		t.Fatalf("gateway list does not show the proposal to reconcile: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(marker); strings.Count(string(b), "run") != 1 {
		t.Fatalf("the interrupted commit ran %d times", strings.Count(string(b), "run"))
	}
	g2.decide(t, "reconcile", p1, "--as", "failed", "--note", "the hook was killed")
	if d := l2.status(p1); d["status"] != "failed" {
		t.Fatalf("after reconcile: %s", jsonOf(d))
	}

	g2.stop()
	db, err := sql.Open("sqlite", filepath.Join(g.runDir, "gateway", "journal.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var check string
	var rows int
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check: %q %v", check, err)
	}
	if err := db.QueryRow("SELECT count(*) FROM proposals").Scan(&rows); err != nil || rows != 3 {
		t.Fatalf("journal rows %d %v, want 3", rows, err)
	}
}

// Each of the twelve operation types, proposed by an agent through fluxgit,
// approved by the person in the terminal (`fluxgit gateway approve`) and
// executed by the gateway, with the repository checked after.
func TestGatewayExecutesEveryOperation(t *testing.T) {
	l := newLoop(t)
	for _, tc := range []struct {
		op      string
		args    func(repo string) map[string]any
		approve []string // extra approve flags
		check   func(t *testing.T, repo string, before string, result map[string]any)
	}{
		{op: "merge", args: func(string) map[string]any { return map[string]any{"sourceRef": "feature", "targetRef": "main"} },
			check: func(t *testing.T, repo, before string, res map[string]any) {
				if revParse(t, repo, "main^2") != revParse(t, repo, "feature") || res["mergeCommit"] != revParse(t, repo, "main") {
					t.Fatalf("not merged: %s", jsonOf(res))
				}
			}},
		{op: "rebase", args: func(string) map[string]any { return map[string]any{"currentRef": "feature", "ontoRef": "main"} },
			check: func(t *testing.T, repo, before string, res map[string]any) {
				if revParse(t, repo, "feature~1") != before || res["newHeadSha"] != revParse(t, repo, "feature") {
					t.Fatalf("feature is not on main: %s", jsonOf(res))
				}
			}},
		{op: "discard", args: func(repo string) map[string]any {
			writeFile(t, filepath.Join(repo, "README.md"), "# scribbles\n")
			return map[string]any{"paths": []any{"README.md"}}
		}, check: func(t *testing.T, repo, before string, res map[string]any) {
			if b, _ := os.ReadFile(filepath.Join(repo, "README.md")); string(b) != "# shop\n" {
				t.Fatalf("README.md not restored: %q", b)
			}
			if !strings.Contains(git(t, repo, "stash", "list"), "stash@{0}") {
				t.Fatal("no safety stash")
			}
		}},
		{op: "reset", args: func(string) map[string]any { return map[string]any{"targetRef": "HEAD~1", "mode": "hard"} },
			approve: []string{"--confirm-branch", "main"},
			check: func(t *testing.T, repo, before string, res map[string]any) {
				if revParse(t, repo, "main") != revParse(t, repo, before+"~1") || res["mode"] != "hard" {
					t.Fatalf("not reset: %s", jsonOf(res))
				}
			}},
		{op: "patch", args: func(string) map[string]any {
			return map[string]any{"patchContent": "diff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-# shop\n+# shop, patched\n"}
		}, check: func(t *testing.T, repo, before string, res map[string]any) {
			if b, _ := os.ReadFile(filepath.Join(repo, "README.md")); string(b) != "# shop, patched\n" {
				t.Fatalf("not patched: %q", b)
			}
		}},
		{op: "plan", args: func(string) map[string]any {
			return map[string]any{"steps": []any{map[string]any{"operationType": "reset", "targetRef": "HEAD~1", "mode": "soft"}}}
		}, approve: []string{"--steps", "0"},
			check: func(t *testing.T, repo, before string, res map[string]any) {
				if revParse(t, repo, "main") != revParse(t, repo, before+"~1") {
					t.Fatalf("plan did not run: %s", jsonOf(res))
				}
			}},
		{op: "worktree", args: func(string) map[string]any {
			return map[string]any{"branch": "feature", "path": filepath.Join(canonicalTempDir(t), "wt")}
		}, check: func(t *testing.T, repo, before string, res map[string]any) {
			p, _ := res["worktreePath"].(string)
			if !strings.Contains(git(t, repo, "worktree", "list"), p) || p == "" {
				t.Fatalf("no worktree: %s", jsonOf(res))
			}
		}},
		{op: "commit", args: func(repo string) map[string]any {
			writeFile(t, filepath.Join(repo, "todo.txt"), "ship it\n")
			return map[string]any{"message": "chore: todo", "paths": []any{"todo.txt"}}
		}, check: func(t *testing.T, repo, before string, res map[string]any) {
			if res["commitSha"] != revParse(t, repo, "HEAD") || strings.TrimSpace(git(t, repo, "log", "-1", "--format=%s%n%an")) != "chore: todo\nGrace Hopper" {
				t.Fatalf("not committed as the person: %s %s", jsonOf(res), git(t, repo, "log", "-1", "--format=%s %an"))
			}
		}},
		{op: "push", args: func(repo string) map[string]any {
			bare := filepath.Join(canonicalTempDir(t), "remote.git")
			git(t, repo, "init", "-q", "--bare", bare)
			git(t, repo, "remote", "add", "origin", bare)
			return map[string]any{"branch": "main", "setUpstream": true}
		}, check: func(t *testing.T, repo, before string, res map[string]any) {
			if revParse(t, repo, "refs/remotes/origin/main") != before || strings.TrimSpace(git(t, repo, "rev-parse", "--abbrev-ref", "main@{upstream}")) != "origin/main" {
				t.Fatalf("not pushed with upstream: %s", jsonOf(res))
			}
		}},
		{op: "branch", args: func(string) map[string]any { return map[string]any{"name": "topic", "startPoint": "feature"} },
			check: func(t *testing.T, repo, before string, res map[string]any) {
				if revParse(t, repo, "topic") != revParse(t, repo, "feature") || strings.TrimSpace(git(t, repo, "symbolic-ref", "HEAD")) != "refs/heads/topic" {
					t.Fatalf("topic not created and checked out: %s", jsonOf(res))
				}
			}},
		{op: "branchDelete", args: func(repo string) map[string]any {
			git(t, repo, "branch", "done", "main~1")
			return map[string]any{"targets": []any{map[string]any{"repoPath": repo, "branches": []any{"done", "feature"}}}}
		}, check: func(t *testing.T, repo, before string, res map[string]any) {
			if gitCmd(repo, "rev-parse", "--verify", "--quiet", "refs/heads/done").Run() == nil {
				t.Fatal("merged branch done was not deleted")
			}
			if gitCmd(repo, "rev-parse", "--verify", "--quiet", "refs/heads/feature").Run() != nil {
				t.Fatal("unmerged branch feature was deleted")
			}
		}},
		{op: "submodulePointer", args: func(repo string) map[string]any {
			lib := e2eRepo(t)
			git(t, repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "lib")
			git(t, repo, "commit", "-q", "-m", "add lib")
			git(t, filepath.Join(repo, "lib"), "checkout", "-q", "feature")
			return map[string]any{"relativePath": "lib", "direction": "record", "message": "chore: bump lib"}
		}, check: func(t *testing.T, repo, before string, res map[string]any) {
			want := revParse(t, filepath.Join(repo, "lib"), "HEAD")
			if got := strings.Fields(git(t, repo, "ls-tree", "HEAD", "lib"))[2]; got != want {
				t.Fatalf("gitlink %s, want %s: %s", got, want, jsonOf(res))
			}
		}},
	} {
		t.Run(tc.op, func(t *testing.T) {
			repo := e2eRepo(t)
			before := revParse(t, repo, "main")
			id := l.propose(tc.op, repo, tc.args(repo))
			l.g.decide(t, "approve", id, tc.approve...)
			d := l.awaitStatus(id, "completed")
			res, _ := d["result"].(map[string]any)
			if res == nil || res["status"] != "completed" {
				t.Fatalf("result: %s", jsonOf(d))
			}
			tc.check(t, repo, before, res)
		})
	}
}
