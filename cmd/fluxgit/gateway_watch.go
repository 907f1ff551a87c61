package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/fluxgit/fluxgit/gateway/journal"
	"github.com/fluxgit/fluxgit/gateway/server"
)

// Watch polling (issue 25): the CLI API has no stream, so watch reads the
// open proposals and the newest ones at a modest interval. Open
// proposals are few (the intake quota bounds pending ones at 100 by
// default), so each poll is small.
const (
	defaultWatchInterval = time.Second
	minWatchInterval     = 100 * time.Millisecond
	// watchRecent is how many of the newest proposals each poll reads as
	// well, so one that arrives and ends between two polls (an agent's
	// quick cancel) still gets its lines.
	watchRecent = 50
)

var openStatuses = []string{string(journal.Pending), string(journal.Approved), string(journal.Executing)}

func newGatewayWatchCmd(o *gatewayOptions) *cobra.Command {
	var interval time.Duration
	cmd := &cobra.Command{
		Use:   "watch [--interval 1s]",
		Short: "Follow the running gateway's queue: the pending proposals, then one line per arrival and decision",
		Long: "watch prints the proposals waiting for a person, then one line for each proposal that arrives\n" +
			"and each decision and outcome (approved, rejected, expired, cancelled, executed, failed), the\n" +
			"same lines the gateway prints on its own terminal, until you press Ctrl-C. It polls the gateway\n" +
			"every --interval; when the gateway stops it says so and exits with status 1.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if interval < minWatchInterval {
				return &exitError{code: exitUsage, err: fmt.Errorf("--interval must be at least %s", minWatchInterval)}
			}
			c, err := gatewayClient(o)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return watchGateway(ctx, c, cmd.OutOrStdout(), interval)
		},
	}
	cmd.Flags().DurationVar(&interval, "interval", defaultWatchInterval, "how often to ask the gateway (at least 100ms)")
	return cmd
}

// watcher remembers the last status printed for each proposal.
type watcher struct {
	c     *server.Client
	out   io.Writer
	since time.Time         // proposals created before the watch began are history
	last  map[string]string // previewId → status printed
}

// watchGateway runs the watch until ctx ends (nil error) or the gateway
// cannot be reached (an exit error that says so).
func watchGateway(ctx context.Context, c *server.Client, out io.Writer, interval time.Duration) error {
	w := &watcher{c: c, out: out, since: time.Now().Add(-time.Second), last: map[string]string{}}
	open, err := c.List(ctx, openStatuses...)
	if err != nil {
		return w.gone(ctx, err)
	}
	var pending []server.View
	for _, v := range open {
		if v.Status == journal.Pending {
			pending = append(pending, v)
		}
	}
	fmt.Fprintf(out, "Watching the gateway at %s; Ctrl-C stops.\n", c.Addr)
	if len(pending) == 0 {
		fmt.Fprintln(out, "Nothing is waiting for a decision.")
	} else {
		fmt.Fprintf(out, "%d waiting for a decision:\n", len(pending))
	}
	oldestFirst(open)
	for _, v := range open {
		w.emit(v, true)
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			fmt.Fprintln(out, "watch stopped.")
			return nil
		case <-t.C:
		}
		if err := w.poll(ctx); err != nil {
			return w.gone(ctx, err)
		}
	}
}

// gone is the end of a watch whose gateway went away; an interrupt that
// cut a request short is an ordinary stop.
func (w *watcher) gone(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		fmt.Fprintln(w.out, "watch stopped.")
		return nil
	}
	var ae *server.APIError
	if errors.As(err, &ae) {
		return &exitError{code: 1, err: fmt.Errorf("the gateway at %s refused the watch (%s); if it was restarted, run fluxgit gateway watch again", w.c.Addr, ae.Msg)}
	}
	return &exitError{code: 1, err: fmt.Errorf("the gateway at %s is gone (it stopped, or was restarted elsewhere); watch ends: %w", w.c.Addr, err)}
}

// poll reads the open and the newest proposals, prints what changed, and
// reads each proposal that left the open list to print how it ended.
func (w *watcher) poll(ctx context.Context) error {
	open, err := w.c.List(ctx, openStatuses...)
	if err != nil {
		return err
	}
	recent, err := w.c.ListPage(ctx, server.ListOptions{Limit: watchRecent})
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	var rows []server.View
	for _, v := range append(open, recent.Proposals...) {
		if !seen[v.PreviewID] {
			seen[v.PreviewID] = true
			rows = append(rows, v)
		}
	}
	for id, st := range w.last {
		if seen[id] || terminal(st) {
			continue
		}
		v, err := w.c.Show(ctx, id)
		var ae *server.APIError
		if errors.As(err, &ae) && ae.Status == 404 {
			delete(w.last, id) // pruned
			continue
		}
		if err != nil {
			return err
		}
		v.Body, v.Binding = nil, nil
		rows = append(rows, v)
	}
	oldestFirst(rows)
	for _, v := range rows {
		w.emit(v, false)
	}
	return nil
}

// emit prints the lines between what was printed for v and its status
// now. A proposal first seen already decided gets its arrival line too,
// and an approval between two polls its approved line, so no arrival or
// decision is skipped because it was quick.
func (w *watcher) emit(v server.View, initial bool) {
	prev, known := w.last[v.PreviewID]
	st := string(v.Status)
	if known && prev == st {
		return
	}
	if !known && initial {
		w.print(v)
		w.last[v.PreviewID] = st
		return
	}
	if !known {
		created, err := time.Parse(time.RFC3339Nano, v.CreatedAt)
		if v.Status.Terminal() && err == nil && created.Before(w.since) {
			w.last[v.PreviewID] = st // history from before the watch
			return
		}
		// One the person's policy approved on arrival never waited: no
		// "proposal … approve:" line for it, only its approval.
		if v.Status != journal.Pending && !strings.HasPrefix(v.DecidedBy, server.PolicyDecider) {
			a := v
			a.Status = journal.Pending
			w.print(a)
		}
	}
	ran := v.Status == journal.Executing || v.Status == journal.Completed || v.Status == journal.Failed
	if ran && (!known || prev == string(journal.Pending)) && v.DecidedBy != "gateway" && v.DecidedBy != "" {
		a := v
		a.Status = journal.Approved
		w.print(a)
	}
	w.print(v)
	w.last[v.PreviewID] = st
}

func (w *watcher) print(v server.View) {
	if line := server.NoticeLine(v); line != "" {
		fmt.Fprintf(w.out, "%s %s\n", time.Now().Format("15:04:05"), line)
	}
}

func terminal(status string) bool { return journal.Status(status).Terminal() }

// oldestFirst orders views by creation, so lines come in the order things
// happened.
func oldestFirst(vs []server.View) {
	slices.SortStableFunc(vs, func(a, b server.View) int {
		switch {
		case a.CreatedAt < b.CreatedAt:
			return -1
		case a.CreatedAt > b.CreatedAt:
			return 1
		}
		return 0
	})
}
