package proposals

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/fluxgit/fluxgit/internal/fluxbridge"
	"github.com/fluxgit/fluxgit/internal/operation"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// Gateway endpoints; a previewId is appended only once ValidPreviewID accepts it.
const (
	previewPath = operation.PreviewPath
	statusPath  = operation.StatusPath
	cancelPath  = operation.CancelPath
)

// Proposal statuses the provider acts on. Any other lowercase token is a
// live proposal.
const (
	StatusPending   = "pending"
	StatusCompleted = "completed"
	StatusCancelled = "cancelled"
	StatusRefused   = "refused"
)

// terminalMessages are the 10004 messages, one per terminal status: what
// happened and what the agent should do next.
var terminalMessages = map[string]string{
	"rejected":  "The user rejected this proposal, so nothing was changed. Do not resubmit it unchanged or run the git command yourself: ask the user what they want instead (error.data.statusBody may carry their reason).",
	"failed":    "The user approved this proposal but the gateway reported that the operation failed (see error.data.statusBody). Check the repository with repo.status before proposing anything again; the gateway keeps a restore point for the attempt.",
	"expired":   "This proposal expired before anyone approved it, so nothing was changed. If it is still wanted, propose it again and ask the user to decide within a few minutes.",
	"cancelled": "This proposal was cancelled before a decision, so nothing was changed. Propose it again only if it is still wanted.",
}

