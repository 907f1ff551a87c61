package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"

	"github.com/fluxgit/fluxgit/cmd/fluxgit/internal/preflight"
	"github.com/fluxgit/fluxgit/gateway/execute"
	"github.com/fluxgit/fluxgit/gateway/journal"
	"github.com/fluxgit/fluxgit/gateway/policy"
	"github.com/fluxgit/fluxgit/gateway/server"
	"github.com/fluxgit/fluxgit/internal/audit"
	"github.com/fluxgit/fluxgit/internal/credpaths"
)

// gatewayOptions are the flags of `fluxgit gateway` and its subcommands.
type gatewayOptions struct {
	addr   string
	runDir string
	ttl    time.Duration
	// Intake bounds (server.Config.MaxPending…).
	maxPendingPerAgent, maxPending int
	maxBytesPerAgent, maxBytes     int64
}

// resolvedRunDir is --run-dir, else FLUXGIT_RUN_DIR, else the platform
// default, made absolute.
func (o *gatewayOptions) resolvedRunDir() (string, error) {
	d := o.runDir
	if d == "" {
		var err error
		if d, err = audit.RunDir(); err != nil {
			return "", fmt.Errorf("no run directory: %w; pass --run-dir or set %s", err, audit.EnvRunDir)
		}
	}
	abs, err := filepath.Abs(d)
	if err != nil {
		return "", fmt.Errorf("run directory %s: %w", d, err)
	}
	return abs, nil
}

func newGatewayCmd(g *globalOptions) *cobra.Command {
	o := &gatewayOptions{}
	cmd := &cobra.Command{
		Use:   "gateway",
		Short: "Run the approval gateway: a person approves each write proposal, fluxgit executes it",
		Long: "gateway serves the write-handshake endpoints on loopback. Agents propose Git operations\n" +
			"through `fluxgit` (set FLUXGIT_MCP_HANDSHAKE_ADDR to the line it prints); a person approves or\n" +
			"rejects each one on the approval page it prints, or with `fluxgit gateway list|show|approve|reject`;\n" +
			"approved operations run with the git CLI behind a restore point. Each proposal that arrives and\n" +
			"each decision and outcome gets one line on the gateway's stderr; `fluxgit gateway watch` prints\n" +
			"the same lines in another terminal.\n\n" +
			"FLUXGIT_MCP_AGENT_POLICY names an agent policy file (schemas/agent-policy.schema.json); a file\n" +
			"that cannot be loaded stops the gateway from starting. Its autoApprove rules, if any, approve the\n" +
			"low-risk proposals they name in your stead (docs/approvals.md, Approving by policy).\n\n" +
			"The CLI's secret is kept in a private per-user directory (" + credpaths.EnvSecretDir + ", else\n" +
			"$XDG_RUNTIME_DIR/fluxgit, else the per-user cache or config directory), never in the run directory.\n" +
			"The gateway does not start when that directory, the run directory's gateway state, the signing key or\n" +
			"the policy file lies inside an allowed root or a git work tree, where an agent's read tools reach\n" +
			"(docs/security.md).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runGateway(cmd.Context(), g, o, cmd.OutOrStdout())
		},
	}
	cmd.PersistentFlags().StringVar(&o.runDir, "run-dir", "", "FluxGit run directory: journal, restore points, and the audit ledger unless "+audit.EnvLog+" is set (default $"+audit.EnvRunDir+" or the platform default); it must lie outside every allowed root and git work tree")
	cmd.Flags().StringVar(&o.addr, "addr", server.DefaultAddr, "loopback ip:port to listen on (127.0.0.0/8 or [::1])")
	cmd.Flags().DurationVar(&o.ttl, "proposal-ttl", server.DefaultTTL, "how long a proposal waits for a person before it expires")
	cmd.Flags().IntVar(&o.maxPendingPerAgent, "max-pending-per-agent", server.DefaultMaxPendingPerAgent, "pending proposals one agent id may have; more are refused (HTTP 429) until some are decided or cancelled")
	cmd.Flags().IntVar(&o.maxPending, "max-pending", server.DefaultMaxPending, "pending proposals all agents together may have (agent ids are self-declared)")
	cmd.Flags().Int64Var(&o.maxBytesPerAgent, "max-stored-bytes-per-agent", server.DefaultMaxStoredBytesPerAgent, "proposal body bytes the journal keeps for one agent id, decided ones included until pruned an hour after they end")
	cmd.Flags().Int64Var(&o.maxBytes, "max-stored-bytes", server.DefaultMaxStoredBytes, "proposal body bytes the journal keeps for all agents together")
	cmd.AddCommand(newGatewayListCmd(o), newGatewayShowCmd(o), newGatewayApproveCmd(o), newGatewayRejectCmd(o),
		newGatewayReconcileCmd(o), newGatewayUndoCmd(o), newGatewayRedoCmd(o), newGatewayWatchCmd(o), newGatewayOpenCmd(o))
	return cmd
}

