package proposals

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fluxgit/fluxgit/internal/fluxbridge"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// testRepo is an absolute repository path on any platform.
var testRepo = func() string {
	p, err := filepath.Abs(string(filepath.Separator) + "work" + string(filepath.Separator) + "repo")
	if err != nil {
		panic(err)
	}
	return p
}()

var otherRepo = filepath.Join(filepath.Dir(testRepo), "other")

// fixedNow is the clock of exact-body tests: a non-UTC zone and a
// sub-millisecond part, so the test sees both converted and cut.
var fixedNow = time.Date(2026, 11, 30, 22, 4, 5, 7_890_123, time.FixedZone("CET+2", 2*3600))

const fixedRequestedAt = "2026-11-30T20:04:05.007Z"

// seqID returns ids id(1), id(2), … in call order.
func seqID() func() string {
	var n atomic.Int64
	return func() string { return testID(int(n.Add(1))) }
}

func testID(n int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", n) }

func newProvider(g *testGateway) *Provider {
	p := &Provider{Timeout: 2 * time.Second, now: func() time.Time { return fixedNow }, newID: seqID()}
	if g != nil {
		p.Address = g.addr()
	}
	return p
}

func call(tool string, args any, client string) *sdk.Call {
	b, err := json.Marshal(args)
	if err != nil {
		panic(err)
	}
	return &sdk.Call{Tool: tool, Arguments: b, Meta: sdk.Meta{ClientName: client}}
}

// minimalArgs are the smallest valid arguments of each operation.
func minimalArgs(op string) map[string]any {
	m := map[string]any{"repoPath": testRepo, "reason": "tidy up"}
	switch op {
	case "merge":
		m["sourceRef"], m["targetRef"] = "feature", "main"
	case "rebase":
		m["ontoRef"] = "main"
	case "discard":
		m["paths"] = []string{"a.txt"}
	case "reset":
		m["targetRef"] = "HEAD~1"
	case "patch":
		m["patchContent"] = "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-x\n+y\n"
	case "plan":
		m["steps"] = []any{map[string]any{"operationType": "reset", "targetRef": "HEAD"}}
	case "worktree":
		m["branch"] = "topic"
	case "commit":
		m["message"] = "Fix"
	case "push":
	case "branch":
		m["name"] = "topic"
	case "branchDelete":
		m["targets"] = []any{map[string]any{"repoPath": testRepo, "branches": []string{"old"}}}
	case "submodulePointer":
		m["relativePath"], m["direction"] = "libs/x", "return"
	}
	return m
}

func with(m map[string]any, kv ...any) map[string]any {
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// normalize round-trips v through JSON so it compares with a decoded body.
func normalize(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestPreviewBodies(t *testing.T) {
	oid40 := strings.Repeat("a1", 20)
	oid64 := strings.Repeat("0f", 32)
	steps := []any{
		map[string]any{"operationType": "merge", "sourceRef": "a", "targetRef": "b"},
		map[string]any{"operationType": "rebase", "ontoRef": "main", "interactive": false},
		map[string]any{"operationType": "discard", "paths": []string{"x", "y/"}},
		map[string]any{"operationType": "reset", "targetRef": "HEAD", "mode": "hard"},
		map[string]any{"operationType": "patch", "patchContent": "+++ b/z\n", "applyToIndex": true},
	}
	tests := []struct {
		name  string
		op    string
		args  map[string]any
		key   string // the idempotencyKey expected; "" means op:call:id(2)
		extra map[string]any
	}{
		{"merge defaults", "merge", minimalArgs("merge"), "",
			map[string]any{"sourceRef": "feature", "targetRef": "main", "strategy": "merge"}},
		{"merge squash with key and repoId", "merge", with(minimalArgs("merge"), "strategy", "squash", "idempotencyKey", "k_1-A", "repoId", "r1"), "merge:client:k_1-A",
			map[string]any{"sourceRef": "feature", "targetRef": "main", "strategy": "squash"}},
		{"rebase defaults", "rebase", minimalArgs("rebase"), "",
			map[string]any{"currentRef": "HEAD", "ontoRef": "main", "interactive": false}},
		{"rebase given", "rebase", with(minimalArgs("rebase"), "currentRef", "topic", "interactive", false), "",
			map[string]any{"currentRef": "topic", "ontoRef": "main", "interactive": false}},
		{"discard", "discard", with(minimalArgs("discard"), "paths", []string{"a.txt", "dir/"}), "",
			map[string]any{"paths": []string{"a.txt", "dir/"}}},
		{"reset default mode", "reset", minimalArgs("reset"), "",
			map[string]any{"targetRef": "HEAD~1", "mode": "mixed"}},
		{"reset hard", "reset", with(minimalArgs("reset"), "mode", "hard"), "",
			map[string]any{"targetRef": "HEAD~1", "mode": "hard"}},
		{"patch default", "patch", minimalArgs("patch"), "",
			map[string]any{"patchContent": minimalArgs("patch")["patchContent"], "applyToIndex": false}},
		{"patch to index", "patch", with(minimalArgs("patch"), "applyToIndex", true), "",
			map[string]any{"patchContent": minimalArgs("patch")["patchContent"], "applyToIndex": true}},
		{"plan passes steps through", "plan", with(minimalArgs("plan"), "steps", steps), "",
			map[string]any{"steps": steps}},
		{"worktree without path", "worktree", minimalArgs("worktree"), "",
			map[string]any{"branch": "topic"}},
		{"worktree blank path", "worktree", with(minimalArgs("worktree"), "path", "  "), "",
			map[string]any{"branch": "topic"}},
		{"worktree path", "worktree", with(minimalArgs("worktree"), "path", otherRepo), "",
			map[string]any{"branch": "topic", "path": otherRepo}},
		{"commit without paths", "commit", minimalArgs("commit"), "",
			map[string]any{"message": "Fix", "stageAll": false}},
		{"commit empty paths still sent", "commit", with(minimalArgs("commit"), "paths", []string{}), "",
			map[string]any{"message": "Fix", "stageAll": false, "paths": []string{}}},
		{"commit paths and stageAll", "commit", with(minimalArgs("commit"), "paths", []string{"a"}, "stageAll", true), "",
			map[string]any{"message": "Fix", "stageAll": true, "paths": []string{"a"}}},
		{"push defaults", "push", minimalArgs("push"), "",
			map[string]any{"remote": "origin", "setUpstream": false, "forceWithLease": false}},
		{"push blank remote and branch", "push", with(minimalArgs("push"), "remote", " ", "branch", "\t"), "",
			map[string]any{"remote": "origin", "setUpstream": false, "forceWithLease": false}},
		{"push given", "push", with(minimalArgs("push"), "remote", "upstream", "branch", "main", "setUpstream", true, "forceWithLease", true), "",
			map[string]any{"remote": "upstream", "branch": "main", "setUpstream": true, "forceWithLease": true}},
		{"branch defaults", "branch", minimalArgs("branch"), "",
			map[string]any{"name": "topic", "checkout": true}},
		{"branch blank startPoint", "branch", with(minimalArgs("branch"), "startPoint", ""), "",
			map[string]any{"name": "topic", "checkout": true}},
		{"branch given", "branch", with(minimalArgs("branch"), "startPoint", "v1.0", "checkout", false), "",
			map[string]any{"name": "topic", "startPoint": "v1.0", "checkout": false}},
		{"branchDelete", "branchDelete", with(minimalArgs("branchDelete"), "targets", []any{
			map[string]any{"repoPath": testRepo, "branches": []string{"old", "older"}},
			map[string]any{"repoPath": otherRepo, "branches": []string{"gone"}},
		}), "",
			map[string]any{"targets": []any{
				map[string]any{"repoPath": testRepo, "branches": []string{"old", "older"}},
				map[string]any{"repoPath": otherRepo, "branches": []string{"gone"}},
			}}},
		{"submodulePointer return defaults", "submodulePointer", minimalArgs("submodulePointer"), "",
			map[string]any{"parentPath": "", "relativePath": "libs/x", "direction": "return"}},
		{"submodulePointer record with pins", "submodulePointer", with(minimalArgs("submodulePointer"),
			"direction", "record", "message", "Bump x", "parentPath", "vendor", "expectedRecordedOid", oid40, "expectedCheckedOutOid", oid64), "",
			map[string]any{"parentPath": "vendor", "relativePath": "libs/x", "direction": "record", "message": "Bump x",
				"expectedRecordedOid": oid40, "expectedCheckedOutOid": oid64}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newTestGateway(t)
			p := newProvider(g)
			res, err := p.CallTool(context.Background(), call(previewPrefix+tt.op, tt.args, "  Claude Code 2.1  "))
			if err != nil {
				t.Fatalf("CallTool: %v", err)
			}
			if res.Error != nil {
				t.Fatalf("tool error %d: %s", res.Error.Code, res.Error.Message)
			}
			reqs := g.requests()
			if len(reqs) != 2 || reqs[0].Path != previewPath+tt.op || reqs[1].Method != http.MethodGet {
				t.Fatalf("requests %+v, want one POST and one GET", reqs)
			}
			key := tt.key
			if key == "" {
				key = tt.op + ":call:" + testID(2)
			}
			want := map[string]any{
				"previewId": testID(1), "agentId": "Claude-Code-2.1", "idempotencyKey": key,
				"operationType": tt.op, "repoPath": testRepo, "reason": "tidy up", "requestedAt": fixedRequestedAt,
			}
			for k, v := range tt.extra {
				want[k] = v
			}
			if got, w := normalize(t, reqs[0].Body), normalize(t, want); !reflect.DeepEqual(got, w) {
				t.Errorf("body\n got %s\nwant %s", mustJSON(got), mustJSON(w))
			}
		})
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// outcome is a result taken apart for assertions.
type outcome struct {
	Source  string
	Code    int
	Message string
	ErrData map[string]any
	Fields  map[string]any
	Data    any
}

func inspect(t *testing.T, res *sdk.Result) outcome {
	t.Helper()
	o := outcome{Source: res.Source, Fields: map[string]any{}}
	for k, v := range res.Fields {
		var x any
		if err := json.Unmarshal(v, &x); err != nil {
			t.Fatalf("field %s is not JSON: %s", k, v)
		}
		o.Fields[k] = x
	}
	if res.Error != nil {
		o.Code, o.Message = res.Error.Code, res.Error.Message
		if len(res.Error.Data) > 0 {
			if err := json.Unmarshal(res.Error.Data, &o.ErrData); err != nil {
				t.Fatalf("error data: %v: %s", err, res.Error.Data)
			}
		}
		if len(res.Data) > 0 {
			t.Errorf("a result with an error also has data %s", res.Data)
		}
		return o
	}
	if err := json.Unmarshal(res.Data, &o.Data); err != nil {
		t.Fatalf("data is not JSON: %s", res.Data)
	}
	return o
}

func keysOf(m map[string]any) string { return strings.Join(sortedKeys(m), ",") }

// TestPreviewDispatch drives every preview tool through every branch of
// the dispatch flow against the strict gateway.
func TestPreviewDispatch(t *testing.T) {
	statusBody := func(status string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, http.StatusOK, map[string]any{"previewId": strings.TrimPrefix(r.URL.Path, statusPath), "status": status, "result": map[string]any{"message": "m"}})
		}
	}
	slow := func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(3 * time.Second):
		}
		writeJSON(w, http.StatusAccepted, map[string]any{"status": "pending"})
	}
	huge := `{"pad":"` + strings.Repeat("a", fluxbridge.MaxBodyBytes) + `"}`
	client := testID(1)

	type check func(t *testing.T, o outcome, reqs []request, elsewhere int64)
	live := func(status string, dataHas string) check {
		return func(t *testing.T, o outcome, reqs []request, _ int64) {
			if o.Code != 0 || o.Source != Source {
				t.Fatalf("outcome %+v, want a live success from %s", o, Source)
			}
			if keysOf(o.Fields) != "accepted,nextAction,previewId,status" || o.Fields["status"] != status || o.Fields["accepted"] != true || o.Fields["previewId"] != client {
				t.Fatalf("fields %v, want live %s for %s", o.Fields, status, client)
			}
			na, _ := o.Fields["nextAction"].(map[string]any)
			nd, _ := na["data"].(map[string]any)
			if na["tool"] != ToolStatus || !strings.Contains(na["message"].(string), client) || keysOf(nd) != "agentRecommendation,lastStatus,previewId,reason" ||
				nd["previewId"] != client || nd["lastStatus"] != status {
				t.Fatalf("nextAction %v", na)
			}
			if !strings.Contains(mustJSON(o.Data), dataHas) {
				t.Fatalf("data %s lacks %s", mustJSON(o.Data), dataHas)
			}
		}
	}
	notConnectedCheck := func(configured bool, wantReqs int) check {
		return func(t *testing.T, o outcome, reqs []request, elsewhere int64) {
			if o.Code != CodeNotConnected || o.Source != "" || len(o.Fields) != 0 {
				t.Fatalf("outcome %+v, want a bare 10003", o)
			}
			if keysOf(o.ErrData) != "agentRecommendation,gatewayConfigured,learnMore,reason,tier,tool" ||
				o.ErrData["tier"] != Tier || o.ErrData["gatewayConfigured"] != configured || !strings.HasPrefix(o.ErrData["tool"].(string), previewPrefix) {
				t.Fatalf("10003 data %v", o.ErrData)
			}
			if len(reqs) != wantReqs || elsewhere != 0 {
				t.Fatalf("%d requests (%d elsewhere), want %d: %+v", len(reqs), elsewhere, wantReqs, reqs)
			}
		}
	}
	terminal := func(status string) check {
		return func(t *testing.T, o outcome, reqs []request, _ int64) {
			if o.Code != CodeProposalEnded || o.Source != Source || o.Message != terminalMessages[status] {
				t.Fatalf("outcome %+v, want 10004 for %s", o, status)
			}
			if keysOf(o.Fields) != "previewId,status" || o.Fields["status"] != status || o.Fields["previewId"] != client {
				t.Fatalf("fields %v", o.Fields)
			}
			sb, _ := o.ErrData["statusBody"].(map[string]any)
			if keysOf(o.ErrData) != "previewId,status,statusBody" || o.ErrData["previewId"] != client || o.ErrData["status"] != status || sb["status"] != status {
				t.Fatalf("10004 data %v", o.ErrData)
			}
		}
	}
	tests := []struct {
		name     string
		preview  http.HandlerFunc
		status   http.HandlerFunc
		redirect bool // the preview reply redirects to another server
		noAddr   bool
		timeout  time.Duration
		check    check
	}{
		{name: "pending is live", check: live(StatusPending, `"status":"pending"`)},
		{name: "approved is live", status: statusBody("approved"), check: live("approved", `"approved"`)},
		{name: "executing is live", status: statusBody("executing"), check: live("executing", `"executing"`)},
		{name: "other token is live", status: statusBody("queued_for-review2"), check: live("queued_for-review2", `"queued_for-review2"`)},
		{name: "malformed status is pending", status: statusBody("Not A Token"), check: live(StatusPending, `"Not A Token"`)},
		{name: "completed", status: statusBody("completed"), check: func(t *testing.T, o outcome, reqs []request, _ int64) {
			if o.Code != 0 || o.Source != Source || keysOf(o.Fields) != "previewId,status" || o.Fields["status"] != StatusCompleted || o.Fields["previewId"] != client {
				t.Fatalf("outcome %+v, want completed", o)
			}
			if d, _ := o.Data.(map[string]any); d["status"] != "completed" || d["result"] == nil {
				t.Fatalf("data %v is not the status body", o.Data)
			}
		}},
		{name: "rejected", status: statusBody("rejected"), check: terminal("rejected")},
		{name: "failed", status: statusBody("failed"), check: terminal("failed")},
		{name: "expired", status: statusBody("expired"), check: terminal("expired")},
		{name: "cancelled", status: statusBody("cancelled"), check: terminal("cancelled")},
		{name: "status 404 is live pending with the POST reply", status: reply(404, `{"error":"unknown"}`), check: live(StatusPending, `"expiresAt"`)},
		{name: "status 500 is live pending", status: reply(500, "boom"), check: live(StatusPending, `"expiresAt"`)},
		{name: "status not JSON is live pending", status: reply(200, "<html>"), check: live(StatusPending, `"expiresAt"`)},
		{name: "status oversize is live pending", status: reply(200, huge), check: live(StatusPending, `"expiresAt"`)},
		// The POST must still beat the timeout while 420 parallel subtests
		// load the machine, so this one timeout is generous.
		{name: "status slower than the timeout is live pending", status: func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() },
			timeout: time.Second, check: live(StatusPending, `"expiresAt"`)},
		{name: "POST reply not JSON uses the client id", preview: reply(202, "accepted"), check: func(t *testing.T, o outcome, reqs []request, _ int64) {
			live(StatusPending, `"pending"`)(t, o, reqs, 0)
			if reqs[1].Path != statusPath+client {
				t.Fatalf("status read %s, want the client id", reqs[1].Path)
			}
		}},
		{name: "POST reply without previewId uses the client id", preview: reply(200, `{"status":"pending"}`), check: func(t *testing.T, o outcome, reqs []request, _ int64) {
			if reqs[1].Path != statusPath+client || o.Fields["previewId"] != client {
				t.Fatalf("status read %s, fields %v", reqs[1].Path, o.Fields)
			}
		}},
		{name: "null previewId uses the client id", preview: reply(202, `{"previewId":null}`), check: func(t *testing.T, o outcome, reqs []request, _ int64) {
			if reqs[1].Path != statusPath+client {
				t.Fatalf("status read %s", reqs[1].Path)
			}
		}},
		{name: "idempotent replay follows the earlier id", preview: reply(200, `{"previewId":"earlier_Proposal-7","status":"completed"}`),
			status: statusBody("completed"), check: func(t *testing.T, o outcome, reqs []request, _ int64) {
				if reqs[1].Path != statusPath+"earlier_Proposal-7" || o.Fields["previewId"] != "earlier_Proposal-7" || o.Fields["status"] != "completed" || o.Code != 0 {
					t.Fatalf("status read %s, outcome %+v", reqs[1].Path, o)
				}
			}},
		{name: "JSON refusal", preview: reply(403, `{"error":{"code":"policy","message":"agent not allowed"}}`), check: func(t *testing.T, o outcome, reqs []request, _ int64) {
			gw, _ := o.ErrData["gateway"].(map[string]any)
			if o.Code != CodeRefused || o.Source != Source || keysOf(o.ErrData) != "gateway,httpStatus" || o.ErrData["httpStatus"] != 403.0 || gw["error"] == nil {
				t.Fatalf("outcome %+v, want 10006", o)
			}
			if keysOf(o.Fields) != "previewId,status" || o.Fields["previewId"] != client || o.Fields["status"] != StatusRefused || len(reqs) != 1 {
				t.Fatalf("fields %v, %d requests", o.Fields, len(reqs))
			}
		}},
		{name: "JSON refusal 404", preview: reply(404, `{"error":"no such operation"}`), check: func(t *testing.T, o outcome, reqs []request, _ int64) {
			if o.Code != CodeRefused || o.ErrData["httpStatus"] != 404.0 || len(reqs) != 1 {
				t.Fatalf("outcome %+v", o)
			}
		}},
		{name: "plain 404", preview: reply(404, "404 page not found"), check: notConnectedCheck(true, 1)},
		{name: "non-JSON 500", preview: reply(500, "internal error"), check: notConnectedCheck(true, 1)},
		{name: "JSON 500 without error key", preview: reply(500, `{"message":"x"}`), check: notConnectedCheck(true, 1)},
		{name: "oversize reply", preview: reply(202, huge), check: notConnectedCheck(true, 1)},
		{name: "slower than the timeout", preview: slow, timeout: 100 * time.Millisecond, check: notConnectedCheck(true, 1)},
		{name: "redirect is not followed", redirect: true, check: notConnectedCheck(true, 1)},
		{name: "no address", noAddr: true, check: notConnectedCheck(false, 0)},
	}
	for _, bad := range []string{`"../../etc"`, `"a b"`, `""`, `"` + strings.Repeat("x", 129) + `"`, `"ünïcode"`, `42`, `{"id":"x"}`} {
		tests = append(tests, struct {
			name     string
			preview  http.HandlerFunc
			status   http.HandlerFunc
			redirect bool
			noAddr   bool
			timeout  time.Duration
			check    check
		}{name: fmt.Sprintf("unsafe id %d", len(tests)), preview: reply(202, `{"previewId":`+bad+`}`), check: func(t *testing.T, o outcome, reqs []request, _ int64) {
			if o.Code != CodeUnsafePreviewID || o.Source != Source || len(o.Fields) != 0 || keysOf(o.ErrData) != "reason" {
				t.Fatalf("outcome %+v, want 10007 without fields", o)
			}
			if len(reqs) != 1 {
				t.Fatalf("the unsafe id was followed: %+v", reqs)
			}
		}})
	}

	for _, op := range Operations {
		for _, tt := range tests {
			t.Run(op+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				g := newTestGateway(t)
				var elsewhere atomic.Int64
				other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					elsewhere.Add(1)
					writeJSON(w, 200, map[string]any{"previewId": "redirected", "status": "completed"})
				}))
				t.Cleanup(other.Close)
				g.preview, g.status = tt.preview, tt.status
				if tt.redirect {
					g.preview = func(w http.ResponseWriter, r *http.Request) {
						http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
					}
				}
				p := newProvider(g)
				if tt.noAddr {
					p.Address = func() (fluxbridge.Address, bool) { return fluxbridge.Address{}, false }
				}
				if tt.timeout > 0 {
					p.Timeout = tt.timeout
				}
				res, err := p.CallTool(context.Background(), call(previewPrefix+op, minimalArgs(op), "agent"))
				if err != nil {
					t.Fatalf("CallTool: %v", err)
				}
				tt.check(t, inspect(t, res), g.requests(), elsewhere.Load())
			})
		}
	}
}

