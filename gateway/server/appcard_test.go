package server

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fluxgit/fluxgit/gateway/execute"
)

// TestCardViewIsTheReviewWithoutDiffs: the agent API's card view of a real
// commit proposal carries the operation, its risk, the bound refs and the
// review's sections (files with line counts) exactly as stored, but no
// diff text; bad requests are refused with a reason.
func TestCardViewIsTheReviewWithoutDiffs(t *testing.T) {
	g := start(t, "", nil)
	repo := newRepo(t)
	if err := os.WriteFile(filepath.Join(repo, "a.txt"), []byte("one\nthe line on the card\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	id := g.propose(body("commit", repo, "agent-a", "k1", map[string]any{"message": "m", "paths": []string{"a.txt"}, "stageAll": false}))
	r := g.req(http.MethodGet, cardPrefix+id, nil, nil)
	if r.status != http.StatusOK {
		t.Fatalf("card: HTTP %d %s", r.status, r.raw)
	}
	if strings.Contains(string(r.raw), "the line on the card") {
		t.Fatalf("the card view carries a diff: %s", r.raw)
	}
	var v cardView
	if err := json.Unmarshal(r.raw, &v); err != nil {
		t.Fatal(err)
	}
	p, err := g.s.Get(id)
	if err != nil {
		t.Fatal(err)
	}
	var rv execute.Review
	if err := json.Unmarshal(p.Review, &rv); err != nil {
		t.Fatal(err)
	}
	if v.OperationType != "commit" || v.Risk != "low" || v.Status != "pending" || v.Summary != rv.Summary || v.AgentID != "agent-a" {
		t.Errorf("card header %+v, want a pending low-risk commit with the review's summary %q", v, rv.Summary)
	}
	if len(v.Sections) != len(rv.Sections) || len(v.Sections) == 0 {
		t.Fatalf("card has %d sections, the review %d", len(v.Sections), len(rv.Sections))
	}
	s, want := v.Sections[0], rv.Sections[0]
	if s.Title != want.Title || s.FilesTotal != want.FilesTotal || s.Insertions != want.Insertions || len(s.Files) != 1 || s.Files[0].Path != "a.txt" || s.Files[0].Insertions != want.Files[0].Insertions {
		t.Errorf("card section %+v, review section %+v", s, want)
	}
	if len(v.Facts) != len(rv.Facts) {
		t.Errorf("card facts %v, review facts %v", v.Facts, rv.Facts)
	}
	for _, tc := range []struct {
		method, path string
		code         int
		want         string
	}{
		{http.MethodGet, cardPrefix + "no-such-proposal", http.StatusNotFound, "no proposal has previewId"},
		{http.MethodGet, cardPrefix + "a%2Fb", http.StatusBadRequest, "previewId in the path"},
		{http.MethodPost, cardPrefix + id, http.StatusMethodNotAllowed, "needs GET"},
	} {
		r := g.req(tc.method, tc.path, nil, nil)
		if r.status != tc.code || !strings.Contains(r.errText(), tc.want) {
			t.Errorf("%s %s: HTTP %d %q, want %d %q", tc.method, tc.path, r.status, r.errText(), tc.code, tc.want)
		}
	}
	if r := g.req(http.MethodGet, cardPrefix+id, nil, map[string]string{"Origin": "http://evil.example"}); r.status != http.StatusForbidden {
		t.Errorf("a card request from a web page: HTTP %d, want 403", r.status)
	}
}

func TestClip(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{{"short", 10, "short"}, {"ééééé", 3, "ééé…"}, {"", 1, ""}} {
		if got := clip(tc.in, tc.n); got != tc.want {
			t.Errorf("clip(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}