func runGateway(ctx context.Context, g *globalOptions, o *gatewayOptions, out io.Writer) error {
	// A misspelt variable (FLUXGIT_MCP_AGENT_POLICI) would leave the
	// gateway without the person's policy without a word: say so, as
	// `fluxgit serve` does (issue 22).
	for _, r := range environmentChecks(os.Environ()) {
		if r.Status == preflight.Warn {
			fmt.Fprintln(os.Stderr, "fluxgit: warning: "+r.Line())
		}
	}
	if o.maxPendingPerAgent < 1 || o.maxPending < 1 || o.maxBytesPerAgent < 1 || o.maxBytes < 1 {
		return &exitError{code: exitUsage, err: errors.New("the gateway did not start: --max-pending-per-agent, --max-pending, --max-stored-bytes-per-agent and --max-stored-bytes take a positive number (leave a flag out for its default)")}
	}
	pol, err := policy.FromEnv()
	if err != nil {
		return &exitError{code: 1, err: fmt.Errorf("the gateway did not start: agent policy (%s): %w", policy.EnvPolicy, err)}
	}
	runDir, err := o.resolvedRunDir()
	if err != nil {
		return &exitError{code: 1, err: err}
	}
	if o.runDir != "" {
		// The ledger lives in the run directory too (unless its own
		// variable says otherwise): one run directory, one ledger.
		if err := os.Setenv(audit.EnvRunDir, runDir); err != nil {
			return &exitError{code: 1, err: fmt.Errorf("set %s: %w", audit.EnvRunDir, err)}
		}
	}
	secretDir, err := gatewayStateCheck(runDir, pol.AutoApproves())
	if err != nil {
		return &exitError{code: 1, err: fmt.Errorf("the gateway did not start: %w", err)}
	}
	ledger, err := audit.FromEnv(g.logger())
	if err != nil {
		return &exitError{code: 1, err: fmt.Errorf("the gateway did not start: %w", err)}
	}
	defer ledger.Close()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slogLevel(g.levelName())}))
	if pol != nil {
		log.Info("agent policy loaded", "file", os.Getenv(policy.EnvPolicy), "autoApprove", pol.AutoApproves())
	}
	srv, err := server.New(server.Config{
		Addr:      o.addr,
		RunDir:    runDir,
		SecretDir: secretDir,
		TTL:       o.ttl,
		Policy:    pol,
		// An auto-approval re-checks the policy's reach against the same
		// roots the start-up check used.
		AllowedRoots: allowedRoots(),
		Ledger:       ledger,
		Log:          log,
		Out:          out,
		Notices:      os.Stderr,

		MaxPendingPerAgent:     o.maxPendingPerAgent,
		MaxPending:             o.maxPending,
		MaxStoredBytesPerAgent: o.maxBytesPerAgent,
		MaxStoredBytes:         o.maxBytes,
		GuardOverride:          os.Getenv(envGuardOverride) == "1",
	})
	if err != nil {
		return &exitError{code: 1, err: fmt.Errorf("the gateway did not start: %w", err)}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := srv.Serve(ctx); err != nil {
		return &exitError{code: 1, err: err}
	}
	return nil
}

// slogLevel maps the --log-level names to slog levels.
func slogLevel(name string) slog.Level {
	switch hclog.LevelFromString(name) {
	case hclog.Trace, hclog.Debug:
		return slog.LevelDebug
	case hclog.Warn:
		return slog.LevelWarn
	case hclog.Error:
		return slog.LevelError
	}
	return slog.LevelInfo
}

// gatewayClient connects to the gateway running on the chosen run dir.
func gatewayClient(o *gatewayOptions) (*server.Client, error) {
	runDir, err := o.resolvedRunDir()
	if err != nil {
		return nil, &exitError{code: 1, err: err}
	}
	c, err := server.NewClient(runDir)
	if err != nil {
		return nil, &exitError{code: 1, err: err}
	}
	return c, nil
}

