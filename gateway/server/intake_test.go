package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/fluxgit/fluxgit/gateway/journal"
)

// A flood is bounded per agent and in total (agent ids are self-declared,
// so rotating them does not help); each refusal is a 429 whose text names
// the limit and what to do; a replay is still answered; a withdrawn
// proposal frees its place.
func TestIntakeQuota(t *testing.T) {
	repo := newRepo(t)
	g := start(t, "", func(c *Config) { c.MaxPendingPerAgent = 2; c.MaxPending = 3 })
	first := branchBody(repo, "agent-a", "k1", "b1")
	id := g.propose(first)
	g.propose(branchBody(repo, "agent-a", "k2", "b2"))
	for _, tc := range []struct {
		name, agent, want string
	}{
		{"per agent", "agent-a", "agent agent-a already has 2 pending proposals, the gateway's limit per agent (2)"},
		{"total", "agent-b", ""}, // takes the last place
		{"rotated name", "agent-c", "the gateway already holds 3 pending proposals, its limit for all agents together (3)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := g.post(previewPrefix+"branch", branchBody(repo, tc.agent, "k3", "b3"))
			if tc.want == "" {
				if r.status != http.StatusAccepted {
					t.Fatalf("%d %s", r.status, r.raw)
				}
				return
			}
			if r.status != http.StatusTooManyRequests || !strings.Contains(r.errText(), tc.want) || !strings.Contains(r.errText(), "operation.cancel") {
				t.Fatalf("%d %s; want 429 saying %q and what to do", r.status, r.raw, tc.want)
			}
		})
	}
	if r := g.post(previewPrefix+"branch", first); r.status != http.StatusOK || r.body["previewId"] != id {
		t.Fatalf("a replay when full: %d %s", r.status, r.raw)
	}
	if r := g.post(cancelPrefix+id, map[string]any{"agentId": "agent-a"}); r.status != http.StatusOK {
		t.Fatalf("cancel: %d %s", r.status, r.raw)
	}
	g.propose(branchBody(repo, "agent-c", "k4", "b4"))
	if n, _ := g.s.Count(pendingFilter()); n != 3 {
		t.Fatalf("%d pending, want 3", n)
	}
}

func TestIntakeQuotaBytes(t *testing.T) {
	repo := newRepo(t)
	g := start(t, "", func(c *Config) { c.MaxStoredBytesPerAgent = 6000; c.MaxStoredBytes = 9000 })
	big := func(agent, key string) map[string]any {
		b := branchBody(repo, agent, key, "b-"+key)
		b["reason"] = strings.Repeat("r", 4000)
		return b
	}
	g.propose(big("agent-a", "k1"))
	r := g.post(previewPrefix+"branch", big("agent-a", "k2"))
	if r.status != http.StatusTooManyRequests || !strings.Contains(r.errText(), "limit per agent (6000 bytes)") {
		t.Fatalf("bytes per agent: %d %s", r.status, r.raw)
	}
	g.propose(big("agent-b", "k3"))
	r = g.post(previewPrefix+"branch", big("agent-c", "k4"))
	if r.status != http.StatusTooManyRequests || !strings.Contains(r.errText(), "limit for all agents together (9000 bytes)") {
		t.Fatalf("bytes total: %d %s", r.status, r.raw)
	}
}

// The CLI list is paged, carries no bodies, and says how many there are.
func TestCLIListPages(t *testing.T) {
	repo := newRepo(t)
	g := start(t, "", nil)
	var ids []string
	for i := range 5 {
		ids = append(ids, g.propose(branchBody(repo, "agent-a", fmt.Sprint("k", i), fmt.Sprint("b", i))))
	}
	c := g.client()
	ctx := context.Background()
	page, err := c.ListPage(ctx, ListOptions{Limit: 2, Offset: 1})
	if err != nil {
		t.Fatal(err)
	}
	if page.Total != 5 || page.Offset != 1 || page.Limit != 2 || len(page.Proposals) != 2 ||
		page.Proposals[0].PreviewID != ids[3] || page.Proposals[1].PreviewID != ids[2] {
		t.Fatalf("page %+v", page)
	}
	for _, v := range page.Proposals {
		if v.Body != nil || v.Review != nil || v.Binding != nil || v.Reason == "" {
			t.Fatalf("a listed view carries its body or lost its fields: %+v", v)
		}
	}
	all, err := c.List(ctx, "pending")
	if err != nil || len(all) != 5 {
		t.Fatalf("all pages: %d %v", len(all), err)
	}
	for _, q := range []string{"limit=0", "limit=1001", "offset=-1", "status=done"} {
		r := g.req(http.MethodGet, cliPrefix+"proposals?"+q, nil, map[string]string{"Authorization": "Bearer " + g.s.Secret()})
		if r.status != http.StatusBadRequest || r.errText() == "" {
			t.Errorf("%s: %d %s", q, r.status, r.raw)
		}
	}
}

// A reply over the client's cap is reported as such, not as the JSON error
// of a reply cut inside a \u escape.
func TestClientReportsOversizedReply(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	escaped := strings.Repeat(`\u003c`, (maxReply+4096)/6)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"proposals":[{"previewId":"p","body":{"patchContent":"`+escaped+`"}}],"total":1}`)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	c := &Client{Addr: ln.Addr().String(), Secret: "x"}
	_, err = c.ListPage(context.Background(), ListOptions{})
	if err == nil || !strings.Contains(err.Error(), "larger than 64 MiB") || strings.Contains(err.Error(), "hexadecimal") {
		t.Fatalf("oversized reply: %v", err)
	}
	var ae *APIError
	if errors.As(err, &ae) {
		t.Fatalf("an oversized reply is not a refusal: %v", err)
	}
}

func pendingFilter() journal.Filter {
	return journal.Filter{Statuses: []journal.Status{journal.Pending}}
}
