package server

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fluxgit/fluxgit/gateway/execute"
	"github.com/fluxgit/fluxgit/gateway/journal"
)

const (
	testSecret = "s3cr3t-for-the-page-tests_0123456789abcdefghij"
	testHost   = "127.0.0.1:59647"
)

// call is one Lifecycle mutation the handler made.
type call struct {
	Method   string
	ID       string
	Decision Decision
	As       journal.Status
	Note     string
	RepoPath string
	By       string
}

// fakeLifecycle stands in for *Server in these handler tests: it records
// what the handler passes through and returns canned data. The real
// gateway is exercised end to end in tests/.
type fakeLifecycle struct {
	mu        sync.Mutex
	hosts     map[string]bool
	proposals []journal.Proposal
	restore   []RestorePointView
	rpErr     error
	err       error // returned by Decide, Reconcile, Undo and Get
	calls     []call
	filters   []journal.Filter
	gets      []string // ids passed to Get
	changes   chan Change
	cancelled chan struct{}
}

func newFake() *fakeLifecycle {
	return &fakeLifecycle{
		hosts:     map[string]bool{testHost: true, "localhost:59647": true},
		changes:   make(chan Change, 4),
		cancelled: make(chan struct{}, 4),
	}
}

func (f *fakeLifecycle) record(c call) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, c)
}

func (f *fakeLifecycle) Calls() []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

func (f *fakeLifecycle) Decide(_ context.Context, id string, d Decision) (journal.Proposal, error) {
	f.record(call{Method: "Decide", ID: id, Decision: d})
	if f.err != nil {
		return journal.Proposal{}, f.err
	}
	st := journal.Approved
	if !d.Approve {
		st = journal.Rejected
	}
	return journal.Proposal{ID: id, OperationType: "merge", Status: st, RejectionReason: d.Reason, DecidedBy: d.By}, nil
}

func (f *fakeLifecycle) Reconcile(_ context.Context, id string, as journal.Status, note, by string) (journal.Proposal, error) {
	f.record(call{Method: "Reconcile", ID: id, As: as, Note: note, By: by})
	if f.err != nil {
		return journal.Proposal{}, f.err
	}
	return journal.Proposal{ID: id, OperationType: "merge", Status: as, DecidedBy: by}, nil
}

func (f *fakeLifecycle) Undo(_ context.Context, repoPath, by string) (execute.UndoResult, error) {
	f.record(call{Method: "Undo", RepoPath: repoPath, By: by})
	if f.err != nil {
		return execute.UndoResult{}, f.err
	}
	return execute.UndoResult{RepoPath: repoPath, RepoID: "repo-0123abcd", Before: "b1", After: "a1", Branch: "refs/heads/main"}, nil
}

func (f *fakeLifecycle) Redo(_ context.Context, repoPath, by string) (execute.UndoResult, error) {
	f.record(call{Method: "Redo", RepoPath: repoPath, By: by})
	if f.err != nil {
		return execute.UndoResult{}, f.err
	}
	return execute.UndoResult{RepoPath: repoPath, RepoID: "repo-0123abcd", Before: "b1", After: "a1", Branch: "refs/heads/main"}, nil
}

func (f *fakeLifecycle) RestoreActions(int) ([]journal.RestoreAction, error) {
	return []journal.RestoreAction{}, nil
}

// List selects as the journal does: statuses, then the order (proposals
// is taken as newest first), offset and limit, and no body when asked.
func (f *fakeLifecycle) List(fl journal.Filter) ([]journal.Proposal, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.filters = append(f.filters, fl)
	var out []journal.Proposal
	for _, p := range f.proposals {
		if len(fl.Statuses) == 0 || slices.Contains(fl.Statuses, p.Status) {
			if fl.WithoutBody {
				p.Body = nil
			}
			out = append(out, p)
		}
	}
	switch {
	case fl.ByExpiry:
		sort.SliceStable(out, func(i, j int) bool { return out[i].ExpiresAt.Before(out[j].ExpiresAt) })
	case fl.Oldest:
		slices.Reverse(out)
	}
	out = out[min(fl.Offset, len(out)):]
	if limit := cmp.Or(fl.Limit, 200); len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func (f *fakeLifecycle) Count(fl journal.Filter) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, p := range f.proposals {
		if len(fl.Statuses) == 0 || slices.Contains(fl.Statuses, p.Status) {
			n++
		}
	}
	return n, nil
}

func (f *fakeLifecycle) Get(id string) (journal.Proposal, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gets = append(f.gets, id)
	for _, p := range f.proposals {
		if p.ID == id {
			return p, nil
		}
	}
	return journal.Proposal{}, fmt.Errorf("get %s: %w", id, journal.ErrNotFound)
}

func (f *fakeLifecycle) Subscribe() (<-chan Change, func()) {
	return f.changes, func() { f.cancelled <- struct{}{} }
}

