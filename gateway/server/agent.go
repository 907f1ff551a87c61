package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/fluxgit/fluxgit/gateway/execute"
	"github.com/fluxgit/fluxgit/gateway/journal"
	"github.com/fluxgit/fluxgit/gateway/policy"
	"github.com/fluxgit/fluxgit/gateway/proposal"
	"github.com/fluxgit/fluxgit/internal/operation"
)

// MaxPreviewBody bounds a preview body: a 4 Mi-character patch, JSON
// escaped, fits with room to spare.
const MaxPreviewBody = 32 << 20

// maxSmallBody bounds the other bodies (cancel, CLI requests).
const maxSmallBody = 64 << 10

// Paths of the agent API (the handshake provider's endpoints), the
// contract's own (internal/operation).
const (
	previewPrefix = operation.PreviewPath
	statusPrefix  = operation.StatusPath
	cancelPrefix  = operation.CancelPath
	semanticPath  = operation.SemanticDiffPath
	cardPrefix    = operation.CardViewPath
)

var safeIDRe = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

// agentAPI serves /v1/…: proposals, status reads, cancels. Nothing here
// approves: only the person's surfaces call Decide.
func (s *Server) agentAPI(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Origin") != "" {
		// The handshake provider never sends Origin; a browser always
		// does on a cross-site POST. A web page has no business here.
		writeError(w, http.StatusForbidden, "requests carrying an Origin header are refused: the agent API is for the fluxgit MCP server, not for web pages")
		return
	}
	if r.URL.RawQuery != "" {
		writeError(w, http.StatusBadRequest, "the agent API takes no query string; send the fields in the JSON body")
		return
	}
	p := r.URL.EscapedPath()
	switch {
	case strings.HasPrefix(p, previewPrefix):
		if !allowMethod(w, r, http.MethodPost) {
			return
		}
		s.preview(w, r, strings.TrimPrefix(p, previewPrefix))
	case strings.HasPrefix(p, statusPrefix):
		if !allowMethod(w, r, http.MethodGet) {
			return
		}
		id := strings.TrimPrefix(p, statusPrefix)
		if !validID(w, id) {
			return
		}
		s.status(w, id)
	case strings.HasPrefix(p, cancelPrefix):
		if !allowMethod(w, r, http.MethodPost) {
			return
		}
		id := strings.TrimPrefix(p, cancelPrefix)
		if !validID(w, id) {
			return
		}
		s.cancel(w, r, id)
	case strings.HasPrefix(p, cardPrefix):
		if !allowMethod(w, r, http.MethodGet) {
			return
		}
		id := strings.TrimPrefix(p, cardPrefix)
		if !validID(w, id) {
			return
		}
		s.card(w, id)
	case p == semanticPath:
		if !allowMethod(w, r, http.MethodPost) {
			return
		}
		writeError(w, http.StatusNotImplemented, "fluxgit gateway has no semantic diff engine; use diff.text")
	default:
		writeError(w, http.StatusNotFound, fmt.Sprintf("no endpoint %s %s; the agent API has POST %s<operation>, GET %s<previewId>, POST %s<previewId>, GET %s<previewId>", r.Method, p, previewPrefix, statusPrefix, cancelPrefix, cardPrefix))
	}
}

func allowMethod(w http.ResponseWriter, r *http.Request, m string) bool {
	if r.Method == m {
		return true
	}
	w.Header().Set("Allow", m)
	writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("%s needs %s, not %s", r.URL.Path, m, r.Method))
	return false
}

func validID(w http.ResponseWriter, id string) bool {
	if safeIDRe.MatchString(id) {
		return true
	}
	writeError(w, http.StatusBadRequest, "previewId in the path must be 1-128 ASCII letters, digits, '-' or '_'")
	return false
}

