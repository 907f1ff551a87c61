package server

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/fluxgit/fluxgit/gateway/execute"
	"github.com/fluxgit/fluxgit/gateway/journal"
	"github.com/fluxgit/fluxgit/gateway/proposal"
	"github.com/fluxgit/fluxgit/internal/operation"
)

// Lifecycle is what the person's surfaces need from the gateway (implemented by *Server).
type Lifecycle interface {
	Decide(ctx context.Context, id string, d Decision) (journal.Proposal, error)
	Reconcile(ctx context.Context, id string, as journal.Status, note, by string) (journal.Proposal, error)
	Undo(ctx context.Context, repoPath, by string) (execute.UndoResult, error)
	Redo(ctx context.Context, repoPath, by string) (execute.UndoResult, error)
	RestoreActions(limit int) ([]journal.RestoreAction, error) // undo and redo entries of the history, newest first
	List(f journal.Filter) ([]journal.Proposal, error)
	Count(f journal.Filter) (int, error)
	Get(id string) (journal.Proposal, error)
	Subscribe() (<-chan Change, func())
	Secret() string
	CheckHost(r *http.Request) bool
	RestorePoints(ctx context.Context) ([]RestorePointView, error) // latest restore point per repository the gateway has touched
	FileDiff(ctx context.Context, id string, section int, path string) (FileDiffView, error)
}

// RestorePointView is one repository's restore stack as the page lists
// it: the newest point not undone (what Undo takes next) and the one Redo
// takes next. CanUndo is the executor's verdict (not undone, same branch,
// HEAD still at After), so the page offers Undo only where it can work,
// and Why says why not.
type RestorePointView struct {
	RepoPath  string `json:"repoPath"`
	RepoID    string `json:"repoId"`
	ID        string `json:"id"`
	Operation string `json:"operation"`
	Before    string `json:"before"`
	After     string `json:"after"`
	Branch    string `json:"branch"`
	CanUndo   bool   `json:"canUndo"`
	Why       string `json:"why,omitempty"`
	// Depth is how many restore points of the stack are not undone.
	Depth int                `json:"depth"`
	Redo  *execute.RedoPoint `json:"redo,omitempty"`
}

// uiSessionCookie names the cookie that proves the browser was opened from
// the link printed in the person's terminal.
const uiSessionCookie = "fluxgit_gateway_session"

// uiDecidedBy is what the page's decisions are recorded as (journal
// DecidedBy, audit summary).
const uiDecidedBy = "page"

const (
	// uiMaxBody bounds a decision body: confirmations, a reason or a
	// note are small, and a person's browser never needs more.
	uiMaxBody = 64 << 10
	// uiMaxTextChars bounds a rejection reason or reconciliation note, the
	// same bound the contract puts on an agent's reason.
	uiMaxTextChars = 4096
	// uiPatchPreviewChars bounds each patch text in /ui/api/state, which the
	// page refetches on every change; the whole patch is one click away at
	// /ui/api/proposals/{id}.
	uiPatchPreviewChars = 64 << 10
	// uiHistoryLimit is how many decided proposals the page lists.
	uiHistoryLimit = 100
	// uiPendingPage is how many pending proposals one state holds; the
	// page says how many there are in all and pages through the rest
	// (pendingOffset), so none is silently left out.
	uiPendingPage = 50
	// uiRunningLimit bounds the approved, executing and interrupted
	// proposals listed; the page says when there are more.
	uiRunningLimit = 100
	// uiPreviewCacheSize bounds the rendered previews kept: the open
	// proposals of a few pages.
	uiPreviewCacheSize = 4 * (uiPendingPage + uiRunningLimit)
	// uiKeepAlive is how often an idle event stream sends a comment, so
	// proxies and the browser keep the connection open.
	uiKeepAlive = 20 * time.Second
)

// uiCSP is the approval page's Content-Security-Policy. default-src 'self'
// loads nothing from elsewhere; default-src does not cover the three
// navigation directives, so they are set as well: no other site may frame
// the page (clickjacking an Approve button; X-Frame-Options says the same
// to older browsers), no injected <base> can redirect its relative URLs,
// and no form can post anywhere but the gateway itself.
const uiCSP = "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// uiPreviewIDRe is the shape of every previewId the gateway stores; anything
// else in a URL cannot name a proposal.
var uiPreviewIDRe = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