func (f *fakeLifecycle) Secret() string { return testSecret }

func (f *fakeLifecycle) CheckHost(r *http.Request) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hosts[r.Host]
}

func (f *fakeLifecycle) RestorePoints(context.Context) ([]RestorePointView, error) {
	return f.restore, f.rpErr
}

func (f *fakeLifecycle) FileDiff(_ context.Context, id string, section int, path string) (FileDiffView, error) {
	return FileDiffView{Path: path, Diff: fmt.Sprintf("diff of %s section %d of %s\n", path, section, id)}, nil
}

// req describes one request; zero fields take the page's own values (a
// valid session, CSRF token, Origin and Host), the "no…" fields drop them.
type req struct {
	method, path, body         string
	host, origin, csrf, cookie string
	noCookie, noCSRF, noOrigin bool
}

func (q req) do(t *testing.T, h http.Handler) *httptest.ResponseRecorder {
	t.Helper()
	method := q.method
	if method == "" {
		method = http.MethodGet
	}
	r := httptest.NewRequest(method, "http://"+testHost+q.path, strings.NewReader(q.body))
	r.Host = testHost
	if q.host != "" {
		r.Host = q.host
	}
	if !q.noCookie {
		v := q.cookie
		if v == "" {
			v = uiDerive(testSecret, "session")
		}
		r.AddCookie(&http.Cookie{Name: uiSessionCookie, Value: v})
	}
	if method == http.MethodPost {
		if !q.noCSRF {
			v := q.csrf
			if v == "" {
				v = uiDerive(testSecret, "csrf")
			}
			r.Header.Set("X-CSRF-Token", v)
		}
		if !q.noOrigin {
			v := q.origin
			if v == "" {
				v = "http://" + r.Host
			}
			r.Header.Set("Origin", v)
		}
		r.Header.Set("Content-Type", "application/json")
	} else if q.origin != "" {
		r.Header.Set("Origin", q.origin)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// jsonError decodes a {error} body and fails unless it has a message.
func jsonError(t *testing.T, w *httptest.ResponseRecorder) string {
	t.Helper()
	var e map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil {
		t.Fatalf("body is not JSON: %v: %s", err, w.Body)
	}
	msg, _ := e["error"].(string)
	if len(e) != 1 || msg == "" {
		t.Fatalf("body is not {error}: %s", w.Body)
	}
	return msg
}

func checkSecurityHeaders(t *testing.T, w *httptest.ResponseRecorder) {
	t.Helper()
	for k, want := range map[string]string{
		"Content-Security-Policy": "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
		"X-Frame-Options":         "DENY",
		"Cache-Control":           "no-store",
	} {
		if got := w.Header().Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if v := w.Header().Get("Access-Control-Allow-Origin"); v != "" {
		t.Errorf("CORS header set: %q", v)
	}
}

func TestPageSession(t *testing.T) {
	tests := []struct {
		name        string
		q           req
		wantStatus  int
		wantCookie  bool
		wantSession string // data-session in the served page
	}{
		{"secret link issues the cookie", req{path: "/?s=" + testSecret, noCookie: true}, http.StatusSeeOther, true, ""},
		{"wrong secret", req{path: "/?s=guess", noCookie: true}, http.StatusForbidden, false, "stale"},
		{"secret with a suffix", req{path: "/?s=" + testSecret + "x", noCookie: true}, http.StatusForbidden, false, "stale"},
		{"secret twice", req{path: "/?s=" + testSecret + "&s=" + testSecret, noCookie: true}, http.StatusForbidden, false, "stale"},
		{"no cookie shows how to sign in", req{path: "/", noCookie: true}, http.StatusOK, false, "none"},
		{"cookie of another start", req{path: "/", cookie: uiDerive("other secret", "session")}, http.StatusOK, false, "none"},
		{"valid cookie", req{path: "/"}, http.StatusOK, false, "ok"},
		{"secret link with a foreign Host", req{path: "/?s=" + testSecret, noCookie: true, host: "evil.example"}, http.StatusForbidden, false, ""},
	}
	h := newPersonHandler(newFake())
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := tc.q.do(t, h)
			checkSecurityHeaders(t, w)
			if w.Code != tc.wantStatus {
				t.Fatalf("status %d, want %d: %s", w.Code, tc.wantStatus, w.Body)
			}
			cookies := w.Result().Cookies()
			if !tc.wantCookie {
				if len(cookies) != 0 {
					t.Fatalf("cookie issued: %v", cookies)
				}
			} else {
				if len(cookies) != 1 {
					t.Fatalf("cookies %v, want one", cookies)
				}
				c := cookies[0]
				if c.Name != "fluxgit_gateway_session" || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" {
					t.Errorf("cookie %+v: want fluxgit_gateway_session, HttpOnly, SameSite=Strict, Path=/", c)
				}
				if c.Value == "" || strings.Contains(c.Value, testSecret) {
					t.Errorf("cookie value %q must be derived from the secret, not carry it", c.Value)
				}
				if loc := w.Header().Get("Location"); loc != "/" {
					t.Errorf("Location %q, want /", loc)
				}
				// The issued cookie opens the API.
				if w2 := (req{path: "/ui/api/state", cookie: c.Value}).do(t, h); w2.Code != http.StatusOK {
					t.Errorf("state with the issued cookie: %d %s", w2.Code, w2.Body)
				}
			}
			if tc.wantSession != "" {
				body := w.Body.String()
				if want := `data-session="` + tc.wantSession + `"`; !strings.Contains(body, want) {
					t.Errorf("page lacks %s", want)
				}
				if strings.Contains(body, testSecret) {
					t.Error("page contains the secret")
				}
			}
		})
	}
}