// readJSONObject reads a JSON object body of at most limit bytes. It
// writes the refusal itself and returns ok=false on failure.
func readJSONObject(w http.ResponseWriter, r *http.Request, limit int64) (obj map[string]any, raw []byte, ok bool) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			writeError(w, http.StatusUnsupportedMediaType, fmt.Sprintf("Content-Type %q is not accepted; send the body as application/json", ct))
			return nil, nil, false
		}
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body exceeds %d bytes; send a smaller proposal (a patch of at most 4 Mi characters)", limit))
			return nil, nil, false
		}
		writeError(w, http.StatusBadRequest, "could not read the request body: "+err.Error())
		return nil, nil, false
	}
	// One parser for the contract (gateway/proposal): duplicate keys at
	// any depth are refused, so what the person approves is what runs.
	obj, err = proposal.DecodeObject(raw)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return nil, nil, false
	}
	return obj, raw, true
}

// preview receives a proposal: contract check, policy, repository
// binding, then the journal (which replays an idempotent retry).
func (s *Server) preview(w http.ResponseWriter, r *http.Request, op string) {
	if !slices.Contains(proposal.Ops, op) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("unknown operation %q; the gateway executes %s", op, strings.Join(proposal.Ops, ", ")))
		return
	}
	body, raw, ok := readJSONObject(w, r, MaxPreviewBody)
	if !ok {
		return
	}
	if v := proposal.Check(op, body); len(v) > 0 {
		writeError(w, http.StatusUnprocessableEntity, "the proposal breaks the gateway contract: "+strings.Join(v, "; ")+"; correct these fields and propose again")
		return
	}
	// The body's schema (schemas/operations/<op>.schema.json) is the
	// contract as data; Check above explains each violation in words and
	// refuses at least everything the schema does, so this refusal is a
	// guard against the two drifting, not a second message to keep.
	if err := operation.Validate(op, body); err != nil {
		writeError(w, http.StatusUnprocessableEntity, "the proposal breaks the gateway contract: "+err.Error()+"; correct these fields and propose again")
		return
	}
	str := func(k string) string { v, _ := body[k].(string); return v }
	agentID := str("agentId")
	preq := policy.Request{AgentID: agentID, OperationType: op, RepoPaths: proposal.RepoPaths(op, body), Refs: proposal.Refs(op, body)}
	if err := s.cfg.Policy.Check(preq); err != nil {
		writeError(w, http.StatusForbidden, policyRefusal(err))
		return
	}
	// A flood is turned away before the repository is inspected; Submit
	// checks the quota again, atomically, for the proposal it stores.
	if err := s.journal.Admits(journal.Proposal{AgentID: agentID, IdempotencyKey: str("idempotencyKey"), Body: raw}); err != nil {
		refuseQuota(w, err)
		return
	}
	ctx := r.Context()
	b, err := s.exec.Bind(ctx, op, raw)
	if err != nil {
		var be *execute.BindError
		if errors.As(err, &be) {
			writeError(w, http.StatusUnprocessableEntity, be.Error())
			return
		}
		s.log.Error("bind proposal", "op", op, "err", err)
		writeError(w, http.StatusInternalServerError, "the gateway could not inspect the repository: "+err.Error())
		return
	}
	// The fluxgit server that sent the proposal names itself in a header
	// (never in the body the model's arguments make); the commit guard
	// exempts only the workers that process checked in.
	if pr, ok := operation.ParseProposer(r.Header.Get(operation.ProposerHeader)); ok {
		b.Proposer = &pr
	}
	// The policy saw the paths as the agent wrote them; check the
	// repositories they resolve to as well, so that a path inside an
	// allowed prefix cannot reach a repository outside it.
	preq.RepoPaths = boundPaths(b, preq.RepoPaths)
	preq.Refs = append(preq.Refs, b.Moves...) // refs the operation moves without naming them
	if err := s.cfg.Policy.Check(preq); err != nil {
		writeError(w, http.StatusForbidden, policyRefusal(err))
		return
	}
	rev, err := s.exec.Review(ctx, op, raw, b)
	if err != nil {
		writeError(w, http.StatusUnprocessableEntity, "the gateway could not prepare this proposal for review: "+err.Error())
		return
	}
	bj, err := json.Marshal(b)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "encode binding: "+err.Error())
		return
	}
	rj, err := json.Marshal(rev)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "encode review: "+err.Error())
		return
	}
	id := str("previewId")
	key := str("idempotencyKey")
	if old, err := s.journal.Get(id); err == nil && (old.AgentID != agentID || old.IdempotencyKey != key) {
		writeError(w, http.StatusConflict, "previewId "+id+" already names another proposal; send a fresh previewId")
		return
	}
	now := s.now()
	got, created, err := s.journal.Submit(journal.Proposal{
		ID:             id,
		AgentID:        agentID,
		IdempotencyKey: key,
		Fingerprint:    proposal.Fingerprint(body),
		OperationType:  op,
		RepoPath:       b.RepoPath,
		Reason:         str("reason"),
		RequestedAt:    str("requestedAt"),
		CreatedAt:      now,
		ExpiresAt:      now.Add(s.cfg.TTL),
		UpdatedAt:      now,
		Status:         journal.Pending,
		Body:           raw,
		Binding:        bj,
		Review:         rj,
	})
	var qe *journal.QuotaError
	switch {
	case errors.As(err, &qe):
		refuseQuota(w, err)
		return
	case errors.Is(err, journal.ErrKeyConflict):
		writeError(w, http.StatusConflict, "idempotencyKey "+key+" was already used by this agent for a different proposal; use a new idempotencyKey for a new intent")
		return
	case err != nil:
		s.log.Error("submit proposal", "id", id, "err", err)
		writeError(w, http.StatusInternalServerError, "the gateway could not record the proposal: "+err.Error())
		return
	}
	if !created {
		got = s.expireIfDue(got)
		writeJSON(w, http.StatusOK, map[string]any{"previewId": got.ID, "status": got.Status, "expiresAt": stamp(got.ExpiresAt)})
		return
	}
	// A proposal the person's policy approves in advance is announced as
	// approved, never as waiting for a decision nobody needs to make.
	status := journal.Pending
	if q, ok := s.approveByPolicy(got, preq, rev); ok {
		status = q.Status
	} else {
		s.notify(got)
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"previewId": got.ID, "status": status, "expiresAt": stamp(got.ExpiresAt)})
}

