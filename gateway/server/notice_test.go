package server

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fluxgit/fluxgit/gateway/journal"
)

// The notice line names the proposal and how to approve it, every
// agent-chosen field loses its control characters and its length, and a
// failure's message loses URL credentials.
func TestNoticeLine(t *testing.T) {
	long := strings.Repeat("x", 5000)
	cases := []struct {
		name    string
		v       View
		want    []string
		notWant []string
	}{
		{"arrival", View{PreviewID: "p1", OperationType: "merge", RepoPath: "/r/shop", AgentID: "claude", Status: journal.Pending},
			[]string{"proposal p1 merge /r/shop from claude — approve: fluxgit gateway approve p1"}, nil},
		{"arrival with confirmations", View{PreviewID: "p2", OperationType: "reset", RepoPath: "/r", AgentID: "a", Status: journal.Pending,
			Review: json.RawMessage(`{"requires":{"typeBranch":"main","forcePush":true,"destructiveSteps":[2,0]}}`)},
			[]string{"fluxgit gateway approve p2 --confirm-branch main --force-push --steps 0,2"}, nil},
		{"escape sequences", View{PreviewID: "p3", OperationType: "commit", RepoPath: "/r/\x1b[2J\x1b]0;pwned\x07", AgentID: "evil\x1b[31m\r\nfake line\u202e", Status: journal.Pending},
			[]string{"from evil\uFFFD[31m fake line\uFFFD"}, []string{"\x1b", "\x07", "\r", "\n", "\u202e"}},
		{"bounded", View{PreviewID: "p4", OperationType: "commit", RepoPath: "/" + long, AgentID: long, Status: journal.Pending},
			[]string{"proposal p4 commit /xxx", "…"}, nil},
		{"approved on the page", View{PreviewID: "p5", OperationType: "merge", RepoPath: "/r", Status: journal.Approved, DecidedBy: "page"},
			[]string{"approved p5 merge /r by a person on the approval page"}, nil},
		{"rejected in the terminal", View{PreviewID: "p6", OperationType: "merge", RepoPath: "/r", Status: journal.Rejected, DecidedBy: "cli", RejectionReason: "not\nnow"},
			[]string{"rejected p6 merge /r by a person in the terminal: not now"}, nil},
		{"expired", View{PreviewID: "p7", OperationType: "push", RepoPath: "/r", Status: journal.Expired, ExpiresAt: "2026-01-01T00:00:00.000Z"},
			[]string{"expired p7 push /r: nobody decided before 2026-01-01T00:00:00.000Z"}, nil},
		{"executed", View{PreviewID: "p8", OperationType: "merge", RepoPath: "/r", Status: journal.Completed, Result: json.RawMessage(`{"mergeCommit":"0123456789abcdef0123"}`)},
			[]string{"executed p8 merge /r → 0123456789ab"}, []string{"cdef0123"}},
		{"failed", View{PreviewID: "p9", OperationType: "push", RepoPath: "/r", Status: journal.Failed, Result: json.RawMessage(`{"message":"git push https://bob:hunter2@example.com/x.git refused"}`)},
			[]string{"failed p9 push /r: git push https://***@example.com/x.git refused"}, []string{"hunter2", "bob"}},
		{"cancelled", View{PreviewID: "pa", OperationType: "branch", RepoPath: "/r", Status: journal.Cancelled},
			[]string{"cancelled pa branch /r by the agent"}, nil},
		{"interrupted", View{PreviewID: "pb", OperationType: "merge", RepoPath: "/r", Status: journal.Executing, ReconciliationRequired: true},
			[]string{"interrupted pb merge /r", "fluxgit gateway reconcile pb"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := NoticeLine(c.v)
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("line %q lacks %q", got, w)
				}
			}
			for _, w := range c.notWant {
				if strings.Contains(got, w) {
					t.Errorf("line %q holds %q", got, w)
				}
			}
			if n := utf8.RuneCountInString(got); n > noticeLineRunes {
				t.Errorf("line is %d runes, over %d", n, noticeLineRunes)
			}
		})
	}
	if got := NoticeLine(View{PreviewID: "x", Status: journal.Executing}); got != "" {
		t.Errorf("an ordinary execution start gets a line: %q", got)
	}
}

// A running gateway writes one line on Notices when a proposal arrives
// and one per decision and outcome, and none carries the secret.
func TestGatewayNoticesOnItsTerminal(t *testing.T) {
	notices := &syncBuffer{}
	g := start(t, "", func(c *Config) { c.Notices = notices })
	repo := newRepo(t)
	id := g.propose(branchBody(repo, "agent-1", "k1", "topic"))
	waitFor(t, "the arrival line", func() bool {
		return strings.Contains(notices.String(), "proposal "+id+" branch "+repo+" from agent-1 — approve: fluxgit gateway approve "+id+"\n")
	})
	if _, err := g.s.Decide(context.Background(), id, Decision{Approve: true, By: "cli"}); err != nil {
		t.Fatal(err)
	}
	g.waitStatus(id, journal.Completed)
	waitFor(t, "the decision and outcome lines", func() bool {
		s := notices.String()
		return strings.Contains(s, "approved "+id+" branch "+repo+" by a person in the terminal\n") &&
			strings.Contains(s, "executed "+id+" branch "+repo)
	})
	id2 := g.propose(branchBody(repo, "agent-1", "k2", "other"))
	if _, err := g.s.Decide(context.Background(), id2, Decision{Reason: "no thanks", By: "page"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the rejection line", func() bool {
		return strings.Contains(notices.String(), "rejected "+id2+" branch "+repo+" by a person on the approval page: no thanks\n")
	})
	if s := notices.String(); strings.Contains(s, g.s.Secret()) || strings.Count(s, "\n") != 5 {
		t.Fatalf("want exactly five lines and no secret:\n%s", s)
	}
}
