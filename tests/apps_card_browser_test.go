package tests

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fluxgit/fluxgit/tests/browser"
)

// The MCP Apps extension as a client declares it (SEP-1865,
// ext-apps specification 2026-01-26).
const (
	appsExtension = "io.modelcontextprotocol/ui"
	appsMimeType  = "text/html;profile=mcp-app"
	appsCardURI   = "ui://fluxgit/proposal-card"
)

// appsMeta is a 2026-07-28 request _meta; ui declares the MCP Apps
// extension in the request's client capabilities.
func appsMeta(ui bool) map[string]any {
	m := modernMeta()
	if ui {
		m["io.modelcontextprotocol/clientCapabilities"] = map[string]any{
			"extensions": map[string]any{appsExtension: map[string]any{"mimeTypes": []any{appsMimeType}}},
		}
	}
	return m
}

// appsCall makes one modern request and decodes its result.
func appsCall(t *testing.T, s *server, mu *sync.Mutex, id any, method string, params map[string]any, ui bool) map[string]any {
	t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = appsMeta(ui)
	mu.Lock()
	r := s.call(id, method, params)
	mu.Unlock()
	if r.Error != nil {
		t.Fatalf("%s: %s", method, r.raw)
	}
	var res map[string]any
	if err := json.Unmarshal(r.Result, &res); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return res
}

