package proposals

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"

	"github.com/fluxgit/fluxgit/internal/fluxbridge"
	"github.com/fluxgit/fluxgit/internal/operation"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// Bringing the person to the proposal (issue 26): a client that can show a
// URL (URL-mode elicitation) is asked to show the person the proposal's
// card on the gateway, and a client that declared the Tasks extension
// gets every proposal as a task whose id is the previewId. Neither
// decides anything: the card address carries no secret (without the
// person's browser session it shows only how to open it from their
// terminal), and a task's status is read from the gateway's journal.

// FieldPersonAsked is the result member that tells the model the client
// agreed to show the person the card. It is all the model learns of the
// URL elicitation; the address itself stays out of its tokens.
const FieldPersonAsked = "personAsked"

// cardMessage is the URL elicitation's message, for the person.
const cardMessage = "An agent proposes a Git change that waits for your decision. Open its card on your fluxgit gateway to review it and approve or reject it there."

// askPerson asks the client to show the person the card of proposal id,
// and reports whether the client agreed. Any failure (no capability, the
// client declined, an error) leaves everything as it was.
func (p *Provider) askPerson(ctx context.Context, call *sdk.Call, id string) bool {
	if !call.Meta.Client.ElicitationURL || call.Meta.Resume != "" || !ValidPreviewID(id) {
		return false
	}
	addr, ok := p.address()
	if !ok {
		return false
	}
	res, err := call.ElicitURL(ctx, &sdk.ElicitURLRequest{
		Message:       cardMessage,
		URL:           operation.CardURL(addr.BaseURL(), id),
		ElicitationID: id,
		// A 2026-07-28 client answers by re-sending the call; should the
		// host have forgotten it by then, the re-sent call comes back
		// with this id and replays the same proposal (see build).
		Resume: id,
	})
	return err == nil && res != nil && res.Action == sdk.ElicitAccept
}

// resumeID is the previewId a re-sent call names (Meta.Resume), "" for a
// first call. It is the client's claim: build sends it with the same
// idempotency key as the first call, so the gateway replays the proposal
// only for the same agent and the same body (journal: agent, key and
// fingerprint), and refuses anything else.
func resumeID(call *sdk.Call) string {
	if r := call.Meta.Resume; uuidV4.MatchString(r) {
		return r
	}
	return ""
}

// uuidV4 is the shape of a previewId this provider makes (and the
// contract's body schema requires): only such a Resume names a proposal.
var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// keyedByPreviewID reports whether a call's idempotency key is derived
// from its previewId instead of a second fresh id: so for every call that
// may be re-sent through a URL elicitation, where the re-sent call must
// reproduce the key from the previewId it carries.
func keyedByPreviewID(call *sdk.Call) bool {
	return call.Meta.Client.ElicitationURL || resumeID(call) != ""
}

// Tasks. A proposal's task id is its previewId.

var _ sdk.TaskKeeper = (*Provider)(nil)

// taskPollMs is the poll interval a proposal task suggests: a person
// decides in seconds or minutes, so polling faster gains nothing.
const taskPollMs = 2000

