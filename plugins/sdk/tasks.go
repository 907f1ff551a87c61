package sdk

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// TaskStatus is a task's state, spelt as the MCP Tasks extension spells it.
type TaskStatus string

// The task states. working and input_required are live; the other three
// are terminal: a task that reached one never changes again.
const (
	TaskWorking       TaskStatus = "working"
	TaskInputRequired TaskStatus = "input_required"
	TaskCompleted     TaskStatus = "completed"
	TaskFailed        TaskStatus = "failed"
	TaskCancelled     TaskStatus = "cancelled"
)

// Terminal reports whether s is a final state (completed, failed or
// cancelled).
func (s TaskStatus) Terminal() bool {
	return s == TaskCompleted || s == TaskFailed || s == TaskCancelled
}

// Task is a task a provider keeps itself. It is durable: it survives a
// host restart, because the provider answers for it from its own store
// (see TaskKeeper). Tasks the host runs for any tool need no provider
// code at all; this type is for work that outlives a host process, such
// as a write proposal waiting for a person.
type Task struct {
	// ID names the task to the client; it must be unguessable or carry no
	// authority by itself, since the host routes tasks/get by it.
	ID     string     `json:"id"`
	Status TaskStatus `json:"status"`
	// StatusMessage is a sentence for the person or model watching the
	// task ("waiting for approval").
	StatusMessage string `json:"statusMessage,omitempty"`
	// Result is the finished tool result when Status is completed.
	Result *Result `json:"result,omitempty"`
	// Error is the reason when Status is failed (the gateway's reason for
	// a proposal).
	Error *ToolError `json:"error,omitempty"`
	// PollIntervalMs suggests how often a client should poll; zero lets
	// the host pick.
	PollIntervalMs int `json:"pollIntervalMs,omitempty"`
	// TTLMs is how long the provider keeps the task after it was created,
	// in milliseconds; zero means the host's default is reported.
	TTLMs int64 `json:"ttlMs,omitempty"`
	// Tool is the tool whose call created the task; the host renders
	// Result with that tool's spec. The SDK fills it in on a task CallTool
	// returns; GetTask and CancelTask should set it (the host falls back to
	// the tool it remembers for the id, if any).
	Tool string `json:"tool,omitempty"`
	// CreatedAt and UpdatedAt are when the task was created and last
	// changed; zero lets the host use the time it first saw the task.
	CreatedAt time.Time `json:"createdAt,omitzero"`
	UpdatedAt time.Time `json:"updatedAt,omitzero"`
}

// ErrTaskNotFound is returned by TaskKeeper methods for an id the
// provider does not keep.
var ErrTaskNotFound = errors.New("task not found")

// TaskKeeper is implemented by a provider that keeps durable tasks. It is
// an optional interface, discovered at start like ResourceReader. The host
// routes tasks/get and tasks/cancel for an id it does not hold itself to
// every TaskKeeper until one knows it; a keeper answers ErrTaskNotFound
// for ids that are not its own, and refuses (an *Error of
// KindInvalidArgument, say) a cancel the caller may not make.
type TaskKeeper interface {
	GetTask(ctx context.Context, id string, meta Meta) (*Task, error)
	CancelTask(ctx context.Context, id string, meta Meta) (*Task, error)
}

// validate checks what the host relies on: an id, a known state, and a
// result only on a completed task.
func (t *Task) validate() error {
	if t.ID == "" {
		return errors.New("task has no id")
	}
	switch t.Status {
	case TaskWorking, TaskInputRequired, TaskCompleted, TaskFailed, TaskCancelled:
	default:
		return fmt.Errorf("task %s has unknown status %q (want working, input_required, completed, failed or cancelled)", t.ID, t.Status)
	}
	if t.Result != nil && t.Status != TaskCompleted {
		return fmt.Errorf("task %s carries a result but is %s, not completed", t.ID, t.Status)
	}
	if t.Result != nil {
		if err := t.Result.Validate(); err != nil {
			return fmt.Errorf("task %s result: %w", t.ID, err)
		}
	}
	return nil
}