// personHandler serves the approval page and its API. It trusts nothing
// about the caller: every request passes the Host check, every API call
// needs the session cookie, and every decision also needs the CSRF token
// and a same-origin Origin, because any web page the person visits can
// make their browser send requests to loopback.
type personHandler struct {
	l     Lifecycle
	cache *previewCache
}

func newPersonHandler(l Lifecycle) http.Handler {
	return &personHandler{l: l, cache: newPreviewCache(uiPreviewCacheSize)}
}

func (h *personHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Set("Content-Security-Policy", uiCSP)
	hdr.Set("X-Frame-Options", "DENY")
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("X-Content-Type-Options", "nosniff")
	// The first URL carries the secret; no request may leak it onward.
	hdr.Set("Referrer-Policy", "no-referrer")

	if !h.l.CheckHost(r) {
		writeError(w, http.StatusForbidden, fmt.Sprintf("Host %q is not this gateway's loopback address; open the page with the address printed by `fluxgit gateway`", r.Host))
		return
	}
	p := r.URL.Path
	switch {
	case p == "/" || p == "/index.html":
		h.servePage(w, r, "")
	case strings.HasPrefix(p, operation.CardPath):
		id := strings.TrimPrefix(p, operation.CardPath)
		if !uiPreviewIDRe.MatchString(id) {
			writeError(w, http.StatusNotFound, "a card address is "+operation.CardPath+"<previewId>, with a previewId of 1-128 of [A-Za-z0-9_-]")
			return
		}
		h.servePage(w, r, id)
	case strings.HasPrefix(p, "/ui/assets/"):
		h.serveAsset(w, r)
	case p == "/favicon.ico":
		w.WriteHeader(http.StatusNoContent)
	case strings.HasPrefix(p, "/ui/api/"):
		h.serveAPI(w, r, strings.TrimPrefix(p, "/ui/api/"))
	default:
		writeError(w, http.StatusNotFound, "no such page; the approval page is at /")
	}
}

// serveAPI authenticates and routes /ui/api/….
func (h *personHandler) serveAPI(w http.ResponseWriter, r *http.Request, route string) {
	if msg := h.authorize(r); msg != "" {
		writeError(w, http.StatusForbidden, msg)
		return
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		switch {
		case route == "state":
			h.serveState(w, r)
		case route == "events":
			h.serveEvents(w, r)
		case strings.HasPrefix(route, "card/"):
			h.serveCard(w, r, strings.TrimPrefix(route, "card/"))
		case strings.HasPrefix(route, "proposals/") && strings.HasSuffix(route, "/diff"):
			h.serveFileDiff(w, r, strings.TrimSuffix(strings.TrimPrefix(route, "proposals/"), "/diff"))
		case strings.HasPrefix(route, "proposals/") && !strings.Contains(strings.TrimPrefix(route, "proposals/"), "/"):
			h.serveProposal(w, r, strings.TrimPrefix(route, "proposals/"))
		default:
			writeError(w, http.StatusNotFound, "no such API endpoint: GET /ui/api/"+route)
		}
	case http.MethodPost:
		if route == "undo" || route == "redo" {
			h.undo(w, r, route)
			return
		}
		if rest, ok := strings.CutPrefix(route, "proposals/"); ok {
			if id, action, ok := strings.Cut(rest, "/"); ok {
				switch action {
				case "approve":
					h.approve(w, r, id)
					return
				case "reject":
					h.reject(w, r, id)
					return
				case "reconcile":
					h.reconcile(w, r, id)
					return
				}
			}
		}
		writeError(w, http.StatusNotFound, "no such API endpoint: POST /ui/api/"+route+" (use proposals/{id}/approve|reject|reconcile, undo or redo)")
	default:
		w.Header().Set("Allow", "GET, POST")
		writeError(w, http.StatusMethodNotAllowed, "method "+r.Method+" is not used by the approval page API")
	}
}

