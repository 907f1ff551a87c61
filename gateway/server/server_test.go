package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fluxgit/fluxgit/gateway/journal"
	"github.com/fluxgit/fluxgit/gateway/policy"
	"github.com/fluxgit/fluxgit/internal/credpaths"
)

func TestCheckLoopback(t *testing.T) {
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:0", true},
		{"127.0.0.1:59647", true},
		{"127.9.8.7:1234", true},
		{"[::1]:0", true},
		{"0.0.0.0:59647", false},
		{"[::]:59647", false},
		{"10.0.0.1:59647", false},
		{"localhost:59647", false},
		{"127.0.0.1", false},
		{":59647", false},
		{"127.0.0.1:99999", false},
	} {
		t.Run(tc.addr, func(t *testing.T) {
			err := CheckLoopback(tc.addr)
			if (err == nil) != tc.ok {
				t.Fatalf("CheckLoopback(%q) = %v, want ok=%v", tc.addr, err, tc.ok)
			}
		})
	}
	// New refuses the same addresses before binding anything.
	if _, err := New(Config{Addr: "0.0.0.0:0", RunDir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "not loopback") {
		t.Fatalf("New on 0.0.0.0: %v", err)
	}
}

// The start-up lines, the session file, the lock, and the clean exit.
func TestSessionLockAndStartLines(t *testing.T) {
	g := start(t, "", nil)
	lines := strings.Split(strings.TrimSpace(g.out.String()), "\n")
	want := []string{"FLUXGIT_MCP_HANDSHAKE_ADDR=" + g.s.Addr(), "Approval page: http://" + g.s.Addr() + "/?s=" + g.s.Secret()}
	if len(lines) != 2 || lines[0] != want[0] || lines[1] != want[1] {
		t.Fatalf("start-up lines %q, want %q", lines, want)
	}
	if len(g.s.Secret()) != 43 { // 32 bytes, unpadded base64url
		t.Fatalf("secret %q is not 32 random bytes in base64url", g.s.Secret())
	}
	p := g.s.SessionPath()
	if want := SessionPath(os.Getenv(credpaths.EnvSecretDir), g.runDir); p != want {
		t.Fatalf("session file %s, want %s", p, want)
	}
	if strings.HasPrefix(p, g.runDir+string(filepath.Separator)) {
		t.Fatalf("the session file %s lies in the run directory %s, which read tools take as an argument", p, g.runDir)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("session.json mode %v, want 0600", fi.Mode().Perm())
	}
	sess, err := ReadSession(g.runDir)
	if err != nil {
		t.Fatal(err)
	}
	if sess.Addr != g.s.Addr() || sess.Secret != g.s.Secret() || sess.PID != os.Getpid() || sess.StartedAt == "" {
		t.Fatalf("session %+v", sess)
	}
	if _, err := New(Config{Addr: "127.0.0.1:0", RunDir: g.runDir}); err == nil || !strings.Contains(err.Error(), "already running") {
		t.Fatalf("a second gateway on the same run dir: %v", err)
	}
	g.stop()
	if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("session.json after a clean exit: %v", err)
	}
	if _, err := NewClient(g.runDir); err == nil || !strings.Contains(err.Error(), "no fluxgit gateway is running") {
		t.Fatalf("client without a gateway: %v", err)
	}
	// The lock went with the process's hold on it.
	s, err := New(Config{Addr: "127.0.0.1:0", RunDir: g.runDir})
	if err != nil {
		t.Fatalf("a gateway after the first stopped: %v", err)
	}
	s.Close()
}

