package catalog

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestCompactSchema(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"root description stays, nested go, order kept",
			`{"type":"object","description":"root","properties":{"z":{"type":"string","description":"z d"},"a":{"type":"integer","description":"a d"}}}`,
			`{"type":"object","description":"root","properties":{"z":{"type":"string"},"a":{"type":"integer"}}}`},
		{"a property named description is kept",
			`{"properties":{"description":{"type":"string","description":"text"}}}`,
			`{"properties":{"description":{"type":"string"}}}`},
		{"data keywords untouched",
			`{"const":{"description":"x"},"enum":[{"description":"y"}],"default":{"description":"z"},"examples":[{"description":"w"}]}`,
			`{"const":{"description":"x"},"enum":[{"description":"y"}],"default":{"description":"z"},"examples":[{"description":"w"}]}`},
		{"combinators, items and $defs",
			`{"anyOf":[{"description":"a"}],"items":{"description":"i","type":"string"},"$defs":{"d":{"description":"d","minimum":1.5}},"additionalProperties":{"description":"ap"}}`,
			`{"anyOf":[{}],"items":{"type":"string"},"$defs":{"d":{"minimum":1.5}},"additionalProperties":{}}`},
		{"no html escaping", `{"properties":{"a":{"pattern":"^<a&b>$","description":"d"}}}`, `{"properties":{"a":{"pattern":"^<a&b>$"}}}`},
		{"empty", ``, ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CompactSchema(json.RawMessage(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
	if _, err := CompactSchema(json.RawMessage(`{"a":`)); err == nil {
		t.Fatal("truncated JSON must fail")
	}
}

func TestSelection(t *testing.T) {
	mk := func(name string, ro bool, sets ...string) *Tool {
		return &Tool{Name: name, ReadOnly: ro, Toolsets: sets, OutputSchema: json.RawMessage(`{"description":"r","properties":{"a":{"description":"x"}}}`)}
	}
	catalogOf := func() *Catalog {
		c := &Catalog{Tools: []*Tool{mk("repo.status", true, "core", "git"), mk("fleet.radar", true, "fleet"),
			mk("operation.preview.commit", false, "core", "proposals"), mk("operation.status", true, "proposals"), mk("overlay.tool", true)}}
		for _, t := range c.Tools {
			if strings.HasPrefix(t.Name, "operation.") {
				t.Tier = "fluxgit-write-handshake"
			}
		}
		c.byName = map[string]*Tool{}
		for _, t := range c.Tools {
			c.byName[t.Name] = t
		}
		return c
	}
	for _, tc := range []struct {
		name string
		sel  Selection
		want []string
		err  string
	}{
		{"zero value serves everything", Selection{}, []string{"repo.status", "fleet.radar", "operation.preview.commit", "operation.status", "overlay.tool"}, ""},
		{"all", Selection{Toolsets: []string{"git", "all"}}, []string{"repo.status", "fleet.radar", "operation.preview.commit", "operation.status", "overlay.tool"}, ""},
		{"one set", Selection{Toolsets: []string{"proposals"}}, []string{"operation.preview.commit", "operation.status"}, ""},
		{"read-only", Selection{Toolsets: []string{"proposals", "git"}, ReadOnly: true}, []string{"repo.status", "operation.status"}, ""},
		{"allow-list", Selection{Tools: []string{"overlay.tool", "fleet.radar"}}, []string{"fleet.radar", "overlay.tool"}, ""},
		{"allow-list within a set", Selection{Toolsets: []string{"git"}, Tools: []string{"fleet.radar", "repo.status"}}, []string{"repo.status"}, ""},
		{"default without a gateway: core, no proposals, unassigned tools", Default(false), []string{"repo.status", "overlay.tool"}, ""},
		{"default with a gateway: core with its proposals", Default(true), []string{"repo.status", "operation.preview.commit", "overlay.tool"}, ""},
		{"default read-only with a gateway", func() Selection { s := Default(true); s.ReadOnly = true; return s }(), []string{"repo.status", "overlay.tool"}, ""},
		{"gateway-only tools hidden in any set", Selection{Toolsets: []string{"proposals", "git"}, GatewayOnlyHidden: true}, []string{"repo.status"}, ""},
		{"unknown toolset", Selection{Toolsets: []string{"gti"}}, nil, `unknown toolset "gti"`},
		{"unknown tool", Selection{Tools: []string{"repo.stats"}}, nil, "unknown tool repo.stats: known tools are fleet.radar, operation.preview.commit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := catalogOf()
			err := tc.sel.Apply(c)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tool := range c.Tools {
				got = append(got, tool.Name)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("served %v, want %v", got, tc.want)
			}
			for _, n := range []string{"repo.status", "fleet.radar", "operation.preview.commit", "operation.status", "overlay.tool"} {
				if _, ok := c.Tool(n); ok != slices.Contains(tc.want, n) {
					t.Fatalf("Tool(%s) found %v", n, ok)
				}
			}
		})
	}
	c := catalogOf()
	if err := (Selection{CompactSchemas: true}).Apply(c); err != nil {
		t.Fatal(err)
	}
	if got := string(c.Tools[0].OutputSchema); got != `{"description":"r","properties":{"a":{}}}` {
		t.Fatalf("compacted output schema %s", got)
	}
}
