package gatewaytest

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fluxgit/fluxgit/internal/fluxbridge"
	"github.com/fluxgit/fluxgit/internal/operation"
)

// validBody is a conforming preview body for op.
func validBody(op string) map[string]any {
	b := map[string]any{
		"previewId":      NewUUID(),
		"agentId":        "claude-code",
		"idempotencyKey": op + ":call:" + NewUUID(),
		"operationType":  op,
		"repoPath":       "/home/dev/repo",
		"reason":         "because",
		"requestedAt":    "2026-05-28T11:42:09.512Z",
	}
	extra := map[string]map[string]any{
		"merge":            {"sourceRef": "feature", "targetRef": "main", "strategy": "merge"},
		"rebase":           {"currentRef": "HEAD", "ontoRef": "main", "interactive": false},
		"discard":          {"paths": []any{"a.txt"}},
		"reset":            {"targetRef": "HEAD~1", "mode": "mixed"},
		"patch":            {"patchContent": "diff --git a/x b/x\n", "applyToIndex": false},
		"plan":             {"steps": []any{map[string]any{"operationType": "merge", "sourceRef": "a", "targetRef": "b"}}},
		"worktree":         {"branch": "feature"},
		"commit":           {"message": "m", "stageAll": false},
		"push":             {"remote": "origin", "setUpstream": false, "forceWithLease": false},
		"branch":           {"name": "n", "checkout": true},
		"branchDelete":     {"targets": []any{map[string]any{"repoPath": "/home/dev/repo", "branches": []any{"old"}}}},
		"submodulePointer": {"parentPath": "", "relativePath": "lib/sub", "direction": "return"},
	}[op]
	if extra == nil {
		// An operation added after these twelve: its schema's example.
		if s, err := operation.Schema(op); err == nil {
			if ex, _ := s["examples"].([]any); len(ex) > 0 {
				for k, v := range ex[0].(map[string]any) {
					if _, common := b[k]; !common {
						b[k] = v
					}
				}
			}
		}
	}
	for k, v := range extra {
		b[k] = v
	}
	return b
}

func client(t *testing.T, g *Gateway) *fluxbridge.Client {
	t.Helper()
	a, ok := fluxbridge.Resolve(func(k string) string {
		if k == "FLUXGIT_MCP_HANDSHAKE_ADDR" {
			return g.Addr()
		}
		return ""
	})
	if !ok {
		t.Fatalf("gateway address %s does not resolve", g.Addr())
	}
	return fluxbridge.NewClient(a)
}

func do(t *testing.T, c *fluxbridge.Client, method, path string, body any) *fluxbridge.Response {
	t.Helper()
	r, err := c.Do(context.Background(), method, path, body, 0)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return r
}

