package server

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/fluxgit/fluxgit/gateway/journal"
	"github.com/fluxgit/fluxgit/gateway/proposal"
	"github.com/fluxgit/fluxgit/internal/audit"
)

// gatewaySession is the ledger's session_id for actions no agent made
// (undoing a restore point).
const gatewaySession = "fluxgit-gateway"

// surface names a decision surface in a summary.
func surface(by string) string {
	switch by {
	case "page":
		return "on the approval page"
	case "cli":
		return "in the terminal"
	}
	return "by the gateway"
}

// append writes e to the ledger. The ledger's failures are logged and
// never change the lifecycle: the journal is the record of truth for the
// proposal, the ledger its tamper-evident trace.
func (s *Server) append(e audit.Event) {
	if s.cfg.Ledger == nil {
		return
	}
	e.Timestamp = s.now().UnixMilli()
	if _, err := s.cfg.Ledger.Append(e); err != nil {
		s.log.Error("audit ledger append", "event", e.EventType, "err", err)
	}
}

// proposalEvent is the ledger event about p: the tool is the preview the
// agent called, the arguments and repository only as fingerprints, never
// the reason or paths in clear.
func proposalEvent(p journal.Proposal, eventType, approval, result, summary string) audit.Event {
	var body struct {
		RepoPath *string `json:"repoPath"`
	}
	scope := []byte(nil)
	if json.Unmarshal(p.Body, &body) == nil && body.RepoPath != nil {
		scope, _ = json.Marshal(map[string]string{"repoPath": *body.RepoPath})
	}
	risk := proposal.Risk(p.OperationType)
	switch risk {
	case audit.RiskLow, audit.RiskMedium, audit.RiskHigh:
	default:
		risk = audit.RiskNone
	}
	return audit.Event{
		Tool:            "operation.preview." + p.OperationType,
		EventType:       eventType,
		RepoScope:       audit.RepoScope(scope),
		ArgsFingerprint: audit.ArgsFingerprint(p.Body),
		Risk:            risk,
		Approval:        approval,
		Result:          result,
		SessionID:       audit.SessionID(p.AgentID),
		Summary:         summary,
	}
}

func (s *Server) auditDecision(p journal.Proposal, approved bool, by string) {
	if rule, ok := strings.CutPrefix(by, PolicyDecider); ok && approved {
		// The person decided in advance, in their own policy file.
		s.append(proposalEvent(p, audit.EventHumanDecision, audit.ApprovalApproved, audit.ResultSuccess,
			"proposal approved by policy "+rule+" (an autoApprove rule of the person's agent policy)"))
		return
	}
	if approved {
		s.append(proposalEvent(p, audit.EventHumanDecision, audit.ApprovalApproved, audit.ResultSuccess,
			"proposal approved by a person "+surface(by)))
		return
	}
	s.append(proposalEvent(p, audit.EventHumanDecision, audit.ApprovalRejected, audit.ResultSuccess,
		"proposal rejected by a person "+surface(by)))
}

func (s *Server) auditReconcile(p journal.Proposal, by string) {
	s.append(proposalEvent(p, audit.EventHumanDecision, audit.ApprovalNotRequired, audit.ResultSuccess,
		"interrupted execution reconciled as "+string(p.Status)+" by a person "+surface(by)))
}

// auditExecution records how an approved proposal's execution ended;
// note, when set, replaces the default summary.
func (s *Server) auditExecution(p journal.Proposal, took time.Duration, note string) {
	result, summary := audit.ResultSuccess, "approved operation executed: completed"
	if p.Status != journal.Completed {
		result, summary = audit.ResultError, "approved operation executed: failed"
	}
	if note != "" {
		summary = note
	}
	e := proposalEvent(p, audit.EventOperationExecution, audit.ApprovalApproved, result, summary)
	e.DurationMS = took.Milliseconds()
	s.append(e)
}

func (s *Server) auditCancel(p journal.Proposal) {
	s.append(proposalEvent(p, audit.EventProposalCancel, audit.ApprovalNotRequired, audit.ResultSuccess,
		"pending proposal cancelled by the agent that made it"))
}

func (s *Server) auditExpiry(p journal.Proposal) {
	s.append(proposalEvent(p, audit.EventProposalCancel, audit.ApprovalNotRequired, audit.ResultSuccess,
		"pending proposal expired before a person decided; withdrawn by the gateway"))
}

// auditRestore records an undo or redo (tool gateway.undo or
// gateway.redo) with the repository as a fingerprint and the operation
// undone in clear (the history's entry, without paths).
func (s *Server) auditRestore(a journal.RestoreAction) {
	scope, _ := json.Marshal(map[string]string{"repoPath": a.RepoPath})
	what := "restore point"
	if a.Operation != "" {
		what = "restore point of a " + a.Operation
	}
	past := map[string]string{"undo": "undone", "redo": "redone"}[a.Action]
	e := audit.Event{
		Tool:      "gateway." + a.Action,
		EventType: audit.EventHumanDecision,
		RepoScope: audit.RepoScope(scope),
		Risk:      audit.RiskMedium,
		Approval:  audit.ApprovalApproved,
		Result:    audit.ResultSuccess,
		SessionID: gatewaySession,
		Summary:   what + " " + past + " by a person " + surface(a.DecidedBy),
	}
	if !a.OK {
		e.Result, e.Summary = audit.ResultError, a.Action+" asked by a person "+surface(a.DecidedBy)+" was refused"
	}
	s.append(e)
}
