package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fluxgit/fluxgit/gateway/execute"
	"github.com/fluxgit/fluxgit/gateway/journal"
)

// TestReviewReachesEverySurface runs a commit proposal through a real
// gateway on a real repository: the agent's status carries the bounded
// brief and no diff, the page's API expands one file's diff only with the
// person's session, the plain text of `gateway show` holds the changed
// line, and a file changed after the card was shown fails the commit
// with a reason the agent and the person both read.
func TestReviewReachesEverySurface(t *testing.T) {
	g := start(t, "", nil)
	repo := newRepo(t)
	if err := os.WriteFile(filepath.Join(repo, "a.txt"), []byte("one\nthe line on the card\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	id := g.propose(body("commit", repo, "agent-a", "k1", map[string]any{"message": "m", "paths": []string{"a.txt"}, "stageAll": false}))

	st := g.status(id)
	rv, _ := json.Marshal(st.body["review"])
	if !strings.Contains(string(rv), `"names":["a.txt"]`) || strings.Contains(string(st.raw), "the line on the card") {
		t.Fatalf("status review brief %s (whole reply %s)", rv, st.raw)
	}

	p, err := g.s.Get(id)
	if err != nil {
		t.Fatal(err)
	}
	var review execute.Review
	if err := json.Unmarshal(p.Review, &review); err != nil {
		t.Fatal(err)
	}
	if text := ReviewText(review); !strings.Contains(text, "+the line on the card") || !strings.Contains(text, "Target branch: main") {
		t.Fatalf("show text lacks the changed line:\n%s", text)
	}

	diffURL := "/ui/api/proposals/" + id + "/diff?section=0&path=" + url.QueryEscape("a.txt")
	cookie := map[string]string{"Cookie": uiSessionCookie + "=" + uiDerive(g.s.Secret(), "session")}
	for _, tc := range []struct {
		name    string
		path    string
		headers map[string]string
		code    int
		want    string
	}{
		{"the person's session", diffURL, cookie, http.StatusOK, "+the line on the card"},
		{"no session", diffURL, nil, http.StatusForbidden, "no valid session"},
		{"no such section", strings.Replace(diffURL, "section=0", "section=7", 1), cookie, http.StatusUnprocessableEntity, "section 7 does not exist"},
		{"no section at all", "/ui/api/proposals/" + id + "/diff?path=a.txt", cookie, http.StatusBadRequest, "section="},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := g.req(http.MethodGet, tc.path, nil, tc.headers)
			if r.status != tc.code || !strings.Contains(string(r.raw), tc.want) {
				t.Fatalf("%d %s; want %d with %q", r.status, r.raw, tc.code, tc.want)
			}
		})
	}

	if err := os.WriteFile(filepath.Join(repo, "a.txt"), []byte("one\nchanged after the card\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := g.s.Decide(context.Background(), id, Decision{Approve: true, By: "cli"}); err != nil {
		t.Fatal(err)
	}
	end := g.waitStatus(id, journal.Failed)
	msg, _ := end.body["result"].(map[string]any)["message"].(string)
	if !strings.Contains(msg, "the content to commit changed since the proposal was shown") || !strings.Contains(msg, "a.txt") {
		t.Fatalf("failure reason %q", msg)
	}
	if got := git(t, repo, "log", "--format=%s"); got != "change a.txt" {
		t.Fatalf("something was committed: %s", got)
	}
}

// TestReviewTextIsInert: what the agent or the repository wrote cannot
// steer the terminal that prints `gateway show`: escape sequences and
// bidirectional overrides in subjects, paths and diff lines are replaced;
// the bounds' "more" counts are printed.
func TestReviewTextIsInert(t *testing.T) {
	rv := execute.Review{Summary: "s\x1b[2J", Sections: []execute.Section{{
		Title: "Commits", Kind: "leaving", CommitsTotal: 25,
		Commits: []execute.ReviewCommit{{Oid: strings.Repeat("a", 40), Subject: "evil\x1b]0;title\x07 \u202eevil"}},
	}, {
		Title: "Files", Kind: "discarded", FilesTotal: 60, Files: []execute.FileChange{{Path: "p\x1b.txt", Status: "M", Diff: "+line\u202e\x1b[31m\n"}},
	}}}
	text := ReviewText(rv)
	for _, bad := range []string{"\x1b", "\x07", "\u202e"} {
		if strings.Contains(text, bad) {
			t.Errorf("the text holds %q:\n%q", bad, text)
		}
	}
	for _, want := range []string{"… 24 more commit(s)", "… 59 more file(s)", "+line", "p\uFFFD.txt"} {
		if !strings.Contains(text, want) {
			t.Errorf("the text lacks %q:\n%s", want, text)
		}
	}
}
