package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/fluxgit/fluxgit/gateway/execute"
	"github.com/fluxgit/fluxgit/gateway/journal"
	"github.com/fluxgit/fluxgit/gateway/policy"
	"github.com/fluxgit/fluxgit/internal/credpaths"
)

// Decision is a person's verdict on a pending proposal.
type Decision struct {
	Approve bool
	// Reason is why a proposal is rejected (required to reject); the
	// agent reads it as rejectionReason.
	Reason string
	// Confirm carries what the card asked the person to confirm.
	Confirm execute.Confirmations
	// By is the surface the person used: "page" or "cli".
	By string
}

// Change tells subscribers that a proposal moved (they refetch what they
// show). An empty ID means something else changed, such as a restore
// point being undone.
type Change struct {
	ID     string
	Status journal.Status
}

// DecisionError is a decision refused because of what the person sent or
// when: a missing confirmation, an empty reason, an expired proposal. Its
// message says what to do instead.
type DecisionError struct{ Msg string }

func (e *DecisionError) Error() string { return e.Msg }

// HTTPStatus is the status a lifecycle error maps to on the person's
// surfaces: 404 unknown proposal, 409 wrong state, 422 refused decision,
// 500 anything else.
func HTTPStatus(err error) int {
	var se *journal.StateError
	var de *DecisionError
	switch {
	case err == nil:
		return http.StatusOK
	case errors.Is(err, journal.ErrNotFound):
		return http.StatusNotFound
	case errors.As(err, &se):
		return http.StatusConflict
	case errors.As(err, &de):
		return http.StatusUnprocessableEntity
	}
	return http.StatusInternalServerError
}

// maxReasonChars bounds a rejection reason or a reconciliation note.
const maxReasonChars = 4096

// Decide approves or rejects a pending proposal for a person. An approval
// must carry every confirmation the proposal's review requires; the
// worker then executes it. A rejection must carry a reason.
func (s *Server) Decide(ctx context.Context, id string, d Decision) (journal.Proposal, error) {
	if d.By != "page" && d.By != "cli" {
		return journal.Proposal{}, &DecisionError{Msg: fmt.Sprintf("a decision comes from the page or the cli, not %q", d.By)}
	}
	p, err := s.journal.Get(id)
	if err != nil {
		return journal.Proposal{}, err
	}
	p = s.expireIfDue(p)
	if p.Status != journal.Pending {
		if p.Status == journal.Expired {
			return p, &DecisionError{Msg: fmt.Sprintf("proposal %s expired at %s before anyone decided; the agent must propose again", id, stamp(p.ExpiresAt))}
		}
		return p, &journal.StateError{ID: id, Current: p.Status, Wanted: []journal.Status{journal.Pending}}
	}
	now := s.now()
	if !d.Approve {
		reason := strings.TrimSpace(d.Reason)
		if reason == "" {
			return p, &DecisionError{Msg: "a rejection needs a reason: the agent reads it to decide what to do next"}
		}
		if utf8.RuneCountInString(reason) > maxReasonChars {
			return p, &DecisionError{Msg: fmt.Sprintf("the rejection reason is longer than %d characters; shorten it", maxReasonChars)}
		}
		q, err := s.journal.Transition(id, []journal.Status{journal.Pending}, journal.Rejected, func(q *journal.Proposal) {
			q.RejectionReason, q.DecidedBy, q.DecidedAt = reason, d.By, now
		})
		if err != nil {
			return q, err
		}
		s.notify(q)
		s.auditDecision(q, false, d.By)
		return q, nil
	}
	var rev execute.Review
	if len(p.Review) > 0 {
		if err := json.Unmarshal(p.Review, &rev); err != nil {
			return p, fmt.Errorf("read the review of proposal %s: %w", id, err)
		}
	}
	if err := execute.CheckConfirmations(rev, d.Confirm); err != nil {
		return p, &DecisionError{Msg: "not approved: " + err.Error()}
	}
	cj, err := json.Marshal(d.Confirm)
	if err != nil {
		return p, fmt.Errorf("encode confirmations: %w", err)
	}
	q, err := s.journal.Transition(id, []journal.Status{journal.Pending}, journal.Approved, func(q *journal.Proposal) {
		q.Confirmations, q.DecidedBy, q.DecidedAt = cj, d.By, now
	})
	if err != nil {
		return q, err
	}
	s.notify(q)
	s.auditDecision(q, true, d.By)
	s.kick()
	return q, nil
}

// PolicyDecider is the DecidedBy prefix of a proposal an autoApprove rule
// of the person's agent policy approved: "policy <rule>".
const PolicyDecider = "policy "

