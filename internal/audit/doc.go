// Package audit is fluxgit's audit ledger: one hash-chained, optionally
// Ed25519-signed JSONL entry per tools/call (refused calls included),
// appended under a cross-process lock with rotation, retention checkpoints
// and a streaming verifier.
//
// # Entries
//
// An entry is one line of canonical JSON (see Canonical) holding the event
// fields — timestamp, tool, event_type, repo_scope, args_fingerprint, risk,
// approval, result, session_id, duration_ms, summary, readOnly,
// sidecarReadOnly — plus the chain fields:
//
//	id                  random UUID v4
//	auditSchemaVersion  1
//	auditChainVersion   1
//	sequence            previous + 1, starting at 1
//	segmentId           UUID v4 of the file the entry was written to
//	previousHash        entryHash of the previous entry; "genesis" for the
//	                    first; "legacy-sha256:<hex>" after unchained lines
//	entryHash           "sha256:" + hex SHA-256(canonical entry without
//	                    entryHash and signature)
//	signatureKeyId      first 8 bytes of the Ed25519 public key, hex   (signed only)
//	signatureVersion    3                                              (signed only)
//	signature           base64url, unpadded, Ed25519 over the canonical
//	                    entry without signature                         (signed only)
//
// Arguments never appear: only their fingerprint and a repository scope
// that hashes repoId and repoPath (see RepoScope).
//
// # Files
//
// Next to the active file live the lock file, rotated segments and
// retention checkpoints (see files.go for the names). The active file
// rotates when an entry would take it beyond the segment size (4 MiB by
// default). Retention (see Retention) prunes the oldest rotated segment
// while the ledger exceeds the retention size (20 MiB by default), unless
// its newest entry is younger than the age floor (30 days by default),
// and prunes every rotated segment whose newest entry is older than the
// retention age when one is set; beyond 1,024 rotated segments the floor
// gives way. The active file is never pruned. Before a segment is deleted,
// an audit.pruned entry naming its sequence range, segmentId and the rule
// that pruned it is appended to the chain, and a (signed) checkpoint
// records where the retained chain resumes. Retention runs at a process's
// first append, after each rotation, and on demand (Ledger.Prune).
//
// # Reading
//
// Verify, Export and ComputeStats read one consistent snapshot of the
// ledger (under its lock when they may take it) and verify it whole in
// one streaming pass; Export stages the entries its Filter selects and
// writes them — JSONL as stored, CSV, or one JSON object — only when the
// whole ledger verified. The report's HeadHash and ChainDigest let an
// export be matched to a verification.
//
// # Refusals
//
// Refused calls are coalesced (see Ledger.RecordCall): floods of them
// become entries with count, firstAt and lastAt, an unknown tool name is
// kept as a bounded prefix plus toolFingerprint, and above the size
// ceiling (1 GiB by default) refusals are only counted, while real calls
// are always recorded.
//
// What a local chain cannot show: that the newest entries of the active
// file were cut off, or — for unsigned ledgers — that the whole retained
// history was replaced. Signatures stop anyone without the private key from
// rewriting retained entries or checkpoints.
package audit