// TestRedirectTargetGetsNothing covers both redirect kinds: a 302 (which
// a following client would turn into a GET) and a 307 (which would
// repeat the POST body elsewhere).
func TestRedirectTargetGetsNothing(t *testing.T) {
	for _, code := range []int{http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			var hits atomic.Int64
			target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
			defer target.Close()
			g := newTestGateway(t)
			redirect := func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, target.URL+"/elsewhere", code)
			}
			g.preview, g.status, g.cancel = redirect, redirect, redirect
			p := newProvider(g)
			ctx := context.Background()
			pr, _ := p.CallTool(ctx, call("operation.preview.merge", minimalArgs("merge"), "a"))
			st, _ := p.CallTool(ctx, call(ToolStatus, map[string]any{"previewId": "p1"}, "a"))
			ca, _ := p.CallTool(ctx, call(ToolCancel, map[string]any{"previewId": "p1"}, "a"))
			for name, r := range map[string]*sdk.Result{"preview": pr, "status": st, "cancel": ca} {
				if r == nil || r.Error == nil || r.Error.Code != CodeNotConnected {
					t.Errorf("%s: %+v, want 10003", name, r)
				}
			}
			if hits.Load() != 0 {
				t.Fatalf("the redirect target got %d requests", hits.Load())
			}
		})
	}
}