// authorize returns why r may not use the API, or "" when it may.
func (h *personHandler) authorize(r *http.Request) string {
	secret := h.l.Secret()
	if secret == "" {
		return "the gateway has no session secret; restart `fluxgit gateway`"
	}
	if !h.validSession(r, secret) {
		return "no valid session: open the \"Approval page:\" link that `fluxgit gateway` printed in its terminal (the link changes each time the gateway starts)"
	}
	origin := r.Header.Get("Origin")
	if r.Method == http.MethodPost {
		if origin == "" {
			return "a decision needs the Origin header of the approval page; send it from the page itself"
		}
		if !uiSameOrigin(origin, r.Host) {
			return fmt.Sprintf("Origin %q is not the approval page's origin http://%s", origin, r.Host)
		}
		got := r.Header.Get("X-CSRF-Token")
		if got == "" || !uiConstantEqual(got, uiDerive(secret, "csrf")) {
			return "missing or wrong X-CSRF-Token; reload the approval page (the token changes each time the gateway starts)"
		}
		return ""
	}
	// Reads carry no Origin from the page itself, but when one is present
	// it must still be ours: the state includes the CSRF token.
	if origin != "" && !uiSameOrigin(origin, r.Host) {
		return fmt.Sprintf("Origin %q is not the approval page's origin http://%s", origin, r.Host)
	}
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		return "cross-site requests may not read the approval page's state"
	}
	return ""
}

func uiSameOrigin(origin, host string) bool {
	return uiConstantEqual(origin, "http://"+host)
}

// validSession reports whether r carries the cookie issued for secret.
func (h *personHandler) validSession(r *http.Request, secret string) bool {
	for _, c := range r.CookiesNamed(uiSessionCookie) {
		if uiConstantEqual(c.Value, uiDerive(secret, "session")) {
			return true
		}
	}
	return false
}

// derive is the per-start value for purpose: an HMAC keyed by the secret,
// so neither the cookie nor the CSRF token reveals the secret itself and
// both become invalid when the gateway restarts with a new one.
func uiDerive(secret, purpose string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("fluxgit gateway approval page v1 " + purpose))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// uiConstantEqual compares without leaking where two strings differ.
func uiConstantEqual(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// ---- views ----

// uiState is the body of GET /ui/api/state.
type uiState struct {
	CSRF string `json:"csrf"`
	// Now is the gateway's clock, so countdowns do not depend on the
	// browser's.
	Now       string       `json:"now"`
	Proposals []uiProposal `json:"proposals"`
	// PendingTotal is how many proposals are pending in all; Proposals
	// holds those from PendingOffset on, at most PendingLimit, soonest
	// expiry first, so the page can say what it does not show and page
	// to it.
	PendingTotal  int `json:"pendingTotal"`
	PendingOffset int `json:"pendingOffset"`
	PendingLimit  int `json:"pendingLimit"`
	// RunningTotal is how many proposals are approved or executing in
	// all; at most uiRunningLimit of them are in Proposals.
	RunningTotal int          `json:"runningTotal"`
	History      []uiProposal `json:"history"`
	// HistoryTotal is how many decided proposals the journal still holds
	// (History has the newest uiHistoryLimit).
	HistoryTotal  int                `json:"historyTotal"`
	RestorePoints []RestorePointView `json:"restorePoints"`
	// RestoreActions are the newest undo and redo entries of the history.
	RestoreActions []journal.RestoreAction `json:"restoreActions"`
	// RestorePointsError says why restore points could not be listed; the
	// rest of the page still works.
	RestorePointsError string `json:"restorePointsError,omitempty"`
}

// uiProposal is one proposal as the page shows it.
type uiProposal struct {
	PreviewID           string          `json:"previewId"`
	OperationType       string          `json:"operationType"`
	Status              journal.Status  `json:"status"`
	Risk                string          `json:"risk"`
	AgentID             string          `json:"agentId"`
	RepoPath            string          `json:"repoPath"`
	Reason              string          `json:"reason"`
	RequestedAt         string          `json:"requestedAt"`
	CreatedAt           string          `json:"createdAt"`
	ExpiresAt           string          `json:"expiresAt"`
	UpdatedAt           string          `json:"updatedAt"`
	DecidedBy           string          `json:"decidedBy,omitempty"`
	DecidedAt           string          `json:"decidedAt,omitempty"`
	RejectionReason     string          `json:"rejectionReason,omitempty"`
	NeedsReconciliation bool            `json:"needsReconciliation"`
	Summary             string          `json:"summary"`
	Refs                []uiRef         `json:"refs"`
	Body                json.RawMessage `json:"body,omitempty"`
	BodyTruncated       bool            `json:"bodyTruncated,omitempty"`
	Review              *execute.Review `json:"review,omitempty"`
	Confirmations       json.RawMessage `json:"confirmations,omitempty"`
	Result              json.RawMessage `json:"result,omitempty"`
}

// uiRef is one ref the proposal named and the commit it pointed at when
// the proposal arrived.
type uiRef struct {
	Ref    string `json:"ref"`
	Commit string `json:"commit"`
}

func uiStamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return stamp(t)
}

