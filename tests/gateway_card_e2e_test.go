package tests

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fluxgit/fluxgit/tests/browser"
)

// Issue 26: approval where the person already is. A 2026-07-28 client that
// declared URL-mode elicitation and the Tasks extension calls
// operation.preview.merge over the real `fluxgit serve` (raw JSON-RPC on
// stdio: no Go SDK speaks the extension yet) against a real gateway; the
// proposal asks the client to show the person the card's own address, the
// person decides there in headless Chromium, and tasks/get follows the
// proposal to its end.

// cardClient is a raw 2026-07-28 client of one `fluxgit serve` process.
type cardClient struct {
	t    *testing.T
	s    *server
	caps map[string]any
	n    int
	// name, when set, is the clientInfo name (the agent) instead of
	// modernMeta's.
	name string
}

// newCardClient starts `fluxgit serve` for g and declares caps on every
// request.
func newCardClient(t *testing.T, g *gatewayProc, caps map[string]any) *cardClient {
	return &cardClient{t: t, s: startServer(t, g.mcpEnv()), caps: caps}
}

// bothCaps declares URL-mode elicitation and the Tasks extension.
func bothCaps() map[string]any {
	return map[string]any{
		"elicitation": map[string]any{"url": map[string]any{}},
		"extensions":  map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}},
	}
}

// call sends method with params (and the client's _meta) and returns the
// result object; a JSON-RPC error fails the test unless wantErr.
func (c *cardClient) call(method string, params map[string]any) map[string]any {
	c.t.Helper()
	c.n++
	meta := modernMeta()
	meta["io.modelcontextprotocol/clientCapabilities"] = c.caps
	if c.name != "" {
		meta["io.modelcontextprotocol/clientInfo"] = map[string]any{"name": c.name, "version": "1"}
	}
	params["_meta"] = meta
	r := c.s.call(c.n, method, params)
	if r.Error != nil {
		c.t.Fatalf("%s: JSON-RPC error: %s", method, r.raw)
	}
	var out map[string]any
	if err := json.Unmarshal(r.Result, &out); err != nil {
		c.t.Fatalf("%s: result is not an object: %s", method, r.raw)
	}
	return out
}

// mergeArgs are the arguments of the test's merge proposal.
func mergeArgs(repo string) map[string]any {
	return map[string]any{"repoPath": repo, "reason": "The cart feature is reviewed and its tests pass.",
		"sourceRef": "feature", "targetRef": "main", "strategy": "merge"}
}

// urlQuestion is the URL elicitation an input_required result asks.
type urlQuestion struct {
	key, url, id, state string
}

// previewAsked calls operation.preview.merge and expects the round that
// asks the client to show the card.
func (c *cardClient) previewAsked(args map[string]any) urlQuestion {
	c.t.Helper()
	res := c.call("tools/call", map[string]any{"name": "operation.preview.merge", "arguments": args})
	if res["resultType"] != "input_required" {
		c.t.Fatalf("want an input_required round asking to show the card, got %s", jsonOf(res))
	}
	reqs, _ := res["inputRequests"].(map[string]any)
	if len(reqs) != 1 {
		c.t.Fatalf("want one input request, got %s", jsonOf(res))
	}
	var q urlQuestion
	q.state, _ = res["requestState"].(string)
	for k, v := range reqs {
		r, _ := v.(map[string]any)
		p, _ := r["params"].(map[string]any)
		if r["method"] != "elicitation/create" || p["mode"] != "url" {
			c.t.Fatalf("want a URL-mode elicitation, got %s", jsonOf(r))
		}
		q.key = k
		q.url, _ = p["url"].(string)
		q.id, _ = p["elicitationId"].(string)
	}
	if q.state == "" || q.url == "" || q.id == "" {
		c.t.Fatalf("incomplete round: %s", jsonOf(res))
	}
	return q
}

// resend re-sends the preview with the client's answer to q.
func (c *cardClient) resend(args map[string]any, q urlQuestion, action string) map[string]any {
	c.t.Helper()
	return c.call("tools/call", map[string]any{"name": "operation.preview.merge", "arguments": args,
		"requestState": q.state, "inputResponses": map[string]any{q.key: map[string]any{"action": action}}})
}