// refuseQuota answers a proposal the intake quota has no room for: 429
// with the journal's sentence, which names the full bound and what to do.
func refuseQuota(w http.ResponseWriter, err error) {
	var qe *journal.QuotaError
	if !errors.As(err, &qe) {
		writeError(w, http.StatusInternalServerError, "the gateway could not check its proposal limits: "+err.Error())
		return
	}
	writeError(w, http.StatusTooManyRequests, "the gateway refused the proposal: "+qe.Error())
}

// boundPaths adds the canonical repositories a binding resolved to.
func boundPaths(b execute.Binding, paths []string) []string {
	out := slices.Clone(paths)
	add := func(p string) {
		if p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	add(b.RepoPath)
	add(b.WorktreePath) // a worktree's destination, the default one included
	for _, t := range b.Targets {
		add(t.RepoPath)
	}
	return out
}

func policyRefusal(err error) string {
	return "refused by the gateway's agent policy: " + err.Error() + ". No proposal was created; propose only what the policy allows, or ask the person to change the policy."
}

// statusBody is the status reply of the handshake provider's contract.
func statusBody(p journal.Proposal) map[string]any {
	b := map[string]any{
		"previewId":     p.ID,
		"operationType": p.OperationType,
		"status":        p.Status,
		"expiresAt":     stamp(p.ExpiresAt),
	}
	if len(p.Result) > 0 {
		b["result"] = p.Result
	}
	if p.RejectionReason != "" {
		b["rejectionReason"] = p.RejectionReason
	}
	if p.NeedsReconciliation {
		b["reconciliationRequired"] = true
	}
	var rv execute.Review
	if len(p.Review) > 0 && json.Unmarshal(p.Review, &rv) == nil {
		// What the person's card shows, as counts and names only (issue
		// 25): the diffs stay on the card, out of the agent's tokens.
		b["review"] = rv.Brief()
	}
	return b
}

func (s *Server) status(w http.ResponseWriter, id string) {
	if p, ok := s.agentProposal(w, id); ok {
		writeJSON(w, http.StatusOK, statusBody(p))
	}
}

// agentProposal reads proposal id for a read of the agent API (status,
// card), expired first if its time is up; when it cannot, it writes the
// 404 or 500 the agent reads and returns false.
func (s *Server) agentProposal(w http.ResponseWriter, id string) (journal.Proposal, bool) {
	p, err := s.journal.Get(id)
	if errors.Is(err, journal.ErrNotFound) {
		writeError(w, http.StatusNotFound, "no proposal has previewId "+id+" (it was never made here, or ended over an hour ago and was pruned)")
		return journal.Proposal{}, false
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, "read the journal: "+err.Error())
		return journal.Proposal{}, false
	}
	return s.expireIfDue(p), true
}

