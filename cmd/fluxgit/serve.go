package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"

	"github.com/fluxgit/fluxgit/host/catalog"
	"github.com/fluxgit/fluxgit/host/mcp"
	"github.com/fluxgit/fluxgit/host/presence"
	"github.com/fluxgit/fluxgit/host/repopath"
	"github.com/fluxgit/fluxgit/host/rpc"
	"github.com/fluxgit/fluxgit/host/setup"
	"github.com/fluxgit/fluxgit/internal/audit"
	"github.com/fluxgit/fluxgit/internal/credpaths"
	"github.com/fluxgit/fluxgit/internal/resultshape"
	"github.com/fluxgit/fluxgit/plugins/builtin"
)

func newServeCmd(g *globalOptions) *cobra.Command {
	o := &httpOptions{}
	ts := &toolsetOptions{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve MCP on stdin/stdout (the default) or over Streamable HTTP (--transport http)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.resolve(cmd.Flags()); err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			sel, err := ts.resolve(cmd.Flags())
			if err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			return serve(cmd.Context(), g, o, sel)
		},
	}
	o.register(cmd.Flags())
	ts.register(cmd.Flags())
	return cmd
}

func serve(ctx context.Context, g *globalOptions, o *httpOptions, sel catalog.Selection) error {
	log, err := g.buildLogger()
	if err != nil {
		return &exitError{code: 1, err: err}
	}
	if reportPreflight(ctx, g) {
		return &exitError{code: 1, err: fmt.Errorf("configuration check failed (see above; `fluxgit doctor` shows every check)")}
	}
	stopTracing, err := startTracing(log)
	if err != nil {
		return &exitError{code: 1, err: err}
	}
	defer stopTracing()
	cfg, err := setup.LoadConfig(g.config(), builtin.Names())
	if err != nil {
		return &exitError{code: 1, err: err}
	}
	ledger, err := audit.FromEnv(log) // fails closed on a bad key or an empty path
	if err != nil {
		return &exitError{code: 1, err: err}
	}
	defer ledger.Close()
	self, err := os.Executable()
	if err != nil {
		return &exitError{code: 1, err: fmt.Errorf("locate own executable: %w", err)}
	}
	// The person's credential, policy and gateway-state files: the host
	// refuses path arguments leading there, and the providers (started
	// below, with this environment) refuse the paths they compute — the
	// same list, --config included, which is not in their environment.
	protected := credpaths.With(credpaths.Protected(), "host configuration", g.config())
	if err := os.Setenv(credpaths.EnvList, credpaths.Export(protected)); err != nil {
		return &exitError{code: 1, err: fmt.Errorf("pass the protected paths to the providers: %w", err)}
	}
	h, err := setup.Build(cfg, builtin.Names(), self, log)
	if err != nil {
		return &exitError{code: 1, err: err}
	}
	defer h.Providers.Shutdown()
	// Before the server renders anything: tools/list, the instructions and
	// the unknown-tool error then list only the selected tools.
	if err := sel.Check(h.Catalog); err != nil {
		return &exitError{code: exitUsage, err: fmt.Errorf("--tools / FLUXGIT_TOOLS: %w", err)}
	}
	if err := sel.Apply(h.Catalog); err != nil {
		return &exitError{code: 1, err: err}
	}

	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	// runDir arguments may always name the run directory the ledger uses;
	// without one (no home directory), only directories inside the roots.
	runDir, _ := audit.RunDir()
	srv := mcp.New(mcp.Options{
		Catalog:   h.Catalog,
		Providers: h.Providers,
		Roots:     repopath.FromEnv().WithRunDir(runDir).WithProtected(protected),
		Name:      "fluxgit",
		Version:   buildVersion(),
		Log:       log,
		Recorder:  recorder(ledger),
		Presence:  presenceRecord(log),
		// The providers read the same switch from the environment they
		// inherit, so data and envelope take the same shape.
		ReferenceShape: !resultshape.Lean(),
	})
	defer srv.Close()
	if o.transport == "http" {
		return serveHTTP(ctx, srv, o, log)
	}

	rpcLog := log.Named("rpc")
	stream := rpc.NewStream(endOnSignal(ctx, stop, os.Stdin), os.Stdout, rpc.WithLogFunc(func(format string, args ...any) {
		// Rejected frames are the client's problem, reported to it in the
		// reply; keep them out of the log unless asked for.
		rpcLog.Debug(fmt.Sprintf(format, args...))
	}))
	// The signal ends the input, not the session: see endOnSignal.
	return srv.Serve(context.WithoutCancel(ctx), stream)
}

// endOnSignal returns r as it is read until ctx ends (SIGTERM or Ctrl-C),
// then as if it had reached its end. The session then does what it does
// on EOF: requests already received run to their replies (host/mcp's
// drain grace) and reach the ledger, and the process exits, instead of
// cancelling them. A second signal kills at once (stop restores the
// default handling). The goroutine copying r may stay blocked in a read
// of stdin; the process is exiting.
func endOnSignal(ctx context.Context, stop func(), r io.Reader) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		_, err := io.Copy(pw, r)
		_ = pw.CloseWithError(err)
	}()
	go func() {
		<-ctx.Done()
		stop()
		_ = pw.Close()
	}()
	return pr
}

// presenceRecord is this process's presence record (host/presence), or
// nil when FLUXGIT_MCP_PRESENCE_DISABLED turns it off. srv.Close deletes
// it when the session ends cleanly.
func presenceRecord(log hclog.Logger) mcp.Presence {
	w := presence.FromEnv(func(msg string) { log.Warn(msg) })
	if w == nil {
		return nil // a nil *Writer in the interface would not be nil
	}
	return w
}

// recorder is the ledger as the host's call recorder, or nil for a
// disabled ledger, so that it costs the host nothing (a nil *Ledger inside
// a non-nil interface would be called).
func recorder(l *audit.Ledger) mcp.Recorder {
	if l == nil {
		return nil
	}
	return l
}