// liveStatus is the shape of a status token the live result may report.
var liveStatus = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,63}$`)

const learnMore = "https://fluxgit.com/features/mcp-agent-git/"

// notConnectedData is the 10003 payload.
type notConnectedData struct {
	Tool string `json:"tool"`
	// PreviewID names the proposal operation.status or operation.cancel
	// was asked about, so the agent can ask again with the same id.
	PreviewID           string `json:"previewId,omitempty"`
	Tier                string `json:"tier"`
	GatewayConfigured   bool   `json:"gatewayConfigured"`
	Reason              string `json:"reason"`
	AgentRecommendation string `json:"agentRecommendation"`
	LearnMore           string `json:"learnMore"`
}

// StartGatewayHint tells the agent how the person starts an approval
// gateway: fluxgit's own first (it ships in this binary), the FluxGit app
// as the alternative. Kept short: the model pays for every token.
const StartGatewayHint = "ask the user to run `fluxgit gateway` in a terminal and set FLUXGIT_MCP_HANDSHAKE_ADDR in this MCP server's environment to the address it prints (or to the FluxGit app's Quick Connect address)"

// notConnected is the 10003 result: FluxGit could not be asked. It has no
// Source because no answer came from FluxGit. previewID is "" for a
// preview (it never reached the gateway).
func notConnected(tool, previewID string, configured bool, reason, message string) *sdk.Result {
	rec := "Do not run the git write yourself. No approval gateway is connected: " + StartGatewayHint + ", then call " + tool + " again."
	if configured {
		rec = "Do not run the git write yourself. Ask the user to check that `fluxgit gateway` (or the FluxGit app) is running and that FLUXGIT_MCP_HANDSHAKE_ADDR is the address it printed, then call " + tool + " again."
	}
	return sdk.Fail("", CodeNotConnected, message, notConnectedData{
		Tool: tool, PreviewID: previewID, Tier: Tier, GatewayConfigured: configured,
		Reason: reason, AgentRecommendation: rec, LearnMore: learnMore,
	})
}

func noAddressReason() string {
	return "no valid gateway address is set: " + strings.Join(fluxbridge.Variables, ", ") + " must hold a loopback IP and port such as 127.0.0.1:59647"
}

// rawJSON marshals v for a Fields member; v is always a plain value.
func rawJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic("handshake: marshal field: " + err.Error()) // strings, bools and maps of them only
	}
	return b
}

// jsonObject returns b when it is a JSON object.
func jsonObject(b []byte) (map[string]json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil || m == nil {
		return nil, false
	}
	return m, true
}

// gatewayBody renders a reply body for an error payload: its JSON when it
// is JSON, else its text, cut short (a refusal page is for a person).
func gatewayBody(b []byte) json.RawMessage {
	if json.Valid(b) {
		return b
	}
	s := strings.ToValidUTF8(string(b), "?")
	if len(s) > 4096 {
		s = s[:4096] + "…"
	}
	return rawJSON(s)
}

func is2xx(status int) bool { return status >= 200 && status < 300 }

// preview submits a proposal and reads its status once.
func (p *Provider) preview(ctx context.Context, call *sdk.Call, op string) (*sdk.Result, error) {
	prop, err := p.build(op, call)
	if err != nil {
		return nil, err
	}
	// Detection reads only local state and does not depend on the
	// gateway's answer, so it runs while the proposal travels: a preview
	// costs the slower of the two, not their sum.
	var hint chan json.RawMessage
	if p.OtherAgents != nil {
		hint = make(chan json.RawMessage, 1)
		go func() {
			hint <- p.OtherAgents(context.WithValue(ctx, callerKey{}, call.Meta.ClientName), prop.repoPath, prop.paths)
		}()
	}
	prop.proposer = operation.Proposer{PID: p.serverPID(), Client: operation.ClientLabel(call.Meta.ClientName, call.Meta.ClientVersion)}
	res, last := p.submit(ctx, call.Tool, prop)
	if id, waiting := waitingProposal(res); waiting {
		if p.askPerson(ctx, call, id) {
			res.Fields[FieldPersonAsked] = rawJSON(true)
		}
	}
	if id, ok := proposalID(res); ok && call.Meta.Tasks {
		// The proposal is a task whose id is its previewId; its status
		// is what the gateway just reported (no extra request).
		res.Task = taskOf(id, last)
	}
	if hint != nil {
		if h := <-hint; len(h) > 0 && json.Valid(h) {
			if res.Fields == nil {
				res.Fields = map[string]json.RawMessage{}
			}
			res.Fields["otherAgents"] = h
		}
	}
	return res, nil
}

// waitingProposal returns the previewId of a result that reports a
// proposal waiting for the person (pending), the only one worth showing
// them: one their policy approved needs no decision.
func waitingProposal(res *sdk.Result) (string, bool) {
	if res == nil || res.Error != nil || string(res.Fields["accepted"]) != "true" || string(res.Fields["status"]) != `"`+StatusPending+`"` {
		return "", false
	}
	return proposalID(res)
}

// proposalID returns the previewId of a result that reports a proposal
// the gateway holds: live, completed, or ended (10004); not one it
// refused, one it did not take, or one with an unsafe id.
func proposalID(res *sdk.Result) (string, bool) {
	if res == nil || res.Source != Source || (res.Error != nil && res.Error.Code != CodeProposalEnded) {
		return "", false
	}
	var id string
	if json.Unmarshal(res.Fields["previewId"], &id) != nil || !ValidPreviewID(id) {
		return "", false
	}
	return id, true
}

// submit is the dispatch flow: POST the proposal, settle which previewId
// names it, GET its status once and report what that says. It also
// returns the last gateway reply it read about the proposal (the status
// body when the GET answered), which a proposal's task is made from.
func (p *Provider) submit(ctx context.Context, tool string, prop *proposal) (*sdk.Result, json.RawMessage) {
	addr, ok := p.address()
	if !ok {
		return notConnected(tool, "", false, noAddressReason(), "FluxGit is not connected, so the proposal was not submitted"), nil
	}
	client := fluxbridge.NewClient(addr)
	if prop.proposer.PID > 0 {
		client.Header = http.Header{operation.ProposerHeader: {prop.proposer.Encode()}}
	}
	resp, err := client.Do(ctx, http.MethodPost, previewPath+prop.op, prop.body, p.timeout())
	client.Header = nil // the proposer is named with the proposal only
	if err != nil {
		return notConnected(tool, "", true, "the gateway at "+addr.String()+" could not be reached: "+err.Error(),
			"FluxGit did not answer, so the proposal was not submitted"), nil
	}
	if !is2xx(resp.Status) {
		if _, refused := resp.JSONError(); refused {
			r := sdk.Fail(Source, CodeRefused,
				fmt.Sprintf("FluxGit refused the proposal (HTTP %d), so nothing was changed. error.data.gateway says why (a policy for this agent, too many pending proposals, or invalid arguments): fix the request or ask the user to change the policy; resubmitting it unchanged will be refused again.", resp.Status),
				map[string]any{"httpStatus": resp.Status, "gateway": json.RawMessage(resp.Body)})
			r.Fields = map[string]json.RawMessage{"previewId": rawJSON(prop.previewID), "status": rawJSON(StatusRefused)}
			return r, nil
		}
		return notConnected(tool, "", true, fmt.Sprintf("the gateway at %s answered HTTP %d without a JSON error body, so it is probably not FluxGit or not ready", addr, resp.Status),
			"FluxGit failed to take the proposal"), nil
	}

	postBody, _ := jsonObject(resp.Body)
	id := prop.previewID
	if raw, ok := postBody["previewId"]; ok && string(raw) != "null" {
		var gid string
		if json.Unmarshal(raw, &gid) != nil || !ValidPreviewID(gid) {
			return sdk.Fail(Source, CodeUnsafePreviewID,
				"FluxGit answered with a previewId that is not safe to use, so fluxgit did not follow it",
				map[string]any{"reason": "A previewId must be 1-128 ASCII letters, digits, '-' or '_'. The proposal may exist anyway: ask the user to decide it on the gateway's approval page (`fluxgit gateway list`) or in the FluxGit app, and do not propose it again before they have."}), nil
		}
		// An idempotent replay names the earlier proposal, which is the
		// one to follow.
		id = gid
	}

	last := json.RawMessage("{}")
	if postBody != nil {
		last = resp.Body
	}
	status := StatusPending
	if sr, err := client.Do(ctx, http.MethodGet, statusPath+url.PathEscape(id), nil, p.timeout()); err == nil && is2xx(sr.Status) {
		if sb, ok := jsonObject(sr.Body); ok {
			last = sr.Body
			var s string
			if json.Unmarshal(sb["status"], &s) == nil && liveStatus.MatchString(s) {
				status = s
			}
		}
	}

	fields := map[string]json.RawMessage{"previewId": rawJSON(id), "status": rawJSON(status)}
	if status == StatusCompleted {
		return &sdk.Result{Source: Source, Data: last, Fields: fields}, last
	}
	if msg, terminal := terminalMessages[status]; terminal {
		r := sdk.Fail(Source, CodeProposalEnded, msg, map[string]any{"previewId": id, "status": status, "statusBody": last})
		r.Fields = fields
		return r, last
	}
	fields["accepted"] = rawJSON(true)
	fields["nextAction"] = rawJSON(nextAction(id, status))
	return &sdk.Result{Source: Source, Data: last, Fields: fields}, last
}

// nextAction tells the agent how to follow a live proposal.
func nextAction(id, status string) map[string]any {
	var reason string
	switch status {
	case "approved":
		reason = "The user approved the proposal; the gateway will run it shortly."
	case "executing":
		reason = "The gateway is running the approved operation now."
	case StatusPending:
		reason = "The proposal waits for the user to approve or reject it on the approval gateway; proposals expire after about 5 minutes without a decision."
	default:
		reason = "FluxGit reports the proposal as " + status + "; it has not finished."
	}
	return map[string]any{
		"tool":    ToolStatus,
		"message": "Call operation.status with previewId " + id + " to learn the outcome.",
		"data": map[string]any{
			"previewId":           id,
			"lastStatus":          status,
			"reason":              reason,
			"agentRecommendation": "Do not run the git command yourself and do not propose it again while this proposal is live. Check operation.status after the user had time to decide (tell them it waits for their approval), or withdraw it with operation.cancel.",
		},
	}
}

// idArgs are the inputs of operation.status and operation.cancel.
type idArgs struct {
	PreviewID string `json:"previewId"`
}

func decodeID(call *sdk.Call) (string, error) {
	var a idArgs
	if err := decodeStrict(call.Arguments, &a); err != nil {
		return "", err
	}
	if a.PreviewID == "" {
		return "", sdk.InvalidArgument("missing previewId: pass the previewId a operation.preview.* tool returned")
	}
	if !ValidPreviewID(a.PreviewID) {
		return "", sdk.InvalidArgument("previewId must be 1-128 ASCII letters, digits, '-' or '_': pass the previewId a operation.preview.* tool returned, unchanged")
	}
	return a.PreviewID, nil
}

// unknownPreview is the 10005 result.
func unknownPreview(id string) *sdk.Result {
	return sdk.Fail(Source, CodeUnknownPreview, "FluxGit has no proposal with previewId "+id, map[string]any{
		"previewId":           id,
		"reason":              "FluxGit keeps proposals in a durable journal, so this id was never accepted, is mistyped, or belongs to a proposal pruned after its retention period.",
		"agentRecommendation": "Do not propose the operation again or run git blindly: check with repo.status and repo.history whether the change already happened, and use the exact previewId a preview tool returned.",
	})
}

// status reads a proposal's status once and returns the gateway's record
// as it is, whatever that status says.
func (p *Provider) status(ctx context.Context, call *sdk.Call) (*sdk.Result, error) {
	id, err := decodeID(call)
	if err != nil {
		return nil, err
	}
	addr, ok := p.address()
	if !ok {
		return notConnected(ToolStatus, id, false, noAddressReason(), "FluxGit is not connected, so the proposal's status could not be read"), nil
	}
	resp, err := fluxbridge.NewClient(addr).Do(ctx, http.MethodGet, statusPath+url.PathEscape(id), nil, p.timeout())
	if err != nil {
		return notConnected(ToolStatus, id, true, "the gateway at "+addr.String()+" could not be reached: "+err.Error(),
			"FluxGit did not answer, so the proposal's status could not be read"), nil
	}
	switch {
	case resp.Status == http.StatusNotFound:
		return unknownPreview(id), nil
	case !is2xx(resp.Status):
		return notConnected(ToolStatus, id, true, fmt.Sprintf("the gateway at %s answered HTTP %d to the status request", addr, resp.Status),
			"FluxGit failed to report the proposal's status"), nil
	case !json.Valid(resp.Body):
		return notConnected(ToolStatus, id, true, "the gateway at "+addr.String()+" answered the status request with a body that is not JSON",
			"FluxGit failed to report the proposal's status"), nil
	}
	return &sdk.Result{Source: Source, Data: resp.Body, Fields: map[string]json.RawMessage{"previewId": rawJSON(id)}}, nil
}

// cancel asks the gateway to withdraw a proposal; only its owner may.
func (p *Provider) cancel(ctx context.Context, call *sdk.Call) (*sdk.Result, error) {
	id, err := decodeID(call)
	if err != nil {
		return nil, err
	}
	addr, ok := p.address()
	if !ok {
		return notConnected(ToolCancel, id, false, noAddressReason(), "FluxGit is not connected, so the proposal was not cancelled"), nil
	}
	body := operation.Cancel{AgentID: SanitizeAgentID(call.Meta.ClientName)}
	resp, err := fluxbridge.NewClient(addr).Do(ctx, http.MethodPost, cancelPath+url.PathEscape(id), body, p.timeout())
	if err != nil {
		return notConnected(ToolCancel, id, true, "the gateway at "+addr.String()+" could not be reached: "+err.Error(),
			"FluxGit did not answer, so the proposal was not cancelled"), nil
	}
	switch {
	case resp.Status == http.StatusNotFound:
		return unknownPreview(id), nil
	case !is2xx(resp.Status):
		return sdk.Fail(Source, CodeRefused, fmt.Sprintf("FluxGit refused to cancel the proposal (HTTP %d)", resp.Status), map[string]any{
			"httpStatus":          resp.Status,
			"previewId":           id,
			"gateway":             gatewayBody(resp.Body),
			"agentRecommendation": "Call operation.status to see where the proposal stands: it may already be decided (HTTP 409) or belong to another agent (HTTP 403). Do not undo its effects with git yourself.",
		}), nil
	}
	data := json.RawMessage("{}")
	if json.Valid(resp.Body) && len(resp.Body) > 0 {
		data = resp.Body
	}
	return &sdk.Result{Source: Source, Data: data, Fields: map[string]json.RawMessage{
		"previewId": rawJSON(id), "status": rawJSON(StatusCancelled),
	}}, nil
}