// clientErr turns a gateway refusal into the command's failure.
func clientErr(err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: 1, err: err}
}

func idArg(verb string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != 1 {
			return &exitError{code: exitUsage, err: fmt.Errorf("%s takes exactly one previewId (see fluxgit gateway list)", verb)}
		}
		return nil
	}
}

func newGatewayListCmd(o *gatewayOptions) *cobra.Command {
	var (
		statuses      []string
		limit, offset int
	)
	cmd := &cobra.Command{
		Use:   "list [--status pending,approved] [--limit N] [--offset N]",
		Short: "List the running gateway's proposals, newest first, one page at a time",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 1 || limit > 1000 || offset < 0 {
				return &exitError{code: exitUsage, err: errors.New("--limit takes 1 to 1000 and --offset 0 or more")}
			}
			c, err := gatewayClient(o)
			if err != nil {
				return err
			}
			page, err := c.ListPage(cmd.Context(), server.ListOptions{Statuses: statuses, Limit: limit, Offset: offset})
			if err != nil {
				return clientErr(err)
			}
			out := cmd.OutOrStdout()
			printTable(out, page.Proposals, time.Now())
			printPageNote(out, page, statuses)
			return nil
		},
	}
	cmd.Flags().StringSliceVar(&statuses, "status", nil, "only these statuses (pending, approved, executing, completed, failed, rejected, expired, cancelled)")
	cmd.Flags().IntVar(&limit, "limit", 200, "proposals per page (1-1000)")
	cmd.Flags().IntVar(&offset, "offset", 0, "skip this many proposals (the next page starts at offset+limit)")
	return cmd
}

// printPageNote says when the page does not show every proposal, and how
// to see the others.
func printPageNote(w io.Writer, page server.ListPage, statuses []string) {
	n := len(page.Proposals)
	if page.Offset == 0 && n >= page.Total {
		return
	}
	if n == 0 {
		fmt.Fprintf(w, "Nothing from offset %d: there are %d proposal(s); start at --offset 0.\n", page.Offset, page.Total)
		return
	}
	fmt.Fprintf(w, "Showing %d-%d of %d.", page.Offset+1, page.Offset+n, page.Total)
	if next := page.Offset + n; next < page.Total {
		st := ""
		if len(statuses) > 0 {
			st = " --status " + strings.Join(statuses, ",")
		}
		fmt.Fprintf(w, " Next page: fluxgit gateway list%s --limit %d --offset %d", st, page.Limit, next)
	}
	fmt.Fprintln(w)
}

// printTable prints one line per proposal, with what a person can do
// about it.
func printTable(w io.Writer, views []server.View, now time.Time) {
	if len(views) == 0 {
		fmt.Fprintln(w, "No proposals.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PREVIEW ID\tSTATUS\tOPERATION\tAGENT\tREPOSITORY\tNOTE")
	for _, v := range views {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", printable(v.PreviewID), v.Status, printable(v.OperationType), printable(v.AgentID), printable(v.RepoPath), printable(note(v, now)))
	}
	_ = tw.Flush()
}

func note(v server.View, now time.Time) string {
	switch {
	case v.ReconciliationRequired:
		return "interrupted by a restart: check the repository, then reconcile --as completed|failed"
	case v.Status == journal.Pending:
		exp, err := time.Parse(time.RFC3339Nano, v.ExpiresAt)
		if err != nil {
			return ""
		}
		return "expires in " + exp.Sub(now).Round(time.Second).String()
	case v.Status == journal.Rejected:
		return "reason: " + oneLine(v.RejectionReason, 60)
	case v.Status == journal.Completed || v.Status == journal.Failed:
		var r struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(v.Result, &r)
		return oneLine(r.Message, 60)
	}
	return ""
}

// printable replaces every rune a terminal would not print as itself
// (escape sequences, other control characters, bidirectional overrides)
// with U+FFFD.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if !unicode.IsPrint(r) && r != ' ' {
			return '\uFFFD'
		}
		return r
	}, s)
}

