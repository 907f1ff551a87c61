package tests

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
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