// Every conforming body is accepted; every way of breaking the contract is
// answered 400 {error} and recorded as a violation.
func TestPreviewValidation(t *testing.T) {
	g := New(t)
	c := client(t, g)
	for _, op := range Ops {
		if r := do(t, c, "POST", PreviewPrefix+op, validBody(op)); r.Status != http.StatusAccepted {
			t.Fatalf("%s: valid body got %d %s", op, r.Status, r.Body)
		}
	}
	if v := g.Violations(); len(v) != 0 {
		t.Fatalf("violations for valid bodies: %v", v)
	}
	type mut func(map[string]any)
	for _, tc := range []struct {
		name string
		op   string
		mut  mut
		want string
	}{
		{"extra key", "merge", func(b map[string]any) { b["force"] = true }, `key "force"`},
		{"other op's key", "merge", func(b map[string]any) { b["mode"] = "hard" }, `key "mode"`},
		{"missing required", "merge", func(b map[string]any) { delete(b, "strategy") }, "missing required key strategy"},
		{"missing common", "commit", func(b map[string]any) { delete(b, "requestedAt") }, "missing required key requestedAt"},
		{"previewId v1", "merge", func(b map[string]any) { b["previewId"] = "1f3c5b9a-0000-1000-8000-000000000000" }, "previewId"},
		{"previewId upper", "merge", func(b map[string]any) { b["previewId"] = strings.ToUpper(NewUUID()) }, "previewId"},
		{"stamp no millis", "merge", func(b map[string]any) { b["requestedAt"] = "2026-05-28T11:42:09Z" }, "requestedAt"},
		{"stamp offset", "merge", func(b map[string]any) { b["requestedAt"] = "2026-05-28T11:42:09.512+00:00" }, "requestedAt"},
		{"key other op", "merge", func(b map[string]any) { b["idempotencyKey"] = "reset:client:k" }, "idempotencyKey"},
		{"key raw", "merge", func(b map[string]any) { b["idempotencyKey"] = "k" }, "idempotencyKey"},
		{"key call not uuid", "merge", func(b map[string]any) { b["idempotencyKey"] = "merge:call:abc" }, "idempotencyKey"},
		{"interactive", "rebase", func(b map[string]any) { b["interactive"] = true }, "interactive must be false"},
		{"blank optional", "worktree", func(b map[string]any) { b["path"] = "" }, "path must be"},
		{"return message", "submodulePointer", func(b map[string]any) { b["message"] = "m" }, "message is not sent"},
		{"record no message", "submodulePointer", func(b map[string]any) { b["direction"] = "record" }, "message is required"},
		{"step two ops", "plan", func(b map[string]any) {
			b["steps"] = []any{map[string]any{"operationType": "merge", "sourceRef": "a", "targetRef": "b", "paths": []any{"x"}}}
		}, `key "paths" is not a merge step field`},
		{"target extra", "branchDelete", func(b map[string]any) {
			b["targets"] = []any{map[string]any{"repoPath": "/r", "branches": []any{"a"}, "remote": "origin"}}
		}, `key "remote"`},
		{"operationType mismatch", "merge", func(b map[string]any) { b["operationType"] = "reset" }, "operationType"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g.ResetRecords()
			b := validBody(tc.op)
			tc.mut(b)
			r := do(t, c, "POST", PreviewPrefix+tc.op, b)
			e, ok := r.JSONError()
			var msg string
			if r.Status != http.StatusBadRequest || !ok || json.Unmarshal(e, &msg) != nil {
				t.Fatalf("got %d %s, want 400 {error}", r.Status, r.Body)
			}
			if !strings.Contains(msg, tc.want) {
				t.Fatalf("error %q lacks %q", msg, tc.want)
			}
			if v := g.Violations(); len(v) != 1 || !strings.Contains(v[0], tc.want) {
				t.Fatalf("violations %v", v)
			}
		})
	}
}