// uiView renders p. withBody adds the body and the review (open cards);
// history rows leave both out. fullPatch keeps patches whole instead of
// cutting them to uiPatchPreviewChars bytes.
func uiView(p journal.Proposal, withBody, fullPatch bool) uiProposal {
	v := uiMeta(p)
	renderPreview(p, withBody, fullPatch).apply(&v)
	return v
}

// uiMeta renders the fields of p that change over its life (status,
// decision, result); renderPreview the ones fixed when it was stored.
func uiMeta(p journal.Proposal) uiProposal {
	return uiProposal{
		PreviewID:           p.ID,
		OperationType:       p.OperationType,
		Status:              p.Status,
		Risk:                proposal.Risk(p.OperationType),
		AgentID:             p.AgentID,
		RepoPath:            p.RepoPath,
		Reason:              p.Reason,
		RequestedAt:         p.RequestedAt,
		CreatedAt:           uiStamp(p.CreatedAt),
		ExpiresAt:           uiStamp(p.ExpiresAt),
		UpdatedAt:           uiStamp(p.UpdatedAt),
		DecidedBy:           p.DecidedBy,
		DecidedAt:           uiStamp(p.DecidedAt),
		RejectionReason:     p.RejectionReason,
		NeedsReconciliation: p.NeedsReconciliation,
		Refs:                []uiRef{},
		Result:              uiRawObject(p.Result),
		Confirmations:       uiRawObject(p.Confirmations),
	}
}

// preview is the part of a card fixed once a proposal is stored (its body,
// binding and review never change), so it is rendered once and cached.
type preview struct {
	summary   string
	refs      []uiRef
	review    *execute.Review
	body      json.RawMessage
	truncated bool
}

// renderPreview renders p's fixed part; withBody adds the body (patches
// cut unless fullPatch) and the review.
func renderPreview(p journal.Proposal, withBody, fullPatch bool) preview {
	pv := preview{refs: []uiRef{}}
	var rev execute.Review
	if len(p.Review) > 0 && json.Unmarshal(p.Review, &rev) == nil {
		pv.summary = rev.Summary
		if withBody {
			pv.review = &rev
		}
	}
	var b execute.Binding
	if len(p.Binding) > 0 && json.Unmarshal(p.Binding, &b) == nil {
		for ref, commit := range b.Refs {
			pv.refs = append(pv.refs, uiRef{Ref: ref, Commit: commit})
		}
		sort.Slice(pv.refs, func(i, j int) bool { return pv.refs[i].Ref < pv.refs[j].Ref })
	}
	if withBody {
		limit := uiPatchPreviewChars
		if fullPatch {
			limit = 0
		}
		pv.body, pv.truncated = uiPreviewBody(p.Body, limit)
	}
	return pv
}

func (pv preview) apply(v *uiProposal) {
	v.Summary, v.Refs, v.Review, v.Body, v.BodyTruncated = pv.summary, pv.refs, pv.review, pv.body, pv.truncated
}

// previewCache keeps the rendered previews of open cards, so a refresh of
// the page (on every change) does not read and re-parse every stored body:
// each is rendered once. Entries are keyed by previewId and creation time
// (a pruned id could be used again) and the oldest go first when full.
type previewCache struct {
	mu    sync.Mutex
	max   int
	items map[string]preview
	order []string
}

func newPreviewCache(max int) *previewCache {
	return &previewCache{max: max, items: map[string]preview{}}
}

func previewKey(p journal.Proposal) string {
	return p.ID + "@" + strconv.FormatInt(p.CreatedAt.UnixMilli(), 10)
}