// oneLine flattens s to one line of at most n characters.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func newGatewayShowCmd(o *gatewayOptions) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Print one proposal: what it changes as plain text, then its JSON record (body, review, binding, outcome)",
		Long: "show prints the card of one proposal as plain text — the summary, the facts (target branch, where a\n" +
			"branch points, a worktree's real path), and what changes: commits coming in, replayed, leaving the\n" +
			"branch, sent or overwritten, and each file with its diff (bounded; the approval page expands the\n" +
			"rest) — then the outcome when there is one, then the whole record as JSON. --json prints only the JSON.",
		Args: idArg("show"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := gatewayClient(o)
			if err != nil {
				return err
			}
			v, err := c.Show(cmd.Context(), args[0])
			if err != nil {
				return clientErr(err)
			}
			if !asJSON {
				fmt.Fprint(cmd.OutOrStdout(), showText(v))
			}
			return printJSON(cmd.OutOrStdout(), v)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print only the JSON record")
	return cmd
}

// showText is the plain-text part of `gateway show`: the card as the
// person reads it (server.ReviewText) and the outcome's message.
func showText(v server.View) string {
	s := fmt.Sprintf("Proposal %s: %s in %s by agent %q, %s\n", printable(v.PreviewID), printable(v.OperationType), printable(v.RepoPath), printable(v.AgentID), v.Status)
	var rv execute.Review
	if len(v.Review) > 0 && json.Unmarshal(v.Review, &rv) == nil {
		s += server.ReviewText(rv)
	}
	var res struct {
		Status  string `json:"status"`
		Message string `json:"message"`
	}
	if len(v.Result) > 0 && json.Unmarshal(v.Result, &res) == nil {
		s += "\nOutcome: " + printable(res.Status) + ": " + printable(res.Message) + "\n"
	}
	return s + "\n--- the whole record (JSON) ---\n"
}

func printJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return &exitError{code: 1, err: fmt.Errorf("encode: %w", err)}
	}
	_, err = fmt.Fprintln(w, string(b))
	return err
}

func newGatewayApproveCmd(o *gatewayOptions) *cobra.Command {
	var (
		req  server.ApproveRequest
		wait bool
	)
	cmd := &cobra.Command{
		Use:   "approve ID [ID...] [--confirm-branch B] [--steps 0,2] [--force-push] [--wait]",
		Short: "Approve pending proposals; the gateway executes them",
		Long: "approve approves a pending proposal. A hard reset needs --confirm-branch with the branch name,\n" +
			"a force-with-lease push --force-push, a plan with destructive steps --steps listing each of\n" +
			"them (0-based); `fluxgit gateway show ID` prints what the proposal requires under review.requires.\n\n" +
			"Several IDs approve several proposals with one yes; each must be pending and need no\n" +
			"confirmation (approve one that needs a flag alone). A plan is one proposal: approving it\n" +
			"approves all of its steps.\n\n" +
			"approve shows the proposals on the terminal and goes ahead only when you type yes there: it\n" +
			"reads the terminal itself (/dev/tty, the Windows console), never stdin, so an agent running it\n" +
			"from its own shell is refused.",
		Args: idsArg("approve"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var ids []string // each once, in the order given
			for _, a := range args {
				if !slices.Contains(ids, a) {
					ids = append(ids, a)
				}
			}
			c, err := gatewayClient(o)
			if err != nil {
				return err
			}
			batch := len(ids) > 1
			if batch && (req.TypedBranch != "" || len(req.Steps) > 0 || req.ForcePush) {
				return &exitError{code: exitUsage, err: errors.New("--confirm-branch, --steps and --force-push confirm one proposal: approve the proposal that needs them alone, and the others together; nothing changed")}
			}
			// Every proposal is checked before the person is asked, so a
			// yes never approves only part of what was listed.
			var summaries []string
			for _, id := range ids {
				cur, err := c.Show(cmd.Context(), id)
				if err != nil {
					return clientErr(err)
				}
				if batch && cur.Status != journal.Pending {
					return &exitError{code: 1, err: fmt.Errorf("proposal %s is %s, not pending; leave it out; nothing changed", id, cur.Status)}
				}
				if err := missingConfirmations(cur, req); err != nil {
					if batch {
						return &exitError{code: exitUsage, err: fmt.Errorf("%v: approve %s alone with its flags, and the others together", err, id)}
					}
					return err
				}
				summaries = append(summaries, describe("Approve", cur))
			}
			verb := "approve"
			if batch {
				verb = fmt.Sprintf("approve all %d", len(ids))
			}
			if err := confirmOnTerminal(verb, strings.Join(summaries, "\n")); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			views := make([]server.View, 0, len(ids))
			for _, id := range ids {
				v, err := c.Approve(cmd.Context(), id, req)
				if err != nil {
					if len(views) > 0 {
						err = fmt.Errorf("%w (approved before it: %d of %d)", err, len(views), len(ids))
					}
					return clientErr(err)
				}
				fmt.Fprintf(out, "Approved %s (%s in %s); the gateway executes it now.\n", v.PreviewID, v.OperationType, v.RepoPath)
				views = append(views, v)
			}
			if !wait {
				return nil
			}
			failed := false
			for _, v := range views {
				for !v.Status.Terminal() {
					select {
					case <-cmd.Context().Done():
						return cmd.Context().Err()
					case <-time.After(200 * time.Millisecond):
					}
					if v, err = c.Show(cmd.Context(), v.PreviewID); err != nil {
						return clientErr(err)
					}
				}
				fmt.Fprintf(out, "%s: %s\n", v.PreviewID, v.Status)
				if err := printJSON(out, v.Result); err != nil {
					return err
				}
				failed = failed || v.Status != journal.Completed
			}
			if failed {
				return &exitError{code: 1}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&req.TypedBranch, "confirm-branch", "", "the branch name, typed to confirm a hard reset")
	cmd.Flags().IntSliceVar(&req.Steps, "steps", nil, "plan steps (0-based) whose destructive effect you accept")
	cmd.Flags().BoolVar(&req.ForcePush, "force-push", false, "accept a force-with-lease push")
	cmd.Flags().BoolVar(&req.OverrideGuard, "override-guard", false, "commit even into files another agent holds exclusively (the shift-roster guard)")
	cmd.Flags().BoolVar(&wait, "wait", false, "wait for the executions and print their results (exit 1 unless all completed)")
	return cmd
}

// idsArg accepts one or more previewIds.
func idsArg(verb string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) == 0 {
			return &exitError{code: exitUsage, err: fmt.Errorf("%s takes one or more previewIds (see fluxgit gateway list)", verb)}
		}
		return nil
	}
}