// Status sequences, cancel rules, 404s and idempotent replay.
func TestLifecycle(t *testing.T) {
	g := New(t)
	c := client(t, g)
	g.Script(Plan{Statuses: []string{"pending", "approved", "completed"}})
	b := validBody("commit")
	id := b["previewId"].(string)
	do(t, c, "POST", PreviewPrefix+"commit", b)
	var seen []string
	for i := 0; i < 4; i++ {
		var sb map[string]any
		if err := json.Unmarshal(do(t, c, "GET", StatusPrefix+id, nil).Body, &sb); err != nil {
			t.Fatal(err)
		}
		seen = append(seen, sb["status"].(string))
		if sb["status"] == "completed" && sb["result"].(map[string]any)["commitSha"] == nil {
			t.Fatalf("completed without the commit result: %v", sb)
		}
	}
	if strings.Join(seen, ",") != "pending,approved,completed,completed" {
		t.Fatalf("statuses %v", seen)
	}
	// Cancel: only pending, only the same agent.
	if r := do(t, c, "POST", CancelPrefix+id, map[string]any{"agentId": "claude-code"}); r.Status != http.StatusConflict {
		t.Fatalf("cancel of a completed proposal: %d %s", r.Status, r.Body)
	}
	b2 := validBody("branch")
	id2 := b2["previewId"].(string)
	do(t, c, "POST", PreviewPrefix+"branch", b2)
	if r := do(t, c, "POST", CancelPrefix+id2, map[string]any{"agentId": "codex"}); r.Status != http.StatusForbidden {
		t.Fatalf("cancel by another agent: %d", r.Status)
	}
	if r := do(t, c, "POST", CancelPrefix+id2, map[string]any{"agentId": "claude-code"}); r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"status":"cancelled"`) {
		t.Fatalf("cancel: %d %s", r.Status, r.Body)
	}
	if _, st, _ := g.Proposal(id2); st != "cancelled" {
		t.Fatalf("after cancel the proposal is %s", st)
	}
	if r := do(t, c, "POST", CancelPrefix+id2, map[string]any{"agentId": "claude-code", "x": 1}); r.Status != http.StatusBadRequest {
		t.Fatalf("cancel with an extra key: %d", r.Status)
	}
	for _, p := range []string{StatusPrefix, CancelPrefix} {
		var body any
		method := "GET"
		if p == CancelPrefix {
			method, body = "POST", map[string]any{"agentId": "claude-code"}
		}
		if r := do(t, c, method, p+NewUUID(), body); r.Status != http.StatusNotFound {
			t.Fatalf("%s unknown id: %d", p, r.Status)
		}
	}
	// Replay: same agent, key and intent → the earlier id; another intent → 409.
	k := validBody("merge")
	k["idempotencyKey"] = "merge:client:retry-1"
	first := k["previewId"].(string)
	do(t, c, "POST", PreviewPrefix+"merge", k)
	k["previewId"], k["requestedAt"] = NewUUID(), "2026-05-28T11:43:00.000Z"
	if r := do(t, c, "POST", PreviewPrefix+"merge", k); !strings.Contains(string(r.Body), first) {
		t.Fatalf("replay did not return the earlier id: %s", r.Body)
	}
	k["previewId"], k["targetRef"] = NewUUID(), "release"
	if r := do(t, c, "POST", PreviewPrefix+"merge", k); r.Status != http.StatusConflict {
		t.Fatalf("reused key for another intent: %d %s", r.Status, r.Body)
	}
	if v := g.Violations(); len(v) != 1 {
		t.Fatalf("violations: %v", v)
	}
}

// The semantic diff endpoint takes exactly its five keys and answers the
// scripted reply.
func TestSemantic(t *testing.T) {
	g := New(t)
	c := client(t, g)
	g.SetSemanticReply(map[string]any{"files": []any{map[string]any{"path": "a.go", "fallbackToText": true}}})
	body := map[string]any{"repoId": "r1", "repoPath": "/home/dev/repo", "baseRef": "HEAD~1", "headRef": "", "paths": []any{"a.go"}}
	if r := do(t, c, "POST", SemanticPath, body); r.Status != 200 || !strings.Contains(string(r.Body), `"a.go"`) {
		t.Fatalf("semantic: %d %s", r.Status, r.Body)
	}
	delete(body, "headRef")
	body["path"] = "a.go"
	if r := do(t, c, "POST", SemanticPath, body); r.Status != http.StatusBadRequest {
		t.Fatalf("semantic body off contract: %d", r.Status)
	}
	if v := g.Violations(); len(v) != 1 || !strings.Contains(v[0], "headRef") || !strings.Contains(v[0], `"path"`) {
		t.Fatalf("violations: %v", v)
	}
	if r := do(t, c, "GET", SemanticPath, nil); r.Status != http.StatusBadRequest {
		t.Fatalf("GET semantic: %d", r.Status)
	}
}

// Faults reach the real client as the errors it must see.
func TestFaults(t *testing.T) {
	g := New(t)
	c := client(t, g)
	g.FaultNext(Preview, Fault{Redirect: true})
	if _, err := c.Do(context.Background(), "POST", PreviewPrefix+"merge", validBody("merge"), 0); !errors.Is(err, fluxbridge.ErrRedirect) {
		t.Fatalf("redirect: %v", err)
	}
	g.FaultNext(Preview, Fault{Oversize: true})
	if _, err := c.Do(context.Background(), "POST", PreviewPrefix+"merge", validBody("merge"), 0); !errors.Is(err, fluxbridge.ErrBodyTooLarge) {
		t.Fatalf("oversize: %v", err)
	}
	g.FaultNext(Preview, Fault{Delay: 2 * time.Second})
	if _, err := c.Do(context.Background(), "POST", PreviewPrefix+"merge", validBody("merge"), 100*time.Millisecond); err == nil {
		t.Fatal("slow reply within the timeout")
	}
	g.FaultNext(Preview, Fault{Status: 429, JSONError: "too many pending proposals"})
	if r := do(t, c, "POST", PreviewPrefix+"merge", validBody("merge")); r.Status != 429 {
		t.Fatalf("refusal: %d", r.Status)
	} else if _, ok := r.JSONError(); !ok {
		t.Fatalf("refusal without error: %s", r.Body)
	}
	g.FaultNext(Preview, Fault{Body: []byte("upstream exploded")})
	if r := do(t, c, "POST", PreviewPrefix+"merge", validBody("merge")); r.Status != 500 || string(r.Body) != "upstream exploded" {
		t.Fatalf("non-JSON 500: %d %s", r.Status, r.Body)
	}
	if n := len(g.RequestsTo(Unknown)); n != 0 {
		t.Fatalf("the redirect target was reached %d times", n)
	}
	if v := g.Violations(); len(v) != 0 {
		t.Fatalf("violations: %v", v)
	}
}
