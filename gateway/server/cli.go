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
	case rest == "undo":
		if allowMethod(w, r, http.MethodPost) {
			s.cliUndo(w, r)
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

func (s *Server) cliList(w http.ResponseWriter, r *http.Request) {
	var f journal.Filter
	q := r.URL.Query()
	if v := q.Get("status"); v != "" {
		for st := range strings.SplitSeq(v, ",") {
			f.Statuses = append(f.Statuses, journal.Status(st))
		}
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, "limit must be a whole number")
			return
		}
		f.Limit = n
	}
	rows, err := s.List(f)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "read the journal: "+err.Error())
		return
	}
	views := make([]View, 0, len(rows))
	for _, p := range rows {
		views = append(views, ViewOf(p))
	}
	writeJSON(w, http.StatusOK, map[string]any{"proposals": views})
}

// ApproveRequest is the body of a CLI approval: the confirmations the
// proposal's card would ask for.
type ApproveRequest struct {
	TypedBranch string `json:"typedBranch,omitempty"`
	Steps       []int  `json:"steps,omitempty"`
	ForcePush   bool   `json:"forcePush,omitempty"`
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
			Confirm: execute.Confirmations{TypedBranch: req.TypedBranch, Steps: req.Steps, ForcePush: req.ForcePush}})
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

func (s *Server) cliUndo(w http.ResponseWriter, r *http.Request) {
	var req UndoRequest
	if !decodeStrict(w, r, &req) {
		return
	}
	res, err := s.Undo(r.Context(), req.RepoPath, "cli")
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