// TestAppsCardInBrowser proves the inline card (issue 26, item 3) with
// real parts: the fluxgit binary and a real gateway with a real merge
// proposal in a temporary repository. A client that declares MCP Apps
// sees the preview tools' _meta.ui and the card resources (others see
// neither); the ui:// resource is HTML of the MCP Apps MIME type with a
// CSP that allows nothing external; and rendered in headless Chromium
// inside a host page that speaks the extension's postMessage bridge
// (ui/initialize, tool-input and tool-result notifications, resources/read
// proxied to the same fluxgit), the card shows the operation, risk, refs
// and the diff summary of the gateway's own review, offers no control
// that decides, calls no tool, and follows the person's decision.
func TestAppsCardInBrowser(t *testing.T) {
	b := browser.Start(t)
	g := startGateway(t, loopEnv(t))
	s := startServer(t, g.mcpEnv())
	var mu sync.Mutex
	n := 0
	call := func(method string, params map[string]any, ui bool) map[string]any {
		n++
		return appsCall(t, s, &mu, fmt.Sprintf("apps-%d", n), method, params, ui)
	}

	// The catalog: _meta.ui only for a client that renders MCP Apps.
	plainTools := jsonOf(call("tools/list", nil, false)["tools"])
	if strings.Contains(plainTools, "_meta") || strings.Contains(plainTools, "ui://") {
		t.Errorf("tools/list without the extension carries MCP Apps metadata:\n%.600s", plainTools)
	}
	uiList := call("tools/list", nil, true)
	previews := 0
	for _, raw := range uiList["tools"].([]any) {
		tool := raw.(map[string]any)
		name := tool["name"].(string)
		meta, has := tool["_meta"].(map[string]any)
		if !strings.HasPrefix(name, "operation.preview.") {
			if has {
				t.Errorf("%s has _meta %v; only the preview tools name the card", name, meta)
			}
			continue
		}
		previews++
		ui, _ := meta["ui"].(map[string]any)
		if ui["resourceUri"] != appsCardURI || jsonOf(ui["visibility"]) != `["model"]` {
			t.Errorf("%s: _meta.ui = %s, want resourceUri %s and visibility [model]", name, jsonOf(ui), appsCardURI)
		}
	}
	if previews != 12 {
		t.Errorf("%d preview tools in tools/list, want 12", previews)
	}
	uiTools := jsonOf(uiList["tools"])
	tokensPlain, tokensUI := o200kTokens(t, plainTools), o200kTokens(t, uiTools)
	t.Logf("tools/list as served (o200k): %d without the extension, %d with it (+%d)", tokensPlain, tokensUI, tokensUI-tokensPlain)
	if ext := jsonOf(call("server/discover", nil, true)["capabilities"]); !strings.Contains(ext, appsExtension) {
		t.Errorf("server/discover does not declare %s to a client that does: %s", appsExtension, ext)
	}
	if ext := jsonOf(call("server/discover", nil, false)["capabilities"]); strings.Contains(ext, appsExtension) {
		t.Errorf("server/discover declares %s to a client that does not: %s", appsExtension, ext)
	}
	if l := jsonOf(call("resources/list", nil, false)) + jsonOf(call("resources/templates/list", nil, false)); strings.Contains(l, "proposal-card") {
		t.Errorf("the card resources are listed to a client without the extension: %s", l)
	}
	if l := jsonOf(call("resources/list", nil, true)); !strings.Contains(l, appsCardURI) || !strings.Contains(l, appsMimeType) {
		t.Errorf("resources/list does not list %s (%s) to an MCP Apps client: %s", appsCardURI, appsMimeType, l)
	}
	if l := jsonOf(call("resources/templates/list", nil, true)); !strings.Contains(l, "fluxgit://proposals/{previewId}/card") {
		t.Errorf("resources/templates/list lacks the card data template: %s", l)
	}

	// The view: HTML of the MCP Apps MIME type, with a CSP allowing nothing.
	view := call("resources/read", map[string]any{"uri": appsCardURI}, true)["contents"].([]any)[0].(map[string]any)
	if view["mimeType"] != appsMimeType || view["uri"] != appsCardURI {
		t.Fatalf("resources/read %s: mimeType %v uri %v, want %s", appsCardURI, view["mimeType"], view["uri"], appsMimeType)
	}
	html, _ := view["text"].(string)
	if !strings.HasPrefix(html, "<!DOCTYPE html>") {
		t.Fatalf("the view is not an HTML document: %.80q", html)
	}
	csp, _ := view["_meta"].(map[string]any)["ui"].(map[string]any)["csp"].(map[string]any)
	if csp == nil {
		t.Fatalf("the view's contents carry no _meta.ui.csp: %s", jsonOf(view["_meta"]))
	}
	for _, k := range []string{"connectDomains", "resourceDomains", "frameDomains", "baseUriDomains"} {
		if l, ok := csp[k].([]any); !ok || len(l) != 0 {
			t.Errorf("_meta.ui.csp.%s = %v, want [] (the card loads nothing from elsewhere)", k, csp[k])
		}
	}
	if regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?(https?:)?//|@import|<link|tools/call`).MatchString(html) {
		t.Errorf("the view loads something external or calls a tool")
	}

	// A real proposal, as the model makes it.
	repo := e2eRepo(t)
	input := map[string]any{"repoPath": repo, "reason": "The cart is reviewed.", "sourceRef": "feature", "targetRef": "main", "strategy": "merge"}
	mu.Lock()
	r := s.call("apps-preview", "tools/call", map[string]any{"name": "operation.preview.merge", "arguments": input, "_meta": appsMeta(true)})
	mu.Unlock()
	env := toolPayload(t, r)
	id, _ := env["previewId"].(string)
	if env["status"] != "pending" || id == "" {
		t.Fatalf("preview: want a pending proposal, got %s", jsonOf(env))
	}
	var result map[string]any
	if err := json.Unmarshal(r.Result, &result); err != nil {
		t.Fatal(err)
	}
	modelText := result["content"].([]any)[0].(map[string]any)["text"].(string)
	cardData := call("resources/read", map[string]any{"uri": "fluxgit://proposals/" + id + "/card"}, true)["contents"].([]any)[0].(map[string]any)["text"].(string)
	var data struct {
		Decide struct {
			URL string `json:"url"`
		} `json:"decide"`
	}
	if err := json.Unmarshal([]byte(cardData), &data); err != nil || data.Decide.URL == "" {
		t.Fatalf("card data without decide.url (%v): %s", err, cardData)
	}
	decideURL := data.Decide.URL
	t.Logf("operation.preview.merge result the model reads (o200k): %d tokens; card data only the view reads: %d tokens", o200kTokens(t, modelText), o200kTokens(t, cardData))
	for _, w := range []string{"Files changed by the merge", "feat: cart", `"decide":`} {
		if strings.Contains(modelText, w) {
			t.Errorf("the model's tool result carries the card's %q: the card data must reach the view only", w)
		}
	}

	// What the gateway's own review shows (the person's CLI reads the same
	// record as the approval page).
	out, err := g.cli("show", id, "--json")
	if err != nil {
		t.Fatalf("gateway show: %v\n%s", err, out)
	}
	var rec struct {
		Review struct {
			Summary  string `json:"summary"`
			Sections []struct {
				Title        string `json:"title"`
				CommitsTotal int    `json:"commitsTotal"`
				FilesTotal   int    `json:"filesTotal"`
				Insertions   int    `json:"insertions"`
				Deletions    int    `json:"deletions"`
				Commits      []struct{ Subject string }
				Files        []struct{ Path string }
			} `json:"sections"`
		} `json:"review"`
		Binding struct {
			Refs map[string]string `json:"refs"`
		} `json:"binding"`
	}
	if err := json.Unmarshal([]byte(out), &rec); err != nil || rec.Review.Summary == "" || len(rec.Review.Sections) == 0 {
		t.Fatalf("gateway show --json: no review (%v):\n%s", err, out)
	}
	want := []string{"merge", "medium risk", "pending", rec.Review.Summary, "The cart is reviewed."}
	for ref, commit := range rec.Binding.Refs {
		want = append(want, ref+" at "+commit[:12])
	}
	if len(rec.Binding.Refs) != 2 || rec.Binding.Refs["feature"] != revParse(t, repo, "feature") {
		t.Fatalf("the gateway bound refs %v, want feature and main", rec.Binding.Refs)
	}
	for _, sec := range rec.Review.Sections {
		title := sec.Title
		if sec.CommitsTotal > 0 {
			title += fmt.Sprintf(" — %d commit", sec.CommitsTotal)
		}
		if sec.FilesTotal > 0 {
			title += fmt.Sprintf(" — %d file", sec.FilesTotal)
		}
		want = append(want, title)
		if sec.FilesTotal > 0 {
			want = append(want, fmt.Sprintf("+%d −%d", sec.Insertions, sec.Deletions))
		}
		for _, c := range sec.Commits {
			want = append(want, c.Subject)
		}
		for _, f := range sec.Files {
			want = append(want, f.Path)
		}
	}

	// The host: a page that embeds the view in a sandboxed iframe and
	// speaks the extension's bridge, proxying resources/read to fluxgit.
	h := newAppsHost(t, html, csp, input, result, func(method string, params map[string]any) (any, any) {
		params["_meta"] = appsMeta(true)
		n++
		mu.Lock()
		defer mu.Unlock()
		r := s.call(fmt.Sprintf("apps-host-%d", n), method, params)
		if r.Error != nil {
			return nil, r.Error
		}
		return json.RawMessage(r.Result), nil
	})
	b.Navigate(h.url + "/")
	frame := b.WaitFor("iframe#view", 0)
	b.EnterFrame(frame)
	b.WaitFor(`main[data-state="card"][data-preview-id="`+id+`"]`, 0)
	text := b.Find("main").Text()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("the inline card lacks %q (from the gateway's review):\n%s", w, text)
		}
	}
	if c := b.FindAll("button, form, input, select, textarea, [onclick], [contenteditable]"); len(c) > 0 {
		t.Errorf("the inline card has %d control(s); it must have none that could decide", len(c))
	}
	links := b.FindAll("a")
	if len(links) != 1 {
		t.Fatalf("the card has %d links, want one (to the approval page)", len(links))
	}
	href, _ := b.Script(`return arguments[0].href`, links[0]).(string)
	if href != decideURL || !strings.HasPrefix(href, "http://"+g.addr+"/") || regexp.MustCompile(`(?i)approve|reject|\?s=|secret`).MatchString(href+links[0].Text()) {
		t.Errorf("the card's link is %q (%q), want the card data's %q on the gateway http://%s/, with no secret and no decision", href, links[0].Text(), decideURL, g.addr)
	}
	links[0].Click()
	if *updateScreenshot {
		b.LeaveFrames()
		shot := filepath.Join("..", "docs", "screenshots", "apps-card.png")
		b.Find("iframe#view").SaveScreenshot(shot)
		shrinkPNG(t, shot)
		b.EnterFrame(b.Find("iframe#view"))
	}

	// The person decides where they always do; the card follows.
	b.LeaveFrames()
	g.decide(t, "reject", id, "--reason", "Not this week.")
	b.EnterFrame(b.Find("iframe#view"))
	b.WaitText("main .status", "rejected", 0)
	b.WaitText("main", "Not this week.", 0)
	b.LeaveFrames()

	sent := b.Script(`return window.__log`).([]any)
	var methods []string
	for _, m := range sent {
		methods = append(methods, m.(string))
	}
	for _, m := range methods {
		if !slices.Contains([]string{"ui/initialize", "ui/notifications/initialized", "ui/notifications/size-changed", "resources/read", "ui/open-link"}, m) {
			t.Errorf("the view sent %s; it may only initialize, report its size, read its card data and ask to open the gateway link", m)
		}
	}
	for _, m := range []string{"ui/initialize", "ui/notifications/initialized", "resources/read", "ui/open-link"} {
		if !slices.Contains(methods, m) {
			t.Errorf("the view never sent %s (sent %v)", m, methods)
		}
	}
	if opened := jsonOf(b.Script(`return window.__links`)); opened != jsonOf([]string{decideURL}) {
		t.Errorf("ui/open-link asked for %s, want the approval page", opened)
	}
	for _, e := range b.Logs() {
		if strings.Contains(e.Message, "Content Security Policy") || strings.Contains(e.Message, "Refused to") {
			t.Errorf("the view broke its CSP: %s", e.Message)
		}
	}
	for _, p := range h.paths() {
		if p != "/" && p != "/view" && p != "/mcp" && p != "/favicon.ico" {
			t.Errorf("the page requested %s from the host; the view loads nothing", p)
		}
	}
}

