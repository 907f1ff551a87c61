package tests

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The gateway's intake: what an agent can send to the agent API without
// any credential, and what that does to the person's view.

// agentPost sends body to POST /v1/mcp/operation/preview/<op> of g as the
// handshake provider would and returns the status and the {error} text.
func agentPost(t testing.TB, g *gatewayProc, op string, body []byte) (int, string) {
	t.Helper()
	resp, err := http.Post("http://"+g.addr+"/v1/mcp/operation/preview/"+op, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("POST preview/%s: %v", op, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var e struct {
		Error string `json:"error"`
	}
	_ = json.Unmarshal(raw, &e)
	return resp.StatusCode, e.Error
}

// uuidV4 is a random lowercase UUID of version 4, as previewIds are.
func uuidV4(t testing.TB) string {
	t.Helper()
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// previewBody is a conforming preview body of op from agent for repo, with
// extra merged in.
func previewBody(t testing.TB, op, agent, repo string, extra map[string]any) []byte {
	t.Helper()
	b := map[string]any{
		"previewId":      uuidV4(t),
		"agentId":        agent,
		"idempotencyKey": op + ":call:" + uuidV4(t),
		"operationType":  op,
		"repoPath":       repo,
		"reason":         "intake test",
		"requestedAt":    time.Now().UTC().Format("2006-01-02T15:04:05.000Z"),
	}
	for k, v := range extra {
		b[k] = v
	}
	raw, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// peakRSS is the gateway process's peak resident set (VmHWM) in bytes, or
// -1 where /proc does not tell.
func peakRSS(t testing.TB, g *gatewayProc) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", g.cmd.Process.Pid))
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return -1
}

// Issue 22, finding 2: a 60 KB body 30,000 levels deep, sent without any
// credential, made the duplicate-key walk keep a growing JSON path per
// level (2 GB peak). The real gateway refuses it with a 400 the agent can
// read, stays small, and keeps serving.
func TestGatewayRefusesDeepJSON(t *testing.T) {
	g := startGateway(t, loopEnv(t))
	repo := e2eRepo(t)
	const depth = 30000
	deep := []byte(`{"agentId":"deep-agent","a":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}`)
	for _, op := range []string{"branch", "patch"} {
		code, msg := agentPost(t, g, op, deep)
		// Memory first: the old walk answered 400 too, after its peak.
		if rss := peakRSS(t, g); rss > 256<<20 {
			t.Fatalf("the gateway's peak RSS reached %d MiB refusing a %d-byte body", rss>>20, len(deep))
		}
		if code != http.StatusBadRequest || !strings.Contains(msg, "levels deep") || !strings.Contains(msg, "64") {
			t.Fatalf("deep body to %s: %d %q; want 400 naming the 64-level limit", op, code, msg)
		}
	}
	// It still serves: a conforming proposal is accepted.
	if code, msg := agentPost(t, g, "branch", previewBody(t, "branch", "deep-agent", repo, map[string]any{"name": "topic", "checkout": false})); code != http.StatusAccepted {
		t.Fatalf("a normal proposal after the deep one: %d %s", code, msg)
	}
	if runtime.GOOS == "linux" && peakRSS(t, g) < 0 {
		t.Log("no VmHWM in /proc; the memory bound was not measured")
	}
}

// Issue 22, finding 8: the approval page's CSP also covers framing, <base>
// and form targets, which default-src does not.
func TestGatewayPageCSP(t *testing.T) {
	g := startGateway(t, loopEnv(t))
	resp, err := http.Get("http://" + g.addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	csp := resp.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'self'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'self'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("Content-Security-Policy %q lacks %s", csp, want)
		}
	}
}

// stateOf reads the approval page's state as the person's browser does.
func stateOf(t *testing.T, pc *personClient, query string) (map[string]any, int) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, pc.base+"/ui/api/state"+query, nil)
	req.AddCookie(pc.cookie)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var st map[string]any
	if err := json.Unmarshal(raw, &st); err != nil || resp.StatusCode != 200 {
		t.Fatalf("state%s: %d %v %.200s", query, resp.StatusCode, err, raw)
	}
	return st, len(raw)
}

