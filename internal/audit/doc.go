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
// rotates when an entry would take it beyond 4 MiB. Retention keeps 4
// rotated segments, but never prunes one whose newest entry is younger
// than the age floor (30 days by default) unless more than 1,024 exist.
// Before the oldest segment is deleted, an audit.pruned entry naming its
// sequence range, segmentId and the reason is appended to the chain, and
// a (signed) checkpoint records where the retained chain resumes.
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