func TestNoAddressMakesNoRequest(t *testing.T) {
	g := newTestGateway(t)
	p := newProvider(nil)
	p.Address = func() (fluxbridge.Address, bool) { return fluxbridge.Address{}, false }
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"operation.preview.push", minimalArgs("push")},
		{ToolStatus, map[string]any{"previewId": "p"}},
		{ToolCancel, map[string]any{"previewId": "p"}},
	} {
		res, err := p.CallTool(context.Background(), call(tc.tool, tc.args, ""))
		if err != nil {
			t.Fatal(err)
		}
		o := inspect(t, res)
		if o.Code != CodeNotConnected || o.ErrData["gatewayConfigured"] != false || o.ErrData["tool"] != tc.tool || o.Source != "" {
			t.Errorf("%s: %+v", tc.tool, o)
		}
		if !strings.Contains(o.ErrData["reason"].(string), "FLUXGIT_MCP_HANDSHAKE_ADDR") {
			t.Errorf("%s: reason %q does not name the variable to set", tc.tool, o.ErrData["reason"])
		}
		// The person is told how to start fluxgit's own gateway; the
		// FluxGit app stays the alternative.
		rec, _ := o.ErrData["agentRecommendation"].(string)
		for _, want := range []string{"`fluxgit gateway`", "FLUXGIT_MCP_HANDSHAKE_ADDR", "FluxGit app"} {
			if !strings.Contains(rec, want) {
				t.Errorf("%s: agentRecommendation %q does not say %q", tc.tool, rec, want)
			}
		}
		if id, _ := tc.args["previewId"].(string); o.ErrData["previewId"] != nil && o.ErrData["previewId"] != id || id != "" && o.ErrData["previewId"] != id {
			t.Errorf("%s: previewId %v in the 10003 data, want %q", tc.tool, o.ErrData["previewId"], id)
		}
	}
	if n := len(g.requests()); n != 0 {
		t.Fatalf("gateway got %d requests", n)
	}
}

