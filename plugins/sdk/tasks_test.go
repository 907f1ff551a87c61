package sdk

import (
	"context"
	"errors"
	"testing"

	"github.com/fluxgit/fluxgit/internal/wire"
)

// keeper answers every call with a task and keeps exactly one, "t1".
type keeper struct{ status TaskStatus }

func (k keeper) CallTool(context.Context, *Call) (*Result, error) {
	return &Result{Task: &Task{ID: "t1", Status: k.status}}, nil
}

func (k keeper) GetTask(_ context.Context, id string, _ Meta) (*Task, error) {
	if id != "t1" {
		return nil, ErrTaskNotFound
	}
	return &Task{ID: id, Status: k.status, Tool: "job", Result: &Result{Text: "done"}}, nil
}

func (k keeper) CancelTask(ctx context.Context, id string, m Meta) (*Task, error) {
	if id != "t1" {
		return nil, ErrTaskNotFound
	}
	return &Task{ID: id, Status: TaskCancelled}, nil
}

// A TaskKeeper is discovered at start and reached across the wire; a task
// goes to the host only when the client declared tasks; bad tasks fail.
func TestTaskKeeperAcrossTheWire(t *testing.T) {
	ctx := context.Background()
	c := connect(t, keeper{status: TaskCompleted})
	d, err := c.Describe(ctx)
	if err != nil || !d.Capabilities.Tasks {
		t.Fatalf("Describe = %+v, %v; want Capabilities.Tasks", d, err)
	}
	if d, _ := connect(t, bare{}).Describe(ctx); d.Capabilities.Tasks {
		t.Errorf("a provider without TaskKeeper declares tasks")
	}
	tests := []struct {
		name     string
		tasks    bool
		wantTask bool
	}{
		{"client declared tasks", true, true},
		{"client did not", false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := c.Call(ctx, &wire.Call{Tool: "job", Meta: wire.Meta{Tasks: tc.tasks}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if (res.Task != nil) != tc.wantTask {
				t.Fatalf("Result.Task = %+v, want present=%v", res.Task, tc.wantTask)
			}
			if tc.wantTask && res.Task.Tool != "job" {
				t.Errorf("Task.Tool = %q, want the calling tool", res.Task.Tool)
			}
		})
	}
	got, err := c.GetTask(ctx, &wire.TaskRequest{ID: "t1"})
	if err != nil || got.Status != string(TaskCompleted) || got.Result == nil || got.Result.Text != "done" {
		t.Fatalf("GetTask = %+v, %v", got, err)
	}
	if _, err := c.GetTask(ctx, &wire.TaskRequest{ID: "t2"}); failureOf(err) == nil || failureOf(err).Kind != wire.KindNotFound {
		t.Errorf("GetTask of an unknown id = %v, want a not_found failure", err)
	}
	if got, err := c.CancelTask(ctx, &wire.TaskRequest{ID: "t1"}); err != nil || got.Status != string(TaskCancelled) {
		t.Errorf("CancelTask = %+v, %v", got, err)
	}
	if _, err := connect(t, bare{}).GetTask(ctx, &wire.TaskRequest{ID: "t1"}); !errors.Is(err, wire.ErrNotImplemented) {
		t.Errorf("GetTask on a provider without TaskKeeper = %v, want ErrNotImplemented", err)
	}
	// A task that breaks the rules is refused, not relayed.
	bad := connect(t, keeper{status: "pending"})
	if _, err := bad.Call(ctx, &wire.Call{Tool: "job", Meta: wire.Meta{Tasks: true}}, nil); err == nil {
		t.Errorf("a task with an unknown status was relayed")
	}
	if _, err := connect(t, keeper{status: TaskWorking}).GetTask(ctx, &wire.TaskRequest{ID: "t1"}); err == nil {
		t.Errorf("a working task carrying a result was relayed")
	}
}

func TestTaskStatusTerminal(t *testing.T) {
	for s, want := range map[TaskStatus]bool{TaskWorking: false, TaskInputRequired: false, TaskCompleted: true, TaskFailed: true, TaskCancelled: true} {
		if s.Terminal() != want {
			t.Errorf("%s.Terminal() = %v", s, !want)
		}
	}
}
