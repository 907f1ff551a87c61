package server

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fluxgit/fluxgit/gateway/journal"
	"github.com/fluxgit/fluxgit/gateway/policy"
)

// A proposal an autoApprove rule covers is approved by the policy when it
// arrives (reply status approved, DecidedBy "policy <rule>", a ledger
// decision saying so, then executed); one outside the rule's refs, and any
// proposal once the policy file lies inside an allowed root, waits for the
// person.
func TestAutoApproveByPolicy(t *testing.T) {
	repo := newRepo(t)
	polDir := realDir(t, t.TempDir())
	polFile := filepath.Join(polDir, "policy.json")
	glob, _ := json.Marshal(filepath.Join(filepath.Dir(repo), "*"))
	doc := `{"version":1,"autoApprove":[{"name":"auto-branches","agents":["agent-*"],"operations":["branch"],"refs":["auto/*"],"paths":[` + string(glob) + `]}]}`
	if err := os.WriteFile(polFile, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	pol, err := policy.Load(polFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		roots  []string
		branch string
		auto   bool
	}{
		{"covered", nil, "auto/x", true},
		{"ref outside the rule", nil, "other/x", false},
		{"policy now inside an allowed root", []string{polDir}, "auto/y", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := start(t, "", func(c *Config) { c.Policy, c.AllowedRoots = pol, tc.roots })
			b := branchBody(repo, "agent-a", strings.ReplaceAll(tc.name, " ", "-"), tc.branch)
			r := g.post(previewPrefix+"branch", b)
			if r.status != http.StatusAccepted {
				t.Fatalf("preview: %d %s", r.status, r.raw)
			}
			id := b["previewId"].(string)
			if !tc.auto {
				if r.body["status"] != "pending" {
					t.Fatalf("reply %s, want pending", r.raw)
				}
				p, err := g.s.Get(id)
				if err != nil || p.Status != journal.Pending || p.DecidedBy != "" {
					t.Fatalf("journal: %+v %v", p.Status, err)
				}
				return
			}
			if r.body["status"] != "approved" {
				t.Fatalf("reply %s, want approved", r.raw)
			}
			g.waitStatus(id, journal.Completed)
			if !hasBranch(t, repo, tc.branch) {
				t.Fatalf("branch %s was not created", tc.branch)
			}
			p, err := g.s.Get(id)
			if err != nil || p.DecidedBy != "policy auto-branches" {
				t.Fatalf("DecidedBy %q, %v", p.DecidedBy, err)
			}
			var says bool
			for _, e := range g.ledgerEntries() {
				s, _ := e["summary"].(string)
				says = says || e["event_type"] == "human_decision" && e["approval"] == "approved" && strings.Contains(s, "approved by policy auto-branches")
			}
			if !says {
				t.Fatalf("no ledger decision approved by policy auto-branches: %v", g.ledgerEntries())
			}
		})
	}
}