// Every path checks Host; the agent and CLI APIs refuse Origin; no
// response ever carries a CORS header.
func TestHostAndOrigin(t *testing.T) {
	g := start(t, "", nil)
	_, port, _ := net.SplitHostPort(g.s.Addr())
	paths := []string{statusPrefix + "abc", cancelPrefix + "abc", previewPrefix + "branch", semanticPath, "/cli/v1/proposals", "/", "/ui/api/state", "/nothing"}
	for _, tc := range []struct {
		name    string
		headers map[string]string
		agent   int // want for /v1 paths (0: anything but 403)
		cli     int
		person  int
	}{
		{"foreign host", map[string]string{"Host": "evil.example"}, 403, 403, 403},
		{"foreign host with our port", map[string]string{"Host": "evil.example:" + port}, 403, 403, 403},
		{"another loopback ip", map[string]string{"Host": "127.0.0.2:" + port}, 403, 403, 403},
		{"localhost without port", map[string]string{"Host": "localhost"}, 403, 403, 403},
		{"localhost with port", map[string]string{"Host": "localhost:" + port}, 0, 401, 0},
		{"bound address", nil, 0, 401, 0},
		{"origin on our host", map[string]string{"Origin": "http://" + g.s.Addr()}, 403, 403, 0},
		{"foreign origin", map[string]string{"Origin": "http://evil.example"}, 403, 403, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, p := range paths {
				method := http.MethodGet
				var b []byte
				if strings.HasPrefix(p, previewPrefix) || strings.HasPrefix(p, cancelPrefix) || p == semanticPath {
					method, b = http.MethodPost, []byte(`{}`)
				}
				r := g.req(method, p, b, tc.headers)
				want := tc.person
				switch {
				case strings.HasPrefix(p, "/v1/"):
					want = tc.agent
				case strings.HasPrefix(p, "/cli/"):
					want = tc.cli
				}
				// Past the Host check, the page's API still needs the
				// person's session: that refusal names the session.
				sessionRefusal := p == "/ui/api/state" && strings.Contains(r.errText(), "session")
				if want != 0 && r.status != want || want == 0 && r.status == http.StatusForbidden && !sessionRefusal {
					t.Errorf("%s %s: %d %s, want %d", method, p, r.status, r.raw, want)
				}
				if r.status == http.StatusForbidden && r.errText() == "" {
					t.Errorf("%s %s: 403 without an {error} body: %s", method, p, r.raw)
				}
				for k := range r.header {
					if strings.HasPrefix(strings.ToLower(k), "access-control-") {
						t.Errorf("%s %s: CORS header %s", method, p, k)
					}
				}
			}
		})
	}
}

