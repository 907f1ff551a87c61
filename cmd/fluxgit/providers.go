package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fluxgit/fluxgit/cmd/fluxgit/internal/preflight"
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
			checks := runPreflight(cmd.Context(), g)
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
				ready := "yes"
				if state != "ok" || described != "ok" {
					ready = "no"
				} else if why := notReady(name, checks); why != "" {
					ready = "NO: " + why
					failed++
				}
				fmt.Fprintf(out, "%s (%s)\n  starts: %s\n  describe: %s\n  ready: %s\n  tools (%d): %s\n", name, kind, state, described, ready, len(tools), strings.Join(tools, ", "))
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
				return &exitError{code: 1, err: fmt.Errorf("%d provider(s) failed to start, do not serve their spec, or cannot serve (run `fluxgit doctor`)", failed)}
			}
			return nil
		},
	}
}

// gitProviders run git for every tool call: without a usable git they
// start and describe themselves, yet every call fails.
var gitProviders = map[string]bool{"git-read": true}

// notReady says why a provider that starts still cannot serve a call under
// this configuration, or "" when nothing stands in its way: a malformed
// FLUXGIT_MCP_ALLOWED_ROOTS fails every tools/call in the host, and an
// unusable git fails every call of a git provider.
func notReady(name string, checks []preflight.Result) string {
	if r, ok := preflight.Find(checks, preflight.CheckRoots); ok && r.Status == preflight.Fail {
		return r.Line()
	}
	if r, ok := preflight.Find(checks, preflight.CheckGit); ok && r.Status == preflight.Fail && gitProviders[name] {
		return r.Line()
	}
	return ""
}
