package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fluxgit/fluxgit/tests/gatewaytest"
)

// agentName is the client name the handshake tests initialize with; it is
// already a sanitized agent id, so it reaches the gateway unchanged.
const agentName = "claude-code"

// previewReason is the reason every test proposal gives.
const previewReason = "The feature branch is reviewed and its tests pass."

// handshakeEnv is baseEnv with the gateway address (none when g is nil).
func handshakeEnv(t testing.TB, g *gatewaytest.Gateway, extra ...string) []string {
	env := baseEnv(t)
	if g != nil {
		env = append(env, "FLUXGIT_MCP_HANDSHAKE_ADDR="+g.Addr())
	}
	return append(env, extra...)
}

// hsSession is a fluxgit process initialized as client name, with a call
// counter for request ids.
type hsSession struct {
	*server
	n int
}

func handshakeSession(t testing.TB, env []string, name string) *hsSession {
	t.Helper()
	s := startServer(t, env)
	if r := s.call(0, "initialize", map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": name, "version": "1"},
	}); r.Error != nil {
		t.Fatalf("initialize: %s", r.raw)
	}
	return &hsSession{server: s}
}

// await returns the reply to id, from the replies already read past or
// the next ones.
func (h *hsSession) await(t testing.TB, id string) response {
	t.Helper()
	want, _ := json.Marshal(id)
	for i, raw := range h.stray {
		if r := decodeResponse(t, raw); bytes.Equal(r.ID, want) {
			h.stray = append(h.stray[:i], h.stray[i+1:]...)
			return r
		}
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		r := decodeResponse(t, h.next(time.Until(deadline)))
		if bytes.Equal(r.ID, want) {
			return r
		}
		h.stray = append(h.stray, r.raw)
	}
}

// tool calls a tool and returns the raw reply.
func (h *hsSession) tool(name string, args map[string]any) response {
	h.n++
	return h.call(h.n, "tools/call", map[string]any{"name": name, "arguments": args})
}

// preview calls operation.preview.<op> with repoPath and the standard
// reason added to args, and returns the payload.
func (h *hsSession) preview(t testing.TB, op, repo string, args map[string]any) map[string]any {
	t.Helper()
	return toolPayload(t, h.tool("operation.preview."+op, withPreviewBase(args, repo)))
}

func withPreviewBase(args map[string]any, repo string) map[string]any {
	a := map[string]any{"repoPath": repo, "reason": previewReason}
	for k, v := range args {
		a[k] = v
	}
	return a
}

// jsonValue round-trips v through JSON, so Go literals compare equal to
// decoded bodies (numbers become float64, slices []any).
func jsonValue(t testing.TB, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// describe renders recorded requests for a failure message.
func describe(reqs []gatewaytest.Request) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d requests", len(reqs))
	for _, r := range reqs {
		body := string(r.Body)
		if len(body) > 300 {
			body = body[:300] + "..."
		}
		fmt.Fprintf(&b, "\n  %s %s %s", r.Method, r.Path, body)
	}
	return b.String()
}

// noViolations fails when the gateway saw anything off contract.
func noViolations(t testing.TB, g *gatewaytest.Gateway) {
	t.Helper()
	if v := g.Violations(); len(v) != 0 {
		t.Fatalf("the gateway recorded contract violations:\n%s", strings.Join(v, "\n"))
	}
}

