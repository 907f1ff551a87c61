package main

import (
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/fluxgit/fluxgit/internal/audit"
)

// newAuditCmd groups the ledger commands that read or maintain a ledger:
// export, stats and prune (verify-audit stays a top-level command).
func newAuditCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Export, summarize or prune the audit ledger (see also verify-audit)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return &exitError{code: exitUsage, err: errors.New("audit needs a command: export, stats or prune (fluxgit audit --help)")}
		},
	}
	cmd.AddCommand(newAuditExportCmd(), newAuditStatsCmd(), newAuditPruneCmd())
	return cmd
}

// ledgerArg is the ledger FILE argument, else the configured ledger
// (FLUXGIT_MCP_AUDIT_LOG, else <run dir>/audit/mcp.jsonl).
func ledgerArg(cmd string, args []string) (string, error) {
	if len(args) > 1 {
		return "", &exitError{code: exitUsage, err: fmt.Errorf("%s takes at most one ledger FILE, got %d arguments", cmd, len(args))}
	}
	if len(args) == 1 {
		return args[0], nil
	}
	p, err := audit.PathFromEnv()
	if err != nil {
		return "", &exitError{code: exitUsage, err: fmt.Errorf("%w; or pass the ledger FILE", err)}
	}
	return p, nil
}

// verifyKeys are the --pubkey keys, else the public half of
// FLUXGIT_MCP_AUDIT_SIGN_KEY when it is set (the key that signs this
// host's entries checks them).
func verifyKeys(pubkeys []string) ([]ed25519.PublicKey, error) {
	if len(pubkeys) > 0 {
		return loadPubkeys(pubkeys)
	}
	s, err := audit.SignerFromEnv()
	if err != nil {
		return nil, &exitError{code: exitUsage, err: fmt.Errorf("%w; or pass --pubkey PEM with the public key", err)}
	}
	if s == nil {
		return nil, nil
	}
	return []ed25519.PublicKey{s.Public()}, nil
}

// filterFlags are --since, --until and --tool.
type filterFlags struct {
	since, until string
	tools        []string
}

func (f *filterFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.since, "since", "", "only entries at or after this time: RFC 3339, a UTC date (2026-11-30), Unix seconds, or an age (7d, 24h: that long ago)")
	cmd.Flags().StringVar(&f.until, "until", "", "only entries before this time (same forms as --since)")
	cmd.Flags().StringArrayVar(&f.tools, "tool", nil, "only entries of this exact tool name (repeatable)")
}

func (f *filterFlags) filter(now time.Time) (audit.Filter, error) {
	var out audit.Filter
	var err error
	if f.since != "" {
		if out.Since, err = audit.ParseTimeBound(f.since, now); err != nil {
			return out, &exitError{code: exitUsage, err: fmt.Errorf("--since: %w", err)}
		}
	}
	if f.until != "" {
		if out.Until, err = audit.ParseTimeBound(f.until, now); err != nil {
			return out, &exitError{code: exitUsage, err: fmt.Errorf("--until: %w", err)}
		}
	}
	if !out.Since.IsZero() && !out.Until.IsZero() && !out.Since.Before(out.Until) {
		return out, &exitError{code: exitUsage, err: fmt.Errorf("--since (%s) is not before --until (%s): no entry could be selected; swap or widen them",
			out.Since.UTC().Format(time.RFC3339), out.Until.UTC().Format(time.RFC3339))}
	}
	for _, t := range f.tools {
		if strings.TrimSpace(t) == "" {
			return out, &exitError{code: exitUsage, err: errors.New("--tool is empty; give an exact tool name such as repo.status")}
		}
	}
	out.Tools = f.tools
	return out, nil
}

// verifyFailure turns a failed verification into the command's exit: 2
// when there is no ledger, 3 when it is broken or its signatures went
// unchecked, 1 otherwise. what says what was not produced.
func verifyFailure(path, what string, rep audit.Report, err error) error {
	var ie *audit.IntegrityError
	switch {
	case errors.Is(err, audit.ErrSignaturesUnchecked):
		return &exitError{code: exitIntegrity, err: fmt.Errorf("audit ledger NOT verified, %s: %d entries or checkpoints are signed and no key was given to check them; pass --pubkey PEM or set %s",
			what, rep.UnverifiedSignatures, audit.EnvSignKey)}
	case errors.As(err, &ie):
		return &exitError{code: exitIntegrity, err: fmt.Errorf("audit ledger INVALID, %s: %w; `fluxgit verify-audit %s` reports the same", what, err, path)}
	case errors.Is(err, fs.ErrNotExist):
		return &exitError{code: exitUsage, err: fmt.Errorf("no audit ledger at %s; pass the ledger FILE or set %s", path, audit.EnvLog)}
	}
	return &exitError{code: exitFindings, err: fmt.Errorf("%s: %w", what, err)}
}

