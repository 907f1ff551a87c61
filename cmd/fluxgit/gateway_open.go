package main

import (
	"fmt"
	"net/url"

	"github.com/spf13/cobra"

	"github.com/fluxgit/fluxgit/internal/operation"
)

// newGatewayOpenCmd is `fluxgit gateway open ID`: the one step a person
// takes when a proposal's card address (operation.CardPath, which an
// agent's client may show them) opens in a browser without a session,
// say after the gateway restarted. It shows the card's secret link, which
// signs the browser in and lands on that card, on the person's terminal
// only: never on stdout, which an agent running the command would read
// (the link carries the secret every decision on the page rests on).
func newGatewayOpenCmd(o *gatewayOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "open ID",
		Short: "Show on your terminal the secret link that signs a browser in and opens one proposal's card",
		Long: "open writes the link to proposal ID's card on the running gateway, with this start's secret, to your\n" +
			"terminal (never to stdout, and not at all without a terminal, as in an agent's shell): open it in your\n" +
			"browser to see the card and approve or reject it there. The link is for you alone. The card's address\n" +
			"without the secret, http://<gateway>" + operation.CardPath + "ID, is safe to share: it shows nothing without the session.",
		Args: idArg("open"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := gatewayClient(o)
			if err != nil {
				return err
			}
			// Ask first, so a mistyped or pruned id is said plainly rather
			// than as an empty card.
			if _, err := c.Show(cmd.Context(), args[0]); err != nil {
				return clientErr(err)
			}
			term, err := openTerminal()
			if err != nil {
				return &exitError{code: 1, err: fmt.Errorf("fluxgit gateway open shows the secret link only on a person's interactive terminal, and this process has none (%v): run it yourself in a terminal", err)}
			}
			defer term.Close()
			link := operation.CardURL("http://"+c.Addr, url.PathEscape(args[0])) + "?s=" + url.QueryEscape(c.Secret)
			if _, err := fmt.Fprintf(term, "Open this link in your browser (it is yours alone; it signs the browser in):\n%s\n", link); err != nil {
				return &exitError{code: 1, err: fmt.Errorf("write to the terminal: %w", err)}
			}
			fmt.Fprintln(cmd.OutOrStdout(), "The link to proposal "+args[0]+"'s card is on your terminal.")
			return nil
		},
	}
}
