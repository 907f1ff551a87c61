package journal

import (
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// agentProposal is proposal(n) from agent with a body of about size bytes.
func agentProposal(n int, agent string, size int) Proposal {
	p := proposal(n)
	p.AgentID = agent
	if size > len(p.Body) {
		p.Body = []byte(`{"pad":"` + strings.Repeat("x", size-10) + `"}`)
	}
	return p
}

func TestQuota(t *testing.T) {
	type step struct {
		n     int
		agent string
		size  int
		bound string // "" = accepted; else the QuotaError's Bound
	}
	for _, tc := range []struct {
		name  string
		quota Quota
		steps []step
	}{
		{"pending per agent", Quota{PendingPerAgent: 2}, []step{
			{0, "a", 0, ""}, {1, "a", 0, ""}, {2, "a", 0, "pending-per-agent"}, {3, "b", 0, ""},
		}},
		{"pending total: rotating agent ids does not help", Quota{PendingPerAgent: 2, PendingTotal: 3}, []step{
			{0, "a", 0, ""}, {1, "b", 0, ""}, {2, "c", 0, ""}, {3, "d", 0, "pending-total"}, {4, "e", 0, "pending-total"},
		}},
		{"bytes per agent", Quota{BytesPerAgent: 3000}, []step{
			{0, "a", 1400, ""}, {1, "a", 1400, ""}, {2, "a", 1400, "bytes-per-agent"}, {3, "b", 1400, ""},
		}},
		{"bytes total", Quota{BytesPerAgent: 3000, BytesTotal: 4000}, []step{
			{0, "a", 1400, ""}, {1, "b", 1400, ""}, {2, "c", 1400, "bytes-total"}, {3, "d", 500, ""},
		}},
		{"no quota", Quota{}, []step{{0, "a", 5000, ""}, {1, "a", 5000, ""}, {2, "a", 5000, ""}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := open(t)
			j.SetQuota(tc.quota)
			for _, s := range tc.steps {
				p := agentProposal(s.n, s.agent, s.size)
				_, created, err := j.Submit(p)
				var qe *QuotaError
				switch {
				case s.bound == "" && (err != nil || !created):
					t.Fatalf("proposal %d from %s refused: %v", s.n, s.agent, err)
				case s.bound != "" && (!errors.As(err, &qe) || qe.Bound != s.bound):
					t.Fatalf("proposal %d from %s: %v, want a %s QuotaError", s.n, s.agent, err, s.bound)
				case s.bound != "":
					msg := err.Error()
					if !strings.Contains(msg, fmt.Sprint(qe.Limit)) || !strings.Contains(msg, "operation.cancel") || !strings.Contains(msg, "No proposal was created") {
						t.Fatalf("refusal %q does not name the limit and what to do", msg)
					}
					if _, err := j.Get(p.ID); !errors.Is(err, ErrNotFound) {
						t.Fatalf("a refused proposal was stored: %v", err)
					}
				}
			}
		})
	}
}

// A decided proposal frees its pending place at once, its bytes only when
// it is pruned; a replay of a stored proposal is answered even when full.
func TestQuotaReleaseAndReplay(t *testing.T) {
	j := open(t)
	j.SetQuota(Quota{PendingPerAgent: 1, BytesPerAgent: 3000})
	first := agentProposal(0, "a", 1400)
	submit(t, j, first)
	if _, created, err := j.Submit(first); err != nil || created {
		t.Fatalf("replay when full: created=%v %v", created, err)
	}
	var qe *QuotaError
	if _, _, err := j.Submit(agentProposal(1, "a", 1400)); !errors.As(err, &qe) || qe.Bound != "pending-per-agent" {
		t.Fatalf("second pending: %v", err)
	}
	drive(t, j, first.ID, Rejected)
	submit(t, j, agentProposal(1, "a", 1400))
	drive(t, j, proposal(1).ID, Cancelled)
	if _, _, err := j.Submit(agentProposal(2, "a", 1400)); !errors.As(err, &qe) || qe.Bound != "bytes-per-agent" {
		t.Fatalf("bytes of decided proposals: %v", err)
	}
	if n, err := j.Prune(time.Now().Add(time.Minute)); err != nil || n != 2 {
		t.Fatalf("prune: %d %v", n, err)
	}
	submit(t, j, agentProposal(2, "a", 1400))
}

// The quota counts come from an index, never from the rows themselves
// (whose bodies span overflow pages).
func TestQuotaQueriesUseIndexes(t *testing.T) {
	j := open(t)
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`SELECT count(*) FROM proposals WHERE agent_id = ? AND status = ?`, []any{"a", "pending"}},
		{`SELECT count(*) FROM proposals WHERE status = ?`, []any{"pending"}},
		{`SELECT sum(body_bytes) FROM proposals WHERE agent_id = ?`, []any{"a"}},
		{`SELECT sum(body_bytes) FROM proposals INDEXED BY proposals_agent_status_bytes`, nil},
	} {
		rows, err := j.db.Query(`EXPLAIN QUERY PLAN `+q.sql, q.args...)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, notused int
			var detail string
			if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		if !strings.Contains(strings.Join(plan, ";"), "COVERING INDEX") {
			t.Errorf("%s: plan %v does not use a covering index", q.sql, plan)
		}
	}
}

