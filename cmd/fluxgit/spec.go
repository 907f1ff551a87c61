package main

import (
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/fluxgit/fluxgit/host/catalog"
	"github.com/fluxgit/fluxgit/host/setup"
	"github.com/fluxgit/fluxgit/plugins/builtin"
	"github.com/fluxgit/fluxgit/spec"
)

func newSpecCmd(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "spec",
		Short: "Work with the tool specification",
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "lint [DIR]",
		Short: "Check a spec tree (default: the embedded one); exit 0 clean, 1 findings, 2 usage",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return &exitError{code: exitUsage, err: fmt.Errorf("spec lint takes at most one directory")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			known := append(builtin.Names(), builtin.Planned...)
			cfg, err := setup.LoadConfig(g.config(), builtin.Names())
			if err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			for _, p := range cfg.Providers {
				known = append(known, p.Name)
			}
			var fsys fs.FS = spec.FS
			name := "embedded spec"
			if len(args) == 1 {
				st, err := os.Stat(args[0])
				if err != nil || !st.IsDir() {
					return &exitError{code: exitUsage, err: fmt.Errorf("%s is not a directory", args[0])}
				}
				fsys, name = os.DirFS(args[0]), args[0]
			}
			findings := catalog.Lint(fsys, known, catalog.RequireToolsets(append(builtin.Names(), builtin.Planned...)))
			for _, f := range findings {
				fmt.Fprintln(cmd.OutOrStdout(), f.String())
			}
			if len(findings) > 0 {
				return &exitError{code: exitFindings, err: fmt.Errorf("%s: %d finding(s)", name, len(findings))}
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "%s: clean\n", name)
			return nil
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:    "bundle DIR",
		Short:  "Write the pre-built JSON bundle of a spec tree to stdout (go generate ./spec)",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := catalog.Bundle(os.DirFS(args[0]))
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			_, err = cmd.OutOrStdout().Write(b)
			return err
		},
	})
	return cmd
}
