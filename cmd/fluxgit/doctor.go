package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/fluxgit/fluxgit/cmd/fluxgit/internal/preflight"
	"github.com/fluxgit/fluxgit/plugins/builtin"
)

func newDoctorCmd(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Check the configuration the server would start with (exit 1 on a problem)",
		Long: "doctor runs the checks `fluxgit serve` runs at start (roots, git, run and state directories,\n" +
			"signing key, audit ledger, configuration file, gateway address, result shape, agent policy,\n" +
			"misspelt variables)\n" +
			"and prints them as a table.\n" +
			"It writes nothing. Exit status 0: every check passed or only warned; 1: a check failed.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rs := runPreflight(cmd.Context(), g)
			rs = append(rs, checkGatewayReach(g.config()))
			printDoctor(cmd.OutOrStdout(), rs)
			if preflight.Failed(rs, false) {
				return &exitError{code: exitFindings}
			}
			return nil
		},
	}
}

func runPreflight(ctx context.Context, g *globalOptions) []preflight.Result {
	rs := preflight.Run(ctx, preflight.Options{ConfigPath: g.config(), Builtins: builtin.Names()})
	return append(rs, startupChecks()...)
}

// printDoctor writes the table: CHECK, STATUS, DETAIL, and a FIX line under
// each problem (fixes are sentences; a column would wrap badly).
func printDoctor(w io.Writer, rs []preflight.Result) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CHECK\tSTATUS\tDETAIL")
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Name, strings.ToUpper(string(r.Status)), r.Detail)
		if r.Fix != "" {
			fmt.Fprintf(tw, "\t\tfix: %s\n", r.Fix)
		}
	}
	tw.Flush()
	failed, warned := 0, 0
	for _, r := range rs {
		switch r.Status {
		case preflight.Fail:
			failed++
		case preflight.Warn:
			warned++
		}
	}
	fmt.Fprintf(w, "%d check(s) failed, %d warning(s)\n", failed, warned)
}

// reportPreflight prints each problem on one stderr line before serving
// and tells whether the server must not start. Only failures that stopped
// the server before these checks existed (configuration file, signing key,
// ledger) are fatal; the rest are warnings, so a server that used to start
// still starts and fails the affected calls with their own errors.
func reportPreflight(ctx context.Context, g *globalOptions) (fatal bool) {
	for _, r := range runPreflight(ctx, g) {
		switch {
		case r.Status == preflight.Fail && r.Fatal:
			fmt.Fprintln(os.Stderr, "fluxgit: error: "+r.Line())
			fatal = true
		case r.Status == preflight.Fail || r.Status == preflight.Warn:
			fmt.Fprintln(os.Stderr, "fluxgit: warning: "+r.Line())
		}
	}
	return fatal
}
