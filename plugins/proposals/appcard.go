package proposals

import (
	"context"
	_ "embed" // the inline card's page
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/fluxgit/fluxgit/internal/fluxbridge"
	"github.com/fluxgit/fluxgit/internal/operation"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// The inline card (MCP Apps, extension io.modelcontextprotocol/ui): hosts
// that render MCP Apps show CardUIURI next to an operation.preview.* call.
// The page gets the call's result from the host (its previewId), then
// reads CardDataURI(previewId) through the host, which fetches the
// proposal's read-only card from the gateway. The data reaches the person's
// screen, never the model's context: the tool result stays as it is.
const (
	// CardUIURI is the card's page, the ui:// resource the preview tools
	// name in _meta.ui.resourceUri.
	CardUIURI = "ui://fluxgit/proposal-card"
	// CardUIMimeType is the MIME type MCP Apps requires of an HTML view.
	CardUIMimeType = "text/html;profile=mcp-app"
	// CardDataTemplate is the resource template of one proposal's card
	// data (JSON); the page reads it with resources/read.
	CardDataTemplate = "fluxgit://proposals/{previewId}/card"

	cardDataPrefix = "fluxgit://proposals/"
	cardDataSuffix = "/card"
)

// cardHTML is the card's page: one self-contained HTML file (inline
// script and style, nothing loaded from anywhere), so the host's default,
// most restrictive Content-Security-Policy is all it needs.
//
//go:embed appcard.html
var cardHTML string

// Resources lists the resources this provider serves, as the spec spells
// them.
func Resources() []string { return []string{CardUIURI, CardDataTemplate} }

// CardDataURI is the URI of a proposal's card data.
func CardDataURI(previewID string) string { return cardDataPrefix + previewID + cardDataSuffix }

// CardData is the card data resource's JSON: the gateway's read-only view
// of the proposal and where the person decides it.
type CardData struct {
	// Card is the gateway's card view (GET operation.CardViewPath<id>), as the
	// gateway sent it: the operation, its risk, status, refs and the
	// review's facts and sections without diffs.
	Card json.RawMessage `json:"card"`
	// Decide says where the person approves or rejects: the gateway's own
	// page. The card itself never decides.
	Decide Decide `json:"decide"`
}

// Decide is the pointer to the only places a proposal is decided.
type Decide struct {
	// URL is the approval page of the gateway that holds the proposal. It
	// carries no secret: opened without the person's session, the page
	// says how to open it from the terminal that started the gateway.
	URL string `json:"url"`
	// CLI is the terminal command that shows the proposal.
	CLI string `json:"cli"`
}

// decideURL is the address at which the person decides proposal id on
// the gateway at addr: the proposal's own card page (operation.CardPath),
// the same address a URL elicitation shows them.
func decideURL(addr fluxbridge.Address, id string) string {
	return operation.CardURL(addr.BaseURL(), id)
}

// ReadResource serves the card's page and the card data of one proposal.
// The card data is read from the gateway at each read, so a card re-read
// after a decision shows the new status.
func (p *Provider) ReadResource(ctx context.Context, uri string, _ sdk.Meta) (*sdk.Resource, error) {
	if uri == CardUIURI {
		return &sdk.Resource{URI: uri, MimeType: CardUIMimeType, Text: cardHTML}, nil
	}
	id, ok := cardDataID(uri)
	if !ok {
		return nil, sdk.ErrResourceNotFound
	}
	if !ValidPreviewID(id) {
		return nil, sdk.NotFound("Resource not found", "the previewId in "+uri+" must be 1-128 ASCII letters, digits, '-' or '_': use the previewId an operation.preview.* tool returned")
	}
	addr, ok := p.address()
	if !ok {
		return nil, &sdk.Error{Kind: sdk.KindUnavailable, Message: "FluxGit is not connected", Details: noAddressReason()}
	}
	resp, err := fluxbridge.NewClient(addr).Do(ctx, http.MethodGet, operation.CardViewPath+url.PathEscape(id), nil, p.timeout())
	if err != nil {
		return nil, &sdk.Error{Kind: sdk.KindUnavailable, Message: "FluxGit did not answer", Details: "the gateway at " + addr.String() + " could not be reached: " + err.Error()}
	}
	switch {
	case resp.Status == http.StatusNotFound:
		return nil, sdk.NotFound("Resource not found", "the gateway at "+addr.String()+" has no proposal "+id+" (never made there, or pruned after it ended)")
	case !is2xx(resp.Status):
		return nil, fmt.Errorf("the gateway at %s answered HTTP %d to the card request: %s", addr, resp.Status, strings.TrimSpace(string(gatewayBody(resp.Body))))
	}
	if _, ok := jsonObject(resp.Body); !ok {
		return nil, errors.New("the gateway at " + addr.String() + " answered the card request with a body that is not a JSON object")
	}
	b, err := json.Marshal(CardData{Card: resp.Body, Decide: Decide{
		URL: decideURL(addr, id),
		CLI: "fluxgit gateway show " + id,
	}})
	if err != nil {
		return nil, fmt.Errorf("encode the card of %s: %w", id, err)
	}
	return &sdk.Resource{URI: uri, MimeType: "application/json", Text: string(b)}, nil
}

// cardDataID returns the previewId a card data URI names.
func cardDataID(uri string) (string, bool) {
	rest, ok := strings.CutPrefix(uri, cardDataPrefix)
	if !ok {
		return "", false
	}
	id, ok := strings.CutSuffix(rest, cardDataSuffix)
	return id, ok && id != ""
}
