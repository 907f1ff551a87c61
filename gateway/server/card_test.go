package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fluxgit/fluxgit/gateway/journal"
	"github.com/fluxgit/fluxgit/internal/operation"
)

// The card page (operation.CardPath) is the approval page told which
// card to show; its secret link lands back on it, and only its API call,
// behind the session, carries the proposal.
func TestCardPage(t *testing.T) {
	const id = "3f2b8c1e-5d4a-4e6f-9a7b-1c2d3e4f5a6b"
	f := newFake()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	f.proposals = []journal.Proposal{{ID: id, Status: journal.Rejected, OperationType: "merge", AgentID: "a", RepoPath: "/r",
		Reason: "a reason only the session may read", RejectionReason: "not now", CreatedAt: now, UpdatedAt: now, ExpiresAt: now,
		Body: json.RawMessage(`{"operationType":"merge","sourceRef":"feature","targetRef":"main"}`)}}
	h := newPersonHandler(f)
	path := operation.CardPath + id

	pages := []struct {
		name    string
		q       req
		code    int
		session string
	}{
		{"with a session", req{path: path}, http.StatusOK, "ok"},
		{"without", req{path: path, noCookie: true}, http.StatusOK, "none"},
		{"stale link", req{path: path + "?s=an-old-secret", noCookie: true}, http.StatusForbidden, "stale"},
	}
	for _, tc := range pages {
		t.Run(tc.name, func(t *testing.T) {
			w := tc.q.do(t, h)
			body := w.Body.String()
			if w.Code != tc.code || !strings.Contains(body, `data-session="`+tc.session+`" data-card="`+id+`"`) {
				t.Fatalf("%d, want %d with session %s and card %s:\n%.300s", w.Code, tc.code, tc.session, id, body)
			}
			if strings.Contains(body, "a reason only the session may read") {
				t.Fatal("the page itself carries proposal data")
			}
			checkSecurityHeaders(t, w)
		})
	}

	w := req{path: path + "?s=" + testSecret, noCookie: true}.do(t, h)
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != path || !strings.Contains(w.Header().Get("Set-Cookie"), uiSessionCookie+"=") {
		t.Fatalf("the card's secret link: %d Location %q Set-Cookie %q", w.Code, w.Header().Get("Location"), w.Header().Get("Set-Cookie"))
	}
	if w := (req{path: "/", noCookie: true}).do(t, h); !strings.Contains(w.Body.String(), `data-card=""`) {
		t.Fatal("the main page names a card")
	}
	for _, bad := range []string{operation.CardPath, operation.CardPath + "a/b", operation.CardPath + strings.Repeat("x", 129)} {
		if w := (req{path: bad}).do(t, h); w.Code != http.StatusNotFound {
			t.Fatalf("GET %s: %d, want 404", bad, w.Code)
		}
	}

	api := "/ui/api/card/" + id
	if w := (req{path: api, noCookie: true}).do(t, h); w.Code != http.StatusForbidden || strings.Contains(w.Body.String(), "not now") {
		t.Fatalf("card API without a session: %d %s", w.Code, w.Body)
	}
	w = req{path: api}.do(t, h)
	var got struct {
		CSRF string `json:"csrf"`
		Card struct {
			PreviewID       string `json:"previewId"`
			Status          string `json:"status"`
			RejectionReason string `json:"rejectionReason"`
		} `json:"card"`
	}
	if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &got) != nil || got.CSRF != uiDerive(testSecret, "csrf") ||
		got.Card.PreviewID != id || got.Card.Status != "rejected" || got.Card.RejectionReason != "not now" {
		t.Fatalf("card API: %d %s", w.Code, w.Body)
	}
	if w := (req{path: "/ui/api/card/no-such-id"}).do(t, h); w.Code != http.StatusNotFound {
		t.Fatalf("card API for an unknown id: %d", w.Code)
	}
}
