// Package journal is the approval gateway's durable lifecycle journal: one
// SQLite file (WAL, synchronous FULL) in which every proposal is a row and
// every lifecycle transition is one transaction.
package journal

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Status is a proposal's lifecycle state: pending → approved → executing →
// completed | failed, with the rejected, expired and cancelled branches.
type Status string

// Lifecycle states.
const (
	Pending   Status = "pending"
	Approved  Status = "approved"
	Executing Status = "executing"
	Completed Status = "completed"
	Failed    Status = "failed"
	Rejected  Status = "rejected"
	Expired   Status = "expired"
	Cancelled Status = "cancelled"
)

// Terminal reports whether no transition leaves s.
func (s Status) Terminal() bool {
	switch s {
	case Completed, Failed, Rejected, Expired, Cancelled:
		return true
	}
	return false
}

// Proposal is one journal row.
type Proposal struct {
	ID             string // previewId
	AgentID        string
	IdempotencyKey string
	// Fingerprint identifies the intent: SHA-256 of the canonical body
	// without previewId and requestedAt. The same agent and key with
	// another fingerprint is a conflict.
	Fingerprint   string
	OperationType string
	// RepoPath is the canonical repository path the proposal was bound to.
	RepoPath    string
	Reason      string
	RequestedAt string // the agent's requestedAt, verbatim
	CreatedAt   time.Time
	ExpiresAt   time.Time
	UpdatedAt   time.Time
	Status      Status
	// Body is the preview body as the agent sent it (already checked).
	Body json.RawMessage
	// Binding is the gateway/execute Binding recorded at proposal time.
	Binding json.RawMessage
	// Review is the gateway/execute Review shown on the card.
	Review json.RawMessage
	// Confirmations is what the person confirmed when approving
	// (gateway/execute Confirmations).
	Confirmations json.RawMessage
	// Result is the completion result (F§7.4 shapes) once completed or
	// failed.
	Result          json.RawMessage
	RejectionReason string
	// DecidedBy is "page" or "cli" once a person decided; "agent" for a
	// cancel, "gateway" for an expiry or a failed re-validation.
	DecidedBy string
	DecidedAt time.Time
	// NeedsReconciliation is set on a proposal found executing when the
	// gateway started: it is never re-run, a person settles it.
	NeedsReconciliation bool
}

// Filter selects proposals for List. Zero values select everything.
type Filter struct {
	Statuses []Status
	// Limit bounds the rows returned; 0 means 200.
	Limit int
	// Offset skips that many rows of the order first (paging).
	Offset int
	// Oldest lists oldest first instead of newest first.
	Oldest bool
	// ByExpiry lists the one expiring soonest first (it wins over
	// Oldest): the order a person should see pending proposals in.
	ByExpiry bool
	// WithoutBody leaves Body empty: a listing that shows no body must
	// not copy every stored body (each up to 32 MiB) out of the journal.
	WithoutBody bool
}

// ErrNotFound: no proposal has the id (never made, or pruned).
var ErrNotFound = errors.New("no proposal with this previewId")

// ErrKeyConflict: the agent reused an idempotency key for another intent.
var ErrKeyConflict = errors.New("idempotency key already used by this agent for a different proposal")

// StateError reports a transition refused because the proposal is in
// another state.
type StateError struct {
	ID      string
	Current Status
	Wanted  []Status
}

func (e *StateError) Error() string {
	return fmt.Sprintf("proposal %s is %s; this needs it to be one of %v", e.ID, e.Current, e.Wanted)
}
