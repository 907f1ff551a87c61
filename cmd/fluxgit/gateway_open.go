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
// say after the gateway restarted. It prints the card's secret link,
// which signs the browser in and lands on that card.
func newGatewayOpenCmd(o *gatewayOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "open ID",
		Short: "Print the secret link that signs a browser in to the approval page and opens one proposal's card",
		Long: "open prints the link to proposal ID's card on the running gateway, with this start's secret: open it\n" +
			"in your browser to see the card and approve or reject it there. The link is for you alone (it signs the\n" +
			"browser in); do not paste it where an agent reads. The card's address without the secret,\n" +
			"http://<gateway>" + operation.CardPath + "ID, is safe to share: it shows nothing without the session.",
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
			link := operation.CardURL("http://"+c.Addr, url.PathEscape(args[0])) + "?s=" + url.QueryEscape(c.Secret)
			fmt.Fprintln(cmd.OutOrStdout(), link)
			return nil
		},
	}
}
