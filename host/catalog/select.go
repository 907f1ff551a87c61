package catalog

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Toolsets are the toolset names a tool spec may declare (schemas/tool.schema.json
// lists the same names).
var Toolsets = []string{ToolsetCore, "git", "fleet", "restore", "proposals", "presence", "roster"}

// ToolsetCore is the toolset served when neither toolsets nor tools are
// chosen (see Default): the tools an agent calls every day, so that the
// catalog a model reads before its first call stays small.
const ToolsetCore = "core"

// ToolsetAll selects every tool, whatever its toolsets.
const ToolsetAll = "all"

// Selection says which tools a process serves. The zero value serves every
// tool with full schemas.
type Selection struct {
	// Toolsets served; empty (or containing ToolsetAll) means every tool.
	Toolsets []string
	// Tools is an explicit allow-list of tool names; when set, a tool must
	// also be in it.
	Tools []string
	// ReadOnly hides every tool whose readOnlyHint is not true.
	ReadOnly bool
	// GatewayOnlyHidden hides every tool whose tier needs FluxGit (fluxgit:
	// restore points and safety events; fluxgit-write-handshake: write
	// proposals). Without a gateway address they can only answer that no
	// gateway is connected, so the default selection leaves them out until
	// an address is set.
	GatewayOnlyHidden bool
	// Unassigned also serves the tools that name no toolset: those of a
	// provider a person configured with a spec of its own, which they mean
	// to use (see Default).
	Unassigned bool
	// CompactSchemas serves output schemas without the descriptions below
	// their root, which makes tools/list much smaller.
	CompactSchemas bool
}

// ParseList splits a comma-separated flag or variable value into trimmed,
// non-empty names.
func ParseList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// Check reports names that are not known toolsets or tools of c, with the
// valid names, so that a typo fails at start instead of hiding tools.
func (sel Selection) Check(c *Catalog) error {
	if err := sel.CheckToolsets(); err != nil {
		return err
	}
	var unknown []string
	for _, n := range sel.Tools {
		if _, ok := c.Tool(n); !ok {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) > 0 {
		names := make([]string, 0, len(c.Tools))
		for _, t := range c.Tools {
			names = append(names, t.Name)
		}
		sort.Strings(names)
		return fmt.Errorf("unknown tool %s: known tools are %s", strings.Join(unknown, ", "), strings.Join(names, ", "))
	}
	return nil
}

// CheckToolsets reports a toolset name that is not one of Toolsets or
// ToolsetAll; it needs no catalog, so a bad value fails before start-up.
func (sel Selection) CheckToolsets() error {
	for _, s := range sel.Toolsets {
		if s != ToolsetAll && !slices.Contains(Toolsets, s) {
			return fmt.Errorf("unknown toolset %q: use a comma-separated list of %s, or %s", s, strings.Join(Toolsets, ", "), ToolsetAll)
		}
	}
	return nil
}

// Default is the selection served when neither toolsets nor tools are
// chosen: the core toolset, with its FluxGit-only tools (write proposals)
// only when a gateway address is configured, plus the tools of configured
// providers that name no toolset.
func Default(gatewayConfigured bool) Selection {
	return Selection{Toolsets: []string{ToolsetCore}, GatewayOnlyHidden: !gatewayConfigured, Unassigned: true}
}

// NeedsGateway reports whether t can only work with FluxGit (or another
// approval gateway) connected: the fluxgit and fluxgit-write-handshake tiers.
func (t *Tool) NeedsGateway() bool {
	return t.Tier == "fluxgit" || t.Tier == "fluxgit-write-handshake"
}

// Keeps reports whether sel serves t.
func (sel Selection) Keeps(t *Tool) bool {
	if sel.ReadOnly && !t.ReadOnly {
		return false
	}
	if sel.GatewayOnlyHidden && t.NeedsGateway() {
		return false
	}
	if len(sel.Tools) > 0 && !slices.Contains(sel.Tools, t.Name) {
		return false
	}
	if len(sel.Toolsets) == 0 || slices.Contains(sel.Toolsets, ToolsetAll) {
		return true
	}
	if sel.Unassigned && len(t.Toolsets) == 0 {
		return true
	}
	for _, s := range t.Toolsets {
		if slices.Contains(sel.Toolsets, s) {
			return true
		}
	}
	return false
}

// Apply checks sel against c, then removes, in place, the tools sel does
// not serve and compacts output schemas when asked. Prompts and resources
// are left alone: they follow providers (Restrict), not toolsets. The
// result depends only on c and sel, so tools/list stays the same for a
// given configuration.
func (sel Selection) Apply(c *Catalog) error {
	if err := sel.Check(c); err != nil {
		return err
	}
	kept := c.Tools[:0]
	for _, t := range c.Tools {
		if sel.Keeps(t) {
			kept = append(kept, t)
		} else if c.byName != nil {
			delete(c.byName, t.Name)
		}
	}
	clear(c.Tools[len(kept):])
	c.Tools = kept
	if !sel.CompactSchemas {
		return nil
	}
	for _, t := range c.Tools {
		out, err := CompactSchema(t.OutputSchema)
		if err != nil {
			return fmt.Errorf("compact output schema of %s: %w", t.Name, err)
		}
		t.OutputSchema = out
		if t.ReferenceOutputSchema, err = CompactSchema(t.ReferenceOutputSchema); err != nil {
			return fmt.Errorf("compact reference output schema of %s: %w", t.Name, err)
		}
	}
	return nil
}

// CompactSchema returns schema without any "description" keyword below its
// root (the root's own description stays, as the one-line summary of the
// result). Key order is preserved; property names, enum, const, default
// and examples values are never touched.
func CompactSchema(schema json.RawMessage) (json.RawMessage, error) {
	if len(schema) == 0 {
		return schema, nil
	}
	v, err := parseJSON(schema)
	if err != nil {
		return nil, err
	}
	root, ok := v.(*object)
	if !ok {
		return schema, nil
	}
	out := newObject(root.len())
	for _, k := range root.keys {
		if k == "description" {
			out.set(k, root.vals[k])
		} else {
			out.set(k, stripDescriptions(k, root.vals[k]))
		}
	}
	return marshal(out)
}

// dataKeywords hold instance values, not schemas: a "description" key in
// them is data.
var dataKeywords = map[string]bool{"const": true, "enum": true, "default": true, "examples": true}

// stripDescriptions drops description keywords from the schema(s) found
// under keyword key. Maps of schemas (properties, $defs, ...) are walked
// by value, so a property called "description" is kept.
func stripDescriptions(key string, v any) any {
	if dataKeywords[key] {
		return v
	}
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = stripDescriptions("", e)
		}
		return out
	case *object:
		mapOfSchemas := key == "properties" || key == "patternProperties" || key == "$defs" ||
			key == "definitions" || key == "dependentSchemas"
		out := newObject(x.len())
		for _, k := range x.keys {
			if mapOfSchemas {
				out.set(k, stripDescriptions("", x.vals[k]))
			} else if k != "description" {
				out.set(k, stripDescriptions(k, x.vals[k]))
			}
		}
		return out
	}
	return v
}
