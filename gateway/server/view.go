package server

import (
	"encoding/json"

	"github.com/fluxgit/fluxgit/gateway/execute"
	"github.com/fluxgit/fluxgit/gateway/journal"
)

// View is a proposal as the CLI API shows it to a person: every journal
// field, times as RFC 3339 UTC with milliseconds.
type View struct {
	PreviewID              string          `json:"previewId"`
	OperationType          string          `json:"operationType"`
	Status                 journal.Status  `json:"status"`
	AgentID                string          `json:"agentId"`
	RepoPath               string          `json:"repoPath"`
	Reason                 string          `json:"reason"`
	IdempotencyKey         string          `json:"idempotencyKey"`
	RequestedAt            string          `json:"requestedAt"`
	CreatedAt              string          `json:"createdAt"`
	ExpiresAt              string          `json:"expiresAt"`
	UpdatedAt              string          `json:"updatedAt"`
	DecidedBy              string          `json:"decidedBy,omitempty"`
	DecidedAt              string          `json:"decidedAt,omitempty"`
	RejectionReason        string          `json:"rejectionReason,omitempty"`
	ReconciliationRequired bool            `json:"reconciliationRequired,omitempty"`
	Body                   json.RawMessage `json:"body,omitempty"`
	Binding                json.RawMessage `json:"binding,omitempty"`
	Review                 json.RawMessage `json:"review,omitempty"`
	Confirmations          json.RawMessage `json:"confirmations,omitempty"`
	Result                 json.RawMessage `json:"result,omitempty"`
}

// ViewOf renders p for a person.
func ViewOf(p journal.Proposal) View {
	v := View{
		PreviewID:              p.ID,
		OperationType:          p.OperationType,
		Status:                 p.Status,
		AgentID:                p.AgentID,
		RepoPath:               p.RepoPath,
		Reason:                 p.Reason,
		IdempotencyKey:         p.IdempotencyKey,
		RequestedAt:            p.RequestedAt,
		CreatedAt:              stamp(p.CreatedAt),
		ExpiresAt:              stamp(p.ExpiresAt),
		UpdatedAt:              stamp(p.UpdatedAt),
		DecidedBy:              p.DecidedBy,
		RejectionReason:        p.RejectionReason,
		ReconciliationRequired: p.NeedsReconciliation,
		Body:                   nonEmpty(p.Body),
		Binding:                nonEmpty(p.Binding),
		Review:                 nonEmpty(p.Review),
		Confirmations:          nonEmpty(p.Confirmations),
		Result:                 nonEmpty(p.Result),
	}
	if !p.DecidedAt.IsZero() {
		v.DecidedAt = stamp(p.DecidedAt)
	}
	return v
}

func nonEmpty(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	return b
}

// UndoView is an undone (or redone) restore point as the CLI API reports
// it: which point, what git did, and a discard's safety stash its undo
// dropped.
type UndoView struct {
	RepoPath     string `json:"repoPath"`
	RepoID       string `json:"repoId"`
	Before       string `json:"before"`
	After        string `json:"after"`
	Branch       string `json:"branch"`
	ID           string `json:"id"`
	Operation    string `json:"operation"`
	How          string `json:"how"`
	DroppedStash string `json:"droppedStash,omitempty"`
}

func undoView(r execute.UndoResult) UndoView {
	return UndoView{RepoPath: r.RepoPath, RepoID: r.RepoID, Before: r.Before, After: r.After, Branch: r.Branch,
		ID: r.ID, Operation: r.Operation, How: r.How, DroppedStash: r.DroppedStash}
}
