package server

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/fluxgit/fluxgit/gateway/execute"
	"github.com/fluxgit/fluxgit/gateway/journal"
)

// cliPrefix is the terminal CLI's API. Every request needs the bearer
// secret from the session file, which lies in a private per-user directory
// no read tool reaches (credpaths.ChooseSecretDir).
const cliPrefix = "/cli/v1/"

// cliAPI serves the terminal CLI: list, show, approve, reject, reconcile,
// undo.
func (s *Server) cliAPI(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Origin") != "" {
		writeError(w, http.StatusForbidden, "requests carrying an Origin header are refused: the CLI API is for fluxgit gateway commands, not for web pages")
		return
	}
	if !s.bearerOK(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="fluxgit gateway"`)
		writeError(w, http.StatusUnauthorized, "the CLI API needs Authorization: Bearer <secret> from the gateway's session file; use the fluxgit gateway commands")
		return
	}
	rest := strings.TrimPrefix(r.URL.EscapedPath(), cliPrefix)
	parts := strings.Split(rest, "/")
	switch {
	case rest == "proposals":
		if allowMethod(w, r, http.MethodGet) {
			s.cliList(w, r)
		}
	case rest == "undo" || rest == "redo":
		if allowMethod(w, r, http.MethodPost) {
			s.cliUndo(w, r, rest)
		}
	case len(parts) == 2 && parts[0] == "proposals":
		if allowMethod(w, r, http.MethodGet) && validID(w, parts[1]) {
			p, err := s.Get(parts[1])
			s.cliReply(w, p, err)
		}
	case len(parts) == 3 && parts[0] == "proposals":
		if allowMethod(w, r, http.MethodPost) && validID(w, parts[1]) {
			s.cliAction(w, r, parts[1], parts[2])
		}
	default:
		writeError(w, http.StatusNotFound, "no CLI endpoint "+r.Method+" "+r.URL.Path)
	}
}

// bearerOK compares the bearer token with the secret in constant time.
func (s *Server) bearerOK(r *http.Request) bool {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(tok), []byte(s.secret)) == 1
}

// CLI list paging: a page holds at most maxListLimit rows, defaultListLimit
// unless the request says.
const (
	defaultListLimit = 200
	maxListLimit     = 1000
)

// ListPage is the reply of GET /cli/v1/proposals: one page of proposals,
// newest first, without their bodies, bindings and reviews (`fluxgit
// gateway show ID` has them), and where the page lies in the whole list.
type ListPage struct {
	Proposals []View `json:"proposals"`
	// Total is how many proposals the statuses select; Offset and Limit
	// are the page's, so more follow when Offset+len(Proposals) < Total.
	Total  int `json:"total"`
	Offset int `json:"offset"`
	Limit  int `json:"limit"`
}

func (s *Server) cliList(w http.ResponseWriter, r *http.Request) {
	f := journal.Filter{Limit: defaultListLimit, WithoutBody: true}
	q := r.URL.Query()
	if v := q.Get("status"); v != "" {
		for st := range strings.SplitSeq(v, ",") {
			if !knownStatus(journal.Status(st)) {
				writeError(w, http.StatusBadRequest, fmt.Sprintf("status %q is not one of pending, approved, executing, completed, failed, rejected, expired, cancelled", st))
				return
			}
			f.Statuses = append(f.Statuses, journal.Status(st))
		}
	}
	for _, p := range []struct {
		name     string
		dst      *int
		min, max int
	}{{"limit", &f.Limit, 1, maxListLimit}, {"offset", &f.Offset, 0, 1 << 30}} {
		v := q.Get(p.name)
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < p.min || n > p.max {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("%s must be a whole number from %d to %d", p.name, p.min, p.max))
			return
		}
		*p.dst = n
	}
	total, err := s.Count(f)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "read the journal: "+err.Error())
		return
	}
	rows, err := s.List(f)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "read the journal: "+err.Error())
		return
	}
	page := ListPage{Proposals: make([]View, 0, len(rows)), Total: total, Offset: f.Offset, Limit: f.Limit}
	for _, p := range rows {
		v := ViewOf(p)
		// A listing carries no bodies: twelve 24 MiB patches made the
		// old, whole list too large for the client to read.
		v.Body, v.Binding, v.Review = nil, nil, nil
		page.Proposals = append(page.Proposals, v)
	}
	writeJSON(w, http.StatusOK, page)
}

