package mcp

import (
	"encoding/json"
	"testing"

	"github.com/fluxgit/fluxgit/host/repopath"
)

// A transport-authenticated agent id replaces whatever name the client
// gives, in initialize and in every modern request; without one the
// client's name stands.
func TestAuthenticatedAgent(t *testing.T) {
	for _, c := range []struct {
		name, agent, want string
		modern            bool
	}{
		{"legacy, none", "", "bob", false},
		{"legacy, authenticated", "alice", "alice", false},
		{"modern, none", "", "modern-client", true},
		{"modern, authenticated", "alice", "alice", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, _, _ := testServer(t, repopath.Policy{})
			s.SetAuthenticatedAgent(c.agent)
			initializeAs(t, s, V20251125, map[string]any{"name": "bob", "version": "2"})
			p := params{}
			if c.modern {
				p = params{"_meta": mustJSON(t, modernMeta)}
			}
			g, err := s.generation("tools/list", p)
			if err != nil {
				t.Fatal(err)
			}
			if g.client.Name != c.want {
				t.Fatalf("agent %q, want %q", g.client.Name, c.want)
			}
		})
	}
}

// A stateless HTTP request's legacy version comes from its header.
func TestAssumeLegacyVersion(t *testing.T) {
	s, _, _ := testServer(t, repopath.Policy{})
	for _, c := range []struct {
		version string
		ok      bool
		want    string
	}{
		{V20241105, true, V20241105},
		{"2099-01-01", false, V20241105},
		{V20260728, false, V20241105},
		{V20250618, true, V20250618},
	} {
		if got := s.AssumeLegacyVersion(c.version); got != c.ok {
			t.Fatalf("%s: %v", c.version, got)
		}
		if g, _ := s.generation("tools/list", params{}); g.version != c.want {
			t.Fatalf("%s: serving %s", c.version, g.version)
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