// TestAddressFromEnvironment checks the default resolution reads the
// environment at call time.
func TestAddressFromEnvironment(t *testing.T) {
	g := newTestGateway(t)
	for _, v := range fluxbridge.Variables {
		t.Setenv(v, "")
	}
	p := &Provider{}
	res, _ := p.CallTool(context.Background(), call(ToolStatus, map[string]any{"previewId": "p"}, ""))
	if res.Error == nil || res.Error.Code != CodeNotConnected {
		t.Fatalf("without an address: %+v", res)
	}
	t.Setenv("FLUXGIT_MCP_HANDSHAKE_ADDR", g.srv.Listener.Addr().String())
	res, _ = p.CallTool(context.Background(), call(ToolStatus, map[string]any{"previewId": "p"}, ""))
	if res.Error != nil || len(g.requests()) != 1 {
		t.Fatalf("with an address: %+v, %d requests", res, len(g.requests()))
	}
}

func TestInputRefusals(t *testing.T) {
	tests := []struct {
		name string
		tool string
		args map[string]any
		want string
	}{
		{"interactive rebase", "rebase", with(minimalArgs("rebase"), "interactive", true), "interactive"},
		{"rebase strategy", "merge", with(minimalArgs("merge"), "strategy", "rebase"), "strategy"},
		{"reset mode", "reset", with(minimalArgs("reset"), "mode", "keep"), "mode"},
		{"missing reason", "merge", with(minimalArgs("merge"), "reason", ""), "reason"},
		{"reason too long", "merge", with(minimalArgs("merge"), "reason", strings.Repeat("é", 4097)), "reason"},
		{"missing repoPath", "push", with(minimalArgs("push"), "repoPath", ""), "repoPath"},
		{"relative repoPath", "push", with(minimalArgs("push"), "repoPath", "repo"), "absolute"},
		{"bad idempotencyKey", "push", with(minimalArgs("push"), "idempotencyKey", "a:b"), "idempotencyKey"},
		{"long idempotencyKey", "push", with(minimalArgs("push"), "idempotencyKey", strings.Repeat("k", 129)), "idempotencyKey"},
		{"unknown key", "merge", with(minimalArgs("merge"), "execute", true), "execute"},
		{"missing sourceRef", "merge", with(minimalArgs("merge"), "sourceRef", ""), "sourceRef"},
		{"no discard paths", "discard", with(minimalArgs("discard"), "paths", []string{}), "paths"},
		{"empty discard path", "discard", with(minimalArgs("discard"), "paths", []string{""}), "paths[0]"},
		{"missing patch", "patch", with(minimalArgs("patch"), "patchContent", ""), "patchContent"},
		{"no plan steps", "plan", with(minimalArgs("plan"), "steps", []any{}), "steps"},
		{"plan step type", "plan", with(minimalArgs("plan"), "steps", []any{map[string]any{"operationType": "push"}}), "operationType"},
		{"plan step missing field", "plan", with(minimalArgs("plan"), "steps", []any{map[string]any{"operationType": "merge", "sourceRef": "a"}}), "targetRef"},
		{"plan step foreign key", "plan", with(minimalArgs("plan"), "steps", []any{map[string]any{"operationType": "reset", "targetRef": "a", "paths": []string{"x"}}}), "paths"},
		{"plan step unknown key", "plan", with(minimalArgs("plan"), "steps", []any{map[string]any{"operationType": "reset", "targetRef": "a", "force": true}}), "force"},
		{"plan step interactive", "plan", with(minimalArgs("plan"), "steps", []any{map[string]any{"operationType": "rebase", "ontoRef": "a", "interactive": true}}), "interactive"},
		{"plan too long", "plan", with(minimalArgs("plan"), "steps", func() []any {
			s := make([]any, 11)
			for i := range s {
				s[i] = map[string]any{"operationType": "reset", "targetRef": "HEAD"}
			}
			return s
		}()), "steps"},
		{"relative worktree path", "worktree", with(minimalArgs("worktree"), "path", "wt"), "path"},
		{"commit without message", "commit", with(minimalArgs("commit"), "message", ""), "message"},
		{"branch without name", "branch", with(minimalArgs("branch"), "name", ""), "name"},
		{"no targets", "branchDelete", with(minimalArgs("branchDelete"), "targets", []any{}), "targets"},
		{"target with extra key", "branchDelete", with(minimalArgs("branchDelete"), "targets", []any{map[string]any{"repoPath": testRepo, "branches": []string{"a"}, "force": true}}), "force"},
		{"full ref", "branchDelete", with(minimalArgs("branchDelete"), "targets", []any{map[string]any{"repoPath": testRepo, "branches": []string{"refs/heads/a"}}}), "refs/"},
		{"duplicate branch", "branchDelete", with(minimalArgs("branchDelete"), "targets", []any{map[string]any{"repoPath": testRepo, "branches": []string{"a", "a"}}}), "duplicates"},
		{"relative target", "branchDelete", with(minimalArgs("branchDelete"), "targets", []any{map[string]any{"repoPath": "x", "branches": []string{"a"}}}), "targets[0].repoPath"},
		{"record without message", "submodulePointer", with(minimalArgs("submodulePointer"), "direction", "record"), "message"},
		{"return with message", "submodulePointer", with(minimalArgs("submodulePointer"), "message", "m"), "message"},
		{"bad direction", "submodulePointer", with(minimalArgs("submodulePointer"), "direction", "sideways"), "direction"},
		{"short pin", "submodulePointer", with(minimalArgs("submodulePointer"), "expectedRecordedOid", "abc123"), "expectedRecordedOid"},
		{"uppercase pin", "submodulePointer", with(minimalArgs("submodulePointer"), "expectedCheckedOutOid", strings.Repeat("AB", 20)), "expectedCheckedOutOid"},
		{"absolute relativePath", "submodulePointer", with(minimalArgs("submodulePointer"), "relativePath", "/x"), "relativePath"},
		{"status without id", ToolStatus, map[string]any{}, "previewId"},
		{"status bad id", ToolStatus, map[string]any{"previewId": "../x"}, "previewId"},
		{"status extra key", ToolStatus, map[string]any{"previewId": "x", "repoPath": testRepo}, "repoPath"},
		{"cancel bad id", ToolCancel, map[string]any{"previewId": strings.Repeat("x", 129)}, "previewId"},
	}
	g := newTestGateway(t)
	p := newProvider(g)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := tt.tool
			if isOperation(tool) {
				tool = previewPrefix + tool
			}
			res, err := p.CallTool(context.Background(), call(tool, tt.args, "a"))
			var se *sdk.Error
			if !errors.As(err, &se) || se.Kind != sdk.KindInvalidArgument || res != nil {
				t.Fatalf("got %+v, %v; want an invalid-argument refusal", res, err)
			}
			if !strings.Contains(se.Details, tt.want) {
				t.Fatalf("details %q do not name %q", se.Details, tt.want)
			}
		})
	}
	if n := len(g.requests()); n != 0 {
		t.Fatalf("refused input reached the gateway: %+v", g.requests())
	}
}

