package server

import (
	"bytes"
	"embed"
	"net/http"
	"strings"

	"github.com/fluxgit/fluxgit/internal/operation"
)

// pageFiles is the approval page: one HTML file, its script and its style
// sheet, all served from this binary so the page loads nothing from
// elsewhere (the CSP is default-src 'self').
//
//go:embed page/index.html page/app.js page/app.css
var pageFiles embed.FS

// uiSessionMarker is replaced in index.html by whether the browser holds a
// valid session, so the page can say at once how to open it properly
// instead of waiting for a refused API call.
const uiSessionMarker = `data-session="unknown"`

// uiCardMarker is completed in index.html with the previewId of a card
// page (operation.CardPath), so the script shows that one card.
const uiCardMarker = `data-card=""`

// servePage serves the page, and turns the one-time link /?s=<secret> into
// the session cookie. card is the previewId of a card page
// (operation.CardPath + id, already checked against uiPreviewIDRe), ""
// for the whole page; its secret link (`fluxgit gateway open ID`) lands
// back on the card.
func (h *personHandler) servePage(w http.ResponseWriter, r *http.Request, card string) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET")
		writeError(w, http.StatusMethodNotAllowed, "the approval page is read with GET; decisions go to /ui/api/")
		return
	}
	secret := h.l.Secret()
	status := http.StatusOK
	if s, ok := r.URL.Query()["s"]; ok {
		if secret != "" && len(s) == 1 && uiConstantEqual(s[0], secret) {
			http.SetCookie(w, &http.Cookie{
				Name:     uiSessionCookie,
				Value:    uiDerive(secret, "session"),
				Path:     "/",
				HttpOnly: true,
				SameSite: http.SameSiteStrictMode,
			})
			// Redirect so the secret leaves the address bar and history.
			to := "/"
			if card != "" {
				to = operation.CardPath + card
			}
			http.Redirect(w, r, to, http.StatusSeeOther)
			return
		}
		// A stale link (the gateway restarted) or a guess: no cookie.
		status = http.StatusForbidden
	}
	session := "none"
	if secret != "" && status == http.StatusOK && h.validSession(r, secret) {
		session = "ok"
	} else if status == http.StatusForbidden {
		session = "stale"
	}
	page, err := pageFiles.ReadFile("page/index.html")
	if err != nil {
		writeError(w, http.StatusInternalServerError, "the approval page is missing from this binary: "+err.Error())
		return
	}
	page = bytes.Replace(page, []byte(uiSessionMarker), []byte(`data-session="`+session+`"`), 1)
	page = bytes.Replace(page, []byte(uiCardMarker), []byte(`data-card="`+card+`"`), 1)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if r.Method == http.MethodGet {
		_, _ = w.Write(page)
	}
}

// serveAsset serves the script and the style sheet. They hold no data, so
// they need no session.
func (h *personHandler) serveAsset(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET")
		writeError(w, http.StatusMethodNotAllowed, "assets are read with GET")
		return
	}
	name := strings.TrimPrefix(r.URL.Path, "/ui/assets/")
	var ctype string
	switch name {
	case "app.js":
		ctype = "text/javascript; charset=utf-8"
	case "app.css":
		ctype = "text/css; charset=utf-8"
	default:
		writeError(w, http.StatusNotFound, "no such asset: "+name)
		return
	}
	data, err := pageFiles.ReadFile("page/" + name)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "asset missing from this binary: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", ctype)
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(data)
	}
}