// cancel withdraws the calling agent's own pending proposal.
func (s *Server) cancel(w http.ResponseWriter, r *http.Request, id string) {
	body, _, ok := readJSONObject(w, r, maxSmallBody)
	if !ok {
		return
	}
	agentID, _ := body["agentId"].(string)
	if agentID == "" {
		writeError(w, http.StatusBadRequest, `a cancel needs the body {"agentId": "<the agent that proposed>"}`)
		return
	}
	p, err := s.journal.Get(id)
	if errors.Is(err, journal.ErrNotFound) {
		writeError(w, http.StatusNotFound, "no proposal has previewId "+id)
		return
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, "read the journal: "+err.Error())
		return
	}
	if p.AgentID != agentID {
		writeError(w, http.StatusForbidden, "proposal "+id+" was made by another agent; only the agent that proposed it can cancel it")
		return
	}
	p = s.expireIfDue(p)
	if p.Status != journal.Pending {
		writeError(w, http.StatusConflict, fmt.Sprintf("proposal %s is %s; only a pending proposal can be cancelled (read operation.status for its outcome)", id, p.Status))
		return
	}
	now := s.now()
	p, err = s.journal.Transition(id, []journal.Status{journal.Pending}, journal.Cancelled, func(q *journal.Proposal) {
		q.DecidedBy, q.DecidedAt = "agent", now
	})
	var se *journal.StateError
	if errors.As(err, &se) {
		writeError(w, http.StatusConflict, fmt.Sprintf("proposal %s is %s; only a pending proposal can be cancelled", id, se.Current))
		return
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, "record the cancel: "+err.Error())
		return
	}
	s.notify(p)
	s.auditCancel(p)
	writeJSON(w, http.StatusOK, cancelRecord(p))
}

// cancelRecord is the proposal record a cancel returns: the body's fields
// (per-operation ones included) with the gateway's view on top.
func cancelRecord(p journal.Proposal) map[string]any {
	rec := map[string]any{}
	var body map[string]any
	if json.Unmarshal(p.Body, &body) == nil {
		for k, v := range body {
			rec[k] = v
		}
	}
	rec["previewId"] = p.ID
	rec["agentId"] = p.AgentID
	rec["repoPath"] = p.RepoPath
	rec["reason"] = p.Reason
	rec["requestedAt"] = p.RequestedAt
	rec["expiresAt"] = stamp(p.ExpiresAt)
	rec["status"] = p.Status
	rec["operationType"] = p.OperationType
	rec["idempotencyKey"] = p.IdempotencyKey
	return rec
}

// expireIfDue expires p now when its time is up but the expiry loop has
// not reached it yet, so that no reader ever sees a stale pending.
func (s *Server) expireIfDue(p journal.Proposal) journal.Proposal {
	if p.Status != journal.Pending || s.now().Before(p.ExpiresAt) {
		return p
	}
	now := s.now()
	q, err := s.journal.Transition(p.ID, []journal.Status{journal.Pending}, journal.Expired, func(q *journal.Proposal) {
		q.DecidedBy, q.DecidedAt = "gateway", now
	})
	if err != nil {
		// Someone else moved it first; read what it is now.
		if cur, gerr := s.journal.Get(p.ID); gerr == nil {
			return cur
		}
		return p
	}
	s.notify(q)
	s.auditExpiry(q)
	return q
}