// approveByPolicy approves the freshly submitted pending proposal p when
// an autoApprove rule of the person's policy covers it (CONTRACT §10: the
// person deciding in advance): DecidedBy "policy <rule>", audited as
// approved by policy <rule>, executed by the worker behind a restore
// point like any approval. It declines — p waits for the person — when no
// rule covers it, when the review asks for a confirmation only a person
// can give, or when the policy file has become reachable by an agent's
// read tools since the gateway started (an approved write could then
// rewrite the rule).
func (s *Server) approveByPolicy(p journal.Proposal, req policy.Request, rev execute.Review) (journal.Proposal, bool) {
	rule, ok := s.cfg.Policy.AutoApprove(req)
	if !ok {
		return p, false
	}
	if err := execute.CheckConfirmations(rev, execute.Confirmations{}); err != nil {
		return p, false
	}
	if why, reach := credpaths.Reachable(s.cfg.Policy.File(), s.cfg.AllowedRoots); reach {
		s.log.Warn("auto-approval skipped: the agent policy is now reachable by an agent's read tools; the proposal waits for the person",
			"rule", rule, "file", s.cfg.Policy.File(), "why", why, "id", p.ID)
		return p, false
	}
	by := PolicyDecider + rule
	q, err := s.journal.Transition(p.ID, []journal.Status{journal.Pending}, journal.Approved, func(q *journal.Proposal) {
		q.DecidedBy, q.DecidedAt = by, s.now()
	})
	if err != nil {
		s.log.Error("auto-approve by policy", "id", p.ID, "rule", rule, "err", err)
		return p, false
	}
	s.notify(q)
	s.auditDecision(q, true, by)
	s.kick()
	return q, true
}

// Reconcile settles a proposal that was executing when the gateway
// stopped: a person looked at the repository and records what happened.
// It is never re-run.
func (s *Server) Reconcile(ctx context.Context, id string, as journal.Status, note, by string) (journal.Proposal, error) {
	if as != journal.Completed && as != journal.Failed {
		return journal.Proposal{}, &DecisionError{Msg: fmt.Sprintf("reconcile as completed or failed, not %q", as)}
	}
	note = strings.TrimSpace(note)
	if utf8.RuneCountInString(note) > maxReasonChars {
		return journal.Proposal{}, &DecisionError{Msg: fmt.Sprintf("the note is longer than %d characters; shorten it", maxReasonChars)}
	}
	p, err := s.journal.Get(id)
	if err != nil {
		return journal.Proposal{}, err
	}
	if p.Status == journal.Executing && !p.NeedsReconciliation {
		return p, &DecisionError{Msg: fmt.Sprintf("proposal %s is executing right now; wait for its outcome", id)}
	}
	if !p.NeedsReconciliation {
		return p, &journal.StateError{ID: id, Current: p.Status, Wanted: []journal.Status{journal.Executing}}
	}
	msg := fmt.Sprintf("the gateway stopped while this operation was executing; a person checked the repository and recorded it as %s", as)
	if note != "" {
		msg += ": " + note
	}
	res, err := json.Marshal(map[string]any{"status": as, "message": msg})
	if err != nil {
		return p, fmt.Errorf("encode result: %w", err)
	}
	q, err := s.journal.Transition(id, []journal.Status{journal.Executing}, as, func(q *journal.Proposal) {
		q.Result, q.NeedsReconciliation = res, false
	})
	if err != nil {
		return q, err
	}
	s.notify(q)
	s.auditReconcile(q, by)
	return q, nil
}

// Undo undoes, for a person, the newest restore point of repoPath that is
// not undone yet (execute.Executor.Undo); called again it undoes the one
// before.
func (s *Server) Undo(ctx context.Context, repoPath, by string) (execute.UndoResult, error) {
	return s.restoreAction(ctx, "undo", repoPath, by)
}

// Redo redoes, for a person, the restore point of repoPath undone last.
func (s *Server) Redo(ctx context.Context, repoPath, by string) (execute.UndoResult, error) {
	return s.restoreAction(ctx, "redo", repoPath, by)
}

