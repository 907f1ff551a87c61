package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fluxgit/fluxgit/host/providers"
	"github.com/fluxgit/fluxgit/host/setup"
	"github.com/fluxgit/fluxgit/plugins/builtin"
)

func newProvidersCmd(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "providers",
		Short: "List each provider, its tools, and whether it starts",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := setup.LoadConfig(g.config(), builtin.Names())
			if err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			self, err := os.Executable()
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			h, err := setup.Build(cfg, builtin.Names(), self, g.logger())
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			defer h.Providers.Shutdown()
			failed := 0
			out := cmd.OutOrStdout()
			for _, name := range h.Providers.Names() {
				var tools []string
				for _, t := range h.Catalog.Tools {
					if t.Provider == name {
						tools = append(tools, t.Name)
					}
				}
				kind := "external"
				if s, _ := h.Providers.Spec(name); s.Builtin {
					kind = "built-in"
				}
				state, described := "ok", "ok"
				var mismatch *providers.MismatchError
				err := h.Providers.Start(name)
				switch {
				case errors.As(err, &mismatch):
					// It starts, but does not serve what its spec says.
					described = "MISMATCH: missing " + strings.Join(mismatch.Missing, ", ")
					failed++
				case err != nil:
					state, described = "FAILED: "+err.Error(), "-"
					failed++
				}
				fmt.Fprintf(out, "%s (%s)\n  starts: %s\n  describe: %s\n  tools (%d): %s\n", name, kind, state, described, len(tools), strings.Join(tools, ", "))
				var prompts []string
				for _, p := range h.Catalog.Prompts {
					if p.Provider == name {
						prompts = append(prompts, p.Name)
					}
				}
				if len(prompts) > 0 {
					fmt.Fprintf(out, "  prompts (%d): %s\n", len(prompts), strings.Join(prompts, ", "))
				}
			}
			if failed > 0 {
				return &exitError{code: 1, err: fmt.Errorf("%d provider(s) failed to start or do not serve their spec", failed)}
			}
			return nil
		},
	}
}