func newGatewayRejectCmd(o *gatewayOptions) *cobra.Command {
	var reason string
	cmd := &cobra.Command{
		Use:   "reject ID --reason TEXT",
		Short: "Reject a pending proposal; the agent reads the reason",
		Long: "reject rejects a pending proposal after you type yes on the terminal (read from the\n" +
			"terminal itself, never stdin: an agent's shell is refused).",
		Args: idArg("reject"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.TrimSpace(reason) == "" {
				return &exitError{code: exitUsage, err: errors.New("reject needs --reason TEXT: the agent reads it to decide what to do next")}
			}
			c, err := gatewayClient(o)
			if err != nil {
				return err
			}
			cur, err := c.Show(cmd.Context(), args[0])
			if err != nil {
				return clientErr(err)
			}
			if err := confirmOnTerminal("reject", describe("Reject", cur)+"\nReason the agent reads: "+printable(oneLine(reason, 200))); err != nil {
				return err
			}
			v, err := c.Reject(cmd.Context(), args[0], reason)
			if err != nil {
				return clientErr(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Rejected %s (%s in %s).\n", v.PreviewID, v.OperationType, v.RepoPath)
			return nil
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why (required; the agent reads it)")
	return cmd
}

func newGatewayReconcileCmd(o *gatewayOptions) *cobra.Command {
	var as, noteText string
	cmd := &cobra.Command{
		Use:   "reconcile ID --as completed|failed [--note TEXT]",
		Short: "Settle a proposal that was executing when the gateway stopped",
		Long: "A proposal that was executing when the gateway stopped is never re-run. Look at the\n" +
			"repository, then record what happened: --as completed or --as failed.",
		Args: idArg("reconcile"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if as != string(journal.Completed) && as != string(journal.Failed) {
				return &exitError{code: exitUsage, err: errors.New("reconcile needs --as completed or --as failed")}
			}
			c, err := gatewayClient(o)
			if err != nil {
				return err
			}
			cur, err := c.Show(cmd.Context(), args[0])
			if err != nil {
				return clientErr(err)
			}
			if err := confirmOnTerminal("reconcile", describe("Record as "+as+":", cur)); err != nil {
				return err
			}
			v, err := c.Reconcile(cmd.Context(), args[0], as, noteText)
			if err != nil {
				return clientErr(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Recorded %s as %s.\n", v.PreviewID, v.Status)
			return nil
		},
	}
	cmd.Flags().StringVar(&as, "as", "", "completed or failed (required)")
	cmd.Flags().StringVar(&noteText, "note", "", "what you found (the agent reads it in the result message)")
	return cmd
}

func newGatewayUndoCmd(o *gatewayOptions) *cobra.Command {
	return newGatewayRestoreCmd(o, "undo",
		"Undo the newest restore point of a repository not undone yet (again: the one before)",
		"Undo the newest restore point of %s that is not undone yet (a commit: git reset --soft, its changes stay staged; others: git reset --keep, which refuses rather than lose local changes)?")
}

func newGatewayRedoCmd(o *gatewayOptions) *cobra.Command {
	return newGatewayRestoreCmd(o, "redo",
		"Redo the restore point of a repository undone last",
		"Redo the restore point of %s undone last?")
}

// newGatewayRestoreCmd is `gateway undo` or `gateway redo`: both ask on the
// terminal first, and the gateway records each in its history and ledger.
func newGatewayRestoreCmd(o *gatewayOptions, action, short, question string) *cobra.Command {
	var repo string
	cmd := &cobra.Command{
		Use:   action + " --repo PATH",
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if strings.TrimSpace(repo) == "" {
				return &exitError{code: exitUsage, err: fmt.Errorf("%s needs --repo PATH: the repository whose restore point to %s", action, action)}
			}
			abs, err := filepath.Abs(repo)
			if err != nil {
				return &exitError{code: exitUsage, err: fmt.Errorf("--repo %s: %w", repo, err)}
			}
			c, err := gatewayClient(o)
			if err != nil {
				return err
			}
			if err := confirmOnTerminal(action, fmt.Sprintf(question, abs)); err != nil {
				return err
			}
			f := c.Undo
			if action == "redo" {
				f = c.Redo
			}
			u, err := f(cmd.Context(), abs)
			if err != nil {
				return clientErr(err)
			}
			past := map[string]string{"undo": "Undone", "redo": "Redone"}[action]
			fmt.Fprintf(cmd.OutOrStdout(), "%s: the %s %s in %s (%s).\n", past, u.Operation, u.ID, u.RepoPath, u.How)
			if u.DroppedStash != "" {
				fmt.Fprintf(cmd.OutOrStdout(), "The changes are back in the work tree; the safety stash %s was dropped.\n", u.DroppedStash)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&repo, "repo", "", "the repository (required)")
	return cmd
}

// describe is the proposal as the terminal confirmation shows it. Every
// field but the verb comes from the agent: control characters are
// replaced, so escape sequences cannot repaint the question.
func describe(verb string, v server.View) string {
	s := fmt.Sprintf("%s %s: %s in %s, proposed by agent %q", verb, printable(v.PreviewID), printable(v.OperationType), printable(v.RepoPath), printable(v.AgentID))
	if r := printable(oneLine(v.Reason, 200)); r != "" {
		s += "\nThe agent's reason: " + r
	}
	return s + "\n(`fluxgit gateway show " + v.PreviewID + "` prints all of it.)"
}

// missingConfirmations names the flag for each confirmation the proposal
// needs and the command line lacks, before the person is asked anything.
func missingConfirmations(v server.View, req server.ApproveRequest) error {
	if v.Status != journal.Pending || len(v.Review) == 0 {
		return nil // the gateway's own refusal says what is wrong
	}
	var rv execute.Review
	if err := json.Unmarshal(v.Review, &rv); err != nil {
		return nil
	}
	var miss []string
	if want := rv.Requires.TypeBranch; want != "" && req.TypedBranch != want {
		miss = append(miss, fmt.Sprintf("--confirm-branch %s (the branch this hard reset moves, typed to confirm it)", want))
	}
	var steps []string
	for _, st := range rv.Requires.DestructiveSteps {
		if !slices.Contains(req.Steps, st) {
			steps = append(steps, strconv.Itoa(st))
		}
	}
	if len(steps) > 0 {
		all := make([]string, 0, len(rv.Requires.DestructiveSteps))
		for _, st := range rv.Requires.DestructiveSteps {
			all = append(all, strconv.Itoa(st))
		}
		miss = append(miss, fmt.Sprintf("--steps %s (every destructive plan step, 0-based; missing %s)", strings.Join(all, ","), strings.Join(steps, ",")))
	}
	if rv.Requires.ForcePush && !req.ForcePush {
		miss = append(miss, "--force-push (this push is a force-with-lease push)")
	}
	if len(miss) == 0 {
		return nil
	}
	return &exitError{code: exitUsage, err: fmt.Errorf("approving %s needs %s; nothing changed", v.PreviewID, strings.Join(miss, " and "))}
}