// awaitTask polls tasks/get until the task is terminal.
func (c *cardClient) awaitTask(id string) map[string]any {
	c.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		task := c.call("tasks/get", map[string]any{"taskId": id})
		switch task["status"] {
		case "completed", "failed", "cancelled":
			return task
		case "working":
		default:
			c.t.Fatalf("task %s: unexpected state %s", id, jsonOf(task))
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("task %s still %s", id, jsonOf(task))
		}
		time.Sleep(150 * time.Millisecond)
	}
}

// checkCardURL asserts the elicited URL is the card of id on g and
// carries no secret.
func checkCardURL(t *testing.T, g *gatewayProc, q urlQuestion) {
	t.Helper()
	want := "http://" + g.addr + "/ui/p/" + q.id
	if q.url != want {
		t.Fatalf("elicited URL %q, want the card address %q", q.url, want)
	}
	u, _ := url.Parse(g.page)
	if secret := u.Query().Get("s"); secret == "" || strings.Contains(q.url, secret) || strings.Contains(q.url, "?") {
		t.Fatalf("the card URL %q carries a query or the secret", q.url)
	}
}

// cardLink is the secret link `fluxgit gateway open` shows.
var cardLink = regexp.MustCompile(`http://\S+/ui/p/\S+\?s=[A-Za-z0-9_%-]+`)

// openLink runs `fluxgit gateway open id` as the person does, on a
// terminal, and opens the link it showed there in b; it also checks that
// without a terminal (an agent's shell) the command shows no secret.
// Where the tests have no pseudo-terminal it signs in with the start's
// page link and opens the card address instead.
func openLink(t *testing.T, b *browser.Browser, g *gatewayProc, id string) {
	t.Helper()
	u, _ := url.Parse(g.page)
	secret := u.Query().Get("s")
	out, err := g.cli("open", id)
	if err == nil || strings.Contains(out, secret) {
		t.Fatalf("gateway open without a terminal: err %v, output %q (want a refusal without the secret)", err, out)
	}
	if !havePTY {
		b.Navigate(g.page)
		b.WaitFor("main", 0)
		b.Navigate("http://" + g.addr + "/ui/p/" + id)
		return
	}
	screen, out, err := runOnTerminal(t, g.env, "", "gateway", "open", id)
	if err != nil || strings.Contains(out, secret) {
		t.Fatalf("gateway open on a terminal: %v, stdout %q", err, out)
	}
	link := cardLink.FindString(screen)
	want := "http://" + g.addr + "/ui/p/" + id + "?s=" + url.QueryEscape(secret)
	if link != want {
		t.Fatalf("gateway open showed %q on the terminal, want %q:\n%s", link, want, screen)
	}
	b.Navigate(link)
}

// proposalRows counts the proposals `fluxgit gateway list` shows.
func proposalRows(t *testing.T, g *gatewayProc) int {
	t.Helper()
	out, err := g.cli("list")
	if err != nil {
		t.Fatalf("gateway list: %v\n%s", err, out)
	}
	n := 0
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "merge") && strings.Contains(l, "shop") {
			n++
		}
	}
	return n
}

// shownControls counts the cards and decision buttons the page displays.
func shownControls(b *browser.Browser) int {
	n, _ := b.Script(`return Array.from(document.querySelectorAll('article.card, button.approve, button.reject'))
		.filter(function (e) { return e.offsetParent !== null; }).length;`).(float64)
	return int(n)
}