func newAuditExportCmd() *cobra.Command {
	var (
		format  string
		output  string
		pubkeys []string
		ff      filterFlags
	)
	cmd := &cobra.Command{
		Use:   "export [FILE] [--format jsonl|csv|json] [--since T] [--until T] [--tool NAME]... [--output PATH] [--pubkey PEM]...",
		Short: "Write the verified ledger's entries as JSONL, CSV or JSON; exit 0 ok, 3 broken or unverified (nothing written), 2 usage",
		Long: "export verifies the whole ledger FILE (default: the configured ledger) as verify-audit does and,\n" +
			"in the same pass, stages the entries the filters select in a private temporary file. Only when\n" +
			"the whole ledger verified are they written to stdout or, with --output, to a new 0600 file put in\n" +
			"place atomically. A broken chain, or signatures no key checked, exits 3 and writes nothing.\n\n" +
			"jsonl: each entry's line byte for byte as stored. json: one object {\"ledger\", \"verified\" (the\n" +
			"verify-audit report), \"filters\", \"entries\"}. csv: a header and the columns\n" +
			strings.Join(audit.CSVColumns[:9], ", ") + ",\n" + strings.Join(audit.CSVColumns[9:], ", ") + ";\n" +
			"a cell starting with = + - @ TAB or CR gets a leading ' so spreadsheets show it as text.\n\n" +
			"--since (inclusive) and --until (exclusive) take RFC 3339, a UTC date, Unix seconds, or an age\n" +
			"(7d: seven days ago). --pubkey defaults to the public half of " + audit.EnvSignKey + " when set.\n" +
			"Exit 0: exported; 3: the ledger is broken or its signatures went unchecked; 2: usage (bad flag or\n" +
			"time, no ledger at FILE, bad --output); 1: the export could not be written.",
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := ledgerArg("export", args)
			if err != nil {
				return err
			}
			if !slices.Contains(audit.Formats, format) {
				return &exitError{code: exitUsage, err: fmt.Errorf("--format %q is not one of %s", format, strings.Join(audit.Formats, ", "))}
			}
			f, err := ff.filter(time.Now())
			if err != nil {
				return err
			}
			keys, err := verifyKeys(pubkeys)
			if err != nil {
				return err
			}
			opts := audit.ExportOptions{Verify: audit.VerifyOptions{PublicKeys: keys}, Filter: f, Format: format}
			var res audit.ExportResult
			if output == "" {
				res, err = audit.Export(path, opts, cmd.OutOrStdout())
			} else {
				res, err = exportToFile(path, output, opts)
			}
			if err != nil {
				var ee *exitError
				if errors.As(err, &ee) {
					return err
				}
				return verifyFailure(path, "nothing was exported", res.Report, err)
			}
			dest := "stdout"
			if output != "" {
				dest = output
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "fluxgit: exported %d of %d verified entries to %s (chain_digest %s)\n",
				res.Selected, res.Report.Entries, dest, orNone(res.Report.ChainDigest))
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", audit.FormatJSONL, "jsonl, csv or json")
	cmd.Flags().StringVarP(&output, "output", "o", "", "write to this file (0600, replaced atomically) instead of stdout")
	cmd.Flags().StringArrayVar(&pubkeys, "pubkey", nil, "PEM file with an Ed25519 public key (repeatable; default: the public half of "+audit.EnvSignKey+")")
	ff.add(cmd)
	return cmd
}

// exportToFile exports into a temporary file next to output and renames it
// into place once everything was written and synced, so output holds a
// whole verified export or is left as it was.
func exportToFile(ledger, output string, opts audit.ExportOptions) (audit.ExportResult, error) {
	abs, err := filepath.Abs(output)
	if err != nil {
		return audit.ExportResult{}, &exitError{code: exitUsage, err: fmt.Errorf("--output %s: %w", output, err)}
	}
	if la, err := filepath.Abs(ledger); err == nil && isLedgerFile(la, abs) {
		return audit.ExportResult{}, &exitError{code: exitUsage, err: fmt.Errorf("--output %s would replace a file of the ledger itself; choose a path outside the ledger's files", output)}
	}
	if fi, err := os.Stat(abs); err == nil && fi.IsDir() {
		return audit.ExportResult{}, &exitError{code: exitUsage, err: fmt.Errorf("--output %s is a directory; name a file in it", output)}
	}
	dir := filepath.Dir(abs)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return audit.ExportResult{}, &exitError{code: exitUsage, err: fmt.Errorf("--output %s: the directory %s does not exist; create it first", output, dir)}
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(abs)+".*.tmp")
	if err != nil {
		return audit.ExportResult{}, fmt.Errorf("--output %s: %w", output, err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(0o600); err != nil {
		return audit.ExportResult{}, fmt.Errorf("--output %s: %w", output, err)
	}
	opts.TempDir = dir
	res, err := audit.Export(ledger, opts, tmp)
	if err != nil {
		return res, err
	}
	if err := tmp.Sync(); err != nil {
		return res, fmt.Errorf("write %s: %w", output, err)
	}
	if err := tmp.Close(); err != nil {
		return res, fmt.Errorf("write %s: %w", output, err)
	}
	if err := os.Rename(tmp.Name(), abs); err != nil {
		os.Remove(tmp.Name())
		return res, fmt.Errorf("write %s: %w", output, err)
	}
	done = true
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // durability of the rename; not every system can sync a directory
		d.Close()
	}
	return res, nil
}

// isLedgerFile reports whether p names the ledger at ledger or one of the
// files kept next to it (lock, rotated segments, checkpoints).
func isLedgerFile(ledger, p string) bool {
	if filepath.Dir(p) != filepath.Dir(ledger) {
		return false
	}
	base, name := filepath.Base(ledger), filepath.Base(p)
	for _, prefix := range []string{base + ".segment-", base + ".checkpoint-", "." + base + ".checkpoint-"} {
		if strings.HasPrefix(name, prefix) {
			return true
		}
	}
	return name == base || name == base+".lock"
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func newAuditStatsCmd() *cobra.Command {
	var (
		asJSON  bool
		pubkeys []string
		ff      filterFlags
	)
	cmd := &cobra.Command{
		Use:   "stats [FILE] [--json] [--since T] [--until T] [--tool NAME]... [--pubkey PEM]...",
		Short: "Count the verified ledger's entries, calls, refusals per tool and per day; exit 3 on a broken ledger",
		Long: "stats verifies the whole ledger FILE (default: the configured ledger) as export does and counts\n" +
			"the entries the filters select: entries, calls (a coalesced entry counts as the refused calls it\n" +
			"stands for), refusals (event_type write_block), first and last time, and per tool (entries,\n" +
			"calls, errors, refusals), per event_type, per result and per UTC day. --json prints one object.\n" +
			"Exit 0: counted; 3: the ledger is broken or its signatures went unchecked (nothing printed);\n" +
			"2: usage.",
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := ledgerArg("stats", args)
			if err != nil {
				return err
			}
			f, err := ff.filter(time.Now())
			if err != nil {
				return err
			}
			keys, err := verifyKeys(pubkeys)
			if err != nil {
				return err
			}
			st, err := audit.ComputeStats(path, audit.VerifyOptions{PublicKeys: keys}, f)
			if err != nil {
				return verifyFailure(path, "no statistics", st.Verified, err)
			}
			if asJSON {
				b, err := json.Marshal(st)
				if err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), string(b))
				return nil
			}
			printStats(cmd.OutOrStdout(), path, st)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the statistics as one JSON object")
	cmd.Flags().StringArrayVar(&pubkeys, "pubkey", nil, "PEM file with an Ed25519 public key (repeatable; default: the public half of "+audit.EnvSignKey+")")
	ff.add(cmd)
	return cmd
}

// printStats writes the statistics as aligned plain tables.
func printStats(w io.Writer, path string, st audit.Stats) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "ledger\t%s\n", path)
	fmt.Fprintf(tw, "verified\t%d entries, chain_digest %s\n", st.Verified.Entries, orNone(st.Verified.ChainDigest))
	fmt.Fprintf(tw, "entries\t%d\ncalls\t%d\nrefusals\t%d\nfirst\t%s\nlast\t%s\n", st.Entries, st.Calls, st.Refusals, orNone(st.First), orNone(st.Last))
	tw.Flush()
	table := func(header string, rows [][]any) {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, header)
		for _, r := range rows {
			for i, c := range r {
				if i > 0 {
					fmt.Fprint(tw, "\t")
				}
				fmt.Fprint(tw, c)
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
	}
	name := func(s string) string {
		if s == "" {
			return "-"
		}
		return s
	}
	var rows [][]any
	for _, t := range st.Tools {
		rows = append(rows, []any{name(t.Tool), t.Entries, t.Calls, t.Errors, t.Refusals})
	}
	table("TOOL\tENTRIES\tCALLS\tERRORS\tREFUSALS", rows)
	rows = nil
	for _, c := range st.EventTypes {
		rows = append(rows, []any{name(c.Name), c.Entries, c.Calls})
	}
	table("EVENT_TYPE\tENTRIES\tCALLS", rows)
	rows = nil
	for _, c := range st.Results {
		rows = append(rows, []any{name(c.Name), c.Entries, c.Calls})
	}
	table("RESULT\tENTRIES\tCALLS", rows)
	rows = nil
	for _, d := range st.Days {
		rows = append(rows, []any{d.Day, d.Entries, d.Calls, d.Refusals})
	}
	table("DAY (UTC)\tENTRIES\tCALLS\tREFUSALS", rows)
}

func newAuditPruneCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "prune [FILE] [--json]",
		Short: "Apply the configured retention policy to the ledger now; every pruning is recorded in the chain",
		Long: "prune applies the retention policy of\n  " + strings.Join(audit.RetentionVariables, "\n  ") + "\n" +
			"to the ledger FILE (default: the configured ledger) now, under the ledger's lock and with the code\n" +
			"the server runs after each rotation: each rotated segment it deletes is first recorded by an\n" +
			"audit.pruned entry and a retention checkpoint. It signs those entries with " + audit.EnvSignKey + ",\n" +
			"which a signed ledger requires. It prints each pruning, then the ledger's size.\n" +
			"Exit 0: done (also when nothing was due); 2: usage or configuration (bad variable, no ledger,\n" +
			"signed ledger without the key); 3: the ledger's segments are inconsistent; 1: other failures.",
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := ledgerArg("prune", args)
			if err != nil {
				return err
			}
			ret, err := audit.RetentionFromEnv()
			if err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			signer, err := audit.SignerFromEnv()
			if err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			l, err := audit.Open(audit.Options{Path: path, Signer: signer, Retention: &ret})
			if err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			defer l.Shutdown()
			res, err := l.Prune()
			if res.Prunings != nil {
				printPrune(cmd.OutOrStdout(), path, l.Policy(), res, asJSON)
			}
			var ie *audit.IntegrityError
			switch {
			case err == nil:
				return nil
			case errors.Is(err, audit.ErrNoLedger):
				return &exitError{code: exitUsage, err: fmt.Errorf("%w; pass the ledger FILE or set %s", err, audit.EnvLog)}
			case errors.As(err, &ie):
				return &exitError{code: exitIntegrity, err: fmt.Errorf("not pruning: %w; run `fluxgit verify-audit %s`", err, path)}
			case errors.Is(err, audit.ErrSignerNeeded):
				return &exitError{code: exitUsage, err: err}
			}
			return &exitError{code: exitFindings, err: fmt.Errorf("prune %s: %w", path, err)}
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as one JSON object")
	return cmd
}

