package proposals

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/fluxgit/fluxgit/internal/fluxbridge"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// Each gateway status maps to the Tasks extension's state: waiting and
// running are working with a message, completed carries the status result,
// rejected, expired and failed are failed with the gateway's reason,
// cancelled is cancelled.
func TestProposalTaskStates(t *testing.T) {
	id := testID(7)
	cases := []struct {
		name, body string
		status     sdk.TaskStatus
		message    string // in StatusMessage, or in Error.Message when failed
	}{
		{"pending", `{"status":"pending","operationType":"merge"}`, sdk.TaskWorking, "waiting for the person"},
		{"approved", `{"status":"approved","operationType":"merge"}`, sdk.TaskWorking, "approved by the person"},
		{"executing", `{"status":"executing","operationType":"merge"}`, sdk.TaskWorking, "running the approved operation"},
		{"completed", `{"status":"completed","operationType":"merge","result":{"mergeCommit":"abc123"}}`, sdk.TaskCompleted, ""},
		{"rejected", `{"status":"rejected","operationType":"merge","rejectionReason":"not now"}`, sdk.TaskFailed, "The user rejected this proposal: not now."},
		{"expired", `{"status":"expired","operationType":"merge"}`, sdk.TaskFailed, "expired before anyone approved"},
		{"failed", `{"status":"failed","operationType":"merge","result":{"message":"conflict in a.go"}}`, sdk.TaskFailed, "The operation failed: conflict in a.go."},
		{"cancelled", `{"status":"cancelled","operationType":"merge"}`, sdk.TaskCancelled, "cancelled"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := newTestGateway(t)
			g.status = reply(http.StatusOK, tc.body)
			task, err := newProvider(g).GetTask(context.Background(), id, sdk.Meta{})
			if err != nil {
				t.Fatal(err)
			}
			if task.ID != id || task.Status != tc.status || task.Tool != "operation.preview.merge" {
				t.Fatalf("task %+v, want id %s status %s tool operation.preview.merge", task, id, tc.status)
			}
			switch tc.status {
			case sdk.TaskCompleted:
				if task.Result == nil || !strings.Contains(string(task.Result.Data), `"mergeCommit":"abc123"`) || string(task.Result.Fields["previewId"]) != `"`+id+`"` {
					t.Fatalf("completed task result %+v", task.Result)
				}
			case sdk.TaskFailed:
				if task.Error == nil || task.Error.Code != CodeProposalEnded || !strings.Contains(task.Error.Message, tc.message) {
					t.Fatalf("failed task error %+v, want code %d with %q", task.Error, CodeProposalEnded, tc.message)
				}
			default:
				if task.Result != nil || task.Error != nil || !strings.Contains(task.StatusMessage, tc.message) {
					t.Fatalf("task %+v, want message %q and no result", task, tc.message)
				}
			}
			if reqs := g.requests(); len(reqs) != 1 || reqs[0].Path != statusPath+id {
				t.Fatalf("requests %+v, want one status read", reqs)
			}
		})
	}
}

func TestGetTaskNotFound(t *testing.T) {
	g := newTestGateway(t)
	g.status = reply(http.StatusNotFound, `{"error":"no proposal"}`)
	p := newProvider(g)
	for _, id := range []string{testID(1), "../x", ""} {
		if _, err := p.GetTask(context.Background(), id, sdk.Meta{}); !errors.Is(err, sdk.ErrTaskNotFound) {
			t.Fatalf("GetTask(%q): %v, want ErrTaskNotFound", id, err)
		}
	}
	if n := len(g.requests()); n != 1 {
		t.Fatalf("%d requests, want 1 (invalid ids reach no gateway)", n)
	}
	none := &Provider{Address: func() (fluxbridge.Address, bool) { return fluxbridge.Address{}, false }}
	if _, err := none.GetTask(context.Background(), testID(1), sdk.Meta{}); !errors.Is(err, sdk.ErrTaskNotFound) {
		t.Fatalf("without a gateway: %v", err)
	}
	g.srv.Close()
	var se *sdk.Error
	if _, err := p.GetTask(context.Background(), testID(1), sdk.Meta{}); !errors.As(err, &se) || se.Kind != sdk.KindUnavailable {
		t.Fatalf("unreachable gateway: %v, want an unavailable error", err)
	}
}