func TestCardElicitationTasksE2E(t *testing.T) {
	b := browser.Start(t)
	g := startGateway(t, loopEnv(t))
	c := newCardClient(t, g, bothCaps())

	t.Run("approve", func(t *testing.T) {
		b := b.For(t)
		repo := e2eRepo(t)
		args := mergeArgs(repo)
		q := c.previewAsked(args)
		checkCardURL(t, g, q)

		// The URL alone (it may reach the model) shows nothing and
		// decides nothing: only the one command to open it.
		b.Navigate(q.url)
		signin := b.WaitFor("#card-signin", 0)
		if text := signin.Text(); !strings.Contains(text, "fluxgit gateway open "+q.id) {
			t.Fatalf("the card page without a session does not say the command: %q", text)
		}
		if n := shownControls(b); n != 0 {
			t.Fatalf("the card page without a session shows %d cards or decision controls", n)
		}
		if v := b.Find("#card-view").Property("hidden"); v != true {
			t.Fatal("the card view is visible without a session")
		}

		task := c.resend(args, q, "accept")
		if task["resultType"] != "task" || task["taskId"] != q.id || task["status"] != "working" {
			t.Fatalf("want a working task named by the previewId %s, got %s", q.id, jsonOf(task))
		}
		if m, _ := task["statusMessage"].(string); !strings.Contains(m, "waiting for the person") {
			t.Fatalf("status message %q", m)
		}

		// The one step: the CLI shows the secret link that lands on the card.
		openLink(t, b, g, q.id)
		cd := b.WaitFor("#card-view "+card(q.id)+` button[data-action="approve"]`, 0)
		if u := b.URL(); u != q.url {
			t.Fatalf("the secret link did not land on the card without the secret: %s", u)
		}
		if text := b.Find("#card-view " + card(q.id)).Text(); !strings.Contains(text, "feat: cart") {
			t.Fatalf("the card lacks the gateway's review: %q", text)
		}
		if n := len(b.FindAll("article.card")); n != 1 {
			t.Fatalf("the card page shows %d cards, want only its own", n)
		}
		if n := shownControls(b); n != 3 { // the card, Approve and Reject
			t.Fatalf("the card page with a session shows %d cards and controls, want 3", n)
		}
		cd.Click()

		done := c.awaitTask(q.id)
		if done["status"] != "completed" {
			t.Fatalf("task ended %s", jsonOf(done))
		}
		res, _ := done["result"].(map[string]any)
		sc, _ := res["structuredContent"].(map[string]any)
		data, _ := sc["data"].(map[string]any)
		out, _ := data["result"].(map[string]any)
		if head := revParse(t, repo, "main"); out["mergeCommit"] != head {
			t.Fatalf("completed task's mergeCommit %v, main is %s: %s", out["mergeCommit"], head, jsonOf(done))
		}
		b.WaitText("#card-outcome", "Done: commit "+revParse(t, repo, "main"), 0)
	})

	t.Run("reject", func(t *testing.T) {
		b := b.For(t)
		repo := e2eRepo(t)
		args := mergeArgs(repo)
		q := c.previewAsked(args)
		// Declining to open the URL changes nothing: the task is the same.
		task := c.resend(args, q, "decline")
		if task["resultType"] != "task" || task["taskId"] != q.id {
			t.Fatalf("after a decline: %s", jsonOf(task))
		}
		b.Navigate(q.url) // this browser holds the session by now
		b.WaitFor("#card-view "+card(q.id)+` textarea[name="reason"]`, 0).Type("Not before the release.")
		b.WaitClick("#card-view "+card(q.id)+` button[data-action="reject"]`, 0)
		done := c.awaitTask(q.id)
		e, _ := done["error"].(map[string]any)
		if done["status"] != "failed" || !strings.Contains(jsonOf(e), "Not before the release.") {
			t.Fatalf("want failed with the person's reason, got %s", jsonOf(done))
		}
		if revParse(t, repo, "main") == revParse(t, repo, "feature") {
			t.Fatal("a rejected merge changed main")
		}
		b.WaitText("#card-outcome", "Rejected: Not before the release.", 0)
	})

	t.Run("cancel", func(t *testing.T) {
		b := b.For(t)
		repo := e2eRepo(t)
		args := mergeArgs(repo)
		q := c.previewAsked(args)
		c.resend(args, q, "accept")
		c.call("tasks/cancel", map[string]any{"taskId": q.id}) // 2026-07-28 acknowledges with {}
		if done := c.awaitTask(q.id); done["status"] != "cancelled" {
			t.Fatalf("after cancel: %s", jsonOf(done))
		}
		b.Navigate(q.url)
		b.WaitText("#card-outcome", "Cancelled", 0)
		if n := shownControls(b); n != 0 {
			t.Fatal("a cancelled proposal's card still offers a decision")
		}
	})

	t.Run("cancel by another agent is refused", func(t *testing.T) {
		repo := e2eRepo(t)
		args := mergeArgs(repo)
		q := c.previewAsked(args)
		c.resend(args, q, "accept")
		other := newCardClient(t, g, bothCaps())
		other.n = 100
		meta := modernMeta()
		meta["io.modelcontextprotocol/clientCapabilities"] = other.caps
		meta["io.modelcontextprotocol/clientInfo"] = map[string]any{"name": "another-agent", "version": "1"}
		r := other.s.call(1, "tasks/cancel", map[string]any{"taskId": q.id, "_meta": meta})
		if r.Error == nil {
			t.Fatalf("another agent's tasks/cancel: %s", r.raw)
		}
		if task := c.call("tasks/get", map[string]any{"taskId": q.id}); task["status"] != "working" {
			t.Fatalf("after a refused cancel: %s", jsonOf(task))
		}
		c.call("tasks/cancel", map[string]any{"taskId": q.id})
	})

	t.Run("a re-sent call after a restart makes no second proposal", func(t *testing.T) {
		repo := e2eRepo(t)
		args := mergeArgs(repo)
		before := proposalRows(t, g)
		first := newCardClient(t, g, bothCaps())
		q := first.previewAsked(args)
		if n := proposalRows(t, g); n != before+1 {
			t.Fatalf("%d proposals after the first call, want %d", n, before+1)
		}
		first.s.stop() // the parked call dies with the server
		again := newCardClient(t, g, bothCaps())
		task := again.resend(args, q, "accept")
		if task["resultType"] != "task" || task["taskId"] != q.id {
			t.Fatalf("the re-sent call after a restart: %s", jsonOf(task))
		}
		if n := proposalRows(t, g); n != before+1 {
			t.Fatalf("%d proposals after the re-sent call, want still %d", n, before+1)
		}
		// Different arguments under the same requestState are not the
		// same proposal: the gateway refuses the replay.
		other := mergeArgs(repo)
		other["reason"] = "Something else entirely."
		res := again.resend(other, q, "accept")
		if res["resultType"] == "task" || !strings.Contains(jsonOf(res), "10006") {
			t.Fatalf("changed arguments under an old requestState: %s", jsonOf(res))
		}
		if n := proposalRows(t, g); n != before+1 {
			t.Fatalf("%d proposals after the changed re-send, want still %d", n, before+1)
		}
		// Another agent replaying the state gains nothing: the previewId
		// names someone else's proposal, so the gateway refuses.
		intruder := newCardClient(t, g, bothCaps())
		intruder.name = "another-agent"
		if res := intruder.resend(args, q, "accept"); res["resultType"] == "task" || !strings.Contains(jsonOf(res), "10006") {
			t.Fatalf("another agent's replay of the requestState: %s", jsonOf(res))
		}
		if n := proposalRows(t, g); n != before+1 {
			t.Fatalf("%d proposals after another agent's replay, want still %d", n, before+1)
		}
		again.call("tasks/cancel", map[string]any{"taskId": q.id})
	})

	t.Run("without tasks the model gets only that the person was asked", func(t *testing.T) {
		repo := e2eRepo(t)
		args := mergeArgs(repo)
		plain := newCardClient(t, g, map[string]any{"elicitation": map[string]any{"url": map[string]any{}}})
		for _, tc := range []struct {
			action string
			asked  bool
		}{{"accept", true}, {"decline", false}} {
			q := plain.previewAsked(args)
			res := plain.resend(args, q, tc.action)
			sc, _ := res["structuredContent"].(map[string]any)
			if sc["status"] != "pending" || sc["accepted"] != true || sc["previewId"] != q.id {
				t.Fatalf("%s: want today's pending result, got %s", tc.action, jsonOf(res))
			}
			if _, ok := res["resultType"]; ok && res["resultType"] != "complete" {
				t.Fatalf("%s: resultType %v without tasks", tc.action, res["resultType"])
			}
			if got := sc["personAsked"] == true; got != tc.asked {
				t.Fatalf("%s: personAsked %v, want %v", tc.action, sc["personAsked"], tc.asked)
			}
			if strings.Contains(jsonOf(sc), "/ui/p/") {
				t.Fatalf("%s: the model's result carries the card URL: %s", tc.action, jsonOf(sc))
			}
			plain.call("tools/call", map[string]any{"name": "operation.cancel", "arguments": map[string]any{"previewId": q.id}})
		}
	})
}

