package mcp

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/fluxgit/fluxgit/host/catalog"
	"github.com/fluxgit/fluxgit/internal/wire"
)

// FuzzDispatch throws arbitrary methods and params at the dispatcher: it
// must never panic, and every failure must be a JSON-RPC error the host
// can send.
func FuzzDispatch(f *testing.F) {
	cat, err := catalog.Load()
	if err != nil {
		f.Fatal(err)
	}
	s := New(Options{Catalog: cat, Name: "fluxgit", Version: "fuzz",
		Providers: fixedDispatcher{&wire.Result{Source: "local-git", Data: json.RawMessage(`{}`)}}}).NewSession()
	for _, seed := range []struct{ method, params string }{
		{"initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"a","version":"1"}}`},
		{"initialize", `{"protocolVersion":7}`},
		{"tools/list", `{"cursor":""}`},
		{"tools/list", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`},
		{"tools/call", `{"name":"repo.status","arguments":{"repoPath":"/"}}`},
		{"tools/call", `{"name":"repo.history","arguments":{"repoPath":"/tmp","limit":1e400}}`},
		{"tools/call", `{"name":"diff.text","arguments":{"repoPath":"/tmp","base":"-x","maxBytes":-1}}`},
		{"tools/call", `{"name":"x","arguments":null,"_meta":{"io.modelcontextprotocol/protocolVersion":null}}`},
		{"server/discover", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":[]}}`},
		{"resources/read", `{"uri":"shift://status"}`},
		{"ping", `null`},
		{"tools/call", `[]`},
	} {
		f.Add(seed.method, seed.params)
	}
	f.Fuzz(func(t *testing.T, method, rawParams string) {
		var p *json.RawMessage
		if json.Valid([]byte(rawParams)) {
			r := json.RawMessage(rawParams)
			p = &r
		}
		req := &jsonrpc2.Request{Method: method, Params: p, ID: jsonrpc2.ID{Num: 1}}
		res, err := s.dispatch(context.Background(), req)
		if err != nil {
			if _, ok := err.(*rpcError); !ok {
				// Only the provider path may return plain errors, and the
				// fixed dispatcher never fails.
				t.Fatalf("%s: non-RPC error %T: %v", method, err, err)
			}
			return
		}
		if !json.Valid(res) {
			t.Fatalf("%s: invalid JSON result %q", method, res)
		}
	})
}
