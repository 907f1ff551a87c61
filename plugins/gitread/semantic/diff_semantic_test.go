package semantic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fluxgit/fluxgit/internal/fluxbridge"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// semGateway is a strict loopback test gateway for POST
// /v1/mcp/diff/semantic: anything but that exact request with exactly the
// contract's body members is recorded as a violation (and answered 400),
// so a test fails when the provider sends more, less or something else.
type semGateway struct {
	srv     *httptest.Server
	release chan struct{}
	reply   func(req semanticRequest) (status int, header http.Header, body []byte)

	mu         sync.Mutex
	requests   []semanticRequest
	violations []string
}

func newSemGateway(t *testing.T, reply func(req semanticRequest) (int, http.Header, []byte)) *semGateway {
	t.Helper()
	g := &semGateway{release: make(chan struct{}), reply: reply}
	g.srv = httptest.NewServer(http.HandlerFunc(g.serve))
	t.Cleanup(func() {
		close(g.release)
		g.srv.Close()
		g.mu.Lock()
		defer g.mu.Unlock()
		for _, v := range g.violations {
			t.Errorf("strict gateway: %s", v)
		}
	})
	return g
}

var semContractKeys = []string{"baseRef", "headRef", "paths", "repoId", "repoPath"}

func (g *semGateway) serve(w http.ResponseWriter, r *http.Request) {
	bad := func(format string, args ...any) {
		g.mu.Lock()
		g.violations = append(g.violations, fmt.Sprintf(format, args...))
		g.mu.Unlock()
		http.Error(w, `{"error":"bad request"}`, http.StatusBadRequest)
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/mcp/diff/semantic" || r.URL.RawQuery != "" {
		bad("unexpected request %s %s", r.Method, r.URL)
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		bad("Content-Type %q", ct)
		return
	}
	var raw bytes.Buffer
	if _, err := raw.ReadFrom(r.Body); err != nil {
		bad("read body: %v", err)
		return
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw.Bytes(), &members); err != nil {
		bad("body is not a JSON object: %s", raw.Bytes())
		return
	}
	keys := make([]string, 0, len(members))
	for k := range members {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if !reflect.DeepEqual(keys, semContractKeys) {
		bad("body members %v, want exactly %v", keys, semContractKeys)
		return
	}
	var req semanticRequest
	dec := json.NewDecoder(bytes.NewReader(raw.Bytes()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || req.Paths == nil {
		bad("body does not match the contract types (paths must be an array): %s", raw.Bytes())
		return
	}
	g.mu.Lock()
	g.requests = append(g.requests, req)
	g.mu.Unlock()
	status, header, body := http.StatusOK, http.Header(nil), semReply(req.Paths)
	if g.reply != nil {
		status, header, body = g.reply(req)
	}
	if status == 0 { // hold the reply until the client gives up
		select {
		case <-r.Context().Done():
		case <-g.release:
		}
		return
	}
	for k, vs := range header {
		w.Header()[k] = vs
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func (g *semGateway) seen() []semanticRequest {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]semanticRequest(nil), g.requests...)
}

// semFile is a well-formed semantic file entry.
func semFile(path string) map[string]any {
	return map[string]any{
		"path": path, "fallbackToText": false,
		"hunks": []any{map[string]any{"header": "@@ -1 +1 @@", "lines": []any{map[string]any{
			"type": "modified", "oldLine": 1, "newLine": 1, "content": "beta", "oldContent": "alpha",
			"changedTokens":    []any{"beta"},
			"oldChangedTokens": []any{map[string]any{"start": 0, "end": 5, "text": "alpha"}},
		}}}},
	}
}

func semJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// semReply answers every requested path with a well-formed file.
func semReply(paths []string) []byte {
	files := []any{}
	for _, p := range paths {
		files = append(files, semFile(p))
	}
	return semJSON(map[string]any{"files": files})
}

func semFixed(status int, body []byte) func(semanticRequest) (int, http.Header, []byte) {
	return func(semanticRequest) (int, http.Header, []byte) { return status, nil, body }
}

// semRepo has two commits: first (a.txt) and second (a.txt changed, b.txt
// and c.txt added), plus an unstaged change to a.txt.
type semRepo struct{ dir, first, second string }

func newSemRepo(t *testing.T) semRepo {
	t.Helper()
	dir := newRepo(t)
	first := git(t, dir, "rev-parse", "HEAD")
	write(t, dir, "a.txt", "beta\n")
	write(t, dir, "b.txt", "bee\n")
	write(t, dir, "sub/c.txt", "sea\n")
	second := commitAll(t, dir, "second")
	write(t, dir, "a.txt", "gamma\n")
	return semRepo{dir: dir, first: first, second: second}
}

// semEnv points the provider at addr ("" for none) and at a fresh run
// directory, whose registry names registered (if not "") as "shop".
func semEnv(t *testing.T, addr, registered string) {
	t.Helper()
	t.Setenv("FLUXGIT_MCP_HANDSHAKE_ADDR", addr)
	t.Setenv("FLUXGIT_GATEWAY_ADDR", "")
	t.Setenv("FLUXGIT_GATEWAY_URL", "")
	runDir := tempDir(t)
	t.Setenv("FLUXGIT_RUN_DIR", runDir)
	if registered != "" {
		write(t, filepath.Join(runDir, "repos"), "shop.path", registered+"\n")
	}
}

// semDownAddr is a loopback address nothing listens on.
func semDownAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// semCall calls tool with repoPath added, validates the envelope against
// the outputSchema and returns the result.
func semCall(t *testing.T, tool string, r semRepo, args map[string]any) *sdk.Result {
	t.Helper()
	full := map[string]any{"repoPath": r.dir}
	for k, v := range args {
		full[k] = v
	}
	res, err := call(t, tool, full)
	if err != nil {
		t.Fatalf("%s: Go error %v", tool, err)
	}
	if res.Error != nil {
		t.Fatalf("%s: tool error %d %s %s", tool, res.Error.Code, res.Error.Message, res.Error.Data)
	}
	fxCheckPayload(t, tool, res, r.dir)
	return res
}

func TestSemanticGateway(t *testing.T) {
	fallbackFor := func(r semRepo, path string, args map[string]any) semanticFile {
		ta := textDiffArguments{RepoPath: r.dir, Path: path}
		ta.Base, _ = args["base"].(string)
		ta.Head, _ = args["head"].(string)
		return semanticFile{Path: path, FallbackToText: true, Hunks: []semanticHunk{}, TextDiffArguments: &ta}
	}
	cases := []struct {
		name     string
		args     func(t *testing.T, r semRepo) map[string]any
		registry string // "self", "other" or "" (none)
		reply    func(req semanticRequest) (int, http.Header, []byte)
		wantBody func(r semRepo) semanticRequest
		check    func(t *testing.T, r semRepo, args map[string]any, d gatewaySemanticData)
	}{
		{
			name: "registered through repoId",
			args: func(t *testing.T, r semRepo) map[string]any {
				return map[string]any{"repoId": "  shop-42 ", "base": r.first, "head": "main"}
			},
			registry: "other",
			wantBody: func(r semRepo) semanticRequest {
				return semanticRequest{RepoID: "shop-42", RepoPath: r.dir, BaseRef: r.first, HeadRef: r.second, Paths: []string{"a.txt", "b.txt", "sub/c.txt"}}
			},
			check: func(t *testing.T, r semRepo, args map[string]any, d gatewaySemanticData) {
				if d.Base == nil || *d.Base != r.first || d.Head == nil || *d.Head != "main" || d.Path != nil {
					t.Fatalf("base/head/path %v %v %v", d.Base, d.Head, d.Path)
				}
				if d.ChangedFiles != 3 || d.FilesTruncated || len(d.Files) != 3 {
					t.Fatalf("%+v", d)
				}
				l := d.Files[0].Hunks[0].Lines[0]
				if d.Files[0].FallbackToText || *d.Files[0].LinesTruncated || l.Type != "modified" || *l.OldLine != 1 || *l.OldContent != "alpha" ||
					string(l.ChangedTokens[0]) != `"beta"` || string(l.OldChangedTokens[0]) != `{"end":5,"start":0,"text":"alpha"}` {
					t.Fatalf("%+v", d.Files[0])
				}
			},
		},
		{
			name:     "registered through the run-directory registry; base only",
			args:     func(t *testing.T, r semRepo) map[string]any { return map[string]any{"base": r.second} },
			registry: "self",
			wantBody: func(r semRepo) semanticRequest {
				return semanticRequest{RepoID: "shop", RepoPath: r.dir, BaseRef: r.second, HeadRef: "", Paths: []string{"a.txt"}}
			},
		},
		{
			name:     "head only is sent as baseRef",
			args:     func(t *testing.T, r semRepo) map[string]any { return map[string]any{"head": r.first} },
			registry: "self",
			wantBody: func(r semRepo) semanticRequest {
				return semanticRequest{RepoID: "shop", RepoPath: r.dir, BaseRef: r.first, HeadRef: "", Paths: []string{"a.txt", "b.txt", "sub/c.txt"}}
			},
		},
		{
			name:     "neither revision: work tree against the index",
			args:     func(t *testing.T, r semRepo) map[string]any { return map[string]any{} },
			registry: "self",
			wantBody: func(r semRepo) semanticRequest {
				return semanticRequest{RepoID: "shop", RepoPath: r.dir, Paths: []string{"a.txt"}}
			},
		},
		{
			name: "path filter",
			args: func(t *testing.T, r semRepo) map[string]any {
				return map[string]any{"repoId": "shop", "base": r.first, "path": "sub"}
			},
			wantBody: func(r semRepo) semanticRequest {
				return semanticRequest{RepoID: "shop", RepoPath: r.dir, BaseRef: r.first, Paths: []string{"sub/c.txt"}}
			},
			check: func(t *testing.T, r semRepo, args map[string]any, d gatewaySemanticData) {
				if d.Path == nil || *d.Path != "sub" || d.Head != nil {
					t.Fatalf("path %v head %v", d.Path, d.Head)
				}
			},
		},
		{
			name: "malformed entries become per-file text fallbacks",
			args: func(t *testing.T, r semRepo) map[string]any {
				return map[string]any{"repoId": "shop", "base": r.first, "head": r.second}
			},
			registry: "",
			reply: semFixed(200, semJSON(map[string]any{"files": []any{
				semFile("a.txt"),
				map[string]any{"path": "b.txt", "fallbackToText": false, "hunks": []any{map[string]any{"header": "@@", "lines": []any{map[string]any{"type": "rewritten", "content": "x"}}}}},
				semFile("/etc/passwd"), // never asked for
				"not an object",
				map[string]any{"path": "sub/c.txt", "fallbackToText": true, "reason": "Binary file.", "hunks": []any{}, "textDiffArguments": map[string]any{"repoPath": "/elsewhere"}},
			}})),
			wantBody: func(r semRepo) semanticRequest {
				return semanticRequest{RepoID: "shop", RepoPath: r.dir, BaseRef: r.first, HeadRef: r.second, Paths: []string{"a.txt", "b.txt", "sub/c.txt"}}
			},
			check: func(t *testing.T, r semRepo, args map[string]any, d gatewaySemanticData) {
				if len(d.Files) != 3 || d.Files[0].FallbackToText {
					t.Fatalf("%+v", d.Files)
				}
				b := d.Files[1]
				if !strings.Contains(b.Reason, "malformed: hunks[0].lines[0]: type must be") {
					t.Fatalf("b.txt reason %q", b.Reason)
				}
				b.Reason = ""
				if !reflect.DeepEqual(b, fallbackFor(r, "b.txt", args)) {
					t.Fatalf("b.txt %+v", b)
				}
				c := d.Files[2]
				want := fallbackFor(r, "sub/c.txt", args)
				want.Reason = "Binary file."
				if !reflect.DeepEqual(c, want) {
					t.Fatalf("engine fallback must keep its reason and get our textDiffArguments: %+v %+v", c, *c.TextDiffArguments)
				}
			},
		},
		{
			name: "missing and duplicated files fall back; pathsTruncated is kept",
			args: func(t *testing.T, r semRepo) map[string]any { return map[string]any{"repoId": "shop", "base": r.first} },
			reply: semFixed(200, semJSON(map[string]any{"pathsTruncated": true, "files": []any{
				semFile("a.txt"), semFile("sub/c.txt"), semFile("a.txt"),
			}})),
			wantBody: func(r semRepo) semanticRequest {
				return semanticRequest{RepoID: "shop", RepoPath: r.dir, BaseRef: r.first, Paths: []string{"a.txt", "b.txt", "sub/c.txt"}}
			},
			check: func(t *testing.T, r semRepo, args map[string]any, d gatewaySemanticData) {
				if !d.FilesTruncated || d.ChangedFiles != 3 {
					t.Fatalf("%+v", d)
				}
				if !d.Files[0].FallbackToText || !strings.Contains(d.Files[0].Reason, "more than once") ||
					!d.Files[1].FallbackToText || !strings.Contains(d.Files[1].Reason, "returned nothing") ||
					d.Files[2].FallbackToText {
					t.Fatalf("%+v", d.Files)
				}
			},
		},
		{
			name: "lines capped at 1,500 per file",
			args: func(t *testing.T, r semRepo) map[string]any {
				return map[string]any{"repoId": "shop", "base": r.second}
			},
			reply: func(req semanticRequest) (int, http.Header, []byte) {
				lines := make([]any, 1000)
				for i := range lines {
					lines[i] = map[string]any{"type": "added", "newLine": i + 1, "content": "x"}
				}
				h := map[string]any{"header": "@@", "lines": lines}
				return 200, nil, semJSON(map[string]any{"files": []any{
					map[string]any{"path": "a.txt", "fallbackToText": false, "hunks": []any{h, h}},
				}})
			},
			wantBody: func(r semRepo) semanticRequest {
				return semanticRequest{RepoID: "shop", RepoPath: r.dir, BaseRef: r.second, Paths: []string{"a.txt"}}
			},
			check: func(t *testing.T, r semRepo, args map[string]any, d gatewaySemanticData) {
				f := d.Files[0]
				if len(f.Hunks) != 2 || len(f.Hunks[0].Lines) != 1000 || len(f.Hunks[1].Lines) != 500 || !*f.LinesTruncated {
					t.Fatalf("hunks %d, linesTruncated %v", len(f.Hunks), *f.LinesTruncated)
				}
				if f.Hunks[1].Lines[0].OldLine != nil || *f.Hunks[1].Lines[0].NewLine != 1 || len(f.Hunks[1].Lines[0].ChangedTokens) != 0 {
					t.Fatalf("%+v", f.Hunks[1].Lines[0])
				}
			},
		},
		{
			name: "files capped at 25",
			args: func(t *testing.T, r semRepo) map[string]any {
				for i := range 30 {
					write(t, r.dir, fmt.Sprintf("many/f%02d.txt", i), "n\n")
				}
				git(t, r.dir, "add", "many")
				return map[string]any{"repoId": "shop", "base": r.second, "path": "many"}
			},
			check: func(t *testing.T, r semRepo, args map[string]any, d gatewaySemanticData) {
				if d.ChangedFiles != 30 || !d.FilesTruncated || len(d.Files) != 25 || d.Files[24].Path != "many/f24.txt" {
					t.Fatalf("changed %d truncated %v files %d", d.ChangedFiles, d.FilesTruncated, len(d.Files))
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newSemRepo(t)
			g := newSemGateway(t, tc.reply)
			switch tc.registry {
			case "self":
				semEnv(t, g.srv.Listener.Addr().String(), r.dir)
			case "other":
				semEnv(t, g.srv.Listener.Addr().String(), tempDir(t))
			default:
				semEnv(t, g.srv.Listener.Addr().String(), "")
			}
			args := tc.args(t, r)
			res := semCall(t, "diff.semantic", r, args)
			if res.Source != sourceGateway {
				t.Fatalf("source %q, data %s", res.Source, res.Data)
			}
			var d gatewaySemanticData
			if err := json.Unmarshal(res.Data, &d); err != nil {
				t.Fatal(err)
			}
			if !d.Supported || d.Engine != "fluxgit-diff-engine" {
				t.Fatalf("%s", res.Data)
			}
			seen := g.seen()
			if len(seen) != 1 {
				t.Fatalf("gateway saw %d requests", len(seen))
			}
			if tc.wantBody != nil {
				if want := tc.wantBody(r); !reflect.DeepEqual(seen[0], want) {
					t.Fatalf("request body\n got %+v\nwant %+v", seen[0], want)
				}
			}
			if tc.check != nil {
				tc.check(t, r, args, d)
			}
		})
	}
}

func TestSemanticGatewayFallsBackLocally(t *testing.T) {
	cases := []struct {
		name       string
		args       func(t *testing.T, r semRepo) map[string]any
		registry   string // "self", "other" or ""
		down       bool
		slow       bool
		reply      func(req semanticRequest) (int, http.Header, []byte)
		wantCalls  int
		wantReason string
	}{
		{
			name:       "unregistered: no repoId, registry names another repository",
			args:       func(t *testing.T, r semRepo) map[string]any { return map[string]any{"base": r.first} },
			registry:   "other",
			wantReason: "not registered with FluxGit",
		},
		{
			name:       "unregistered: no registry at all",
			args:       func(t *testing.T, r semRepo) map[string]any { return map[string]any{} },
			wantReason: "not registered with FluxGit",
		},
		{
			name: "refused revision never reaches git or the gateway",
			args: func(t *testing.T, r semRepo) map[string]any {
				return map[string]any{"repoId": "shop", "base": "--output=pwned"}
			},
			wantReason: "a revision argument was refused",
		},
		{
			name: "base that is not a commit",
			args: func(t *testing.T, r semRepo) map[string]any {
				return map[string]any{"repoId": "shop", "base": "no-such-branch"}
			},
			wantReason: `listing the changed files failed: arguments.base "no-such-branch" does not name a commit`,
		},
		{
			name:       "gateway down",
			args:       func(t *testing.T, r semRepo) map[string]any { return map[string]any{"repoId": "shop", "base": r.first} },
			down:       true,
			wantReason: "could not be reached",
		},
		{
			name:       "HTTP 500 with a JSON error",
			args:       func(t *testing.T, r semRepo) map[string]any { return map[string]any{"base": r.first} },
			registry:   "self",
			reply:      semFixed(500, []byte(`{"error":{"message":"engine crashed"}}`)),
			wantCalls:  1,
			wantReason: "it answered HTTP 500 (engine crashed).",
		},
		{
			name:       "HTTP 404 unknown repository",
			args:       func(t *testing.T, r semRepo) map[string]any { return map[string]any{"repoId": "nope"} },
			reply:      semFixed(404, []byte(`{"error":"unknown repoId"}`)),
			wantCalls:  1,
			wantReason: "it answered HTTP 404 (unknown repoId).",
		},
		{
			name:       "not JSON",
			args:       func(t *testing.T, r semRepo) map[string]any { return map[string]any{"repoId": "shop"} },
			reply:      semFixed(200, []byte("<html>ok</html>")),
			wantCalls:  1,
			wantReason: "not a valid semantic diff (not a JSON object)",
		},
		{
			name:       "files is not an array",
			args:       func(t *testing.T, r semRepo) map[string]any { return map[string]any{"repoId": "shop"} },
			reply:      semFixed(200, []byte(`{"files":{"a.txt":{}}}`)),
			wantCalls:  1,
			wantReason: "files is not an array",
		},
		{
			name:       "files is null",
			args:       func(t *testing.T, r semRepo) map[string]any { return map[string]any{"repoId": "shop"} },
			reply:      semFixed(200, []byte(`{"files":null}`)),
			wantCalls:  1,
			wantReason: "files is not an array",
		},
		{
			name: "redirect is not followed",
			args: func(t *testing.T, r semRepo) map[string]any { return map[string]any{"repoId": "shop"} },
			reply: func(semanticRequest) (int, http.Header, []byte) {
				return http.StatusTemporaryRedirect, http.Header{"Location": {"http://127.0.0.1:1/v1/mcp/diff/semantic"}}, nil
			},
			wantCalls:  1,
			wantReason: "redirect",
		},
		{
			name: "oversize reply",
			args: func(t *testing.T, r semRepo) map[string]any { return map[string]any{"repoId": "shop"} },
			reply: func(semanticRequest) (int, http.Header, []byte) {
				return 200, nil, semJSON(map[string]any{"files": []any{}, "pad": strings.Repeat("x", fluxbridge.MaxBodyBytes)})
			},
			wantCalls:  1,
			wantReason: fmt.Sprintf("its reply exceeded %d bytes", fluxbridge.MaxBodyBytes),
		},
		{
			name:       "slower than the timeout",
			args:       func(t *testing.T, r semRepo) map[string]any { return map[string]any{"repoId": "shop"} },
			slow:       true,
			reply:      semFixed(0, nil),
			wantCalls:  1,
			wantReason: "did not answer within",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newSemRepo(t)
			g := newSemGateway(t, tc.reply)
			addr := g.srv.Listener.Addr().String()
			if tc.down {
				addr = semDownAddr(t)
			}
			if tc.slow {
				old := semanticTimeout
				semanticTimeout = 200 * time.Millisecond
				t.Cleanup(func() { semanticTimeout = old })
			}
			switch tc.registry {
			case "self":
				semEnv(t, addr, r.dir)
			case "other":
				semEnv(t, addr, tempDir(t))
			default:
				semEnv(t, addr, "")
			}
			args := tc.args(t, r)
			for _, tool := range []string{"diff.semantic", "diff.semanticFallbacks"} {
				res := semCall(t, tool, r, args)
				if res.Source != source {
					t.Fatalf("%s: source %q", tool, res.Source)
				}
				var reason string
				if tool == "diff.semantic" {
					var d semanticData
					if err := json.Unmarshal(res.Data, &d); err != nil {
						t.Fatal(err)
					}
					if d.Supported || d.Fallback != "diff.text" || !d.GatewayConfigured || d.TextDiffArguments.RepoPath != r.dir {
						t.Fatalf("%s", res.Data)
					}
					reason = d.Reason
				} else {
					var f semanticFallbacksData
					if err := json.Unmarshal(res.Data, &f); err != nil {
						t.Fatal(err)
					}
					if len(f.Fallbacks) != 1 || strings.Contains(string(res.Data), `"engine"`) {
						t.Fatalf("%s", res.Data)
					}
					reason = f.Fallbacks[0].Reason
				}
				if !strings.HasPrefix(reason, semanticReasonLocal) || !strings.Contains(reason, tc.wantReason) || !strings.HasSuffix(reason, semanticReasonNext) {
					t.Fatalf("%s: reason %q, want it to contain %q", tool, reason, tc.wantReason)
				}
			}
			// Both tools asked (or both did not).
			if got := len(g.seen()); got != 2*tc.wantCalls {
				t.Fatalf("gateway saw %d requests, want %d", got, 2*tc.wantCalls)
			}
		})
	}
}

func TestSemanticFallbacksGateway(t *testing.T) {
	r := newSemRepo(t)
	g := newSemGateway(t, semFixed(200, semJSON(map[string]any{"files": []any{
		semFile("a.txt"),
		map[string]any{"path": "b.txt", "fallbackToText": true, "hunks": []any{}},
		map[string]any{"path": "sub/c.txt", "fallbackToText": "yes"},
	}})))
	semEnv(t, g.srv.Listener.Addr().String(), r.dir)
	res := semCall(t, "diff.semanticFallbacks", r, map[string]any{"base": r.first})
	if res.Source != sourceGateway {
		t.Fatalf("source %q", res.Source)
	}
	var d gatewayFallbacksData
	if err := json.Unmarshal(res.Data, &d); err != nil {
		t.Fatal(err)
	}
	if d.Engine != "fluxgit-diff-engine" || d.AnalyzedFiles != 3 || d.FilesTruncated || len(d.Fallbacks) != 2 || len(d.RejectedArguments) != 0 {
		t.Fatalf("%s", res.Data)
	}
	wantReasons := []string{semanticReasonEngineFallback, "malformed: fallbackToText is missing or not a boolean"}
	for i, p := range []string{"b.txt", "sub/c.txt"} {
		f := d.Fallbacks[i]
		want := textDiffArguments{RepoPath: r.dir, Base: r.first, Path: p}
		if f.From != "diff.semantic" || f.To != "diff.text" || f.Supported || f.Path == nil || *f.Path != p ||
			f.RepoPath != r.dir || f.TextDiffArguments != want || !strings.Contains(f.Reason, wantReasons[i]) {
			t.Fatalf("fallback %d: %+v", i, f)
		}
	}
	if len(g.seen()) != 1 {
		t.Fatalf("gateway saw %d requests", len(g.seen()))
	}
}

// TestSemanticRegistryNeedsExactPath: a registry entry naming a
// subdirectory of the repository (or a file that is not a regular one)
// does not register it.
func TestSemanticRegistryNeedsExactPath(t *testing.T) {
	cases := []struct {
		name  string
		entry func(t *testing.T, runDir string, r semRepo)
		want  string
	}{
		{"subdirectory", func(t *testing.T, runDir string, r semRepo) {
			write(t, filepath.Join(runDir, "repos"), "shop.path", filepath.Join(r.dir, "sub"))
		}, ""},
		{"symlinked entry file", func(t *testing.T, runDir string, r semRepo) {
			target := filepath.Join(tempDir(t), "target.path")
			write(t, filepath.Dir(target), "target.path", r.dir)
			if err := os.MkdirAll(filepath.Join(runDir, "repos"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, filepath.Join(runDir, "repos", "shop.path")); err != nil {
				t.Fatal(err)
			}
		}, ""},
		{"exact path", func(t *testing.T, runDir string, r semRepo) {
			write(t, filepath.Join(runDir, "repos"), "shop.path", r.dir)
		}, "shop"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newSemRepo(t)
			runDir := tempDir(t)
			t.Setenv("FLUXGIT_RUN_DIR", runDir)
			tc.entry(t, runDir, r)
			if got := semanticRepoID(semanticArgs{RepoPath: r.dir}, r.dir); got != tc.want {
				t.Fatalf("repo id %q, want %q", got, tc.want)
			}
		})
	}
}