// After the gateway restarts, the browser's session is gone: the card
// page says the one command to run, that command (against the new start)
// lands on the same card, and a fresh `fluxgit serve` answers tasks/get
// for the proposal from the gateway's journal.
func TestCardAfterGatewayRestart(t *testing.T) {
	b := browser.Start(t)
	env := loopEnv(t)
	g := startGateway(t, env)
	c := newCardClient(t, g, map[string]any{
		// Form-only elicitation: no URL mode, so nothing is asked and
		// the call answers with the task at once.
		"elicitation": map[string]any{},
		"extensions":  map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}},
	})
	repo := e2eRepo(t)
	task := c.call("tools/call", map[string]any{"name": "operation.preview.merge", "arguments": mergeArgs(repo)})
	id, _ := task["taskId"].(string)
	if task["resultType"] != "task" || id == "" {
		t.Fatalf("a client without URL elicitation: want the task at once, got %s", jsonOf(task))
	}
	cardURL := "http://" + g.addr + "/ui/p/" + id
	b.Navigate(g.page)
	b.WaitFor("main", 0)
	b.Navigate(cardURL)
	b.WaitFor("#card-view "+card(id), 0)

	for _, bad := range []string{"/ui/p/", "/ui/p/a%2Fb", "/ui/p/" + strings.Repeat("x", 129)} {
		resp, err := http.Get("http://" + g.addr + bad)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Fatalf("GET %s: HTTP %d, want 404", bad, resp.StatusCode)
		}
	}

	addr := g.addr
	g.stop()
	c.s.stop()
	g = startGateway(t, env, "--addr", addr)
	if g.addr != addr {
		t.Fatalf("the gateway came back on %s, not %s", g.addr, addr)
	}
	b.Navigate(cardURL)
	signin := b.WaitFor("#card-signin", 0)
	if text := signin.Text(); !strings.Contains(text, "fluxgit gateway open "+id) || !strings.Contains(text, "restarted") {
		t.Fatalf("after a restart the card page does not say the one step: %q", text)
	}
	if n := shownControls(b); n != 0 {
		t.Fatalf("after a restart the card page shows %d cards or controls", n)
	}
	openLink(t, b, g, id)
	b.WaitFor("#card-view "+card(id)+` button[data-action="approve"]`, 0)

	fresh := newCardClient(t, g, bothCaps())
	if got := fresh.call("tasks/get", map[string]any{"taskId": id}); got["status"] != "working" || got["taskId"] != id {
		t.Fatalf("tasks/get from a restarted server: %s", jsonOf(got))
	}
	if out, err := g.cli("open", "no-such-proposal"); err == nil {
		t.Fatalf("gateway open of an unknown id succeeded: %s", out)
	}
	b.WaitClick("#card-view "+card(id)+` button[data-action="approve"]`, 0)
	if done := fresh.awaitTask(id); done["status"] != "completed" {
		t.Fatalf("after approval: %s", jsonOf(done))
	}
}