// printPrune writes what prune did and the policy it applied.
func printPrune(w io.Writer, path string, pol audit.Retention, res audit.PruneResult, asJSON bool) {
	policy := map[string]any{"retain_bytes": pol.RetainBytes, "retain_age": ageText(pol.RetainAge),
		"segment_bytes": pol.SegmentBytes, "min_age": ageText(pol.MinAge)}
	if asJSON {
		b, _ := json.Marshal(map[string]any{"ledger": path, "policy": policy, "prunings": res.Prunings,
			"pruning_count": len(res.Prunings), "bytes": res.Bytes, "segments": res.Segments})
		fmt.Fprintln(w, string(b))
		return
	}
	fmt.Fprintf(w, "policy retain_bytes %d retain_age %s segment_bytes %d min_age %s\n",
		pol.RetainBytes, ageText(pol.RetainAge), pol.SegmentBytes, ageText(pol.MinAge))
	for _, p := range res.Prunings {
		fmt.Fprintf(w, "pruned %d..%d segment %s recorded at sequence %d: %s\n", p.FirstSequence, p.LastSequence,
			strings.Join(p.SegmentIDs, ","), p.Sequence, p.Reason)
	}
	fmt.Fprintf(w, "prunings %d\nbytes %d\nsegments %d\n", len(res.Prunings), res.Bytes, res.Segments)
}

func ageText(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	return audit.FormatAge(d)
}