func TestPersonAPIRefusals(t *testing.T) {
	const approve = "/ui/api/proposals/p1/approve"
	tests := []struct {
		name string
		q    req
	}{
		{"state without cookie", req{path: "/ui/api/state", noCookie: true}},
		{"state with a forged cookie", req{path: "/ui/api/state", cookie: "forged"}},
		{"state with the secret as cookie", req{path: "/ui/api/state", cookie: testSecret}},
		{"state read from a foreign Origin", req{path: "/ui/api/state", origin: "http://evil.example"}},
		{"state with Host evil.example", req{path: "/ui/api/state", host: "evil.example"}},
		{"events without cookie", req{path: "/ui/api/events", noCookie: true}},
		{"approve without cookie", req{method: "POST", path: approve, body: "{}", noCookie: true}},
		{"approve without CSRF token", req{method: "POST", path: approve, body: "{}", noCSRF: true}},
		{"approve with a wrong CSRF token", req{method: "POST", path: approve, body: "{}", csrf: uiDerive("other secret", "csrf")}},
		{"approve with the cookie as CSRF token", req{method: "POST", path: approve, body: "{}", csrf: uiDerive(testSecret, "session")}},
		{"approve from a foreign Origin", req{method: "POST", path: approve, body: "{}", origin: "http://evil.example"}},
		{"approve from another port", req{method: "POST", path: approve, body: "{}", origin: "http://127.0.0.1:8080"}},
		{"approve from an https Origin", req{method: "POST", path: approve, body: "{}", origin: "https://" + testHost}},
		{"approve from Origin null", req{method: "POST", path: approve, body: "{}", origin: "null"}},
		{"approve without Origin", req{method: "POST", path: approve, body: "{}", noOrigin: true}},
		{"approve with Host evil.example", req{method: "POST", path: approve, body: "{}", host: "evil.example"}},
		{"reject with a wrong CSRF token", req{method: "POST", path: "/ui/api/proposals/p1/reject", body: `{"reason":"x"}`, csrf: "x"}},
		{"reconcile without Origin", req{method: "POST", path: "/ui/api/proposals/p1/reconcile", body: `{"as":"failed"}`, noOrigin: true}},
		{"undo without cookie", req{method: "POST", path: "/ui/api/undo", body: `{"repoPath":"/r"}`, noCookie: true}},
		{"undo from a foreign Origin", req{method: "POST", path: "/ui/api/undo", body: `{"repoPath":"/r"}`, origin: "http://evil.example"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			h := newPersonHandler(f)
			w := tc.q.do(t, h)
			if w.Code != http.StatusForbidden {
				t.Fatalf("status %d, want 403: %s", w.Code, w.Body)
			}
			jsonError(t, w)
			checkSecurityHeaders(t, w)
			if c := f.Calls(); len(c) != 0 {
				t.Errorf("lifecycle called despite the refusal: %+v", c)
			}
			if strings.Contains(w.Body.String(), uiDerive(testSecret, "csrf")) {
				t.Error("refusal leaks the CSRF token")
			}
		})
	}
}