func (c *previewCache) get(key string) (preview, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	pv, ok := c.items[key]
	return pv, ok
}

func (c *previewCache) put(key string, pv preview) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[key]; ok {
		return
	}
	for len(c.order) >= c.max {
		delete(c.items, c.order[0])
		c.order = c.order[1:]
	}
	c.items[key] = pv
	c.order = append(c.order, key)
}

// openView renders an open proposal listed without its body: the fixed
// part from the cache, read and rendered once from the whole row.
func (h *personHandler) openView(p journal.Proposal) uiProposal {
	v := uiMeta(p)
	key := previewKey(p)
	pv, ok := h.cache.get(key)
	if !ok {
		full, err := h.l.Get(p.ID)
		if err != nil {
			// Pruned or unreadable since the listing: show what the
			// listing has, uncached.
			renderPreview(p, false, false).apply(&v)
			return v
		}
		pv = renderPreview(full, true, false)
		h.cache.put(key, pv)
	}
	pv.apply(&v)
	return v
}

// uiRawObject passes stored JSON through only when it is an object, so a
// damaged column cannot break the whole state response.
func uiRawObject(raw json.RawMessage) json.RawMessage {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || t[0] != '{' || !json.Valid(t) {
		return nil
	}
	return json.RawMessage(t)
}

// uiPreviewBody returns the proposal body with every patchContent (top level
// and in plan steps) cut to limit bytes on a character boundary (0: no
// limit).
func uiPreviewBody(raw json.RawMessage, limit int) (json.RawMessage, bool) {
	var body map[string]any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&body); err != nil || body == nil {
		return nil, false
	}
	if limit <= 0 {
		return uiRawObject(raw), false
	}
	cut := func(m map[string]any) bool {
		s, ok := m["patchContent"].(string)
		if !ok || len(s) <= limit {
			return false
		}
		n := limit
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		m["patchContent"] = s[:n]
		return true
	}
	truncated := cut(body)
	if steps, ok := body["steps"].([]any); ok {
		for _, s := range steps {
			if m, ok := s.(map[string]any); ok && cut(m) {
				truncated = true
			}
		}
	}
	if !truncated {
		return uiRawObject(raw), false
	}
	out, err := json.Marshal(body)
	if err != nil {
		return nil, false
	}
	return out, true
}

// ---- reads ----

func (h *personHandler) serveState(w http.ResponseWriter, r *http.Request) {
	offset := 0
	if v := r.URL.Query().Get("pendingOffset"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, "pendingOffset must be a whole number of pending proposals to skip (0 or more)")
			return
		}
		offset = n
	}
	pendingF := journal.Filter{Statuses: []journal.Status{journal.Pending}, ByExpiry: true, Limit: uiPendingPage, WithoutBody: true}
	pendingTotal, err := h.l.Count(pendingF)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "counting pending proposals: "+err.Error())
		return
	}
	// Past the end (proposals were decided meanwhile): the last page.
	if offset >= pendingTotal && pendingTotal > 0 {
		offset = (pendingTotal - 1) / uiPendingPage * uiPendingPage
	}
	pendingF.Offset = offset
	pending, err := h.l.List(pendingF)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "listing pending proposals: "+err.Error())
		return
	}
	runningF := journal.Filter{Statuses: []journal.Status{journal.Approved, journal.Executing}, Oldest: true, Limit: uiRunningLimit, WithoutBody: true}
	runningTotal, err := h.l.Count(runningF)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "counting open proposals: "+err.Error())
		return
	}
	running, err := h.l.List(runningF)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "listing open proposals: "+err.Error())
		return
	}
	doneF := journal.Filter{
		Statuses:    []journal.Status{journal.Completed, journal.Failed, journal.Rejected, journal.Expired, journal.Cancelled},
		Limit:       uiHistoryLimit,
		WithoutBody: true,
	}
	historyTotal, err := h.l.Count(doneF)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "counting decided proposals: "+err.Error())
		return
	}
	done, err := h.l.List(doneF)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "listing decided proposals: "+err.Error())
		return
	}
	// Pending first, the one expiring soonest on top (the journal's
	// order; a proposal expired while listing moves on); then what a
	// person must reconcile; then what is approved or running.
	active := make([]journal.Proposal, 0, len(pending)+len(running))
	for _, p := range pending {
		if p.Status == journal.Pending {
			active = append(active, p)
		}
	}
	sort.SliceStable(running, func(i, j int) bool {
		return running[i].NeedsReconciliation && !running[j].NeedsReconciliation
	})
	active = append(active, running...)
	st := uiState{
		CSRF:          uiDerive(h.l.Secret(), "csrf"),
		Now:           uiStamp(time.Now()),
		Proposals:     make([]uiProposal, 0, len(active)),
		PendingTotal:  pendingTotal,
		PendingOffset: offset,
		PendingLimit:  uiPendingPage,
		RunningTotal:  runningTotal,
		History:       make([]uiProposal, 0, len(done)),
		HistoryTotal:  historyTotal,
		RestorePoints: []RestorePointView{},
	}
	for _, p := range active {
		st.Proposals = append(st.Proposals, h.openView(p))
	}
	for _, p := range done {
		if len(st.History) == uiHistoryLimit {
			break
		}
		st.History = append(st.History, uiView(p, false, false))
	}
	if acts, err := h.l.RestoreActions(uiHistoryLimit); err == nil {
		st.RestoreActions = acts
	} else {
		st.RestoreActions = []journal.RestoreAction{}
	}
	rps, err := h.l.RestorePoints(r.Context())
	if err != nil {
		st.RestorePointsError = err.Error()
	} else if rps != nil {
		st.RestorePoints = rps
	}
	writeJSON(w, http.StatusOK, st)
}