// The official Go SDK client on 2025-11-25: a client that declares URL
// elicitation gets an elicitation/create request naming the card, and the
// model's result says only personAsked; a form-only client is asked
// nothing and gets today's result.
func TestCardElicitationGoSDK(t *testing.T) {
	g := startGateway(t, loopEnv(t))
	for _, tc := range []struct {
		name string
		url  bool
	}{{"url mode", true}, {"form only", false}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cs, asked := goSDKCardClient(t, g, tc.url)
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "operation.preview.merge", Arguments: mergeArgs(e2eRepo(t))})
			if err != nil {
				t.Fatal(err)
			}
			sc, _ := res.StructuredContent.(map[string]any)
			id, _ := sc["previewId"].(string)
			if res.IsError || sc["status"] != "pending" || id == "" {
				t.Fatalf("want a pending proposal, got %s", jsonOf(sc))
			}
			if !tc.url {
				if len(asked()) != 0 || sc["personAsked"] != nil {
					t.Fatalf("a form-only client was asked %d times, personAsked %v", len(asked()), sc["personAsked"])
				}
				return
			}
			if a := asked(); len(a) != 1 || a[0].Mode != "url" || a[0].URL != "http://"+g.addr+"/ui/p/"+id || a[0].ElicitationID != id {
				t.Fatalf("want one URL elicitation naming the card of %s, got %s", id, jsonOf(a))
			}
			if sc["personAsked"] != true || strings.Contains(jsonOf(sc), "/ui/p/") {
				t.Fatalf("the model's result: %s", jsonOf(sc))
			}
		})
	}
}