func TestUnknownTool(t *testing.T) {
	_, err := New().CallTool(context.Background(), &sdk.Call{Tool: "operation.preview.amend"})
	var se *sdk.Error
	if !errors.As(err, &se) || se.Kind != sdk.KindInvalidArgument {
		t.Fatalf("err %v", err)
	}
}

func TestSanitizeAgentID(t *testing.T) {
	tests := []struct{ in, want string }{
		{"claude-code", "claude-code"},
		{"  Claude Code  ", "Claude-Code"},
		{"cursor/1.2 (beta)", "cursor-1.2-beta"},
		{"a::b._c", "a::b._c"},
		{"a   b", "a-b"},
		{"a---b", "a-b"},
		{"a - / - b", "a-b"},
		{"--edge--", "edge"},
		{"ünï çødé", "n-d"},
		{"日本", DefaultAgentID},
		{"!!!", DefaultAgentID},
		{"", DefaultAgentID},
		{"   ", DefaultAgentID},
		{"\tx\n", "x"},
		{strings.Repeat("a", 200), strings.Repeat("a", 128)},
		{strings.Repeat("a", 127) + " b", strings.Repeat("a", 127)},
		{strings.Repeat("é", 100), DefaultAgentID},
	}
	for _, tt := range tests {
		if got := SanitizeAgentID(tt.in); got != tt.want {
			t.Errorf("SanitizeAgentID(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestAgentIDReachesTheGateway(t *testing.T) {
	for _, tc := range []struct{ client, want string }{{"My Agent", "My-Agent"}, {"", DefaultAgentID}} {
		g := newTestGateway(t)
		p := newProvider(g)
		ctx := context.Background()
		if _, err := p.CallTool(ctx, call("operation.preview.branch", minimalArgs("branch"), tc.client)); err != nil {
			t.Fatal(err)
		}
		if _, err := p.CallTool(ctx, call(ToolCancel, map[string]any{"previewId": "p-1"}, tc.client)); err != nil {
			t.Fatal(err)
		}
		reqs := g.requests()
		if reqs[0].Body["agentId"] != tc.want || string(bytes.TrimSpace(reqs[2].Raw)) != `{"agentId":"`+tc.want+`"}` || reqs[2].Path != cancelPath+"p-1" {
			t.Errorf("client %q: preview agentId %v, cancel %s %s", tc.client, reqs[0].Body["agentId"], reqs[2].Path, reqs[2].Raw)
		}
	}
}

// TestDefaultIDsAndClock checks the real id source and clock: previewId
// and the idempotency key are fresh UUID v4s, requestedAt is UTC with
// milliseconds and Z.
func TestDefaultIDsAndClock(t *testing.T) {
	g := newTestGateway(t)
	p := &Provider{Address: g.addr()}
	uuid4 := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	stamp := regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`)
	seen := map[string]bool{}
	for i := 0; i < 3; i++ {
		if _, err := p.CallTool(context.Background(), call("operation.preview.reset", minimalArgs("reset"), "")); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range g.requests() {
		if r.Method != http.MethodPost {
			continue
		}
		id, _ := r.Body["previewId"].(string)
		key, _ := r.Body["idempotencyKey"].(string)
		kid, ok := strings.CutPrefix(key, "reset:call:")
		if !uuid4.MatchString(id) || !ok || !uuid4.MatchString(kid) || id == kid || seen[id] || seen[kid] {
			t.Errorf("previewId %q, idempotencyKey %q", id, key)
		}
		seen[id], seen[kid] = true, true
		at, _ := r.Body["requestedAt"].(string)
		if !stamp.MatchString(at) {
			t.Errorf("requestedAt %q", at)
		}
		if _, err := time.Parse(time.RFC3339Nano, at); err != nil {
			t.Errorf("requestedAt %q: %v", at, err)
		}
	}
	if len(seen) != 6 {
		t.Fatalf("saw %d distinct ids, want 6", len(seen))
	}
}

func TestRequestedAtFormat(t *testing.T) {
	tests := []struct {
		at   time.Time
		want string
	}{
		{fixedNow, fixedRequestedAt},
		{time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), "2026-01-02T03:04:05.000Z"},
		{time.Date(2026, 1, 1, 0, 30, 0, 999_999_999, time.FixedZone("", -5*3600)), "2026-01-01T05:30:00.999Z"},
	}
	for _, tt := range tests {
		g := newTestGateway(t)
		p := newProvider(g)
		p.now = func() time.Time { return tt.at }
		if _, err := p.CallTool(context.Background(), call("operation.preview.commit", minimalArgs("commit"), "")); err != nil {
			t.Fatal(err)
		}
		if got := g.requests()[0].Body["requestedAt"]; got != tt.want {
			t.Errorf("requestedAt for %v = %v, want %s", tt.at, got, tt.want)
		}
	}
}

func TestStatus(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		timeout time.Duration
		code    int
		data    string
	}{
		{name: "rejected body is still a success", handler: reply(200, `{"previewId":"p-1","status":"rejected","rejectionReason":"no"}`),
			data: `{"previewId":"p-1","rejectionReason":"no","status":"rejected"}`},
		{name: "null body", handler: reply(200, `null`), data: `null`},
		{name: "array body", handler: reply(200, `[1,2]`), data: `[1,2]`},
		{name: "404", handler: reply(404, `{"error":"not found"}`), code: CodeUnknownPreview},
		{name: "500", handler: reply(500, `{"error":"x"}`), code: CodeNotConnected},
		{name: "403", handler: reply(403, `{"error":"x"}`), code: CodeNotConnected},
		{name: "not JSON", handler: reply(200, `pending`), code: CodeNotConnected},
		{name: "empty", handler: reply(200, ``), code: CodeNotConnected},
		{name: "oversize", handler: reply(200, `"`+strings.Repeat("a", fluxbridge.MaxBodyBytes)+`"`), code: CodeNotConnected},
		{name: "slow", handler: func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }, timeout: 100 * time.Millisecond, code: CodeNotConnected},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newTestGateway(t)
			g.status = tt.handler
			p := newProvider(g)
			if tt.timeout > 0 {
				p.Timeout = tt.timeout
			}
			res, err := p.CallTool(context.Background(), call(ToolStatus, map[string]any{"previewId": "p-1"}, ""))
			if err != nil {
				t.Fatal(err)
			}
			reqs := g.requests()
			if len(reqs) != 1 || reqs[0].Method != http.MethodGet || reqs[0].Path != statusPath+"p-1" {
				t.Fatalf("requests %+v", reqs)
			}
			o := inspect(t, res)
			if o.Code != tt.code {
				t.Fatalf("outcome %+v, want code %d", o, tt.code)
			}
			switch tt.code {
			case 0:
				if o.Source != Source || keysOf(o.Fields) != "previewId" || o.Fields["previewId"] != "p-1" || mustJSON(o.Data) != tt.data {
					t.Fatalf("outcome %+v, data %s", o, mustJSON(o.Data))
				}
			case CodeUnknownPreview:
				// The message names the id it was asked about, as the
				// reference's does, not only data.previewId.
				if o.Source != Source || keysOf(o.ErrData) != "agentRecommendation,previewId,reason" || o.ErrData["previewId"] != "p-1" || !strings.Contains(o.Message, "p-1") {
					t.Fatalf("10005 %+v", o)
				}
			case CodeNotConnected:
				if o.Source != "" || o.ErrData["tool"] != ToolStatus || o.ErrData["gatewayConfigured"] != true || o.ErrData["previewId"] != "p-1" {
					t.Fatalf("10003 %+v", o)
				}
				if rec, _ := o.ErrData["agentRecommendation"].(string); !strings.Contains(rec, "`fluxgit gateway`") {
					t.Fatalf("10003 does not say how to start fluxgit's gateway: %q", rec)
				}
			}
		})
	}
}

func TestCancel(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		code    int
		check   func(t *testing.T, o outcome)
	}{
		{name: "cancelled", check: func(t *testing.T, o outcome) {
			d, _ := o.Data.(map[string]any)
			if o.Source != Source || keysOf(o.Fields) != "previewId,status" || o.Fields["status"] != StatusCancelled || o.Fields["previewId"] != "p-1" || d["status"] != "cancelled" {
				t.Fatalf("outcome %+v", o)
			}
		}},
		{name: "empty 204", handler: reply(204, ``), check: func(t *testing.T, o outcome) {
			if o.Fields["status"] != StatusCancelled || mustJSON(o.Data) != `{}` {
				t.Fatalf("outcome %+v", o)
			}
		}},
		{name: "404", handler: reply(404, `{"error":"unknown"}`), code: CodeUnknownPreview},
		{name: "403 JSON", handler: reply(403, `{"error":"not the owner"}`), code: CodeRefused, check: func(t *testing.T, o outcome) {
			if keysOf(o.ErrData) != "agentRecommendation,gateway,httpStatus,previewId" || o.ErrData["httpStatus"] != 403.0 || mustJSON(o.ErrData["gateway"]) != `{"error":"not the owner"}` || o.Source != Source {
				t.Fatalf("10006 %+v", o)
			}
		}},
		{name: "409 text", handler: reply(409, `already decided`), code: CodeRefused, check: func(t *testing.T, o outcome) {
			if o.ErrData["gateway"] != "already decided" || o.ErrData["httpStatus"] != 409.0 {
				t.Fatalf("10006 %+v", o)
			}
		}},
		{name: "transport", handler: func(w http.ResponseWriter, r *http.Request) {
			hj, _ := w.(http.Hijacker)
			c, _, _ := hj.Hijack()
			c.Close()
		}, code: CodeNotConnected, check: func(t *testing.T, o outcome) {
			if o.ErrData["tool"] != ToolCancel || o.ErrData["gatewayConfigured"] != true || o.Source != "" {
				t.Fatalf("10003 %+v", o)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newTestGateway(t)
			g.cancel = tt.handler
			res, err := newProvider(g).CallTool(context.Background(), call(ToolCancel, map[string]any{"previewId": "p-1"}, "x"))
			if err != nil {
				t.Fatal(err)
			}
			o := inspect(t, res)
			if o.Code != tt.code {
				t.Fatalf("outcome %+v, want code %d", o, tt.code)
			}
			if tt.check != nil {
				tt.check(t, o)
			}
			if reqs := g.requests(); len(reqs) != 1 || reqs[0].Path != cancelPath+"p-1" {
				t.Fatalf("requests %+v", reqs)
			}
		})
	}
}

func TestUnreachableGateway(t *testing.T) {
	g := newTestGateway(t)
	addr := g.addr()
	g.srv.Close()
	p := newProvider(nil)
	p.Address = addr
	for _, tool := range []string{"operation.preview.discard", ToolStatus, ToolCancel} {
		args := map[string]any{"previewId": "p"}
		if tool != ToolStatus && tool != ToolCancel {
			args = minimalArgs("discard")
		}
		res, err := p.CallTool(context.Background(), call(tool, args, ""))
		if err != nil {
			t.Fatal(err)
		}
		if o := inspect(t, res); o.Code != CodeNotConnected || o.ErrData["gatewayConfigured"] != true {
			t.Errorf("%s: %+v", tool, o)
		}
	}
}

// TestOtherAgentsSeam checks what the presence hint receives and that its
// answer joins every preview result without changing it.
func TestOtherAgentsSeam(t *testing.T) {
	patch := "diff --git a/src/a.go b/src/a.go\n--- a/src/a.go\n+++ b/src/a.go\n@@\n"
	tests := []struct {
		name  string
		op    string
		args  map[string]any
		paths []string
	}{
		{"merge names no paths", "merge", minimalArgs("merge"), nil},
		{"discard", "discard", with(minimalArgs("discard"), "paths", []string{"./a.txt", "dir/", filepath.Join(testRepo, "abs", "b.txt"), "a.txt"}), []string{"a.txt", "dir", "abs/b.txt"}},
		{"commit without paths", "commit", minimalArgs("commit"), nil},
		{"commit with empty paths", "commit", with(minimalArgs("commit"), "paths", []string{}), nil},
		{"commit paths", "commit", with(minimalArgs("commit"), "paths", []string{"x/y"}), []string{"x/y"}},
		{"patch", "patch", with(minimalArgs("patch"), "patchContent", patch), []string{"src/a.go"}},
		{"plan steps", "plan", with(minimalArgs("plan"), "steps", []any{
			map[string]any{"operationType": "discard", "paths": []string{"d1"}},
			map[string]any{"operationType": "reset", "targetRef": "HEAD"},
			map[string]any{"operationType": "patch", "patchContent": patch},
		}), []string{"d1", "src/a.go"}},
		{"submodule", "submodulePointer", with(minimalArgs("submodulePointer"), "parentPath", "vendor/"), []string{"vendor/libs/x"}},
		{"submodule at top", "submodulePointer", minimalArgs("submodulePointer"), []string{"libs/x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newTestGateway(t)
			p := newProvider(g)
			var mu sync.Mutex
			var gotRepo string
			var gotPaths []string
			p.OtherAgents = func(_ context.Context, repoPath string, paths []string) json.RawMessage {
				mu.Lock()
				defer mu.Unlock()
				gotRepo, gotPaths = repoPath, paths
				return json.RawMessage(`{"informational":true,"agents":[],"agentCount":0}`)
			}
			res, err := p.CallTool(context.Background(), call(previewPrefix+tt.op, tt.args, ""))
			if err != nil {
				t.Fatal(err)
			}
			if gotRepo != testRepo || !reflect.DeepEqual(gotPaths, tt.paths) {
				t.Fatalf("hint got %q %#v, want %#v", gotRepo, gotPaths, tt.paths)
			}
			if string(res.Fields["otherAgents"]) != `{"informational":true,"agents":[],"agentCount":0}` || res.Error != nil || !strings.Contains(string(res.Fields["status"]), "pending") {
				t.Fatalf("result %+v", res)
			}
		})
	}
	t.Run("joins failures and can be absent", func(t *testing.T) {
		p := newProvider(nil)
		p.Address = func() (fluxbridge.Address, bool) { return fluxbridge.Address{}, false }
		p.OtherAgents = func(context.Context, string, []string) json.RawMessage { return json.RawMessage(`{"agentCount":1}`) }
		res, _ := p.CallTool(context.Background(), call("operation.preview.merge", minimalArgs("merge"), ""))
		if res.Error == nil || res.Error.Code != CodeNotConnected || string(res.Fields["otherAgents"]) != `{"agentCount":1}` {
			t.Fatalf("result %+v", res)
		}
		p.OtherAgents = func(context.Context, string, []string) json.RawMessage { return nil }
		res, _ = p.CallTool(context.Background(), call("operation.preview.merge", minimalArgs("merge"), ""))
		if _, ok := res.Fields["otherAgents"]; ok || len(res.Fields) != 0 {
			t.Fatalf("fields %v", res.Fields)
		}
	})
}

func TestDescribe(t *testing.T) {
	got := New().Describe().Tools
	if len(got) != 2+len(Operations) {
		t.Fatalf("tools %v", got)
	}
	for _, want := range []string{ToolStatus, ToolCancel, "operation.preview.submodulePointer", "operation.preview.branchDelete"} {
		found := false
		for _, g := range got {
			found = found || g == want
		}
		if !found {
			t.Errorf("Describe lacks %s", want)
		}
	}
}