// uiCard is the reply of GET /ui/api/card/{id}: the one proposal a card
// page shows, in the shape the page's cards take, with the CSRF token
// and clock its decisions and countdown need.
type uiCard struct {
	CSRF string     `json:"csrf"`
	Now  string     `json:"now"`
	Card uiProposal `json:"card"`
}

// serveCard answers the card page (operation.CardPath): the proposal
// whatever its status, so the page shows the outcome once decided.
func (h *personHandler) serveCard(w http.ResponseWriter, r *http.Request, id string) {
	if p, ok := h.proposal(w, id); ok {
		writeJSON(w, http.StatusOK, uiCard{CSRF: uiDerive(h.l.Secret(), "csrf"), Now: uiStamp(time.Now()), Card: h.openView(p)})
	}
}

// proposal reads proposal id for a read of the person's API (card,
// proposal); when the id is malformed or unknown it writes the error the
// page shows and returns false.
func (h *personHandler) proposal(w http.ResponseWriter, id string) (journal.Proposal, bool) {
	if !uiPreviewIDRe.MatchString(id) {
		writeError(w, http.StatusNotFound, "previewId must be 1-128 of [A-Za-z0-9_-]")
		return journal.Proposal{}, false
	}
	p, err := h.l.Get(id)
	if err != nil {
		uiLifecycleError(w, err)
		return journal.Proposal{}, false
	}
	return p, true
}

// serveProposal returns one proposal with its whole body, for a patch too
// long for the state's preview.
func (h *personHandler) serveProposal(w http.ResponseWriter, r *http.Request, id string) {
	if p, ok := h.proposal(w, id); ok {
		writeJSON(w, http.StatusOK, uiView(p, true, true))
	}
}