// On 2025-11-25 a client opts a call into the experimental tasks with
// params.task: the preview tools say they take one (execution.taskSupport,
// shown to a client that declared capabilities.tasks),
// the task is named by the previewId, and tasks/get and tasks/cancel act on
// the proposal at the gateway.
func TestProposalTaskLegacy(t *testing.T) {
	g := startGateway(t, loopEnv(t))
	s := startServer(t, g.mcpEnv())
	if r := s.call(0, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"tasks": map[string]any{}},
		"clientInfo": map[string]any{"name": "legacy-agent", "version": "1"}}); r.Error != nil {
		t.Fatalf("initialize: %s", r.raw)
	}
	s.sendJSON(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	r := s.call(1, "tools/list", map[string]any{})
	var list struct {
		Tools []map[string]any `json:"tools"`
	}
	_ = json.Unmarshal(r.Result, &list)
	for _, tool := range list.Tools {
		name, _ := tool["name"].(string)
		exec, _ := tool["execution"].(map[string]any)
		want := strings.HasPrefix(name, "operation.preview.")
		if got := exec["taskSupport"] == "optional"; got != want {
			t.Errorf("%s: execution %v, want taskSupport optional %v", name, tool["execution"], want)
		}
	}
	repo := e2eRepo(t)
	r = s.call(2, "tools/call", map[string]any{"name": "operation.preview.merge", "arguments": mergeArgs(repo), "task": map[string]any{"ttl": 600000}})
	var created struct {
		Task struct {
			TaskID string `json:"taskId"`
			Status string `json:"status"`
		} `json:"task"`
	}
	if r.Error != nil || json.Unmarshal(r.Result, &created) != nil || created.Task.Status != "working" || created.Task.TaskID == "" {
		t.Fatalf("tools/call with params.task: %s", r.raw)
	}
	id := created.Task.TaskID
	if out, err := g.cli("show", id, "--json"); err != nil || !strings.Contains(out, `"status": "pending"`) {
		t.Fatalf("the task id is not a pending proposal at the gateway: %v\n%s", err, out)
	}
	if r := s.call(3, "tasks/get", map[string]any{"taskId": id}); r.Error != nil || !strings.Contains(string(r.Result), `"status":"working"`) {
		t.Fatalf("tasks/get: %s", r.raw)
	}
	if r := s.call(4, "tasks/cancel", map[string]any{"taskId": id}); r.Error != nil || !strings.Contains(string(r.Result), `"status":"cancelled"`) {
		t.Fatalf("tasks/cancel: %s", r.raw)
	}
	if out, err := g.cli("show", id, "--json"); err != nil || !strings.Contains(out, `"status": "cancelled"`) {
		t.Fatalf("after tasks/cancel the proposal is not cancelled: %v\n%s", err, out)
	}
}

// goSDKCardClient connects the official Go SDK client (2025-11-25, named
// go-sdk-card) to a `fluxgit serve` for g, declaring URL-mode elicitation
// when url is set (form only otherwise); asked returns the elicitations
// it received, each accepted.
func goSDKCardClient(t *testing.T, g *gatewayProc, url bool) (context.Context, *mcp.ClientSession, func() []*mcp.ElicitParams) {
	t.Helper()
	var (
		mu    sync.Mutex
		asked []*mcp.ElicitParams
	)
	opts := &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		mu.Lock()
		asked = append(asked, req.Params)
		mu.Unlock()
		return &mcp.ElicitResult{Action: "accept"}, nil
	}}
	if url {
		opts.Capabilities = &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	cmd := exec.Command(fluxgitBin)
	cmd.Env = g.mcpEnv()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-card", Version: "1.0.0"}, opts).
		Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return ctx, cs, func() []*mcp.ElicitParams {
		mu.Lock()
		defer mu.Unlock()
		return append([]*mcp.ElicitParams(nil), asked...)
	}
}

// A proposal the person's policy approves needs no decision: the client
// is not asked to show its card.
func TestCardNotAskedWhenPolicyApproves(t *testing.T) {
	repo := e2eRepo(t)
	policy := filepath.Join(canonicalTempDir(t), "policy.yaml")
	writeFile(t, policy, autoApprovePolicy(filepath.Dir(repo)))
	g := startGateway(t, append(loopEnv(t), "FLUXGIT_MCP_AGENT_POLICY="+policy))
	git(t, repo, "checkout", "-q", "-b", "agent/work")
	writeFile(t, filepath.Join(repo, "todo.txt"), "ship it\n")
	ctx, cs, asked := goSDKCardClient(t, g, true)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "operation.preview.commit",
		Arguments: map[string]any{"repoPath": repo, "reason": "r", "message": "chore: todo", "paths": []any{"todo.txt"}}})
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := res.StructuredContent.(map[string]any)
	if st := sc["status"]; res.IsError || st == "pending" || st == nil {
		t.Fatalf("want a proposal the policy approved, got %s", jsonOf(sc))
	}
	if n := len(asked()); n != 0 || sc["personAsked"] != nil {
		t.Fatalf("a policy-approved proposal asked the client %d times (personAsked %v)", n, sc["personAsked"])
	}
}