// Each malformed or refused preview gets its status and an {error} that
// says what to do; nothing reaches the journal.
func TestPreviewRefusals(t *testing.T) {
	repo := newRepo(t)
	polFile := filepath.Join(t.TempDir(), "policy.json")
	if err := os.WriteFile(polFile, []byte(`{"version":1,"rules":[{"name":"no-branch","agents":["limited*"],"operations":["merge"]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	pol, err := policy.Load(polFile)
	if err != nil {
		t.Fatal(err)
	}
	g := start(t, "", func(c *Config) { c.Policy = pol })
	good, _ := json.Marshal(branchBody(repo, "agent-a", "k1", "feature"))
	dup := bytes.Replace(good, []byte(`{`), []byte(`{"reason":"twice",`), 1)
	missing := branchBody(repo, "agent-a", "k2", "feature")
	delete(missing, "reason")
	missingB, _ := json.Marshal(missing)
	notRepo, _ := json.Marshal(branchBody(t.TempDir(), "agent-a", "k3", "feature"))
	limited, _ := json.Marshal(branchBody(repo, "limited-agent", "k4", "feature"))
	big := append([]byte(`{"pad":"`), bytes.Repeat([]byte("x"), MaxPreviewBody)...)
	big = append(big, `"}`...)
	for _, tc := range []struct {
		name   string
		method string
		path   string
		body   []byte
		ctype  string
		status int
		says   string
	}{
		{"too large", "POST", previewPrefix + "branch", big, "", 413, "exceeds"},
		{"malformed json", "POST", previewPrefix + "branch", []byte(`{"a":`), "", 400, "not valid JSON"},
		{"not an object", "POST", previewPrefix + "branch", []byte(`[1,2]`), "", 400, "JSON object"},
		{"empty", "POST", previewPrefix + "branch", []byte(``), "", 400, "empty"},
		{"trailing data", "POST", previewPrefix + "branch", append(append([]byte{}, good...), `{}`...), "", 400, "after its JSON object"},
		{"duplicate key", "POST", previewPrefix + "branch", dup, "", 400, `repeats the key "reason"`},
		{"wrong content type", "POST", previewPrefix + "branch", good, "text/plain", 415, "application/json"},
		{"contract violation", "POST", previewPrefix + "branch", missingB, "", 422, "reason"},
		{"endpoint and body disagree", "POST", previewPrefix + "merge", good, "", 422, ""},
		{"unknown operation", "POST", previewPrefix + "amend", good, "", 404, "unknown operation"},
		{"not a repository", "POST", previewPrefix + "branch", notRepo, "", 422, "not a git work tree"},
		{"policy", "POST", previewPrefix + "branch", limited, "", 403, "agent policy"},
		{"wrong method", "GET", previewPrefix + "branch", nil, "", 405, "needs POST"},
		{"semantic diff", "POST", semanticPath, []byte(`{}`), "", 501, "use diff.text"},
		{"query string", "GET", statusPrefix + "abc?x=1", nil, "", 400, "no query string"},
		{"bad id", "GET", statusPrefix + "a.b", nil, "", 400, "previewId"},
		{"unknown endpoint", "POST", "/v1/mcp/operation/approve/abc", []byte(`{}`), "", 404, "no endpoint"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := map[string]string{}
			if tc.ctype != "" {
				h["Content-Type"] = tc.ctype
			}
			r := g.req(tc.method, tc.path, tc.body, h)
			if r.status != tc.status {
				t.Fatalf("status %d %s, want %d", r.status, r.raw, tc.status)
			}
			if r.errText() == "" || !strings.Contains(r.errText(), tc.says) {
				t.Fatalf("error %q does not say %q", r.errText(), tc.says)
			}
		})
	}
	rows, err := g.s.List(journal.Filter{})
	if err != nil || len(rows) != 0 {
		t.Fatalf("refused previews left %d rows (%v)", len(rows), err)
	}
}

func TestIdempotency(t *testing.T) {
	repo := newRepo(t)
	g := start(t, "", nil)
	first := branchBody(repo, "agent-a", "same", "feature")
	id := g.propose(first)

	retry := branchBody(repo, "agent-a", "same", "feature") // new previewId and requestedAt: the same intent
	r := g.post(previewPrefix+"branch", retry)
	if r.status != http.StatusOK || r.body["previewId"] != id || r.body["status"] != "pending" {
		t.Fatalf("replay: %d %s, want 200 with %s", r.status, r.raw, id)
	}
	other := branchBody(repo, "agent-a", "same", "other-name")
	if r := g.post(previewPrefix+"branch", other); r.status != http.StatusConflict || !strings.Contains(r.errText(), "new idempotencyKey") {
		t.Fatalf("key reused for another intent: %d %s", r.status, r.raw)
	}
	// Keys are per agent.
	g.propose(branchBody(repo, "agent-b", "same", "feature"))
	// A previewId another proposal has is not taken over.
	stolen := branchBody(repo, "agent-c", "x", "feature")
	stolen["previewId"] = id
	if r := g.post(previewPrefix+"branch", stolen); r.status != http.StatusConflict {
		t.Fatalf("reused previewId: %d %s", r.status, r.raw)
	}
	rows, _ := g.s.List(journal.Filter{})
	if len(rows) != 2 {
		t.Fatalf("%d proposals, want 2", len(rows))
	}
}

func TestCancel(t *testing.T) {
	repo := newRepo(t)
	g := start(t, "", nil)
	b := branchBody(repo, "agent-a", "c1", "feature")
	id := g.propose(b)
	for _, tc := range []struct {
		name   string
		id     string
		body   string
		status int
		says   string
	}{
		{"unknown", "nope", `{"agentId":"agent-a"}`, 404, "no proposal"},
		{"no agent", id, `{}`, 400, "agentId"},
		{"other agent", id, `{"agentId":"agent-b"}`, 403, "only the agent that proposed it"},
		{"owner", id, `{"agentId":"agent-a"}`, 200, ""},
		{"not pending", id, `{"agentId":"agent-a"}`, 409, "only a pending proposal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := g.req(http.MethodPost, cancelPrefix+tc.id, []byte(tc.body), nil)
			if r.status != tc.status || !strings.Contains(r.errText(), tc.says) {
				t.Fatalf("%d %s, want %d saying %q", r.status, r.raw, tc.status, tc.says)
			}
			if tc.status == 200 {
				for _, k := range []string{"previewId", "agentId", "repoPath", "reason", "requestedAt", "expiresAt", "operationType", "idempotencyKey"} {
					if r.body[k] == nil || r.body[k] == "" {
						t.Errorf("cancel record lacks %s: %s", k, r.raw)
					}
				}
				if r.body["status"] != "cancelled" || r.body["name"] != "feature" || r.body["idempotencyKey"] != b["idempotencyKey"] {
					t.Errorf("cancel record %s", r.raw)
				}
			}
		})
	}
	if r := g.status(id); r.body["status"] != "cancelled" {
		t.Fatalf("status after cancel: %s", r.raw)
	}
	if _, err := g.s.Decide(context.Background(), id, Decision{Approve: true, By: "cli"}); HTTPStatus(err) != http.StatusConflict {
		t.Fatalf("approving a cancelled proposal: %v", err)
	}
}

func TestExpiry(t *testing.T) {
	repo := newRepo(t)
	g := start(t, "", func(c *Config) { c.TTL = 300 * time.Millisecond })
	id := g.propose(branchBody(repo, "agent-a", "e1", "feature"))
	r := g.waitStatus(id, journal.Expired)
	if r.body["expiresAt"] == nil {
		t.Fatalf("expired status body %s", r.raw)
	}
	if r := g.post(cancelPrefix+id, map[string]string{"agentId": "agent-a"}); r.status != http.StatusConflict || !strings.Contains(r.errText(), "expired") {
		t.Fatalf("cancel after expiry: %d %s", r.status, r.raw)
	}
	_, err := g.s.Decide(context.Background(), id, Decision{Approve: true, By: "page"})
	if HTTPStatus(err) != http.StatusUnprocessableEntity || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("approve after expiry: %v", err)
	}
	if hasBranch(t, repo, "feature") {
		t.Fatal("an expired proposal ran")
	}
	var sawExpiry bool
	for _, e := range g.ledgerEntries() {
		if e["event_type"] == "proposal_cancel" && strings.Contains(e["summary"].(string), "expired") {
			sawExpiry = true
		}
	}
	if !sawExpiry {
		t.Fatal("the ledger has no entry for the expiry")
	}
}

func TestStatusUnknown(t *testing.T) {
	g := start(t, "", nil)
	r := g.status("0e6c8f0a-0000-4000-8000-000000000000")
	if r.status != http.StatusNotFound || !strings.Contains(r.errText(), "no proposal") {
		t.Fatalf("%d %s", r.status, r.raw)
	}
}

// No request to the agent API moves a proposal out of pending, whatever
// it is dressed as.
func TestAgentAPICannotApprove(t *testing.T) {
	repo := newRepo(t)
	g := start(t, "", nil)
	id := g.propose(branchBody(repo, "agent-a", "a1", "feature"))
	approve := []byte(`{"agentId":"agent-a","approve":true,"decision":"approve"}`)
	for _, p := range []string{
		"/v1/mcp/operation/approve/" + id,
		"/v1/mcp/operation/status/" + id,
		"/v1/mcp/operation/preview/" + id + "/approve",
		"/v1/mcp/operation/" + id + "/approve",
		"/v1/mcp/proposals/" + id + "/approve",
		"/v1/ui/api/proposals/" + id + "/approve",
		"/v1/cli/v1/proposals/" + id + "/approve",
	} {
		for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodPatch} {
			if r := g.req(m, p, approve, nil); r.status < 400 {
				t.Errorf("%s %s: %d %s", m, p, r.status, r.raw)
			}
		}
	}
	if r := g.status(id); r.body["status"] != "pending" {
		t.Fatalf("after the attempts: %s", r.raw)
	}
}

// The CLI API wants the bearer secret; with it, the client lists, shows
// and decides.
func TestCLIAPINeedsSecret(t *testing.T) {
	repo := newRepo(t)
	g := start(t, "", nil)
	id := g.propose(branchBody(repo, "agent-a", "s1", "feature"))
	for _, tc := range []struct {
		name    string
		headers map[string]string
		status  int
	}{
		{"no authorization", nil, 401},
		{"wrong secret", map[string]string{"Authorization": "Bearer " + strings.Repeat("A", 43)}, 401},
		{"secret as basic", map[string]string{"Authorization": "Basic " + g.s.Secret()}, 401},
		{"secret with origin", map[string]string{"Authorization": "Bearer " + g.s.Secret(), "Origin": "http://" + g.s.Addr()}, 403},
		{"secret", map[string]string{"Authorization": "Bearer " + g.s.Secret()}, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, rq := range []struct{ method, path, body string }{
				{"GET", "/cli/v1/proposals", ""},
				{"GET", "/cli/v1/proposals/" + id, ""},
				{"POST", "/cli/v1/proposals/" + id + "/reject", `{"reason":"no"}`},
			} {
				if tc.status == 200 && rq.method == "POST" {
					continue // deciding is checked below
				}
				var b []byte
				if rq.body != "" {
					b = []byte(rq.body)
				}
				r := g.req(rq.method, rq.path, b, tc.headers)
				if r.status != tc.status {
					t.Errorf("%s %s: %d %s, want %d", rq.method, rq.path, r.status, r.raw, tc.status)
				}
			}
		})
	}
	if r := g.status(id); r.body["status"] != "pending" {
		t.Fatalf("unauthenticated requests changed the proposal: %s", r.raw)
	}
	c := g.client()
	list, err := c.List(context.Background(), "pending")
	if err != nil || len(list) != 1 || list[0].PreviewID != id || list[0].Reason == "" {
		t.Fatalf("list: %+v %v", list, err)
	}
	v, err := c.Show(context.Background(), id)
	if err != nil || v.OperationType != "branch" || len(v.Body) == 0 || len(v.Review) == 0 {
		t.Fatalf("show: %+v %v", v, err)
	}
	var ae *APIError
	if _, err := c.Reject(context.Background(), id, "  "); !errors.As(err, &ae) || ae.Status != 422 || !strings.Contains(ae.Msg, "reason") {
		t.Fatalf("reject without a reason: %v", err)
	}
	if _, err := c.Show(context.Background(), "missing"); !errors.As(err, &ae) || ae.Status != 404 {
		t.Fatalf("show unknown: %v", err)
	}
	v, err = c.Reject(context.Background(), id, "not now")
	if err != nil || v.Status != journal.Rejected || v.DecidedBy != "cli" {
		t.Fatalf("reject: %+v %v", v, err)
	}
	r := g.status(id)
	if r.body["status"] != "rejected" || r.body["rejectionReason"] != "not now" {
		t.Fatalf("status after reject: %s", r.raw)
	}
	if _, err := c.Approve(context.Background(), id, ApproveRequest{}); !errors.As(err, &ae) || ae.Status != 409 {
		t.Fatalf("approve after reject: %v", err)
	}
}