// serveFileDiff answers the page's request for one file's diff of a
// card's section (issue 25: a card is bounded and each file's diff is
// fetched on demand); ?section is the section's index in the review and
// ?path the file. The diff is computed again from the objects the review
// names, so what the page expands is what the card summarised.
func (h *personHandler) serveFileDiff(w http.ResponseWriter, r *http.Request, id string) {
	if !uiPreviewIDRe.MatchString(id) {
		writeError(w, http.StatusNotFound, "previewId must be 1-128 of [A-Za-z0-9_-]")
		return
	}
	q := r.URL.Query()
	sec, err := strconv.Atoi(q.Get("section"))
	path := q.Get("path")
	if err != nil || path == "" || len(path) > 32768 {
		writeError(w, http.StatusBadRequest, "ask for ?section=<index of the card's section>&path=<a file it lists>")
		return
	}
	v, err := h.l.FileDiff(r.Context(), id, sec, path)
	if err != nil {
		uiLifecycleError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// serveEvents streams one `change` event per lifecycle change; the page
// refetches the state on each, so an event carries only the id and status.
func (h *personHandler) serveEvents(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	// A server-wide write timeout must not cut a stream that is meant to
	// stay open; not every writer supports deadlines, which is fine.
	_ = rc.SetWriteDeadline(time.Time{})
	changes, cancel := h.l.Subscribe()
	defer cancel()

	hdr := w.Header()
	hdr.Set("Content-Type", "text/event-stream; charset=utf-8")
	hdr.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	if _, err := io.WriteString(w, "retry: 2000\n\n: connected\n\n"); err != nil {
		return
	}
	if rc.Flush() != nil {
		return
	}
	tick := time.NewTicker(uiKeepAlive)
	defer tick.Stop()
	for {
		var chunk string
		select {
		case <-r.Context().Done():
			return
		case c, ok := <-changes:
			if !ok {
				return // the gateway is shutting down
			}
			data, _ := json.Marshal(struct {
				PreviewID string         `json:"previewId"`
				Status    journal.Status `json:"status"`
			}{c.ID, c.Status})
			chunk = "event: change\ndata: " + string(data) + "\n\n"
		case <-tick.C:
			chunk = ": keep-alive\n\n"
		}
		if _, err := io.WriteString(w, chunk); err != nil {
			return
		}
		if rc.Flush() != nil {
			return
		}
	}
}

// ---- decisions ----

// uiApproveBody is POST /ui/api/proposals/{id}/approve: the confirmations
// the card asked for (execute.Confirmations).
type uiApproveBody struct {
	TypedBranch string `json:"typedBranch"`
	Steps       []int  `json:"steps"`
	ForcePush   bool   `json:"forcePush"`
	// OverrideGuard lets a commit through the shift-roster guard.
	OverrideGuard bool `json:"overrideGuard"`
}

// uiRejectBody is POST /ui/api/proposals/{id}/reject.
type uiRejectBody struct {
	Reason string `json:"reason"`
}

// uiReconcileBody is POST /ui/api/proposals/{id}/reconcile.
type uiReconcileBody struct {
	As   string `json:"as"`
	Note string `json:"note"`
}

// uiUndoBody is POST /ui/api/undo.
type uiUndoBody struct {
	RepoPath string `json:"repoPath"`
}

// uiUndoView is the response of POST /ui/api/undo and /ui/api/redo.
type uiUndoView struct {
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

func (h *personHandler) approve(w http.ResponseWriter, r *http.Request, id string) {
	var b uiApproveBody
	if !h.decode(w, r, id, &b, true) {
		return
	}
	for _, s := range b.Steps {
		if s < 0 || s > 9 {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("steps holds plan step indexes 0-9 (0-based); got %d", s))
			return
		}
	}
	p, err := h.l.Decide(r.Context(), id, Decision{
		Approve: true,
		Confirm: execute.Confirmations{TypedBranch: b.TypedBranch, Steps: b.Steps, ForcePush: b.ForcePush, OverrideGuard: b.OverrideGuard},
		By:      uiDecidedBy,
	})
	if err != nil {
		uiLifecycleError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, uiView(p, true, false))
}

func (h *personHandler) reject(w http.ResponseWriter, r *http.Request, id string) {
	var b uiRejectBody
	if !h.decode(w, r, id, &b, false) {
		return
	}
	if msg := uiCheckText("reason", b.Reason, true); msg != "" {
		writeError(w, http.StatusBadRequest, msg+"; the agent reads it to understand the rejection")
		return
	}
	p, err := h.l.Decide(r.Context(), id, Decision{Reason: strings.TrimSpace(b.Reason), By: uiDecidedBy})
	if err != nil {
		uiLifecycleError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, uiView(p, true, false))
}

func (h *personHandler) reconcile(w http.ResponseWriter, r *http.Request, id string) {
	var b uiReconcileBody
	if !h.decode(w, r, id, &b, false) {
		return
	}
	var as journal.Status
	switch b.As {
	case string(journal.Completed):
		as = journal.Completed
	case string(journal.Failed):
		as = journal.Failed
	default:
		writeError(w, http.StatusBadRequest, fmt.Sprintf("as must be \"completed\" or \"failed\" (what really happened in the repository); got %q", b.As))
		return
	}
	if msg := uiCheckText("note", b.Note, false); msg != "" {
		writeError(w, http.StatusBadRequest, msg)
		return
	}
	p, err := h.l.Reconcile(r.Context(), id, as, strings.TrimSpace(b.Note), uiDecidedBy)
	if err != nil {
		uiLifecycleError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, uiView(p, true, false))
}

func (h *personHandler) undo(w http.ResponseWriter, r *http.Request, action string) {
	var b uiUndoBody
	if !h.decode(w, r, "", &b, false) {
		return
	}
	if strings.TrimSpace(b.RepoPath) == "" || !filepath.IsAbs(b.RepoPath) {
		writeError(w, http.StatusBadRequest, "repoPath must be the absolute path of a repository listed under Restore points")
		return
	}
	f := h.l.Undo
	if action == "redo" {
		f = h.l.Redo
	}
	u, err := f(r.Context(), b.RepoPath, uiDecidedBy)
	if err != nil {
		uiLifecycleError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, uiUndoView{RepoPath: u.RepoPath, RepoID: u.RepoID, Before: u.Before, After: u.After, Branch: u.Branch,
		ID: u.ID, Operation: u.Operation, How: u.How, DroppedStash: u.DroppedStash})
}

// decode checks id (when the route has one) and reads exactly one JSON
// object into dst, refusing unknown keys so a typo never silently drops
// a confirmation. emptyOK accepts an empty body as {}.
func (h *personHandler) decode(w http.ResponseWriter, r *http.Request, id string, dst any, emptyOK bool) bool {
	if id != "" || strings.HasPrefix(r.URL.Path, "/ui/api/proposals/") {
		if !uiPreviewIDRe.MatchString(id) {
			writeError(w, http.StatusNotFound, "previewId must be 1-128 of [A-Za-z0-9_-]")
			return false
		}
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, uiMaxBody+1))
	if err != nil {
		writeError(w, http.StatusBadRequest, "reading the request body: "+err.Error())
		return false
	}
	if len(raw) > uiMaxBody {
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body is over %d bytes", uiMaxBody))
		return false
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		if emptyOK {
			return true
		}
		writeError(w, http.StatusBadRequest, "the request body must be a JSON object")
		return false
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err == nil {
		// encoding/json matches keys case-insensitively; a confirmation
		// spelled "typedbranch" must not count as "typedBranch".
		allowed := uiJSONKeys(dst)
		for k := range keys {
			if !allowed[k] {
				writeError(w, http.StatusBadRequest, fmt.Sprintf("unknown key %q; this request takes %s", k, uiKeyList(allowed)))
				return false
			}
		}
	}
	if err := d.Decode(dst); err != nil {
		writeError(w, http.StatusBadRequest, "the request body is not the expected JSON object: "+err.Error())
		return false
	}
	if d.More() {
		writeError(w, http.StatusBadRequest, "the request body has data after its JSON object")
		return false
	}
	return true
}

// uiJSONKeys is the set of JSON keys of the struct dst points to.
func uiJSONKeys(dst any) map[string]bool {
	keys := map[string]bool{}
	t := reflect.TypeOf(dst).Elem()
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			keys[name] = true
		}
	}
	return keys
}

func uiKeyList(keys map[string]bool) string {
	list := make([]string, 0, len(keys))
	for k := range keys {
		list = append(list, k)
	}
	sort.Strings(list)
	return strings.Join(list, ", ")
}

// uiCheckText returns what is wrong with a person's free text, or "".
func uiCheckText(name, s string, required bool) string {
	if required && strings.TrimSpace(s) == "" {
		return name + " is required and must not be blank"
	}
	if utf8.RuneCountInString(s) > uiMaxTextChars {
		return fmt.Sprintf("%s is longer than %d characters", name, uiMaxTextChars)
	}
	if !utf8.ValidString(s) {
		return name + " is not valid UTF-8"
	}
	return ""
}

// ---- responses ----

// uiLifecycleError answers a refused decision with the status HTTPStatus
// gives it, the same as the terminal's API.
func uiLifecycleError(w http.ResponseWriter, err error) {
	writeError(w, HTTPStatus(err), err.Error())
}