func TestListPagesAndCounts(t *testing.T) {
	j := open(t)
	base := time.Date(2026, 5, 28, 12, 0, 0, 0, time.UTC)
	for i := range 6 {
		p := proposal(i)
		p.CreatedAt = base.Add(time.Duration(i) * time.Second)
		// Later proposals expire sooner (a shorter TTL after a restart).
		p.ExpiresAt = base.Add(time.Hour - time.Duration(i)*time.Minute)
		submit(t, j, p)
		if i%2 == 1 {
			drive(t, j, p.ID, Rejected)
		}
	}
	ids := func(ps []Proposal) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.ID[len(p.ID)-1:])
		}
		return out
	}
	pending := []Status{Pending}
	for _, tc := range []struct {
		name string
		f    Filter
		want []string
	}{
		{"offset", Filter{Limit: 2, Offset: 2}, []string{"3", "2"}},
		{"offset past the end", Filter{Offset: 10}, nil},
		{"oldest first", Filter{Statuses: pending, Oldest: true}, []string{"0", "2", "4"}},
		{"oldest first, second page", Filter{Statuses: pending, Oldest: true, Limit: 2, Offset: 2}, []string{"4"}},
		{"soonest expiry first", Filter{Statuses: pending, ByExpiry: true}, []string{"4", "2", "0"}},
	} {
		got, err := j.List(tc.f)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ids(got), tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, ids(got), tc.want)
		}
	}
	got, err := j.List(Filter{WithoutBody: true})
	if err != nil || len(got) != 6 {
		t.Fatalf("without body: %d %v", len(got), err)
	}
	for _, p := range got {
		if len(p.Body) != 0 || len(p.Binding) == 0 || p.Reason == "" {
			t.Fatalf("a bodiless listing must leave only the body out: body %d bytes, binding %d", len(p.Body), len(p.Binding))
		}
	}
	for _, tc := range []struct {
		f    Filter
		want int
	}{{Filter{}, 6}, {Filter{Statuses: pending, Limit: 1, Offset: 1}, 3}, {Filter{Statuses: []Status{Executing}}, 0}} {
		if n, err := j.Count(tc.f); err != nil || n != tc.want {
			t.Errorf("count %+v: %d %v, want %d", tc.f, n, err, tc.want)
		}
	}
}

// A journal of schema version 1 gains body_bytes, filled from the bodies
// it already holds, so the quota counts them from the first start.
func TestMigrationFillsBodyBytes(t *testing.T) {
	path := PathIn(t.TempDir())
	if err := prepare(path); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(migrations[0]); err != nil {
		t.Fatal(err)
	}
	p := agentProposal(0, "a", 2000)
	p.Body = []byte(`{"pad":"` + strings.Repeat("é", 500) + `"}`) // bytes, not characters
	p.UpdatedAt, p.Status = time.Now(), Pending
	if _, err := db.Exec(`INSERT INTO proposals (`+columns+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, values(p)...); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`PRAGMA user_version = 1`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	j, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	var n int
	if err := j.db.QueryRow(`SELECT body_bytes FROM proposals WHERE id = ?`, p.ID).Scan(&n); err != nil || n != len(p.Body) {
		t.Fatalf("body_bytes %d (%v), want %d", n, err, len(p.Body))
	}
	j.SetQuota(Quota{BytesTotal: int64(len(p.Body)) + 100})
	var qe *QuotaError
	if _, _, err := j.Submit(agentProposal(1, "b", 500)); !errors.As(err, &qe) || qe.Bound != "bytes-total" {
		t.Fatalf("the migrated body is not counted: %v", err)
	}
}