// Decide → worker → completed, with the repository really changed, the
// changes announced to subscribers and both steps in the ledger.
func TestLifecycleApproveExecute(t *testing.T) {
	repo := newRepo(t)
	g := start(t, "", nil)
	changes, unsubscribe := g.s.Subscribe()
	defer unsubscribe()
	id := g.propose(branchBody(repo, "agent-a", "l1", "feature"))
	p, err := g.s.Decide(context.Background(), id, Decision{Approve: true, By: "page"})
	if err != nil || p.Status != journal.Approved || p.DecidedBy != "page" {
		t.Fatalf("decide: %+v %v", p, err)
	}
	r := g.waitStatus(id, journal.Completed)
	res, _ := r.body["result"].(map[string]any)
	if res["status"] != "completed" || res["message"] == "" {
		t.Fatalf("completed status body %s", r.raw)
	}
	if !hasBranch(t, repo, "feature") {
		t.Fatal("the branch was not created")
	}
	seen := map[journal.Status]bool{}
	waitFor(t, "change notifications", func() bool {
		for {
			select {
			case c := <-changes:
				if c.ID == id {
					seen[c.Status] = true
				}
				continue
			default:
			}
			break
		}
		return seen[journal.Pending] && seen[journal.Approved] && seen[journal.Executing] && seen[journal.Completed]
	})
	kinds := map[string]map[string]any{}
	for _, e := range g.ledgerEntries() {
		kinds[e["event_type"].(string)] = e
	}
	dec, exe := kinds["human_decision"], kinds["operation_execution"]
	if dec == nil || dec["approval"] != "approved" || dec["tool"] != "operation.preview.branch" || dec["session_id"] != "agent-a" || dec["risk"] != "low" {
		t.Fatalf("decision entry %v", dec)
	}
	if exe == nil || exe["result"] != "success" || exe["approval"] != "approved" {
		t.Fatalf("execution entry %v", exe)
	}
	for _, e := range []map[string]any{dec, exe} {
		line, _ := json.Marshal(e)
		if bytes.Contains(line, []byte(repo)) || bytes.Contains(line, []byte("the test asks")) {
			t.Fatalf("the ledger holds a path or the reason in clear: %s", line)
		}
	}
	// A finished proposal cannot be decided again.
	if _, err := g.s.Decide(context.Background(), id, Decision{Reason: "late", By: "cli"}); HTTPStatus(err) != http.StatusConflict {
		t.Fatalf("reject after completion: %v", err)
	}
}