// Issue 22, finding 4: 10,000 proposals were accepted with no cap. The
// real gateway, started with small limits, refuses the proposal past each
// one with a 429 the agent reads through the MCP server (which limit, what
// to do); rotating agent ids does not get past the total; withdrawing a
// proposal frees its place.
func TestGatewayIntakeLimits(t *testing.T) {
	g := startGateway(t, loopEnv(t), "--max-pending-per-agent", "2", "--max-pending", "3")
	repo := e2eRepo(t)
	branch := func(agent, name string) []byte {
		return previewBody(t, "branch", agent, repo, map[string]any{"name": name, "checkout": false})
	}
	first := branch("flood-1", "b1")
	for i, tc := range []struct {
		agent string
		body  []byte
		code  int
		want  string
	}{
		{"flood-1", first, http.StatusAccepted, ""},
		{"flood-1", nil, http.StatusAccepted, ""},
		{"flood-1", nil, http.StatusTooManyRequests, "limit per agent (2)"},
		{"flood-2", nil, http.StatusAccepted, ""},
		{"flood-3", nil, http.StatusTooManyRequests, "limit for all agents together (3)"},
		{"flood-4", nil, http.StatusTooManyRequests, "limit for all agents together (3)"},
	} {
		body := tc.body
		if body == nil {
			body = branch(tc.agent, fmt.Sprint("b", i))
		}
		code, msg := agentPost(t, g, "branch", body)
		if code != tc.code || !strings.Contains(msg, tc.want) || tc.want != "" && !strings.Contains(msg, "operation.cancel") {
			t.Fatalf("proposal %d from %s: %d %q; want %d naming %q and what to do", i, tc.agent, code, msg, tc.code, tc.want)
		}
	}
	// The agent sees the refusal through fluxgit: which limit, what to do.
	ctx, cs := sdkSessionEnv(t, "2025-11-25", g.mcpEnv())
	l := &loop{t: t, g: g, ctx: ctx, cs: cs}
	p, isErr := l.tool("operation.preview.branch", map[string]any{"repoPath": repo, "reason": "r", "name": "via-mcp"})
	if !isErr || !strings.Contains(jsonOf(p), "limit for all agents together (3)") || !strings.Contains(jsonOf(p), "429") {
		t.Fatalf("the MCP refusal does not carry the gateway's reason: %s", jsonOf(p))
	}
	// Withdrawing one frees its place.
	var sent map[string]any
	_ = json.Unmarshal(first, &sent)
	resp, err := http.Post("http://"+g.addr+"/v1/mcp/operation/cancel/"+sent["previewId"].(string), "application/json", strings.NewReader(`{"agentId":"flood-1"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("cancel: %d", resp.StatusCode)
	}
	if code, msg := agentPost(t, g, "branch", branch("flood-3", "b9")); code != http.StatusAccepted {
		t.Fatalf("after a cancel: %d %s", code, msg)
	}

	t.Run("stored bytes", func(t *testing.T) {
		g := startGateway(t, loopEnv(t), "--max-stored-bytes-per-agent", "6000", "--max-stored-bytes", "9000")
		big := func(agent, name string) []byte {
			return previewBody(t, "branch", agent, repo, map[string]any{"name": name, "checkout": false, "reason": strings.Repeat("r", 4000)})
		}
		for i, tc := range []struct {
			agent string
			code  int
			want  string
		}{
			{"bulk-1", http.StatusAccepted, ""},
			{"bulk-1", http.StatusTooManyRequests, "limit per agent (6000 bytes)"},
			{"bulk-2", http.StatusAccepted, ""},
			{"bulk-3", http.StatusTooManyRequests, "limit for all agents together (9000 bytes)"},
		} {
			code, msg := agentPost(t, g, "branch", big(tc.agent, fmt.Sprint("big", i)))
			if code != tc.code || !strings.Contains(msg, tc.want) {
				t.Fatalf("proposal %d from %s: %d %q; want %d naming %q", i, tc.agent, code, msg, tc.code, tc.want)
			}
		}
	})
	t.Run("a limit below 1 stops the start", func(t *testing.T) {
		cmd := exec.Command(fluxgitBin, "gateway", "--addr", "127.0.0.1:0", "--max-pending", "0")
		cmd.Env = loopEnv(t)
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "--max-pending") {
			t.Fatalf("the gateway started with --max-pending 0: %v\n%s", err, out)
		}
	})
}

// Issue 22, finding 4: with large patch proposals stored, `fluxgit gateway
// list` failed with "decode the gateway's reply: invalid character ' ' in
// \u hexadecimal character escape" (the whole list, bodies included, was
// cut at the client's 64 MiB cap inside a \u003c). The list now carries
// no bodies and is paged; `show` still has the whole body; the page's
// state stays small.
func TestGatewayListWithLargePatches(t *testing.T) {
	g := startGateway(t, loopEnv(t))
	repo := e2eRepo(t)
	// 4 Mi characters, each sent as \u003c: a 24 MiB body, the largest
	// patch the contract allows.
	patch := "diff --git a/x b/x\n" + strings.Repeat("<", 4<<20-19)
	var ids []string
	for i := range 3 {
		body := previewBody(t, "patch", fmt.Sprint("big-", i), repo, map[string]any{"patchContent": patch, "applyToIndex": false})
		if code, msg := agentPost(t, g, "patch", body); code != http.StatusAccepted {
			t.Fatalf("patch proposal %d (%d bytes): %d %s", i, len(body), code, msg)
		}
		var sent map[string]any
		_ = json.Unmarshal(body, &sent)
		ids = append(ids, sent["previewId"].(string))
	}
	out, err := g.cli("list")
	if err != nil {
		t.Fatalf("gateway list: %v\n%.2000s", err, out)
	}
	for _, id := range ids {
		if !strings.Contains(out, id) {
			t.Fatalf("gateway list lacks %s:\n%s", id, out)
		}
	}
	out, err = g.cli("list", "--limit", "2")
	if err != nil || !strings.Contains(out, "Showing 1-2 of 3.") || !strings.Contains(out, "--offset 2") {
		t.Fatalf("gateway list --limit 2: %v\n%s", err, out)
	}
	out, err = g.cli("list", "--limit", "2", "--offset", "2")
	if err != nil || !strings.Contains(out, ids[0]) || strings.Contains(out, ids[2]) || !strings.Contains(out, "Showing 3-3 of 3.") {
		t.Fatalf("gateway list --offset 2: %v\n%s", err, out)
	}
	out, err = g.cli("show", ids[1])
	if err != nil || !strings.Contains(out, `"patchContent"`) || len(out) < 4<<20 {
		t.Fatalf("gateway show of a large patch: %v (%d bytes)", err, len(out))
	}
	pc := newPersonClient(t, g)
	st, size := stateOf(t, pc, "")
	if n, _ := st["pendingTotal"].(float64); n != 3 || size > 2<<20 {
		t.Fatalf("page state: pendingTotal %v, %d bytes; want 3 and a bounded preview", st["pendingTotal"], size)
	}
}

// Issue 22, finding 4: the page listed the 1,000 newest open proposals and
// silently dropped older pending ones. Its state now pages them, soonest
// expiry first, and says how many there are, so every one can be reached.
func TestGatewayPagePagesPending(t *testing.T) {
	g := startGateway(t, loopEnv(t), "--max-pending-per-agent", "100")
	repo := e2eRepo(t)
	const n = 53 // one page of 50, and 3 on the second
	var ids []string
	for i := range n {
		body := previewBody(t, "branch", "pager", repo, map[string]any{"name": fmt.Sprint("p", i), "checkout": false})
		if code, msg := agentPost(t, g, "branch", body); code != http.StatusAccepted {
			t.Fatalf("proposal %d: %d %s", i, code, msg)
		}
		var sent map[string]any
		_ = json.Unmarshal(body, &sent)
		ids = append(ids, sent["previewId"].(string))
	}
	pc := newPersonClient(t, g)
	seen := map[string]bool{}
	for _, q := range []string{"", "?pendingOffset=50"} {
		st, _ := stateOf(t, pc, q)
		if st["pendingTotal"] != float64(n) || st["pendingLimit"] != float64(50) {
			t.Fatalf("state%s: pendingTotal %v pendingLimit %v", q, st["pendingTotal"], st["pendingLimit"])
		}
		for _, p := range st["proposals"].([]any) {
			seen[p.(map[string]any)["previewId"].(string)] = true
		}
	}
	for i, id := range ids {
		if !seen[id] {
			t.Fatalf("pending proposal %d (%s) is on no page", i, id)
		}
	}
	first, _ := stateOf(t, pc, "")
	if got := first["proposals"].([]any)[0].(map[string]any)["previewId"]; got != ids[0] {
		t.Fatalf("first card %v, want the oldest (soonest to expire) %s", got, ids[0])
	}
}