// checkBody asserts a recorded preview POST carries exactly the common
// keys and want, with the contract's formats; it returns the previewId.
func checkBody(t testing.TB, req gatewaytest.Request, op, repo, agent, clientKey string, want map[string]any) string {
	t.Helper()
	if req.Method != "POST" || req.Path != gatewaytest.PreviewPrefix+op {
		t.Fatalf("request %s %s, want POST %s%s", req.Method, req.Path, gatewaytest.PreviewPrefix, op)
	}
	var body map[string]any
	if err := json.Unmarshal(req.Body, &body); err != nil {
		t.Fatalf("body is not a JSON object: %v: %s", err, req.Body)
	}
	wantKeys := append([]string(nil), gatewaytest.CommonKeys...)
	for k := range want {
		wantKeys = append(wantKeys, k)
	}
	var gotKeys []string
	for k := range body {
		gotKeys = append(gotKeys, k)
	}
	sort.Strings(wantKeys)
	sort.Strings(gotKeys)
	if !reflect.DeepEqual(gotKeys, wantKeys) {
		t.Fatalf("%s body keys %v, want exactly %v\nbody: %s", op, gotKeys, wantKeys, req.Body)
	}
	for k, v := range want {
		if w := jsonValue(t, v); !reflect.DeepEqual(body[k], w) {
			t.Fatalf("%s body %s = %s, want %s", op, k, jsonOf(body[k]), jsonOf(w))
		}
	}
	id, _ := body["previewId"].(string)
	if !gatewaytest.IsUUIDv4(id) {
		t.Fatalf("previewId %q is not a fresh UUID v4", id)
	}
	if body["agentId"] != agent || body["operationType"] != op || body["repoPath"] != repo || body["reason"] != previewReason {
		t.Fatalf("agentId/operationType/repoPath/reason: %s", req.Body)
	}
	key, _ := body["idempotencyKey"].(string)
	if clientKey != "" {
		if key != op+":client:"+clientKey {
			t.Fatalf("idempotencyKey %q, want %s:client:%s", key, op, clientKey)
		}
	} else if u, ok := strings.CutPrefix(key, op+":call:"); !ok || !gatewaytest.IsUUIDv4(u) {
		t.Fatalf("idempotencyKey %q, want %s:call:<uuid v4>", key, op)
	}
	at, _ := body["requestedAt"].(string)
	if !gatewaytest.IsStamp(at) {
		t.Fatalf("requestedAt %q is not RFC 3339 UTC with milliseconds and Z", at)
	}
	if ts, _ := time.Parse(time.RFC3339Nano, at); time.Since(ts).Abs() > time.Hour {
		t.Fatalf("requestedAt %s is not the time of the call", at)
	}
	return id
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// checkEnvelope asserts the lean handshake envelope every result with a
// gateway answer carries: the source (the FluxGit app, which a model
// cannot assume) and neither tier nor repoPath.
func checkEnvelope(t testing.TB, p map[string]any, tool string) {
	t.Helper()
	if p["tool"] != tool || p["readOnly"] != (tool == "operation.status") || p["source"] != "fluxgit-app" {
		t.Fatalf("envelope of %s: %s", tool, jsonOf(p))
	}
	for _, k := range []string{"tier", "repoPath"} {
		if _, ok := p[k]; ok {
			t.Fatalf("lean envelope of %s has %s: %s", tool, k, jsonOf(p))
		}
	}
}

// checkReferenceEnvelope asserts the reference's handshake envelope
// (FLUXGIT_MCP_RESULT_SHAPE=reference): tier, source and, for previews,
// the canonical repoPath.
func checkReferenceEnvelope(t testing.TB, p map[string]any, tool, repo string) {
	t.Helper()
	if p["tool"] != tool || p["readOnly"] != (tool == "operation.status") || p["tier"] != "fluxgit-write-handshake" || p["source"] != "fluxgit-app" {
		t.Fatalf("envelope of %s: %s", tool, jsonOf(p))
	}
	if repo != "" && p["repoPath"] != repo {
		t.Fatalf("repoPath %v, want %s", p["repoPath"], repo)
	}
}

// checkLive asserts a live proposal result.
func checkLive(t testing.TB, p map[string]any, tool, id, status string) {
	t.Helper()
	if p["error"] != nil || p["accepted"] != true || p["previewId"] != id || p["status"] != status {
		t.Fatalf("want live %s proposal %s: %s", status, id, jsonOf(p))
	}
	na, _ := p["nextAction"].(map[string]any)
	d, _ := na["data"].(map[string]any)
	if na["tool"] != "operation.status" || na["message"] == "" || d["previewId"] != id || d["lastStatus"] != status ||
		d["reason"] == nil || d["agentRecommendation"] == nil {
		t.Fatalf("nextAction: %s", jsonOf(na))
	}
	if data, ok := p["data"].(map[string]any); !ok || data["status"] != status {
		t.Fatalf("data is not the status body read: %s", jsonOf(p["data"]))
	}
}

// errorOf returns the payload's error code and data.
func errorOf(t testing.TB, p map[string]any) (int, map[string]any) {
	t.Helper()
	e, ok := p["error"].(map[string]any)
	if !ok {
		t.Fatalf("want an error payload: %s", jsonOf(p))
	}
	code, _ := e["code"].(float64)
	if m, _ := e["message"].(string); m == "" {
		t.Fatalf("error without a message: %s", jsonOf(e))
	}
	d, _ := e["data"].(map[string]any)
	return int(code), d
}

// bodyCase is one preview call and the operation fields its body must
// carry, nothing more.
type bodyCase struct {
	name string
	op   string
	args map[string]any
	body map[string]any
	key  string // client idempotencyKey given
}

func bodyCases(repo, wtPath string) []bodyCase {
	const pin = "0123456789abcdef0123456789abcdef01234567"
	steps := []any{
		map[string]any{"operationType": "merge", "sourceRef": "feature/cart", "targetRef": "main"},
		map[string]any{"operationType": "rebase", "ontoRef": "main", "currentRef": "feature/cart", "interactive": false},
		map[string]any{"operationType": "discard", "paths": []any{"scratch file.txt"}},
		map[string]any{"operationType": "reset", "targetRef": "HEAD~1", "mode": "soft"},
		map[string]any{"operationType": "patch", "patchContent": "diff --git a/README.md b/README.md\n", "applyToIndex": true},
	}
	return []bodyCase{
		{"merge defaults", "merge", map[string]any{"sourceRef": "feature/cart", "targetRef": "main"},
			map[string]any{"sourceRef": "feature/cart", "targetRef": "main", "strategy": "merge"}, ""},
		{"merge squash keyed", "merge", map[string]any{"sourceRef": "feature/cart", "targetRef": "main", "strategy": "squash", "idempotencyKey": "cart_merge-1", "repoId": "acme/shop"},
			map[string]any{"sourceRef": "feature/cart", "targetRef": "main", "strategy": "squash"}, "cart_merge-1"},
		{"rebase defaults", "rebase", map[string]any{"ontoRef": "main"},
			map[string]any{"currentRef": "HEAD", "ontoRef": "main", "interactive": false}, ""},
		{"rebase explicit", "rebase", map[string]any{"ontoRef": "main", "currentRef": "feature/cart", "interactive": false},
			map[string]any{"currentRef": "feature/cart", "ontoRef": "main", "interactive": false}, ""},
		{"discard", "discard", map[string]any{"paths": []any{"scratch file.txt", "README.md"}},
			map[string]any{"paths": []any{"scratch file.txt", "README.md"}}, ""},
		{"reset defaults", "reset", map[string]any{"targetRef": "HEAD~1"},
			map[string]any{"targetRef": "HEAD~1", "mode": "mixed"}, ""},
		{"reset hard", "reset", map[string]any{"targetRef": "v1.0.0", "mode": "hard"},
			map[string]any{"targetRef": "v1.0.0", "mode": "hard"}, ""},
		{"patch defaults", "patch", map[string]any{"patchContent": "diff --git a/a b/a\n<&>\n"},
			map[string]any{"patchContent": "diff --git a/a b/a\n<&>\n", "applyToIndex": false}, ""},
		{"patch to index", "patch", map[string]any{"patchContent": "x", "applyToIndex": true},
			map[string]any{"patchContent": "x", "applyToIndex": true}, ""},
		{"plan steps unchanged", "plan", map[string]any{"steps": steps},
			map[string]any{"steps": steps}, ""},
		{"worktree no path", "worktree", map[string]any{"branch": "feature/cart"},
			map[string]any{"branch": "feature/cart"}, ""},
		{"worktree blank path", "worktree", map[string]any{"branch": "feature/cart", "path": ""},
			map[string]any{"branch": "feature/cart"}, ""},
		{"worktree path", "worktree", map[string]any{"branch": "feature/cart", "path": wtPath},
			map[string]any{"branch": "feature/cart", "path": wtPath}, ""},
		{"commit defaults", "commit", map[string]any{"message": "docs: notes"},
			map[string]any{"message": "docs: notes", "stageAll": false}, ""},
		{"commit empty paths", "commit", map[string]any{"message": "docs: notes", "paths": []any{}},
			map[string]any{"message": "docs: notes", "stageAll": false, "paths": []any{}}, ""},
		{"commit paths and stageAll", "commit", map[string]any{"message": "m", "paths": []any{"README.md"}, "stageAll": true},
			map[string]any{"message": "m", "stageAll": true, "paths": []any{"README.md"}}, ""},
		{"push defaults", "push", map[string]any{},
			map[string]any{"remote": "origin", "setUpstream": false, "forceWithLease": false}, ""},
		{"push blanks", "push", map[string]any{"remote": "", "branch": ""},
			map[string]any{"remote": "origin", "setUpstream": false, "forceWithLease": false}, ""},
		{"push explicit", "push", map[string]any{"remote": "upstream", "branch": "main", "setUpstream": true, "forceWithLease": true},
			map[string]any{"remote": "upstream", "branch": "main", "setUpstream": true, "forceWithLease": true}, ""},
		{"branch defaults", "branch", map[string]any{"name": "feature/new"},
			map[string]any{"name": "feature/new", "checkout": true}, ""},
		{"branch blank start", "branch", map[string]any{"name": "feature/new", "startPoint": "", "checkout": false},
			map[string]any{"name": "feature/new", "checkout": false}, ""},
		{"branch start", "branch", map[string]any{"name": "feature/new", "startPoint": "v1.0.0"},
			map[string]any{"name": "feature/new", "startPoint": "v1.0.0", "checkout": true}, ""},
		{"branchDelete", "branchDelete", map[string]any{"targets": []any{map[string]any{"repoPath": repo, "branches": []any{"feature/cart", "old"}}}},
			map[string]any{"targets": []any{map[string]any{"repoPath": repo, "branches": []any{"feature/cart", "old"}}}}, ""},
		{"submodulePointer return", "submodulePointer", map[string]any{"relativePath": "lib/sub", "direction": "return"},
			map[string]any{"parentPath": "", "relativePath": "lib/sub", "direction": "return"}, ""},
		{"submodulePointer record pinned", "submodulePointer", map[string]any{"parentPath": "vendor", "relativePath": "lib/sub", "direction": "record",
			"message": "chore: bump lib/sub", "expectedRecordedOid": pin},
			map[string]any{"parentPath": "vendor", "relativePath": "lib/sub", "direction": "record", "message": "chore: bump lib/sub", "expectedRecordedOid": pin}, ""},
		{"submodulePointer both pins", "submodulePointer", map[string]any{"relativePath": "lib/sub", "direction": "return",
			"expectedRecordedOid": pin, "expectedCheckedOutOid": strings.Repeat("ab", 32)},
			map[string]any{"parentPath": "", "relativePath": "lib/sub", "direction": "return", "expectedRecordedOid": pin, "expectedCheckedOutOid": strings.Repeat("ab", 32)}, ""},
	}
}

// Every preview sends exactly the contract's body — defaults applied,
// optional keys omitted when absent or blank, nothing else — then reads the
// proposal's status once under the same id, and answers with a live
// result. All twelve operations are covered.
func TestPreviewRequestBodies(t *testing.T) {
	g := gatewaytest.New(t)
	repo := fixtureRepo(t)
	wtPath := filepath.Join(filepath.Dir(repo), "worktrees", "cart")
	h := handshakeSession(t, handshakeEnv(t, g), agentName)
	covered := map[string]bool{}
	for _, tc := range bodyCases(repo, wtPath) {
		covered[tc.op] = true
	}
	for _, op := range gatewaytest.Ops {
		if !covered[op] {
			t.Errorf("operation %s has no body case", op)
		}
	}
	for _, tc := range bodyCases(repo, wtPath) {
		t.Run(tc.name, func(t *testing.T) {
			g.ResetRecords()
			p := h.preview(t, tc.op, repo, tc.args)
			noViolations(t, g)
			reqs := g.Requests()
			if len(reqs) != 2 || reqs[1].Endpoint != gatewaytest.Status {
				t.Fatalf("want one POST and one status read, got %s", describe(reqs))
			}
			id := checkBody(t, reqs[0], tc.op, repo, agentName, tc.key, tc.body)
			if reqs[1].Path != gatewaytest.StatusPrefix+id || len(reqs[1].Body) != 0 {
				t.Fatalf("status read %s (body %q), want GET %s%s", reqs[1].Path, reqs[1].Body, gatewaytest.StatusPrefix, id)
			}
			noViolations(t, g)
			checkEnvelope(t, p, "operation.preview."+tc.op)
			checkLive(t, p, "operation.preview."+tc.op, id, "pending")
		})
	}
	if _, err := os.Stat(wtPath); err == nil {
		t.Errorf("a preview created the worktree directory %s", wtPath)
	}
}

// The repository path reaches the gateway canonical (symlinks resolved),
// in repoPath and in every branchDelete target, and (in the reference
// shape, which has it) the envelope's repoPath.
func TestPreviewCanonicalPaths(t *testing.T) {
	g := gatewaytest.New(t)
	repo := fixtureRepo(t)
	link := filepath.Join(canonicalTempDir(t), "link-to-repo")
	symlink(t, repo, link)
	h := handshakeSession(t, handshakeEnv(t, g, "FLUXGIT_MCP_RESULT_SHAPE=reference"), agentName)
	p := h.preview(t, "branchDelete", link, map[string]any{"targets": []any{map[string]any{"repoPath": link, "branches": []any{"feature/cart"}}}})
	reqs := g.RequestsTo(gatewaytest.Preview)
	if len(reqs) != 1 {
		t.Fatalf("%d preview requests", len(reqs))
	}
	id := checkBody(t, reqs[0], "branchDelete", repo, agentName, "",
		map[string]any{"targets": []any{map[string]any{"repoPath": repo, "branches": []any{"feature/cart"}}}})
	checkReferenceEnvelope(t, p, "operation.preview.branchDelete", repo)
	checkLive(t, p, "operation.preview.branchDelete", id, "pending")
	noViolations(t, g)
}

// The agent id is the client's sanitized name, or external-mcp-sidecar
// when nothing is left of it; modern requests name the client in _meta.
func TestPreviewAgentID(t *testing.T) {
	g := gatewaytest.New(t)
	repo := fixtureRepo(t)
	for _, tc := range []struct {
		client string
		want   string
	}{
		{"  Claude Code/2 (beta)  ", "Claude-Code-2-beta"},
		{"codex", "codex"},
		{"--//--", "external-mcp-sidecar"},
		{"", "external-mcp-sidecar"},
		{"a" + strings.Repeat("é", 100), "a"},
		{strings.Repeat("x", 200), strings.Repeat("x", 128)},
	} {
		t.Run(tc.want, func(t *testing.T) {
			g.ResetRecords()
			h := handshakeSession(t, handshakeEnv(t, g), tc.client)
			h.preview(t, "branch", repo, map[string]any{"name": "x"})
			reqs := g.RequestsTo(gatewaytest.Preview)
			if len(reqs) != 1 {
				t.Fatalf("%d preview requests", len(reqs))
			}
			if got := reqs[0].JSON()["agentId"]; got != tc.want {
				t.Fatalf("agentId %v, want %s", got, tc.want)
			}
			noViolations(t, g)
		})
	}
	t.Run("modern _meta", func(t *testing.T) {
		g.ResetRecords()
		s := startServer(t, handshakeEnv(t, g))
		r := s.call(1, "tools/call", map[string]any{"name": "operation.preview.branch", "_meta": modernMeta(),
			"arguments": withPreviewBase(map[string]any{"name": "x"}, repo)})
		if p := toolPayload(t, r); p["accepted"] != true {
			t.Fatalf("modern preview: %s", r.raw)
		}
		reqs := g.RequestsTo(gatewaytest.Preview)
		if len(reqs) != 1 || reqs[0].JSON()["agentId"] != "fluxgit-tests" {
			t.Fatalf("modern request agent id: %s", describe(reqs))
		}
		noViolations(t, g)
	})
}

// Every preview tool, through every status the one read can report: live
// statuses give accepted:true and nextAction; completed gives the status
// body as data; a terminal failure gives 10004 with isError and the
// gateway's body. Each result validates against the tool's outputSchema.
func TestPreviewOutcomes(t *testing.T) {
	g := gatewaytest.New(t)
	repo := fixtureRepo(t)
	h := handshakeSession(t, handshakeEnv(t, g), agentName)
	schemas := outputSchemas(t, h.server)
	minimal := map[string]map[string]any{}
	for _, c := range bodyCases(repo, "") {
		if _, ok := minimal[c.op]; !ok {
			minimal[c.op] = c.args
		}
	}
	for _, op := range gatewaytest.Ops {
		tool := "operation.preview." + op
		for _, status := range []string{"pending", "approved", "executing", "queued_for_review", "completed", "rejected", "failed", "expired", "cancelled"} {
			t.Run(op+"/"+status, func(t *testing.T) {
				g.ResetRecords()
				g.Script(gatewaytest.Plan{Statuses: []string{status}})
				r := h.tool(tool, withPreviewBase(minimal[op], repo))
				p := toolPayload(t, r)
				validateAgainst(t, schemas[tool], p)
				reqs := g.Requests()
				if len(reqs) != 2 {
					t.Fatalf("want POST + one status read, got %d", len(reqs))
				}
				id := reqs[0].JSON()["previewId"].(string)
				checkEnvelope(t, p, tool)
				data, _ := p["data"].(map[string]any)
				switch status {
				case "completed":
					if p["error"] != nil || p["previewId"] != id || p["status"] != "completed" || p["accepted"] != nil || p["nextAction"] != nil {
						t.Fatalf("completed: %s", jsonOf(p))
					}
					if data["status"] != "completed" || !reflect.DeepEqual(data["result"], jsonValue(t, gatewaytest.DefaultResult(op))) {
						t.Fatalf("completed data is not the gateway's status body: %s", jsonOf(data))
					}
				case "rejected", "failed", "expired", "cancelled":
					code, ed := errorOf(t, p)
					sb, _ := ed["statusBody"].(map[string]any)
					if code != 10004 || ed["previewId"] != id || ed["status"] != status || sb["status"] != status || sb["previewId"] != id {
						t.Fatalf("terminal %s: %s", status, jsonOf(p))
					}
					if p["previewId"] != id || p["status"] != status || p["accepted"] != nil {
						t.Fatalf("terminal %s members: %s", status, jsonOf(p))
					}
					if status == "rejected" && sb["rejectionReason"] == nil {
						t.Fatalf("rejectionReason dropped: %s", jsonOf(sb))
					}
				default:
					checkLive(t, p, tool, id, status)
				}
				noViolations(t, g)
			})
		}
	}
}

// outputSchemas lists the tools of s and returns each outputSchema.
func outputSchemas(t testing.TB, s *server) map[string]any {
	t.Helper()
	r := s.call("list", "tools/list", nil)
	if r.Error != nil {
		t.Fatal(r.raw)
	}
	var res struct {
		Tools []struct {
			Name         string `json:"name"`
			OutputSchema any    `json:"outputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	for _, tool := range res.Tools {
		out[tool.Name] = tool.OutputSchema
	}
	for _, name := range handshakeTools() {
		if out[name] == nil {
			t.Fatalf("%s is not listed with an outputSchema", name)
		}
	}
	return out
}

// handshakeTools are the fourteen tools of the handshake provider.
func handshakeTools() []string {
	var names []string
	for _, op := range gatewaytest.Ops {
		names = append(names, "operation.preview."+op)
	}
	return append(names, "operation.status", "operation.cancel")
}

// Gateway faults on the preview POST and the status read, for every
// preview tool, each with the answer the contract gives and the requests
// it allows.
func TestPreviewGatewayFaults(t *testing.T) {
	g := gatewaytest.New(t)
	repo := fixtureRepo(t)
	h := handshakeSession(t, handshakeEnv(t, g), agentName)
	schemas := outputSchemas(t, h.server)
	args := minimalArgs(repo)
	type check func(t *testing.T, tool string, p map[string]any, reqs []gatewaytest.Request)
	notConnected := func(t *testing.T, tool string, p map[string]any, reqs []gatewaytest.Request) {
		code, d := errorOf(t, p)
		if code != 10003 || d["tier"] != "fluxgit-write-handshake" || d["tool"] != tool || d["reason"] == nil || d["agentRecommendation"] == nil {
			t.Fatalf("want 10003: %s", jsonOf(p))
		}
		if p["source"] != nil || p["previewId"] != nil {
			t.Fatalf("10003 claims an answer from FluxGit: %s", jsonOf(p))
		}
		if len(reqs) != 1 {
			t.Fatalf("after a failed POST the gateway saw %d requests", len(reqs))
		}
	}
	refused := func(httpStatus int) check {
		return func(t *testing.T, tool string, p map[string]any, reqs []gatewaytest.Request) {
			code, d := errorOf(t, p)
			gw, _ := d["gateway"].(map[string]any)
			if code != 10006 || d["httpStatus"] != float64(httpStatus) || gw["error"] != "policy says no" {
				t.Fatalf("want 10006 with httpStatus %d and the gateway body: %s", httpStatus, jsonOf(p))
			}
			if p["status"] != "refused" || p["previewId"] != reqs[0].JSON()["previewId"] || p["source"] != "fluxgit-app" {
				t.Fatalf("refused members: %s", jsonOf(p))
			}
			if len(reqs) != 1 {
				t.Fatalf("a refused proposal's status was read (%d requests)", len(reqs))
			}
		}
	}
	unsafe := func(t *testing.T, tool string, p map[string]any, reqs []gatewaytest.Request) {
		code, d := errorOf(t, p)
		if code != 10007 || d["reason"] == nil || p["previewId"] != nil || p["source"] != "fluxgit-app" {
			t.Fatalf("want 10007 without a previewId: %s", jsonOf(p))
		}
		if len(reqs) != 1 {
			t.Fatalf("an unsafe previewId was followed: %s", describe(reqs))
		}
	}
	followed := func(gatewayID string) check {
		return func(t *testing.T, tool string, p map[string]any, reqs []gatewaytest.Request) {
			id := gatewayID
			if id == "" {
				id, _ = reqs[0].JSON()["previewId"].(string)
			}
			if len(reqs) != 2 || reqs[1].Path != gatewaytest.StatusPrefix+id {
				t.Fatalf("want the status of %s read once: %s", id, describe(reqs))
			}
			checkLive(t, p, tool, id, "pending")
		}
	}
	for _, tc := range []struct {
		name   string
		fault  *gatewaytest.Fault
		plan   *gatewaytest.Plan
		status *gatewaytest.Fault // fault on the status read
		check  check
	}{
		{"refused 403", &gatewaytest.Fault{Status: 403, JSONError: "policy says no"}, nil, nil, refused(403)},
		{"refused 422", &gatewaytest.Fault{Status: 422, JSONError: "policy says no"}, nil, nil, refused(422)},
		{"refused 429", &gatewaytest.Fault{Status: 429, JSONError: "policy says no"}, nil, nil, refused(429)},
		{"non-JSON 500", &gatewaytest.Fault{Body: []byte("Internal Server Error")}, nil, nil, notConnected},
		{"JSON 500 without error", &gatewaytest.Fault{Status: 500, Body: []byte(`{"message":"boom"}`)}, nil, nil, notConnected},
		{"empty 503", &gatewaytest.Fault{Status: 503}, nil, nil, notConnected},
		{"redirect", &gatewaytest.Fault{Redirect: true}, nil, nil, notConnected},
		{"redirect 307", &gatewaytest.Fault{Redirect: true, Status: 307}, nil, nil, notConnected},
		{"oversize reply", &gatewaytest.Fault{Oversize: true}, nil, nil, notConnected},
		{"unsafe id traversal", nil, &gatewaytest.Plan{ReplyID: "../../admin"}, nil, unsafe},
		{"unsafe id space", nil, &gatewaytest.Plan{ReplyID: "a b"}, nil, unsafe},
		{"unsafe id query", nil, &gatewaytest.Plan{ReplyID: "x?y=1"}, nil, unsafe},
		{"unsafe id too long", nil, &gatewaytest.Plan{ReplyID: strings.Repeat("a", 129)}, nil, unsafe},
		{"gateway id followed", nil, &gatewaytest.Plan{ReplyID: "gw_Canonical-42"}, nil, followed("gw_Canonical-42")},
		{"no id in reply", nil, &gatewaytest.Plan{OmitReplyID: true}, nil, followed("")},
		{"HTTP 200 reply", nil, &gatewaytest.Plan{HTTPStatus: 200}, nil, followed("")},
		{"status read fails", nil, nil, &gatewaytest.Fault{Body: []byte("down")}, followed("")},
		{"status read redirected", nil, nil, &gatewaytest.Fault{Redirect: true}, followed("")},
	} {
		for _, op := range gatewaytest.Ops {
			tool := "operation.preview." + op
			t.Run(tc.name+"/"+op, func(t *testing.T) {
				g.ResetRecords()
				if tc.fault != nil {
					g.FaultNext(gatewaytest.Preview, *tc.fault)
				}
				if tc.plan != nil {
					g.Script(*tc.plan)
				}
				if tc.status != nil {
					g.FaultNext(gatewaytest.Status, *tc.status)
				}
				p := h.preview(t, op, repo, args[op])
				validateAgainst(t, schemas[tool], p)
				tc.check(t, tool, p, g.Requests())
				if n := len(g.RequestsTo(gatewaytest.Unknown)); n != 0 {
					t.Fatalf("a redirect was followed (%d requests off contract)", n)
				}
				noViolations(t, g)
			})
		}
	}
}

// Without an address no request is made anywhere: 10003, and the running
// (but unconfigured) gateway sees nothing. An invalid address (a host
// name) counts as none.
func TestPreviewWithoutAddress(t *testing.T) {
	g := gatewaytest.New(t)
	repo := fixtureRepo(t)
	for i, env := range [][]string{
		handshakeEnv(t, nil),
		handshakeEnv(t, nil, "FLUXGIT_MCP_HANDSHAKE_ADDR=localhost:"+g.URL().Port()),
		handshakeEnv(t, nil, "FLUXGIT_MCP_RESULT_SHAPE=reference"),
	} {
		reference := i == 2
		h := handshakeSession(t, env, agentName)
		for _, tool := range []string{"operation.preview.reset", "operation.status", "operation.cancel"} {
			args := map[string]any{"previewId": gatewaytest.NewUUID()}
			if tool == "operation.preview.reset" {
				args = withPreviewBase(map[string]any{"targetRef": "HEAD~1"}, repo)
			}
			p := toolPayload(t, h.tool(tool, args))
			code, d := errorOf(t, p)
			if code != 10003 || d["gatewayConfigured"] != false || d["tier"] != "fluxgit-write-handshake" || d["tool"] != tool {
				t.Fatalf("%s without an address: %s", tool, jsonOf(p))
			}
			// The tier stays in error.data (it says why); the envelope
			// carries it only in the reference shape.
			_, hasTier := p["tier"]
			if p["tool"] != tool || p["readOnly"] != (tool == "operation.status") || hasTier != reference ||
				(reference && p["tier"] != "fluxgit-write-handshake") {
				t.Fatalf("%s envelope (reference shape %v): %s", tool, reference, jsonOf(p))
			}
		}
	}
	if reqs := g.Requests(); len(reqs) != 0 {
		t.Fatalf("the gateway saw %d requests without being configured", len(reqs))
	}
}

// A gateway slower than the 5 s request timeout gives 10003, and the
// session answers other requests meanwhile. This test waits for that
// timeout: it takes about 5 seconds.
func TestPreviewSlowGatewayTimesOut(t *testing.T) {
	g := gatewaytest.New(t)
	repo := fixtureRepo(t)
	h := handshakeSession(t, handshakeEnv(t, g), agentName)
	g.FaultNext(gatewaytest.Preview, gatewaytest.Fault{Delay: 8 * time.Second})
	h.sendJSON(map[string]any{"jsonrpc": "2.0", "id": "slow", "method": "tools/call", "params": map[string]any{
		"name": "operation.preview.commit", "arguments": withPreviewBase(map[string]any{"message": "m"}, repo)}})
	// The session keeps answering while the proposal waits on the gateway.
	for i := 0; len(g.RequestsTo(gatewaytest.Preview)) == 0; i++ {
		if i == 1000 {
			t.Fatal("the preview never reached the gateway")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if r := h.call("ping-1", "ping", nil); r.Error != nil || len(h.stray) != 0 {
		t.Fatalf("ping while a preview waits: %s (answered before it: %v)", r.raw, h.stray)
	}
	p := toolPayload(t, h.await(t, "slow"))
	if code, d := errorOf(t, p); code != 10003 || d["gatewayConfigured"] != true {
		t.Fatalf("want 10003 after the timeout: %s", jsonOf(p))
	}
	if reqs := g.Requests(); len(reqs) != 1 {
		t.Fatalf("after a timed-out POST the gateway saw %d requests", len(reqs))
	}
	noViolations(t, g)
}

// A retry with the same idempotencyKey returns the earlier proposal's id;
// the key is scoped to the operation type; the same key for another
// intent is refused by the gateway (409 → 10006).
func TestPreviewIdempotentReplay(t *testing.T) {
	g := gatewaytest.New(t)
	repo := fixtureRepo(t)
	h := handshakeSession(t, handshakeEnv(t, g), agentName)
	args := map[string]any{"sourceRef": "feature/cart", "targetRef": "main", "idempotencyKey": "cart-1"}
	first := h.preview(t, "merge", repo, args)
	second := h.preview(t, "merge", repo, args)
	posts := g.RequestsTo(gatewaytest.Preview)
	if len(posts) != 2 {
		t.Fatalf("%d POSTs", len(posts))
	}
	id1, id2 := posts[0].JSON()["previewId"], posts[1].JSON()["previewId"]
	if id1 == id2 {
		t.Fatal("the retry reused the client previewId; each call needs a fresh one")
	}
	for _, p := range posts {
		if p.JSON()["idempotencyKey"] != "merge:client:cart-1" {
			t.Fatalf("idempotencyKey %v", p.JSON()["idempotencyKey"])
		}
	}
	checkLive(t, first, "operation.preview.merge", id1.(string), "pending")
	checkLive(t, second, "operation.preview.merge", id1.(string), "pending")
	if st := g.RequestsTo(gatewaytest.Status); len(st) != 2 || st[1].Path != gatewaytest.StatusPrefix+id1.(string) {
		t.Fatalf("the replay's status read does not follow the earlier id: %s", describe(st))
	}
	// The same client key on another operation is another intent.
	other := h.preview(t, "reset", repo, map[string]any{"targetRef": "HEAD~1", "idempotencyKey": "cart-1"})
	if other["previewId"] == id1 || other["accepted"] != true {
		t.Fatalf("a reset with the merge's key aliased it: %s", jsonOf(other))
	}
	// The same key with different arguments is a conflict.
	args["targetRef"] = "release"
	p := h.preview(t, "merge", repo, args)
	if code, d := errorOf(t, p); code != 10006 || d["httpStatus"] != float64(409) || p["status"] != "refused" {
		t.Fatalf("reused key for another intent: %s", jsonOf(p))
	}
	// Without a key, identical calls are distinct proposals.
	a := h.preview(t, "branch", repo, map[string]any{"name": "x"})
	b := h.preview(t, "branch", repo, map[string]any{"name": "x"})
	if a["previewId"] == b["previewId"] {
		t.Fatalf("two unkeyed calls were merged into %v", a["previewId"])
	}
	noViolations(t, g)
}

// Arguments the contract forbids are refused before any request: the
// gateway records nothing.
func TestPreviewInputRefusals(t *testing.T) {
	g := gatewaytest.New(t)
	repo := fixtureRepo(t)
	outside := fixtureRepo(t) // another temporary directory, outside the roots
	roots := filepath.Dir(repo)
	h := handshakeSession(t, handshakeEnv(t, g, "FLUXGIT_MCP_ALLOWED_ROOTS="+roots), agentName)
	const pin = "0123456789abcdef0123456789abcdef01234567"
	for _, tc := range []struct {
		name   string
		tool   string
		args   map[string]any
		code   int
		detail string
	}{
		{"interactive rebase", "rebase", map[string]any{"ontoRef": "main", "interactive": true}, -32602, "interactive"},
		{"key with a space", "merge", map[string]any{"sourceRef": "a", "targetRef": "b", "idempotencyKey": "bad key"}, -32602, "idempotencyKey"},
		{"key too long", "merge", map[string]any{"sourceRef": "a", "targetRef": "b", "idempotencyKey": strings.Repeat("k", 129)}, -32602, "idempotencyKey"},
		{"key with a colon", "merge", map[string]any{"sourceRef": "a", "targetRef": "b", "idempotencyKey": "merge:client:x"}, -32602, "idempotencyKey"},
		{"message on return", "submodulePointer", map[string]any{"relativePath": "lib/sub", "direction": "return", "message": "m"}, -32602, "message"},
		{"record without message", "submodulePointer", map[string]any{"relativePath": "lib/sub", "direction": "record"}, -32602, "message"},
		{"uppercase pin", "submodulePointer", map[string]any{"relativePath": "lib/sub", "direction": "return", "expectedRecordedOid": strings.ToUpper(pin)}, -32602, "expectedRecordedOid"},
		{"short pin", "submodulePointer", map[string]any{"relativePath": "lib/sub", "direction": "return", "expectedCheckedOutOid": pin[:12]}, -32602, "expectedCheckedOutOid"},
		{"target outside roots", "branchDelete", map[string]any{"targets": []any{
			map[string]any{"repoPath": repo, "branches": []any{"a"}}, map[string]any{"repoPath": outside, "branches": []any{"a"}}}}, -32011, ""},
		{"relative target", "branchDelete", map[string]any{"targets": []any{map[string]any{"repoPath": "repo", "branches": []any{"a"}}}}, -32602, "repoPath"},
		{"refs/ branch", "branchDelete", map[string]any{"targets": []any{map[string]any{"repoPath": repo, "branches": []any{"refs/heads/a"}}}}, -32602, "branches"},
		{"duplicate branch", "branchDelete", map[string]any{"targets": []any{map[string]any{"repoPath": repo, "branches": []any{"a", "a"}}}}, -32602, "branches"},
		{"extra target key", "branchDelete", map[string]any{"targets": []any{map[string]any{"repoPath": repo, "branches": []any{"a"}, "force": true}}}, -32602, "force"},
		{"relative repoPath", "commit", map[string]any{"message": "m", "repoPath": "relative/repo"}, -32602, "repoPath"},
		{"repoPath outside roots", "commit", map[string]any{"message": "m", "repoPath": outside}, -32011, ""},
		{"plan step with two operations", "plan", map[string]any{"steps": []any{
			map[string]any{"operationType": "merge", "sourceRef": "a", "targetRef": "b", "paths": []any{"x"}}}}, -32602, "steps"},
		{"plan step without its fields", "plan", map[string]any{"steps": []any{map[string]any{"operationType": "reset"}}}, -32602, "steps"},
		{"plan step of another op", "plan", map[string]any{"steps": []any{map[string]any{"operationType": "push"}}}, -32602, "steps"},
		{"plan too long", "plan", map[string]any{"steps": func() []any {
			var s []any
			for i := 0; i < 11; i++ {
				s = append(s, map[string]any{"operationType": "reset", "targetRef": "HEAD"})
			}
			return s
		}()}, -32602, "steps"},
		{"rebase strategy", "merge", map[string]any{"sourceRef": "a", "targetRef": "b", "strategy": "rebase"}, -32602, "strategy"},
		{"option-like ref", "reset", map[string]any{"targetRef": "--hard"}, -32602, "targetRef"},
		{"unknown key", "commit", map[string]any{"message": "m", "amend": true}, -32602, "amend"},
		{"missing reason", "commit", map[string]any{"message": "m", "reason": nil}, -32602, "reason"},
		{"reason too long", "commit", map[string]any{"message": "m", "reason": strings.Repeat("r", 4097)}, -32602, "reason"},
		{"no paths", "discard", map[string]any{"paths": []any{}}, -32602, "paths"},
		{"bad mode", "reset", map[string]any{"targetRef": "HEAD", "mode": "keep"}, -32602, "mode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := withPreviewBase(tc.args, repo)
			for k, v := range args {
				if v == nil {
					delete(args, k)
				}
			}
			code, text := refusal(t, h.tool("operation.preview."+tc.tool, args))
			if code != tc.code || !strings.Contains(text, tc.detail) {
				t.Fatalf("got %d %s; want %d naming %q", code, text, tc.code, tc.detail)
			}
			if reqs := g.Requests(); len(reqs) != 0 {
				t.Fatalf("a refused call reached the gateway: %s %s", reqs[0].Path, reqs[0].Body)
			}
		})
	}
	for _, tool := range []string{"operation.status", "operation.cancel"} {
		for _, id := range []string{"../x", "a b", strings.Repeat("a", 129), ""} {
			if code := codeOf(t, h.tool(tool, map[string]any{"previewId": id})); code != -32602 {
				t.Fatalf("%s previewId %q: code %d", tool, id, code)
			}
		}
		if code := codeOf(t, h.tool(tool, map[string]any{})); code != -32602 {
			t.Fatalf("%s without previewId: code %d", tool, code)
		}
	}
	if reqs := g.Requests(); len(reqs) != 0 {
		t.Fatalf("a refused call reached the gateway: %s", reqs[0].Path)
	}
}

// operation.status returns the gateway's record verbatim, whatever its
// status; operation.cancel sends {agentId} alone and withdraws only the
// caller's own pending proposal. 404 is 10005 for both.
func TestOperationStatusAndCancel(t *testing.T) {
	g := gatewaytest.New(t)
	repo := fixtureRepo(t)
	h := handshakeSession(t, handshakeEnv(t, g), agentName)
	schemas := outputSchemas(t, h.server)
	status := func(id string) map[string]any {
		t.Helper()
		p := toolPayload(t, h.tool("operation.status", map[string]any{"previewId": id}))
		validateAgainst(t, schemas["operation.status"], p)
		return p
	}
	cancel := func(h *hsSession, id string) map[string]any {
		t.Helper()
		p := toolPayload(t, h.tool("operation.cancel", map[string]any{"previewId": id}))
		validateAgainst(t, schemas["operation.cancel"], p)
		return p
	}

	// Follow a proposal to its end through operation.status.
	g.Script(gatewaytest.Plan{Statuses: []string{"pending", "approved", "executing", "completed"}})
	p := h.preview(t, "commit", repo, map[string]any{"message": "docs: notes"})
	id := p["previewId"].(string)
	for _, want := range []string{"approved", "executing", "completed", "completed"} {
		g.ResetRecords()
		sp := status(id)
		checkEnvelope(t, sp, "operation.status")
		d, _ := sp["data"].(map[string]any)
		if sp["error"] != nil || sp["previewId"] != id || d["status"] != want || d["previewId"] != id {
			t.Fatalf("status, want %s: %s", want, jsonOf(sp))
		}
		if want == "completed" && !reflect.DeepEqual(d["result"], jsonValue(t, gatewaytest.DefaultResult("commit"))) {
			t.Fatalf("completed result: %s", jsonOf(d))
		}
		if reqs := g.Requests(); len(reqs) != 1 || reqs[0].Method != "GET" || reqs[0].Path != gatewaytest.StatusPrefix+id {
			t.Fatalf("status requests: %s", describe(reqs))
		}
	}
	// A rejected record is still a successful read.
	g.Script(gatewaytest.Plan{Statuses: []string{"pending", "rejected"}})
	rid := h.preview(t, "reset", repo, map[string]any{"targetRef": "HEAD~1"})["previewId"].(string)
	if sp := status(rid); sp["error"] != nil || sp["data"].(map[string]any)["status"] != "rejected" {
		t.Fatalf("rejected status read: %s", jsonOf(sp))
	}
	// A cancel of a decided proposal is refused (409 → 10006).
	cp := cancel(h, id)
	if code, d := errorOf(t, cp); code != 10006 || d["httpStatus"] != float64(409) || d["previewId"] != id || d["gateway"] == nil || d["agentRecommendation"] == nil {
		t.Fatalf("cancel of a completed proposal: %s", jsonOf(cp))
	}

	// Another agent may not cancel; the owner may, once.
	pid := h.preview(t, "branch", repo, map[string]any{"name": "n"})["previewId"].(string)
	other := handshakeSession(t, handshakeEnv(t, g), "codex")
	if code, d := errorOf(t, cancel(other, pid)); code != 10006 || d["httpStatus"] != float64(403) {
		t.Fatalf("cancel by another agent: %d %v", code, d)
	}
	g.ResetRecords()
	cp = cancel(h, pid)
	checkEnvelope(t, cp, "operation.cancel")
	if cp["error"] != nil || cp["previewId"] != pid || cp["status"] != "cancelled" || cp["data"].(map[string]any)["status"] != "cancelled" {
		t.Fatalf("cancel: %s", jsonOf(cp))
	}
	reqs := g.Requests()
	if len(reqs) != 1 || reqs[0].Method != "POST" || reqs[0].Path != gatewaytest.CancelPrefix+pid || string(reqs[0].Body) != `{"agentId":"claude-code"}` {
		t.Fatalf("cancel request: %s", describe(reqs))
	}
	if sp := status(pid); sp["data"].(map[string]any)["status"] != "cancelled" {
		t.Fatalf("after cancel: %s", jsonOf(sp))
	}

	// Unknown ids: 10005 from both.
	unknown := gatewaytest.NewUUID()
	for _, sp := range []map[string]any{status(unknown), cancel(h, unknown)} {
		if code, d := errorOf(t, sp); code != 10005 || d["previewId"] != unknown || d["reason"] == nil || d["agentRecommendation"] == nil {
			t.Fatalf("unknown id: %s", jsonOf(sp))
		}
	}

	// Gateway faults on the status read: 10003, never a guess.
	for _, f := range []gatewaytest.Fault{{Body: []byte("down")}, {Status: 403, JSONError: "no"}, {Redirect: true}, {Oversize: true}} {
		g.FaultNext(gatewaytest.Status, f)
		if code, _ := errorOf(t, status(pid)); code != 10003 {
			t.Fatalf("status with fault (HTTP %d, redirect %v, oversize %v): code %d", f.Status, f.Redirect, f.Oversize, code)
		}
	}
	// Gateway faults on cancel: any other non-2xx is a refusal, a
	// transport failure is 10003.
	g.FaultNext(gatewaytest.Cancel, gatewaytest.Fault{Status: 500, Body: []byte("boom")})
	if code, d := errorOf(t, cancel(h, pid)); code != 10006 || d["httpStatus"] != float64(500) {
		t.Fatalf("cancel answered 500: %d %v", code, d)
	}
	g.FaultNext(gatewaytest.Cancel, gatewaytest.Fault{Redirect: true})
	if code, _ := errorOf(t, cancel(h, pid)); code != 10003 {
		t.Fatalf("cancel redirected: %d", code)
	}
	if n := len(g.RequestsTo(gatewaytest.Unknown)); n != 0 {
		t.Fatalf("a redirect was followed")
	}
	noViolations(t, g)
}

// handshakeCalls is one call of every handshake tool against repo, for the
// tests that must exercise every served tool. The handshake provider runs
// no git; these prove that holds on hostile repositories too.
func handshakeCalls(repo string) []struct {
	tool string
	args map[string]any
} {
	var calls []struct {
		tool string
		args map[string]any
	}
	for op, args := range minimalArgs(repo) {
		calls = append(calls, struct {
			tool string
			args map[string]any
		}{"operation.preview." + op, withPreviewBase(args, repo)})
	}
	for _, tool := range []string{"operation.status", "operation.cancel"} {
		calls = append(calls, struct {
			tool string
			args map[string]any
		}{tool, map[string]any{"previewId": gatewaytest.NewUUID()}})
	}
	return calls
}
