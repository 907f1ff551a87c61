package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/fluxgit/fluxgit/host/catalog"
	"github.com/fluxgit/fluxgit/internal/envflag"
	"github.com/fluxgit/fluxgit/internal/fluxbridge"
)

// toolsetOptions choose which tools serve offers (host/catalog.Selection).
type toolsetOptions struct {
	toolsets       string
	tools          string
	readOnly       bool
	compactSchemas bool
}

func (o *toolsetOptions) register(f *pflag.FlagSet) {
	f.StringVar(&o.toolsets, "toolsets", "", "comma-separated toolsets to serve: "+
		strings.Join(catalog.Toolsets, ", ")+" or "+catalog.ToolsetAll+" (env FLUXGIT_TOOLSETS; default "+catalog.ToolsetCore+
		", whose write proposals join once a gateway address is set)")
	f.StringVar(&o.tools, "tools", "", "comma-separated allow-list of tool names; only these (of the selected toolsets) are served (env FLUXGIT_TOOLS)")
	f.BoolVar(&o.readOnly, "read-only", false, "serve only read-only tools; every other tool is hidden and refused (env FLUXGIT_READ_ONLY)")
	f.BoolVar(&o.compactSchemas, "compact-schemas", false, "serve output schemas without nested descriptions, for a smaller tools/list (env FLUXGIT_COMPACT_SCHEMAS)")
}

// resolve applies the environment to every flag not given and returns the
// selection; the tool names are checked later, against the loaded catalog.
func (o *toolsetOptions) resolve(f *pflag.FlagSet) (catalog.Selection, error) {
	str := func(flag, name string, dst *string) {
		if v, ok := os.LookupEnv(name); ok && !f.Changed(flag) {
			*dst = v
		}
	}
	boolean := func(flag, name string, dst *bool) error {
		v, ok := os.LookupEnv(name)
		if !ok || f.Changed(flag) || strings.TrimSpace(v) == "" {
			return nil
		}
		b, err := envflag.ParseBool(v)
		if err != nil {
			return fmt.Errorf("%s=%q: use true or false (%s)", name, v, envflag.Spellings)
		}
		*dst = b
		return nil
	}
	str("toolsets", "FLUXGIT_TOOLSETS", &o.toolsets)
	str("tools", "FLUXGIT_TOOLS", &o.tools)
	if err := boolean("read-only", "FLUXGIT_READ_ONLY", &o.readOnly); err != nil {
		return catalog.Selection{}, err
	}
	if err := boolean("compact-schemas", "FLUXGIT_COMPACT_SCHEMAS", &o.compactSchemas); err != nil {
		return catalog.Selection{}, err
	}
	sel := catalog.Selection{
		Toolsets:       catalog.ParseList(o.toolsets),
		Tools:          catalog.ParseList(o.tools),
		ReadOnly:       o.readOnly,
		CompactSchemas: o.compactSchemas,
	}
	if len(sel.Toolsets) == 0 && len(sel.Tools) == 0 {
		// Nothing chosen: the everyday tools (catalog.ToolsetCore), so the
		// catalog a model reads before its first call stays small; the
		// proposals among them only where a gateway can receive them.
		_, configured := fluxbridge.FromEnv()
		def := catalog.Default(configured)
		sel.Toolsets, sel.GatewayOnlyHidden, sel.Unassigned = def.Toolsets, def.GatewayOnlyHidden, def.Unassigned
	}
	// Toolset names need no catalog: check them before anything starts.
	if err := sel.CheckToolsets(); err != nil {
		return sel, fmt.Errorf("--toolsets / FLUXGIT_TOOLSETS: %w", err)
	}
	return sel, nil
}
