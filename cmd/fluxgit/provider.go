package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/fluxgit/fluxgit/plugins/builtin"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// newProviderCmd serves a built-in provider; the host starts these itself,
// which is why one binary is the whole product.
func newProviderCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "provider NAME",
		Short:  "Serve a built-in provider (started by the host)",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			f, ok := builtin.Factories[args[0]]
			if !ok {
				return &exitError{code: exitUsage, err: fmt.Errorf("unknown built-in provider %q (have %v)", args[0], builtin.Names())}
			}
			sdk.Serve(f())
			return nil
		},
	}
}
