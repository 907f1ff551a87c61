package fluxbridge

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
)

// Client.Header travels with every request; without it none is added.
func TestClientHeader(t *testing.T) {
	got := make(chan string, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("Fluxgit-Proposer")
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	ap, err := netip.ParseAddrPort(srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c := NewClient(Address{AddrPort: ap})
	c.Header = http.Header{"Fluxgit-Proposer": {"pid=7"}}
	if _, err := c.Do(context.Background(), http.MethodPost, "/x", map[string]any{}, 0); err != nil {
		t.Fatal(err)
	}
	c.Header = nil
	if _, err := c.Do(context.Background(), http.MethodGet, "/x", nil, 0); err != nil {
		t.Fatal(err)
	}
	if a, b := <-got, <-got; a != "pid=7" || b != "" {
		t.Fatalf("headers %q then %q, want pid=7 then none", a, b)
	}
}