// taskOf maps a gateway status reply to the proposal's task, in the
// extension's states: waiting for the person and executing are working,
// completed carries the operation.status result, rejected, expired and
// failed are failed with the gateway's reason, cancelled is cancelled.
func taskOf(id string, body []byte) *sdk.Task {
	t := &sdk.Task{ID: id, PollIntervalMs: taskPollMs}
	var st struct {
		Status          string          `json:"status"`
		OperationType   string          `json:"operationType"`
		RejectionReason string          `json:"rejectionReason"`
		Result          json.RawMessage `json:"result"`
	}
	_ = json.Unmarshal(body, &st)
	if operation.Known(st.OperationType) {
		// The host renders a completed task's result with this tool's
		// spec, also after a restart, when it remembers nothing.
		t.Tool = previewPrefix + st.OperationType
	}
	switch st.Status {
	case StatusCompleted:
		t.Status = sdk.TaskCompleted
		t.Result = &sdk.Result{Source: Source, Data: body, Fields: map[string]json.RawMessage{
			"previewId": rawJSON(id), "status": rawJSON(StatusCompleted)}}
	case StatusCancelled:
		t.Status = sdk.TaskCancelled
		t.StatusMessage = "cancelled before a decision; nothing was changed"
	case "rejected", "expired", "failed":
		t.Status = sdk.TaskFailed
		msg := terminalMessages[st.Status]
		if st.Status == "rejected" && st.RejectionReason != "" {
			msg = "The user rejected this proposal: " + st.RejectionReason + ". " + msg
		}
		if st.Status == "failed" {
			var r struct {
				Message string `json:"message"`
			}
			if json.Unmarshal(st.Result, &r) == nil && r.Message != "" {
				msg = "The operation failed: " + r.Message + ". " + msg
			}
		}
		t.StatusMessage = st.Status
		t.Error = &sdk.ToolError{Code: CodeProposalEnded, Message: msg,
			Data: rawJSON(map[string]any{"previewId": id, "status": st.Status, "statusBody": json.RawMessage(body)})}
	case "approved":
		t.Status, t.StatusMessage = sdk.TaskWorking, "approved by the person; the gateway runs it shortly"
	case "executing":
		t.Status, t.StatusMessage = sdk.TaskWorking, "the gateway is running the approved operation"
	case StatusPending, "":
		t.Status, t.StatusMessage = sdk.TaskWorking, "waiting for the person to approve or reject it on the approval gateway"
	default:
		t.Status, t.StatusMessage = sdk.TaskWorking, "the gateway reports "+st.Status
	}
	return t
}

// GetTask reads proposal id's state from the gateway, so a restarted
// server answers for it from the gateway's journal. Any caller that knows
// the id may read it, as with operation.status.
func (p *Provider) GetTask(ctx context.Context, id string, _ sdk.Meta) (*sdk.Task, error) {
	if !ValidPreviewID(id) {
		return nil, sdk.ErrTaskNotFound
	}
	addr, ok := p.address()
	if !ok {
		return nil, sdk.ErrTaskNotFound // no gateway: no proposal is known here
	}
	resp, err := fluxbridge.NewClient(addr).Do(ctx, http.MethodGet, statusPath+url.PathEscape(id), nil, p.timeout())
	if err != nil {
		return nil, sdk.Unavailable("the approval gateway could not be reached", err.Error())
	}
	switch {
	case resp.Status == http.StatusNotFound:
		return nil, sdk.ErrTaskNotFound
	case !is2xx(resp.Status) || !json.Valid(resp.Body):
		return nil, sdk.Unavailable("the approval gateway did not report the proposal", fmt.Sprintf("HTTP %d", resp.Status))
	}
	return taskOf(id, resp.Body), nil
}

// CancelTask withdraws proposal id, with operation.cancel's rule: only
// the agent that proposed it (the same client name) may, and only while
// it waits for a decision.
func (p *Provider) CancelTask(ctx context.Context, id string, meta sdk.Meta) (*sdk.Task, error) {
	if !ValidPreviewID(id) {
		return nil, sdk.ErrTaskNotFound
	}
	addr, ok := p.address()
	if !ok {
		return nil, sdk.ErrTaskNotFound
	}
	body := operation.Cancel{AgentID: SanitizeAgentID(meta.ClientName)}
	resp, err := fluxbridge.NewClient(addr).Do(ctx, http.MethodPost, cancelPath+url.PathEscape(id), body, p.timeout())
	if err != nil {
		return nil, sdk.Unavailable("the approval gateway could not be reached", err.Error())
	}
	switch {
	case resp.Status == http.StatusNotFound:
		return nil, sdk.ErrTaskNotFound
	case !is2xx(resp.Status):
		why := string(gatewayBody(resp.Body))
		if e, ok := resp.JSONError(); ok {
			var s string
			if json.Unmarshal(e, &s) == nil {
				why = s
			}
		}
		return nil, sdk.InvalidArgument(fmt.Sprintf("the gateway refused to cancel proposal %s (HTTP %d): %s", id, resp.Status, why))
	}
	return &sdk.Task{ID: id, Status: sdk.TaskCancelled, StatusMessage: "cancelled before a decision; nothing was changed"}, nil
}