// appsHost is the test's MCP Apps host: a loopback web server with the
// host page, the view (served with the CSP the extension prescribes for
// its csp metadata) and the proxy to the MCP server.
type appsHost struct {
	url string
	mu  sync.Mutex
	got []string
}

func (h *appsHost) paths() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.got)
}

// appsCSP builds the view's Content-Security-Policy from its csp metadata,
// as the extension's security section constructs it.
func appsCSP(csp map[string]any) string {
	list := func(k, def string) string {
		var out []string
		for _, d := range csp[k].([]any) {
			out = append(out, d.(string))
		}
		if len(out) == 0 {
			return def
		}
		return strings.Join(out, " ")
	}
	res := list("resourceDomains", "")
	return strings.Join([]string{
		"default-src 'none'",
		"script-src 'self' 'unsafe-inline' " + res,
		"style-src 'self' 'unsafe-inline' " + res,
		"connect-src 'self' " + list("connectDomains", ""),
		"img-src 'self' data: " + res,
		"font-src 'self' " + res,
		"media-src 'self' data: " + res,
		"frame-src " + list("frameDomains", "'none'"),
		"object-src 'none'",
		"base-uri " + list("baseUriDomains", "'self'"),
	}, "; ")
}

func newAppsHost(t *testing.T, view string, csp map[string]any, input, result any, proxy func(string, map[string]any) (any, any)) *appsHost {
	t.Helper()
	h := &appsHost{}
	page := strings.NewReplacer("TOOL_INPUT", jsonOf(input), "TOOL_RESULT", jsonOf(result)).Replace(appsHostPage)
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, page)
	})
	mux.HandleFunc("/view", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", appsCSP(csp))
		_, _ = io.WriteString(w, view)
	})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Method string         `json:"method"`
			Params map[string]any `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Method == "" {
			http.Error(w, "want {method, params}", http.StatusBadRequest)
			return
		}
		if req.Params == nil {
			req.Params = map[string]any{}
		}
		res, rpcErr := proxy(req.Method, req.Params)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"result": res, "error": rpcErr})
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.got = append(h.got, r.URL.Path)
		h.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	h.url = srv.URL
	return h
}

// appsHostPage is the host side of the MCP Apps bridge (JSON-RPC 2.0 over
// postMessage): it answers ui/initialize, sends the tool input and result
// once the view is initialized, sizes the iframe, records ui/open-link,
// and forwards every other method that is not ui/ to the MCP server. It
// logs each method the view sends in window.__log.
const appsHostPage = `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>MCP Apps test host</title></head>
<body>
<iframe id="view" sandbox="allow-scripts" src="/view" style="width:640px;height:300px;border:1px solid #999"></iframe>
<script>
window.__log = []; window.__links = [];
var toolInput = TOOL_INPUT, toolResult = TOOL_RESULT;
var frame = document.getElementById("view");
function send(m) { frame.contentWindow.postMessage(m, "*"); }
window.addEventListener("message", function (ev) {
  if (ev.source !== frame.contentWindow) { return; }
  var m = ev.data;
  if (!m || m.jsonrpc !== "2.0" || typeof m.method !== "string") { return; }
  window.__log.push(m.method);
  switch (m.method) {
  case "ui/initialize":
    send({jsonrpc: "2.0", id: m.id, result: {protocolVersion: "2026-01-26",
      hostInfo: {name: "fluxgit-test-host", version: "1"},
      hostCapabilities: {openLinks: {}, serverResources: {}},
      hostContext: {theme: "light", displayMode: "inline", containerDimensions: {width: 640, maxHeight: 4000}}}});
    return;
  case "ui/notifications/initialized":
    send({jsonrpc: "2.0", method: "ui/notifications/tool-input", params: {arguments: toolInput}});
    send({jsonrpc: "2.0", method: "ui/notifications/tool-result", params: toolResult});
    return;
  case "ui/notifications/size-changed":
    frame.style.height = Math.max(100, m.params.height) + "px";
    return;
  case "ui/open-link":
    window.__links.push(m.params.url);
    send({jsonrpc: "2.0", id: m.id, result: {}});
    return;
  }
  if (m.method.indexOf("ui/") === 0) {
    if (m.id !== undefined) { send({jsonrpc: "2.0", id: m.id, error: {code: -32601, message: "not supported"}}); }
    return;
  }
  fetch("/mcp", {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify({method: m.method, params: m.params})})
    .then(function (r) { return r.json(); })
    .then(function (j) {
      if (m.id === undefined) { return; }
      send(j.error ? {jsonrpc: "2.0", id: m.id, error: j.error} : {jsonrpc: "2.0", id: m.id, result: j.result});
    });
});
</script>
</body></html>`
