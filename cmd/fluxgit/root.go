package main

import (
	"fmt"
	"os"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"
)

// globalOptions are flags every command shares.
type globalOptions struct {
	configPath string
	logLevel   string
	obs        obsOptions
}

func (g *globalOptions) config() string {
	if g.configPath != "" {
		return g.configPath
	}
	return os.Getenv("FLUXGIT_CONFIG")
}

// logger is the process logger (see buildLogger). When LOGS_DIR cannot be
// used it says so on stderr and logs there alone; commands that must fail
// instead call buildLogger themselves.
func (g *globalOptions) logger() hclog.Logger {
	log, err := g.buildLogger()
	if err != nil {
		fmt.Fprintln(os.Stderr, "fluxgit:", err)
		g.obs.logDir = ""
		log, _ = g.buildLogger()
	}
	return log
}

func newRootCmd() *cobra.Command {
	g := &globalOptions{}
	serve := newServeCmd(g)
	root := &cobra.Command{
		Use:   "fluxgit",
		Short: "An MCP server for Git: safe reads, human-approved write proposals",
		Long: "fluxgit serves Git repositories to AI coding agents over the Model Context Protocol.\n" +
			"With no command it serves MCP on stdin/stdout, as an MCP host expects.",
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE:          serve.RunE,
		// --version prints what `fluxgit version` prints, so scripts can use either.
		Version: buildVersion(),
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return g.resolveObs(cmd)
		},
	}
	root.SetVersionTemplate("fluxgit {{.Version}}\n")
	// Bare fluxgit serves as `fluxgit serve` does, its flags included.
	root.Flags().AddFlagSet(serve.Flags())
	root.PersistentFlags().StringVar(&g.configPath, "config", "", "host configuration file (default $FLUXGIT_CONFIG)")
	root.PersistentFlags().StringVar(&g.logLevel, "log-level", "info", logLevelUsage)
	root.AddCommand(serve, newSpecCmd(g), newProvidersCmd(g), newVersionCmd(), newProviderCmd())
	root.AddCommand(newVerifyAuditCmd(), newAuditCmd(), newGatewayCmd(g), newDoctorCmd(g), newGuardCmd())
	return root
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the fluxgit version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(cmd.OutOrStdout(), "fluxgit "+buildVersion())
			return nil
		},
	}
}