func TestPersonAPIPassesArguments(t *testing.T) {
	tests := []struct {
		name       string
		path, body string
		wantStatus int
		want       []call
		wantBody   map[string]any // fields the response must carry
	}{
		{
			name: "approve with confirmations", path: "/ui/api/proposals/p1/approve",
			body:       `{"typedBranch":"main","steps":[0,2],"forcePush":true}`,
			wantStatus: 200,
			want: []call{{Method: "Decide", ID: "p1", Decision: Decision{Approve: true, By: "page",
				Confirm: execute.Confirmations{TypedBranch: "main", Steps: []int{0, 2}, ForcePush: true}}}},
			wantBody: map[string]any{"previewId": "p1", "status": "approved"},
		},
		{
			name: "approve without confirmations", path: "/ui/api/proposals/p1/approve", body: ``,
			wantStatus: 200, want: []call{{Method: "Decide", ID: "p1", Decision: Decision{Approve: true, By: "page"}}},
		},
		{
			name: "reject", path: "/ui/api/proposals/p2/reject", body: `{"reason":"  not on a Friday  "}`,
			wantStatus: 200, want: []call{{Method: "Decide", ID: "p2", Decision: Decision{Reason: "not on a Friday", By: "page"}}},
			wantBody: map[string]any{"status": "rejected", "rejectionReason": "not on a Friday"},
		},
		{
			name: "reconcile completed", path: "/ui/api/proposals/p3/reconcile", body: `{"as":"completed","note":"merge commit is there"}`,
			wantStatus: 200, want: []call{{Method: "Reconcile", ID: "p3", As: journal.Completed, Note: "merge commit is there", By: "page"}},
			wantBody: map[string]any{"status": "completed"},
		},
		{
			name: "reconcile failed without note", path: "/ui/api/proposals/p3/reconcile", body: `{"as":"failed"}`,
			wantStatus: 200, want: []call{{Method: "Reconcile", ID: "p3", As: journal.Failed, By: "page"}},
		},
		{
			name: "undo", path: "/ui/api/undo", body: `{"repoPath":"/home/me/repo"}`,
			wantStatus: 200, want: []call{{Method: "Undo", RepoPath: "/home/me/repo", By: "page"}},
			wantBody: map[string]any{"repoPath": "/home/me/repo", "repoId": "repo-0123abcd", "before": "b1", "after": "a1", "branch": "refs/heads/main"},
		},
		{name: "reject with a blank reason", path: "/ui/api/proposals/p2/reject", body: `{"reason":"   "}`, wantStatus: 400},
		{name: "reject without a body", path: "/ui/api/proposals/p2/reject", body: ``, wantStatus: 400},
		{name: "reject with a reason too long", path: "/ui/api/proposals/p2/reject", body: `{"reason":"` + strings.Repeat("x", 4097) + `"}`, wantStatus: 400},
		{name: "approve with an unknown key", path: "/ui/api/proposals/p1/approve", body: `{"typedbranch":"main"}`, wantStatus: 400},
		{name: "approve with a step out of range", path: "/ui/api/proposals/p1/approve", body: `{"steps":[10]}`, wantStatus: 400},
		{name: "approve with an array body", path: "/ui/api/proposals/p1/approve", body: `[]`, wantStatus: 400},
		{name: "approve with two objects", path: "/ui/api/proposals/p1/approve", body: `{}{}`, wantStatus: 400},
		{name: "approve with an oversized body", path: "/ui/api/proposals/p1/approve", body: `{"typedBranch":"` + strings.Repeat("x", 70000) + `"}`, wantStatus: 413},
		{name: "reconcile as something else", path: "/ui/api/proposals/p3/reconcile", body: `{"as":"executing"}`, wantStatus: 400},
		{name: "undo with a relative path", path: "/ui/api/undo", body: `{"repoPath":"repo"}`, wantStatus: 400},
		{name: "an id that cannot be a previewId", path: "/ui/api/proposals/p.1/approve", body: `{}`, wantStatus: 404},
		{name: "an unknown action", path: "/ui/api/proposals/p1/execute", body: `{}`, wantStatus: 404},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			w := req{method: "POST", path: tc.path, body: tc.body}.do(t, newPersonHandler(f))
			if w.Code != tc.wantStatus {
				t.Fatalf("status %d, want %d: %s", w.Code, tc.wantStatus, w.Body)
			}
			if got := f.Calls(); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("lifecycle calls\n got %+v\nwant %+v", got, tc.want)
			}
			if tc.wantStatus != 200 {
				jsonError(t, w)
				return
			}
			var body map[string]any
			if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.wantBody {
				if body[k] != v {
					t.Errorf("response %s = %v, want %v", k, body[k], v)
				}
			}
		})
	}
}

func TestPersonAPILifecycleErrors(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"unknown proposal", journal.ErrNotFound, http.StatusNotFound},
		{"wrapped unknown proposal", fmt.Errorf("deciding: %w", journal.ErrNotFound), http.StatusNotFound},
		{"already decided", &journal.StateError{ID: "p1", Current: journal.Rejected, Wanted: []journal.Status{journal.Pending}}, http.StatusConflict},
		{"wrapped state error", fmt.Errorf("approve: %w", &journal.StateError{ID: "p1", Current: journal.Expired}), http.StatusConflict},
		{"missing confirmation", &DecisionError{Msg: "type the branch name main to approve a hard reset"}, http.StatusUnprocessableEntity},
		{"the gateway's own failure", errors.New("journal: disk I/O error"), http.StatusInternalServerError},
	}
	paths := map[string]string{
		"/ui/api/proposals/p1/approve":   `{}`,
		"/ui/api/proposals/p1/reject":    `{"reason":"no"}`,
		"/ui/api/proposals/p1/reconcile": `{"as":"failed"}`,
		"/ui/api/undo":                   `{"repoPath":"/r"}`,
	}
	for _, tc := range tests {
		for path, body := range paths {
			t.Run(tc.name+" "+path, func(t *testing.T) {
				f := newFake()
				f.err = tc.err
				w := req{method: "POST", path: path, body: body}.do(t, newPersonHandler(f))
				if w.Code != tc.want {
					t.Fatalf("status %d, want %d: %s", w.Code, tc.want, w.Body)
				}
				if msg := jsonError(t, w); msg != tc.err.Error() {
					t.Errorf("error %q, want the lifecycle's %q", msg, tc.err.Error())
				}
			})
		}
	}
}