// tasks/cancel is operation.cancel: the caller's agent id goes to the
// gateway, which refuses another agent's proposal.
func TestCancelTask(t *testing.T) {
	g := newTestGateway(t)
	p := newProvider(g)
	task, err := p.CancelTask(context.Background(), testID(3), sdk.Meta{ClientName: "claude code"})
	if err != nil || task.Status != sdk.TaskCancelled || task.ID != testID(3) {
		t.Fatalf("cancel: %+v %v", task, err)
	}
	if reqs := g.requests(); len(reqs) != 1 || reqs[0].Body["agentId"] != "claude-code" {
		t.Fatalf("cancel request %+v, want agentId claude-code", reqs)
	}
	g.cancel = reply(http.StatusForbidden, `{"error":"proposal was made by another agent"}`)
	var se *sdk.Error
	if _, err := p.CancelTask(context.Background(), testID(3), sdk.Meta{ClientName: "intruder"}); !errors.As(err, &se) ||
		se.Kind != sdk.KindInvalidArgument || !strings.Contains(se.Details, "another agent") {
		t.Fatalf("another agent's cancel: %v", err)
	}
	g.cancel = reply(http.StatusNotFound, `{"error":"no proposal"}`)
	if _, err := p.CancelTask(context.Background(), testID(3), sdk.Meta{}); !errors.Is(err, sdk.ErrTaskNotFound) {
		t.Fatalf("unknown id: %v", err)
	}
}

// With tasks declared the preview's result carries the task named by the
// previewId; without, the result is today's. A client that can show a URL
// (or a re-sent call naming a previewId) gets an idempotency key derived
// from the previewId, so the re-sent call replays the same proposal.
func TestPreviewTaskAndResumeKeys(t *testing.T) {
	args := minimalArgs("merge")
	cases := []struct {
		name    string
		meta    sdk.Meta
		wantID  string
		wantKey string
		task    bool
	}{
		{"plain", sdk.Meta{}, testID(1), "merge:call:" + testID(2), false},
		{"tasks", sdk.Meta{Tasks: true}, testID(1), "merge:call:" + testID(2), true},
		{"url elicitation", sdk.Meta{Client: sdk.ClientCapabilities{ElicitationURL: true}}, testID(1), "merge:call:" + testID(1), false},
		{"re-sent", sdk.Meta{Resume: testID(42)}, testID(42), "merge:call:" + testID(42), false},
		{"re-sent, not a previewId", sdk.Meta{Resume: "earlier-id_1"}, testID(1), "merge:call:" + testID(2), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := newTestGateway(t)
			c := call("operation.preview.merge", args, "agent")
			c.Meta.Resume, c.Meta.Tasks, c.Meta.Client = tc.meta.Resume, tc.meta.Tasks, tc.meta.Client
			res, err := newProvider(g).CallTool(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			body := g.requests()[0].Body
			if body["previewId"] != tc.wantID || body["idempotencyKey"] != tc.wantKey {
				t.Fatalf("sent previewId %v key %v, want %s %s", body["previewId"], body["idempotencyKey"], tc.wantID, tc.wantKey)
			}
			if (res.Task != nil) != tc.task {
				t.Fatalf("task %+v, want task %v", res.Task, tc.task)
			}
			if tc.task && (res.Task.ID != tc.wantID || res.Task.Status != sdk.TaskWorking) {
				t.Fatalf("task %+v", res.Task)
			}
			// A hand-built call cannot reach a client: nothing is asked,
			// and the model's result says nothing about asking.
			if _, ok := res.Fields[FieldPersonAsked]; ok {
				t.Fatalf("personAsked without a client: %s", mustJSON(res.Fields))
			}
			var live bool
			_ = json.Unmarshal(res.Fields["accepted"], &live)
			if !live {
				t.Fatalf("want today's live result, got %s", mustJSON(res))
			}
		})
	}
}
