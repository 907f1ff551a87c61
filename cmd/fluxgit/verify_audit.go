package main

import (
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/fluxgit/fluxgit/host/audit"
)

// exitIntegrity: the audit ledger failed verification.
const exitIntegrity = 3

func newVerifyAuditCmd() *cobra.Command {
	var (
		pubkeys       []string
		requireSigned bool
		asJSON        bool
	)
	cmd := &cobra.Command{
		Use:   "verify-audit FILE --pubkey PEM [--require-signed]",
		Short: "Verify an audit ledger; exit 0 valid, 3 integrity or signature failure, 2 usage",
		Long: "verify-audit streams the ledger FILE, its rotated segments and retention checkpoints, and checks\n" +
			"sequences, hashes, segment names, checkpoints and signatures. It prints counters only, never\n" +
			"entry contents. --pubkey takes a PEM Ed25519 public key and may be repeated (key rotation).",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return &exitError{code: exitUsage, err: errors.New("verify-audit takes exactly one ledger FILE")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(pubkeys) == 0 {
				return &exitError{code: exitUsage, err: errors.New("verify-audit needs --pubkey PEM")}
			}
			var keys []ed25519.PublicKey
			for _, p := range pubkeys {
				k, err := audit.LoadPublicKey(p)
				if err != nil {
					return &exitError{code: exitUsage, err: err}
				}
				keys = append(keys, k)
			}
			rep, err := audit.Verify(args[0], audit.VerifyOptions{PublicKeys: keys, RequireSigned: requireSigned})
			if err != nil {
				var ie *audit.IntegrityError
				if errors.As(err, &ie) {
					return &exitError{code: exitIntegrity, err: fmt.Errorf("audit ledger INVALID: %w", err)}
				}
				return &exitError{code: exitIntegrity, err: fmt.Errorf("audit ledger not verified: %w", err)}
			}
			out := cmd.OutOrStdout()
			if asJSON {
				b, _ := json.Marshal(rep)
				fmt.Fprintln(out, string(b))
				return nil
			}
			fmt.Fprintf(out, "entries %d\nchained %d\nlegacy %d\nsigned %d\nunsigned %d\nsegments %d\n",
				rep.Entries, rep.Chained, rep.Legacy, rep.Signed, rep.Unsigned, rep.Segments)
			if rep.Chained > 0 {
				fmt.Fprintf(out, "sequence %d..%d\n", rep.FirstSequence, rep.LastSequence)
			} else {
				fmt.Fprintln(out, "sequence none")
			}
			fmt.Fprintf(out, "retention_checkpoint_used %t\nok\n", rep.RetentionCheckpointUsed)
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&pubkeys, "pubkey", nil, "PEM file with an Ed25519 public key (repeatable)")
	cmd.Flags().BoolVar(&requireSigned, "require-signed", false, "fail on any unsigned entry or checkpoint")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the counters as one JSON object")
	return cmd
}