// An approval must carry what the review requires (here a hard reset's
// branch name); without it the proposal stays pending.
func TestApproveNeedsConfirmations(t *testing.T) {
	repo := newRepo(t)
	g := start(t, "", nil)
	id := g.propose(body("reset", repo, "agent-a", "r1", map[string]any{"targetRef": "HEAD", "mode": "hard"}))
	for _, typed := range []string{"", "mai", "master"} {
		_, err := g.s.Decide(context.Background(), id, Decision{Approve: true, By: "cli", Confirm: confirmBranch(typed)})
		if HTTPStatus(err) != http.StatusUnprocessableEntity {
			t.Fatalf("typed %q: %v", typed, err)
		}
	}
	if p, _ := g.s.Get(id); p.Status != journal.Pending {
		t.Fatalf("after refused approvals: %s", p.Status)
	}
	p, err := g.s.Decide(context.Background(), id, Decision{Approve: true, By: "cli", Confirm: confirmBranch("main")})
	if err != nil || p.Status != journal.Approved {
		t.Fatalf("typed main: %+v %v", p, err)
	}
	if _, err := g.s.Decide(context.Background(), id, Decision{Approve: true, By: "agent"}); HTTPStatus(err) != http.StatusUnprocessableEntity {
		t.Fatalf("a decision by the agent: %v", err)
	}
}