// stateFixture is a journal with every kind of row the page shows.
func stateFixture(now time.Time) []journal.Proposal {
	rev := func(r execute.Review) json.RawMessage { b, _ := json.Marshal(r); return b }
	bind := func(refs map[string]string) json.RawMessage {
		b, _ := json.Marshal(execute.Binding{RepoPath: "/r", Refs: refs})
		return b
	}
	bigPatch := "diff --git a/f b/f\n" + strings.Repeat("+é line\n", 40000) // ~360 KB
	return []journal.Proposal{
		{ID: "later", Status: journal.Pending, OperationType: "merge", AgentID: "claude-code", RepoPath: "/r", Reason: "ship it",
			ExpiresAt: now.Add(4 * time.Minute), CreatedAt: now, UpdatedAt: now,
			Body:    json.RawMessage(`{"operationType":"merge","sourceRef":"feature","targetRef":"main","strategy":"merge"}`),
			Binding: bind(map[string]string{"main": "aaaa", "feature": "bbbb"}),
			Review:  rev(execute.Review{Summary: "Merge feature into main", Merge: &execute.MergeReview{Source: "feature", Target: "main", Commits: 2}})},
		{ID: "sooner", Status: journal.Pending, OperationType: "patch", AgentID: "codex", RepoPath: "/r", Reason: "<script>alert(1)</script>",
			ExpiresAt: now.Add(time.Minute), CreatedAt: now, UpdatedAt: now,
			Body:   json.RawMessage(`{"operationType":"patch","applyToIndex":false,"patchContent":` + mustJSON(bigPatch) + `}`),
			Review: rev(execute.Review{Summary: "Apply a patch", Requires: execute.Requires{}})},
		{ID: "running", Status: journal.Executing, OperationType: "reset", AgentID: "codex", RepoPath: "/r", Reason: "r",
			ExpiresAt: now, CreatedAt: now, UpdatedAt: now},
		{ID: "interrupted", Status: journal.Executing, NeedsReconciliation: true, OperationType: "rebase", AgentID: "codex", RepoPath: "/r", Reason: "r",
			ExpiresAt: now, CreatedAt: now, UpdatedAt: now},
		{ID: "done", Status: journal.Completed, OperationType: "merge", AgentID: "claude-code", RepoPath: "/r", Reason: "r",
			ExpiresAt: now, CreatedAt: now, UpdatedAt: now, DecidedBy: "page", DecidedAt: now,
			Body:   json.RawMessage(`{"operationType":"merge"}`),
			Result: json.RawMessage(`{"status":"completed","message":"merged","mergeCommit":"cccc"}`)},
		{ID: "no", Status: journal.Rejected, OperationType: "reset", AgentID: "codex", RepoPath: "/r", Reason: "r",
			ExpiresAt: now, CreatedAt: now, UpdatedAt: now, RejectionReason: "not today", DecidedBy: "cli", DecidedAt: now},
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestStateShape(t *testing.T) {
	f := newFake()
	f.proposals = stateFixture(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	f.restore = []RestorePointView{{RepoPath: "/r", RepoID: "r-1", Operation: "merge", Before: "b", After: "a", Branch: "refs/heads/main", CanUndo: true}}
	h := newPersonHandler(f)
	w := req{path: "/ui/api/state"}.do(t, h)
	if w.Code != 200 {
		t.Fatalf("state: %d %s", w.Code, w.Body)
	}
	if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q", ct)
	}
	var st struct {
		CSRF          string           `json:"csrf"`
		Now           string           `json:"now"`
		Proposals     []map[string]any `json:"proposals"`
		History       []map[string]any `json:"history"`
		RestorePoints []map[string]any `json:"restorePoints"`
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(w.Body.Bytes(), &keys); err != nil {
		t.Fatal(err)
	}
	var got []string
	for k := range keys {
		got = append(got, k)
	}
	slices.Sort(got)
	if want := []string{"csrf", "history", "historyTotal", "now", "pendingLimit", "pendingOffset", "pendingTotal", "proposals", "restoreActions", "restorePoints", "runningTotal"}; !slices.Equal(got, want) {
		t.Errorf("state keys %v, want %v", got, want)
	}
	if err := json.Unmarshal(w.Body.Bytes(), &st); err != nil {
		t.Fatal(err)
	}

	ids := func(list []map[string]any) []string {
		var out []string
		for _, p := range list {
			out = append(out, p["previewId"].(string))
		}
		return out
	}
	if got, want := ids(st.Proposals), []string{"sooner", "later", "interrupted", "running"}; !slices.Equal(got, want) {
		t.Errorf("open proposals %v, want pending (soonest expiry first), reconciliation, running: %v", got, want)
	}
	if got, want := ids(st.History), []string{"done", "no"}; !slices.Equal(got, want) {
		t.Errorf("history %v, want %v", got, want)
	}
	if hist := f.filters[2]; hist.Limit != 100 || len(hist.Statuses) != 5 {
		t.Errorf("history filter %+v, want the 5 terminal states, limit 100", hist)
	}
	for _, fl := range f.filters {
		if !fl.WithoutBody {
			t.Errorf("the state listed proposals with their bodies: %+v", fl)
		}
	}

	later := st.Proposals[1]
	for k, want := range map[string]any{
		"operationType": "merge", "status": "pending", "risk": "medium", "agentId": "claude-code",
		"repoPath": "/r", "reason": "ship it", "expiresAt": "2026-11-30T12:04:00.000Z", "summary": "Merge feature into main",
		"needsReconciliation": false,
	} {
		if later[k] != want {
			t.Errorf("proposal %s = %#v, want %#v", k, later[k], want)
		}
	}
	if refs := mustJSON(later["refs"]); refs != `[{"commit":"bbbb","ref":"feature"},{"commit":"aaaa","ref":"main"}]` {
		t.Errorf("refs %s", refs)
	}
	if m := later["review"].(map[string]any)["merge"].(map[string]any); m["commits"] != 2.0 {
		t.Errorf("review.merge %v", m)
	}
	if b := later["body"].(map[string]any); b["sourceRef"] != "feature" {
		t.Errorf("body %v", b)
	}
	if st.Proposals[2]["needsReconciliation"] != true {
		t.Errorf("interrupted proposal not marked: %v", st.Proposals[2])
	}

	// A long patch is cut in the state, on a character boundary, and whole
	// one request away.
	sooner := st.Proposals[0]
	patch := sooner["body"].(map[string]any)["patchContent"].(string)
	if sooner["bodyTruncated"] != true || len(patch) > uiPatchPreviewChars || len(patch) < uiPatchPreviewChars-4 || !strings.HasPrefix(patch, "diff --git") {
		t.Errorf("patch preview: truncated=%v len=%d", sooner["bodyTruncated"], len(patch))
	}
	if !json.Valid([]byte(mustJSON(patch))) || strings.ContainsRune(patch, '\uFFFD') {
		t.Error("patch preview cut inside a character")
	}
	full := req{path: "/ui/api/proposals/sooner"}.do(t, h)
	var fp map[string]any
	if err := json.Unmarshal(full.Body.Bytes(), &fp); err != nil || full.Code != 200 {
		t.Fatalf("full proposal: %d %s", full.Code, full.Body)
	}
	if n := len(fp["body"].(map[string]any)["patchContent"].(string)); n <= uiPatchPreviewChars || fp["bodyTruncated"] != nil {
		t.Errorf("full proposal patch length %d, truncated %v", n, fp["bodyTruncated"])
	}
	if w := (req{path: "/ui/api/proposals/gone"}).do(t, h); w.Code != 404 {
		t.Errorf("unknown proposal: %d", w.Code)
	}

	done := st.History[0]
	if r := done["result"].(map[string]any); r["mergeCommit"] != "cccc" || r["message"] != "merged" {
		t.Errorf("history result %v", r)
	}
	if _, ok := done["body"]; ok {
		t.Error("history rows carry the body")
	}
	if st.History[1]["rejectionReason"] != "not today" || st.History[1]["decidedBy"] != "cli" {
		t.Errorf("rejected row %v", st.History[1])
	}
	if rp := mustJSON(st.RestorePoints); rp != `[{"after":"a","before":"b","branch":"refs/heads/main","canUndo":true,"depth":0,"id":"","operation":"merge","repoId":"r-1","repoPath":"/r"}]` {
		t.Errorf("restorePoints %s", rp)
	}

	// The token in the state is the one decisions need.
	if w := (req{method: "POST", path: "/ui/api/proposals/later/approve", body: `{}`, csrf: st.CSRF}).do(t, h); w.Code != 200 {
		t.Errorf("approve with the state's csrf: %d %s", w.Code, w.Body)
	}

	// Restore points that cannot be read do not hide the proposals.
	f.rpErr = errors.New("run dir unreadable")
	w = req{path: "/ui/api/state"}.do(t, h)
	if err := json.Unmarshal(w.Body.Bytes(), &keys); err != nil || w.Code != 200 {
		t.Fatalf("state with a restore point error: %d %s", w.Code, w.Body)
	}
	if string(keys["restorePointsError"]) != `"run dir unreadable"` || string(keys["restorePoints"]) != `[]` {
		t.Errorf("restorePointsError %s restorePoints %s", keys["restorePointsError"], keys["restorePoints"])
	}
}

func TestEventsStream(t *testing.T) {
	f := newFake()
	srv := httptest.NewServer(newPersonHandler(f))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	f.mu.Lock()
	f.hosts[host] = true
	f.mu.Unlock()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/ui/api/events", nil)
	r.AddCookie(&http.Cookie{Name: uiSessionCookie, Value: uiDerive(testSecret, "session")})
	res, err := srv.Client().Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("events: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	lines := bufio.NewScanner(res.Body)
	readUntil := func(prefix string) string {
		t.Helper()
		for lines.Scan() {
			if strings.HasPrefix(lines.Text(), prefix) {
				return lines.Text()
			}
		}
		t.Fatalf("stream ended before %q: %v", prefix, lines.Err())
		return ""
	}
	readUntil(": connected") // subscribed by now

	tests := []Change{{ID: "p1", Status: journal.Approved}, {ID: "p2", Status: journal.Completed}}
	for _, c := range tests {
		f.changes <- c
		if ev := readUntil("event:"); ev != "event: change" {
			t.Fatalf("event line %q", ev)
		}
		data := strings.TrimPrefix(readUntil("data:"), "data: ")
		var got struct {
			PreviewID string `json:"previewId"`
			Status    string `json:"status"`
		}
		if err := json.Unmarshal([]byte(data), &got); err != nil || got.PreviewID != c.ID || got.Status != string(c.Status) {
			t.Fatalf("data %q for %+v", data, c)
		}
	}

	// Closing the subscription (the gateway stopping) ends the stream and
	// gives the subscription back.
	close(f.changes)
	if _, err := io.Copy(io.Discard, res.Body); err != nil {
		t.Fatalf("stream did not end cleanly: %v", err)
	}
	select {
	case <-f.cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("subscription not cancelled after the stream ended")
	}
}

func TestEventsStreamEndsWithTheRequest(t *testing.T) {
	f := newFake()
	ctx, cancel := context.WithCancel(context.Background())
	r := httptest.NewRequest(http.MethodGet, "http://"+testHost+"/ui/api/events", nil).WithContext(ctx)
	r.Host = testHost
	r.AddCookie(&http.Cookie{Name: uiSessionCookie, Value: uiDerive(testSecret, "session")})
	done := make(chan struct{})
	go func() {
		defer close(done)
		newPersonHandler(f).ServeHTTP(httptest.NewRecorder(), r)
	}()
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("handler still streaming after the client went away")
	}
	select {
	case <-f.cancelled:
	default:
		t.Fatal("subscription not cancelled")
	}
}

func TestPageAssets(t *testing.T) {
	external := regexp.MustCompile(`(?i)\b(?:https?|wss?|ftp|data|javascript):|//[a-z0-9-]+\.[a-z0-9.-]+|url\(`)
	htmlRef := regexp.MustCompile(`(?i)\b(?:src|href|action)\s*=\s*"([^"]*)"`)
	unsafeJS := regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function`)
	tests := []struct {
		path, ctype string
	}{
		{"/", "text/html; charset=utf-8"},
		{"/ui/p/3f2b8c1e-5d4a-4e6f-9a7b-1c2d3e4f5a6b", "text/html; charset=utf-8"},
		{"/ui/assets/app.js", "text/javascript; charset=utf-8"},
		{"/ui/assets/app.css", "text/css; charset=utf-8"},
	}
	h := newPersonHandler(newFake())
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			// Served the same with and without a session: no data in them.
			for _, q := range []req{{path: tc.path}, {path: tc.path, noCookie: true}} {
				w := q.do(t, h)
				if w.Code != 200 || w.Header().Get("Content-Type") != tc.ctype {
					t.Fatalf("%s: %d %q", tc.path, w.Code, w.Header().Get("Content-Type"))
				}
				checkSecurityHeaders(t, w)
				body := w.Body.String()
				if m := external.FindString(body); m != "" {
					t.Errorf("%s refers outside the gateway: %q", tc.path, m)
				}
				for _, m := range htmlRef.FindAllStringSubmatch(body, -1) {
					if !strings.HasPrefix(m[1], "/ui/assets/") {
						t.Errorf("%s loads %q, not one of the gateway's own assets", tc.path, m[1])
					}
				}
				if strings.HasSuffix(tc.path, ".js") {
					if m := unsafeJS.FindString(body); m != "" {
						t.Errorf("app.js uses %s; agent text must go in with textContent", m)
					}
				}
			}
		})
	}
	if w := (req{path: "/ui/assets/secret.txt"}).do(t, h); w.Code != 404 {
		t.Errorf("unknown asset: %d", w.Code)
	}
	if w := (req{method: "POST", path: "/", body: "{}"}).do(t, h); w.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /: %d", w.Code)
	}
}

// The state pages the pending proposals instead of dropping the ones past
// a limit, says how many there are, and renders each card's preview once:
// a refresh reads no body again.
func TestStatePagesPendingAndCachesPreviews(t *testing.T) {
	f := newFake()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	const n = 120
	for i := range n {
		f.proposals = append(f.proposals, journal.Proposal{
			ID: fmt.Sprintf("p%03d", i), Status: journal.Pending, OperationType: "branch", AgentID: "a", RepoPath: "/r", Reason: "r",
			CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(time.Duration(i) * time.Second),
			Body: json.RawMessage(`{"operationType":"branch","name":"b` + fmt.Sprint(i) + `"}`),
		})
	}
	h := newPersonHandler(f)
	type page struct {
		Proposals []struct {
			PreviewID string         `json:"previewId"`
			Body      map[string]any `json:"body"`
		} `json:"proposals"`
		PendingTotal  int `json:"pendingTotal"`
		PendingOffset int `json:"pendingOffset"`
		PendingLimit  int `json:"pendingLimit"`
	}
	get := func(query string) page {
		t.Helper()
		w := req{path: "/ui/api/state" + query}.do(t, h)
		if w.Code != 200 {
			t.Fatalf("state%s: %d %s", query, w.Code, w.Body)
		}
		var p page
		if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		query       string
		first, last string
		count, off  int
	}{
		{"", "p000", "p049", 50, 0},
		{"?pendingOffset=50", "p050", "p099", 50, 50},
		{"?pendingOffset=110", "p110", "p119", 10, 110},
		{"?pendingOffset=500", "p100", "p119", 20, 100}, // past the end: the last page
	} {
		p := get(tc.query)
		if len(p.Proposals) != tc.count || p.PendingTotal != n || p.PendingOffset != tc.off || p.PendingLimit != uiPendingPage ||
			p.Proposals[0].PreviewID != tc.first || p.Proposals[len(p.Proposals)-1].PreviewID != tc.last {
			t.Errorf("state%s: %d cards %s…, total %d, offset %d; want %d cards %s…%s of %d from %d", tc.query, len(p.Proposals),
				p.Proposals[0].PreviewID, p.PendingTotal, p.PendingOffset, tc.count, tc.first, tc.last, n, tc.off)
		}
		if p.Proposals[0].Body["name"] == nil {
			t.Errorf("state%s: a card without its body: %+v", tc.query, p.Proposals[0])
		}
	}
	if w := (req{path: "/ui/api/state?pendingOffset=-1"}).do(t, h); w.Code != 400 || !strings.Contains(jsonError(t, w), "pendingOffset") {
		t.Errorf("negative offset: %d %s", w.Code, w.Body)
	}
	// Every card was rendered from its whole row once, however often the
	// page refreshed.
	get("")
	get("")
	seen := map[string]int{}
	for _, id := range f.gets {
		seen[id]++
	}
	for id, k := range seen {
		if k != 1 {
			t.Errorf("proposal %s was read whole %d times; its preview must be rendered once", id, k)
		}
	}
	if len(seen) != n {
		t.Errorf("%d previews rendered, want %d", len(seen), n)
	}
}

func TestPreviewCacheEvictsOldest(t *testing.T) {
	c := newPreviewCache(2)
	for _, k := range []string{"a", "b", "c"} {
		c.put(k, preview{summary: k})
	}
	if _, ok := c.get("a"); ok {
		t.Error("the oldest entry stayed past the bound")
	}
	for _, k := range []string{"b", "c"} {
		if pv, ok := c.get(k); !ok || pv.summary != k {
			t.Errorf("entry %s: %+v %v", k, pv, ok)
		}
	}
}

// Every element the script looks up by id is in the page, so a renamed id
// cannot leave, say, the pager that reaches older pending proposals dead.
func TestPageScriptFindsItsElements(t *testing.T) {
	js, err := pageFiles.ReadFile("page/app.js")
	if err != nil {
		t.Fatal(err)
	}
	html, err := pageFiles.ReadFile("page/index.html")
	if err != nil {
		t.Fatal(err)
	}
	ids := regexp.MustCompile(`\$\('([a-z-]+)'\)`).FindAllStringSubmatch(string(js), -1)
	if len(ids) == 0 {
		t.Fatal("no $('id') lookups found in app.js")
	}
	for _, m := range ids {
		if !strings.Contains(string(html), `id="`+m[1]+`"`) {
			t.Errorf("app.js looks up #%s, which index.html lacks", m[1])
		}
	}
	for _, want := range []string{"pending-pager", "pending-next", "pending-prev", "pending-shown", "running-more", "history-more"} {
		if !strings.Contains(string(js), "'"+want+"'") {
			t.Errorf("app.js does not use #%s", want)
		}
	}
	if !strings.Contains(string(js), "pendingOffset=") {
		t.Error("app.js never asks the state for another page of pending proposals")
	}
}
