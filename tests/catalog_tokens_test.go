package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/tiktoken-go/tokenizer"
)

// Catalog budgets (issue 23, CONTRACT §3 "Lean by default"): what the
// default tools/list puts in front of the model before its first call.
// They change only deliberately, with the reason, here.
const (
	// defaultCatalogBudget: no configuration at all.
	defaultCatalogBudget = 5000
	// gatewayCatalogBudget: a gateway address set, so the core write
	// proposals join.
	gatewayCatalogBudget = 8000
)

var (
	o200kOnce  sync.Once
	o200k      tokenizer.Codec
	o200kError error
)

// o200kTokens counts s in o200k_base tokens.
func o200kTokens(t testing.TB, s string) int {
	t.Helper()
	o200kOnce.Do(func() { o200k, o200kError = tokenizer.Get(tokenizer.O200kBase) })
	if o200kError != nil {
		t.Fatalf("o200k_base: %v", o200kError)
	}
	ids, _, err := o200k.Encode(s)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	return len(ids)
}

// unescapedJSON renders v without HTML escaping, as the host does.
func unescapedJSON(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// catalogCost is what a tools/list result costs the model: catalog is the
// compact JSON of the tools array with what clients show the model (name,
// title, description, inputSchema, as served); full is the whole array
// (annotations and outputSchema too), for information.
type catalogCost struct {
	tools, catalog, full int
}

func costOf(t *testing.T, result json.RawMessage) catalogCost {
	t.Helper()
	var list struct {
		Tools []map[string]json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(result, &list); err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	shown := make([]map[string]json.RawMessage, len(list.Tools))
	for i, tool := range list.Tools {
		shown[i] = map[string]json.RawMessage{}
		for _, k := range []string{"name", "title", "description", "inputSchema"} {
			if v, ok := tool[k]; ok {
				shown[i][k] = v
			}
		}
	}
	return catalogCost{
		tools:   len(list.Tools),
		catalog: o200kTokens(t, unescapedJSON(t, shown)),
		full:    o200kTokens(t, unescapedJSON(t, list.Tools)),
	}
}

// gatewayAddrEnv is a gateway address that nothing listens on: tools/list
// needs the address, not the gateway.
func gatewayAddrEnv(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return "FLUXGIT_MCP_HANDSHAKE_ADDR=" + addr
}

// TestCatalogTokenBudget counts the default catalog as the real binary
// serves it — tools/list with no configuration — in o200k_base tokens and
// fails above the budget; the same with a gateway address set, where the
// core proposals join. It logs the figures of every toolset (go test -v).
func TestCatalogTokenBudget(t *testing.T) {
	gw := gatewayAddrEnv(t)
	rows := []struct {
		name   string
		env    []string
		args   []string
		budget int
	}{
		{name: "default", env: []string{defaultSelection}, budget: defaultCatalogBudget},
		{name: "default, gateway address set", env: []string{defaultSelection, gw}, budget: gatewayCatalogBudget},
	}
	for _, set := range []string{"core", "git", "fleet", "restore", "proposals", "presence", "roster", "all"} {
		rows = append(rows, struct {
			name   string
			env    []string
			args   []string
			budget int
		}{name: "--toolsets " + set, env: []string{gw}, args: []string{"--toolsets", set}})
	}
	var report strings.Builder
	fmt.Fprintf(&report, "%-32s %6s %9s %9s\n", "selection", "tools", "catalog", "full")
	for _, row := range rows {
		_, _, raw, _ := toolsetSession(t, row.env, row.args...)
		c := costOf(t, raw)
		fmt.Fprintf(&report, "%-32s %6d %9d %9d\n", row.name, c.tools, c.catalog, c.full)
		if row.budget > 0 && c.catalog > row.budget {
			t.Errorf("%s: the catalog costs %d o200k tokens (%d tools), over its budget of %d: shorten descriptions, leave informational arguments out of the served schema (x-fluxgit-served: false), or keep the tool out of the core toolset",
				row.name, c.catalog, c.tools, row.budget)
		}
	}
	t.Logf("tools/list in o200k_base tokens (catalog: name, title, description, inputSchema as served; full: the whole definitions)\n%s", report.String())
}
