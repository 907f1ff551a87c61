package main

import (
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fluxgit/fluxgit/internal/audit"
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
		Use:   "verify-audit FILE [--pubkey PEM]... [--require-signed] [--json]",
		Short: "Verify an audit ledger; exit 0 valid, 3 integrity failure or signatures left unchecked, 2 usage",
		Long: "verify-audit streams the ledger FILE, its rotated segments and retention checkpoints, and checks\n" +
			"sequences, hashes, segment names, checkpoints and signatures. It prints counters, the\n" +
			"prunings the chain records, head_hash (the last entry's entryHash) and chain_digest (SHA-256\n" +
			"over every retained entryHash, one per line), never entry contents.\n\n" +
			"--pubkey takes a PEM Ed25519 public key and may be repeated (key rotation). It is needed only\n" +
			"for signatures: an unsigned ledger verifies without it. A ledger that holds signatures but no\n" +
			"--pubkey to check them is NOT verified (exit 3, \"unverified_signatures\" in the report): a\n" +
			"signature nobody checked proves nothing. --require-signed needs --pubkey.",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return &exitError{code: exitUsage, err: errors.New("verify-audit takes exactly one ledger FILE")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if requireSigned && len(pubkeys) == 0 {
				return &exitError{code: exitUsage, err: errors.New("--require-signed needs --pubkey PEM: the public key that checks the signatures")}
			}
			keys, err := loadPubkeys(pubkeys)
			if err != nil {
				return err
			}
			rep, err := audit.Verify(args[0], audit.VerifyOptions{PublicKeys: keys, RequireSigned: requireSigned})
			out := cmd.OutOrStdout()
			if errors.Is(err, audit.ErrSignaturesUnchecked) {
				printReport(out, rep, asJSON, false)
				return &exitError{code: exitIntegrity, err: fmt.Errorf("audit ledger NOT verified: hashes and chain are intact, but %d entries or checkpoints are signed and no --pubkey was given to check the signatures; pass --pubkey PEM", rep.UnverifiedSignatures)}
			}
			if err != nil {
				var ie *audit.IntegrityError
				if errors.As(err, &ie) {
					return &exitError{code: exitIntegrity, err: fmt.Errorf("audit ledger INVALID: %w", err)}
				}
				return &exitError{code: exitIntegrity, err: fmt.Errorf("audit ledger not verified: %w", err)}
			}
			printReport(out, rep, asJSON, true)
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&pubkeys, "pubkey", nil, "PEM file with an Ed25519 public key (repeatable; needed only for signed ledgers)")
	cmd.Flags().BoolVar(&requireSigned, "require-signed", false, "fail on any unsigned entry or checkpoint (needs --pubkey)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the counters as one JSON object")
	return cmd
}

// loadPubkeys reads the --pubkey files; an unusable one is a usage error
// (audit.KeyError names the file).
func loadPubkeys(paths []string) ([]ed25519.PublicKey, error) {
	var keys []ed25519.PublicKey
	for _, p := range paths {
		k, err := audit.LoadPublicKey(p)
		if err != nil {
			return nil, &exitError{code: exitUsage, err: err}
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// printReport prints the counters (and "ok" when the ledger verified).
func printReport(out io.Writer, rep audit.Report, asJSON, ok bool) {
	if asJSON {
		b, _ := json.Marshal(rep)
		fmt.Fprintln(out, string(b))
		return
	}
	fmt.Fprintf(out, "entries %d\nchained %d\nlegacy %d\nsigned %d\nunsigned %d\nunverified_signatures %d\nsegments %d\n",
		rep.Entries, rep.Chained, rep.Legacy, rep.Signed, rep.Unsigned, rep.UnverifiedSignatures, rep.Segments)
	if rep.Chained > 0 {
		fmt.Fprintf(out, "sequence %d..%d\n", rep.FirstSequence, rep.LastSequence)
	} else {
		fmt.Fprintln(out, "sequence none")
	}
	fmt.Fprintf(out, "head_hash %s\nchain_digest %s\n", orNone(rep.HeadHash), orNone(rep.ChainDigest))
	fmt.Fprintf(out, "retention_checkpoint_used %t\n", rep.RetentionCheckpointUsed)
	fmt.Fprintf(out, "coalesced %d entries for %d refused calls\n", rep.CoalescedEntries, rep.CoalescedCalls)
	fmt.Fprintf(out, "prunings %d\n", rep.PruningCount)
	for _, p := range rep.Prunings {
		fmt.Fprintf(out, "pruned %d..%d segment %s recorded at sequence %d\n", p.FirstSequence, p.LastSequence, strings.Join(p.SegmentIDs, ","), p.Sequence)
	}
	if ok {
		fmt.Fprintln(out, "ok")
	}
}
