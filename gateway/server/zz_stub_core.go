// TEMPORARY: C1 declares these; deleted at merge.

package server

import (
	"github.com/fluxgit/fluxgit/gateway/execute"
	"github.com/fluxgit/fluxgit/gateway/journal"
)

// Decision is a person's verdict on a pending proposal.
type Decision struct {
	Approve bool
	Reason  string
	Confirm execute.Confirmations
	By      string
}

// Change tells subscribers that a proposal moved to Status.
type Change struct {
	ID     string
	Status journal.Status
}