// restoreAction runs an undo or a redo and records it, done or refused,
// in the journal's history and in the audit ledger.
func (s *Server) restoreAction(ctx context.Context, action, repoPath, by string) (execute.UndoResult, error) {
	if strings.TrimSpace(repoPath) == "" {
		return execute.UndoResult{}, &DecisionError{Msg: "name the repository whose restore point to " + action}
	}
	f := s.exec.Undo
	if action == "redo" {
		f = s.exec.Redo
	}
	res, err := f(ctx, repoPath)
	a := journal.RestoreAction{At: s.now(), Action: action, RepoPath: repoPath, RestoreID: res.ID, Operation: res.Operation,
		DecidedBy: by, OK: err == nil}
	if res.RepoPath != "" {
		a.RepoPath = res.RepoPath
	}
	if err != nil {
		a.Message = action + " refused: " + err.Error()
	} else {
		a.Message = restoreMessage(action, res)
	}
	if s.journal != nil {
		if _, jerr := s.journal.RecordAction(a); jerr != nil {
			s.log.Error("record restore action", "action", action, "err", jerr)
		}
	}
	s.auditRestore(a)
	s.notify(journal.Proposal{})
	if err != nil {
		return res, &DecisionError{Msg: a.Message}
	}
	return res, nil
}

// restoreMessage says what an undo or redo did, for the history.
func restoreMessage(action string, r execute.UndoResult) string {
	msg := action + " of the " + r.Operation + " (" + r.ID + "): " + r.How
	if r.DroppedStash != "" {
		msg += "; its safety stash " + r.DroppedStash + " was dropped, the changes are back in the work tree"
	}
	return msg
}

// List returns the journal's proposals, newest first.
func (s *Server) List(f journal.Filter) ([]journal.Proposal, error) {
	rows, err := s.journal.List(f)
	if err != nil {
		return nil, err
	}
	for i, p := range rows {
		rows[i] = s.expireIfDue(p)
	}
	return rows, nil
}

// Count returns how many proposals f's statuses select.
func (s *Server) Count(f journal.Filter) (int, error) { return s.journal.Count(f) }

// Get returns one proposal.
func (s *Server) Get(id string) (journal.Proposal, error) {
	p, err := s.journal.Get(id)
	if err != nil {
		return p, err
	}
	return s.expireIfDue(p), nil
}

// Subscribe returns a channel of lifecycle changes and a function that
// ends the subscription. A subscriber that falls behind misses changes
// rather than slowing the gateway; every change is a cue to refetch.
func (s *Server) Subscribe() (<-chan Change, func()) {
	ch := make(chan Change, 64)
	s.subMu.Lock()
	id := s.nextSub
	s.nextSub++
	s.subs[id] = ch
	s.subMu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			s.subMu.Lock()
			delete(s.subs, id)
			s.subMu.Unlock()
			close(ch)
		})
	}
}

func (s *Server) notify(p journal.Proposal) {
	// Every lifecycle change passes here, so the terminal's line is
	// written here too (issue 25).
	s.announce(p)
	c := Change{ID: p.ID, Status: p.Status}
	s.subMu.Lock()
	defer s.subMu.Unlock()
	for _, ch := range s.subs {
		select {
		case ch <- c:
		default:
		}
	}
}

// kick wakes the worker.
func (s *Server) kick() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// worker executes approved proposals, oldest first, one at a time: the
// journal order is the execution order, and two operations never race on
// one repository.
func (s *Server) worker(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		}
		for ctx.Err() == nil {
			rows, err := s.journal.List(journal.Filter{Statuses: []journal.Status{journal.Approved}})
			if err != nil {
				s.log.Error("list approved proposals", "err", err)
				break
			}
			if len(rows) == 0 {
				break
			}
			s.run(ctx, rows[len(rows)-1])
		}
	}
}

// run claims one approved proposal and executes it. A shutdown does not
// interrupt the execution: git is never killed half-way by the gateway.
func (s *Server) run(ctx context.Context, p journal.Proposal) {
	q, err := s.journal.Transition(p.ID, []journal.Status{journal.Approved}, journal.Executing, nil)
	if err != nil {
		s.log.Warn("claim approved proposal", "id", p.ID, "err", err)
		return
	}
	s.notify(q)
	defer func() {
		// The executor promises not to panic. If it does anyway, nobody
		// knows how far git got: the row waits for a person, as after a
		// crash, instead of taking the whole gateway down.
		if v := recover(); v != nil {
			s.log.Error("executor panicked; the proposal needs reconciliation", "id", q.ID, "panic", fmt.Sprint(v))
			if r, err := s.journal.Transition(q.ID, []journal.Status{journal.Executing}, journal.Executing, func(r *journal.Proposal) {
				r.NeedsReconciliation = true
			}); err == nil {
				s.notify(r)
			}
		}
	}()
	start := time.Now()
	out := s.execute(context.WithoutCancel(ctx), q)
	to := journal.Failed
	if out.Status == string(journal.Completed) {
		to = journal.Completed
	}
	f, err := s.journal.Transition(q.ID, []journal.Status{journal.Executing}, to, func(r *journal.Proposal) {
		r.Result = out.Result
	})
	if err != nil {
		// The repository changed but the journal cannot say so: the row
		// stays executing and the next start asks a person to reconcile.
		s.log.Error("record execution outcome", "id", q.ID, "status", to, "err", err)
		return
	}
	s.notify(f)
	s.auditExecution(f, time.Since(start), "")
}