// After a crash: an approved proposal whose repository still matches
// runs, one whose HEAD moved fails without running, and one that was
// executing is never re-run but waits for a person.
func TestStartupReconciliation(t *testing.T) {
	repo := newRepo(t)
	runDir := realDir(t, t.TempDir())
	if err := os.MkdirAll(filepath.Join(runDir, "gateway"), 0o700); err != nil {
		t.Fatal(err)
	}
	ex := newExecutorForTest(runDir)
	j, err := journal.Open(filepath.Join(runDir, "gateway", "journal.db"))
	if err != nil {
		t.Fatal(err)
	}
	seed := func(name string, path ...journal.Status) string {
		b := branchBody(repo, "agent-a", name, name)
		raw, _ := json.Marshal(b)
		bind, err := ex.Bind(context.Background(), "branch", raw)
		if err != nil {
			t.Fatal(err)
		}
		bj, _ := json.Marshal(bind)
		now := time.Now()
		id := b["previewId"].(string)
		if _, _, err := j.Submit(journal.Proposal{ID: id, AgentID: "agent-a", IdempotencyKey: b["idempotencyKey"].(string),
			Fingerprint: name, OperationType: "branch", RepoPath: repo, Reason: "r", RequestedAt: b["requestedAt"].(string),
			CreatedAt: now, ExpiresAt: now.Add(time.Hour), UpdatedAt: now, Status: journal.Pending, Body: raw, Binding: bj, Review: []byte(`{"summary":"s","requires":{}}`)}); err != nil {
			t.Fatal(err)
		}
		from := journal.Pending
		for _, to := range path {
			if _, err := j.Transition(id, []journal.Status{from}, to, func(p *journal.Proposal) { p.DecidedBy = "page" }); err != nil {
				t.Fatal(err)
			}
			from = to
		}
		return id
	}
	interrupted := seed("interrupted", journal.Approved, journal.Executing)
	moved := seed("moved", journal.Approved)
	commitFile(t, repo, "b.txt", "two\n") // HEAD moves after "moved" was bound
	resumed := seed("resumed", journal.Approved)
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}

	g := start(t, runDir, nil)
	g.waitStatus(resumed, journal.Completed)
	if !hasBranch(t, repo, "resumed") {
		t.Fatal("the re-validated proposal did not run")
	}
	r := g.status(moved)
	res, _ := r.body["result"].(map[string]any)
	if r.body["status"] != "failed" || !strings.Contains(res["message"].(string), "no longer matches") || hasBranch(t, repo, "moved") {
		t.Fatalf("proposal whose HEAD moved: %s", r.raw)
	}
	r = g.status(interrupted)
	if r.body["status"] != "executing" || r.body["reconciliationRequired"] != true || hasBranch(t, repo, "interrupted") {
		t.Fatalf("interrupted proposal: %s", r.raw)
	}
	c := g.client()
	list, err := c.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	flagged := 0
	for _, v := range list {
		if v.ReconciliationRequired {
			flagged++
		}
	}
	if flagged != 1 {
		t.Fatalf("%d proposals flagged for reconciliation in the list, want 1", flagged)
	}
	var ae *APIError
	if _, err := c.Reconcile(context.Background(), resumed, "completed", ""); !errors.As(err, &ae) || ae.Status != 409 {
		t.Fatalf("reconciling a finished proposal: %v", err)
	}
	if _, err := c.Reconcile(context.Background(), interrupted, "maybe", ""); !errors.As(err, &ae) || ae.Status != 422 {
		t.Fatalf("reconcile as maybe: %v", err)
	}
	v, err := c.Reconcile(context.Background(), interrupted, "failed", "nothing changed")
	if err != nil || v.Status != journal.Failed || v.ReconciliationRequired {
		t.Fatalf("reconcile: %+v %v", v, err)
	}
	r = g.status(interrupted)
	res, _ = r.body["result"].(map[string]any)
	if r.body["status"] != "failed" || !strings.Contains(res["message"].(string), "nothing changed") {
		t.Fatalf("after reconcile: %s", r.raw)
	}
	if hasBranch(t, repo, "interrupted") {
		t.Fatal("the interrupted proposal was re-run")
	}
}

// A session file an older gateway left in the run directory, where a read
// tool could open it, is removed when a gateway starts; the secret is
// written only to the secret directory.
func TestLegacySessionFileRemoved(t *testing.T) {
	runDir := realDir(t, t.TempDir())
	legacy := LegacySessionPath(runDir)
	if err := os.MkdirAll(filepath.Dir(legacy), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(legacy, []byte(`{"addr":"127.0.0.1:1","secret":"old"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	g := start(t, runDir, nil)
	if _, err := os.Stat(legacy); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the old session file in the run directory survived the start: %v", err)
	}
	_ = filepath.WalkDir(runDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), g.s.Secret()) {
				t.Errorf("%s in the run directory holds the secret", p)
			}
		}
		return nil
	})
}