func knownStatus(s journal.Status) bool {
	switch s {
	case journal.Pending, journal.Approved, journal.Executing, journal.Completed, journal.Failed, journal.Rejected, journal.Expired, journal.Cancelled:
		return true
	}
	return false
}

// ApproveRequest is the body of a CLI approval: the confirmations the
// proposal's card would ask for.
type ApproveRequest struct {
	TypedBranch string `json:"typedBranch,omitempty"`
	Steps       []int  `json:"steps,omitempty"`
	ForcePush   bool   `json:"forcePush,omitempty"`
	// OverrideGuard lets a commit through the shift-roster guard.
	OverrideGuard bool `json:"overrideGuard,omitempty"`
}

// RejectRequest is the body of a CLI rejection.
type RejectRequest struct {
	Reason string `json:"reason"`
}

// ReconcileRequest is the body of a CLI reconciliation.
type ReconcileRequest struct {
	As   string `json:"as"`
	Note string `json:"note,omitempty"`
}

// UndoRequest is the body of a CLI undo.
type UndoRequest struct {
	RepoPath string `json:"repoPath"`
}

func (s *Server) cliAction(w http.ResponseWriter, r *http.Request, id, action string) {
	ctx := r.Context()
	switch action {
	case "approve":
		var req ApproveRequest
		if !decodeStrict(w, r, &req) {
			return
		}
		p, err := s.Decide(ctx, id, Decision{Approve: true, By: "cli",
			Confirm: execute.Confirmations{TypedBranch: req.TypedBranch, Steps: req.Steps, ForcePush: req.ForcePush, OverrideGuard: req.OverrideGuard}})
		s.cliReply(w, p, err)
	case "reject":
		var req RejectRequest
		if !decodeStrict(w, r, &req) {
			return
		}
		p, err := s.Decide(ctx, id, Decision{Reason: req.Reason, By: "cli"})
		s.cliReply(w, p, err)
	case "reconcile":
		var req ReconcileRequest
		if !decodeStrict(w, r, &req) {
			return
		}
		p, err := s.Reconcile(ctx, id, journal.Status(req.As), req.Note, "cli")
		s.cliReply(w, p, err)
	default:
		writeError(w, http.StatusNotFound, fmt.Sprintf("no CLI action %q; use approve, reject or reconcile", action))
	}
}

func (s *Server) cliUndo(w http.ResponseWriter, r *http.Request, action string) {
	var req UndoRequest
	if !decodeStrict(w, r, &req) {
		return
	}
	res, err := s.restoreAction(r.Context(), action, req.RepoPath, "cli")
	if err != nil {
		writeError(w, HTTPStatus(err), err.Error())
		return
	}
	writeJSON(w, http.StatusOK, undoView(res))
}

func (s *Server) cliReply(w http.ResponseWriter, p journal.Proposal, err error) {
	if err != nil {
		writeError(w, HTTPStatus(err), err.Error())
		return
	}
	writeJSON(w, http.StatusOK, ViewOf(p))
}

// decodeStrict decodes a small JSON object body into v, refusing
// duplicate and unknown keys.
func decodeStrict(w http.ResponseWriter, r *http.Request, v any) bool {
	_, raw, ok := readJSONObject(w, r, maxSmallBody)
	if !ok {
		return false
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		writeError(w, http.StatusBadRequest, "the request body does not fit this CLI request: "+err.Error())
		return false
	}
	return true
}