func (s *Server) execute(ctx context.Context, p journal.Proposal) execute.Outcome {
	var b execute.Binding
	var c execute.Confirmations
	if err := json.Unmarshal(p.Binding, &b); err != nil {
		return failedOutcome("the gateway could not read the repository binding it recorded: " + err.Error())
	}
	if len(p.Confirmations) > 0 {
		if err := json.Unmarshal(p.Confirmations, &c); err != nil {
			return failedOutcome("the gateway could not read the recorded confirmations: " + err.Error())
		}
	}
	out := s.exec.Execute(ctx, execute.Job{ID: p.ID, OperationType: p.OperationType, Body: p.Body, Binding: b, Confirmations: c})
	if len(out.Result) == 0 {
		msg := "the operation completed"
		if out.Status != string(journal.Completed) {
			msg = "the operation failed"
		}
		res, _ := json.Marshal(map[string]any{"status": out.Status, "message": msg})
		out.Result = res
	}
	return out
}

func failedOutcome(msg string) execute.Outcome {
	res, _ := json.Marshal(map[string]any{"status": "failed", "message": msg})
	return execute.Outcome{Status: "failed", Result: res}
}

// startup settles what an earlier run left: executing rows are marked for
// a person to reconcile (never re-run), approved rows run only once their
// repository and refs still match what the person approved.
func (s *Server) startup(ctx context.Context) error {
	approved, reconcile, err := s.journal.Startup()
	if err != nil {
		return fmt.Errorf("gateway journal start-up: %w", err)
	}
	for _, p := range reconcile {
		s.log.Warn("proposal was executing when the gateway stopped; it will not be re-run. Check the repository, then run fluxgit gateway reconcile",
			"id", p.ID, "operation", p.OperationType)
	}
	for _, p := range approved {
		var b execute.Binding
		err := json.Unmarshal(p.Binding, &b)
		if err == nil {
			err = s.exec.Revalidate(ctx, b)
		}
		if err == nil {
			continue
		}
		res, _ := json.Marshal(map[string]any{"status": "failed",
			"message": "not executed: the gateway restarted after the approval and the repository no longer matches the proposal: " + err.Error()})
		q, terr := s.journal.Transition(p.ID, []journal.Status{journal.Approved}, journal.Failed, func(q *journal.Proposal) {
			q.Result, q.DecidedBy, q.DecidedAt = res, "gateway", s.now()
		})
		if terr != nil {
			return fmt.Errorf("record failed re-validation of %s: %w", p.ID, terr)
		}
		s.auditExecution(q, 0, "not executed: re-validation failed after the gateway restarted")
	}
	return nil
}

// housekeeping expires proposals nobody decided in time and prunes
// terminal ones after an hour.
func (s *Server) housekeeping(ctx context.Context) {
	tick := time.Second
	if q := s.cfg.TTL / 4; q < tick {
		tick = max(q, 10*time.Millisecond)
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	lastPrune := time.Time{}
	for {
		now := s.now()
		expired, err := s.journal.ExpireDue(now)
		if err != nil {
			s.log.Error("expire proposals", "err", err)
		}
		for _, p := range expired {
			s.notify(p)
			s.auditExpiry(p)
		}
		if now.Sub(lastPrune) >= time.Minute {
			if _, err := s.journal.Prune(now.Add(-pruneAge)); err != nil {
				s.log.Error("prune journal", "err", err)
			}
			lastPrune = now
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// RestorePoints is the latest restore point of every repository in the
// run directory's registry, for the page's Undo buttons.
func (s *Server) RestorePoints(ctx context.Context) ([]RestorePointView, error) {
	points, err := s.exec.RestorePoints(ctx)
	if err != nil {
		return nil, fmt.Errorf("list restore points: %w", err)
	}
	views := make([]RestorePointView, 0, len(points))
	for _, p := range points {
		views = append(views, RestorePointView{RepoPath: p.RepoPath, RepoID: p.RepoID, ID: p.ID, Operation: p.Operation,
			Before: p.Before, After: p.After, Branch: p.Branch, CanUndo: p.CanUndo, Why: p.Why, Depth: p.Depth, Redo: p.Redo})
	}
	return views, nil
}

// RestoreActions is the newest limit undo and redo actions, newest first.
func (s *Server) RestoreActions(limit int) ([]journal.RestoreAction, error) {
	return s.journal.Actions(limit)
}
