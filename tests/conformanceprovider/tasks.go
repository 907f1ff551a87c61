package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// The fixtures of the Tasks extension scenarios (tasks-*): greet is
// synchronous; slow_compute, failing_job, protocol_error_job,
// confirm_delete and multi_input are ordinary blocking tools whose specs
// set taskSupport, so the host runs them as tasks; test_tool_with_task
// answers with a task this provider keeps itself (sdk.TaskKeeper).

// taskTools are the fixtures of this file, for Describe.
var taskTools = []string{"greet", "slow_compute", "failing_job", "protocol_error_job", "confirm_delete", "multi_input", "test_tool_with_task"}

// callTaskTool runs a fixture of this file; ok is false for any other tool.
func (p *conformance) callTaskTool(ctx context.Context, c *sdk.Call) (res *sdk.Result, ok bool, err error) {
	switch c.Tool {
	case "greet":
		var in struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(c.Arguments, &in); err != nil {
			return nil, true, fmt.Errorf("decode greet arguments: %w", err)
		}
		res, err = text("Hello, "+in.Name+"!", nil)
	case "slow_compute":
		var in struct {
			Seconds float64 `json:"seconds"`
			Label   string  `json:"label"`
		}
		if err := json.Unmarshal(c.Arguments, &in); err != nil {
			return nil, true, fmt.Errorf("decode slow_compute arguments: %w", err)
		}
		if err := pause(ctx, time.Duration(in.Seconds*float64(time.Second))); err != nil {
			return nil, true, err
		}
		res, err = text(fmt.Sprintf("Computed %q after %gs", in.Label, in.Seconds), nil)
	case "failing_job":
		if err := pause(ctx, time.Second); err != nil {
			return nil, true, err
		}
		res = sdk.Fail(source, 10000, "failing_job failed on purpose", nil)
		res.Text = "failing_job failed on purpose"
	case "protocol_error_job":
		if err := pause(ctx, 200*time.Millisecond); err != nil {
			return nil, true, err
		}
		err = errors.New("protocol_error_job fails with an internal error on purpose")
	case "confirm_delete":
		var in struct {
			Filename string `json:"filename"`
		}
		if err := json.Unmarshal(c.Arguments, &in); err != nil {
			return nil, true, fmt.Errorf("decode confirm_delete arguments: %w", err)
		}
		res, err = elicit(ctx, c, "Delete "+in.Filename+": ", "Delete "+in.Filename+"?",
			`{"type":"object","properties":{"confirm":{"type":"boolean","description":"Delete the file"}},"required":["confirm"]}`)
	case "multi_input":
		res, err = multiInput(ctx, c)
	case "test_tool_with_task":
		res, err = p.tasks.start(ctx, c)
	default:
		return nil, false, nil
	}
	return res, true, err
}

// multiInput asks two questions at once, so both are pending together.
func multiInput(ctx context.Context, c *sdk.Call) (*sdk.Result, error) {
	const schema = `{"type":"object","properties":{"name":{"type":"string"},"confirm":{"type":"boolean"}}}`
	var (
		wg      sync.WaitGroup
		answers [2]*sdk.ElicitResult
		errs    [2]error
	)
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i], errs[i] = c.Elicit(ctx, &sdk.ElicitRequest{Message: fmt.Sprintf("Question %d of 2", i+1), RequestedSchema: json.RawMessage(schema)})
		}()
	}
	wg.Wait()
	if err := errors.Join(errs[:]...); err != nil {
		return nil, err
	}
	return text(fmt.Sprintf("Answers: %v and %v", answers[0].Content, answers[1].Content), nil)
}

// keptTasks are test_tool_with_task's tasks. Each completes a moment
// after it was created, greeting the name the user gave.
type keptTasks struct {
	mu    sync.Mutex
	tasks map[string]*keptTask
}

type keptTask struct {
	name      string
	created   time.Time
	cancelled bool
}

// keptDelay is how long a kept task stays working.
const keptDelay = 500 * time.Millisecond

// start asks for the user's name, then answers with a kept task.
func (k *keptTasks) start(ctx context.Context, c *sdk.Call) (*sdk.Result, error) {
	answer, err := c.Elicit(ctx, &sdk.ElicitRequest{Message: "What is your name?",
		RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"Your name"}},"required":["name"]}`)})
	if err != nil {
		return nil, err
	}
	name, _ := answer.Content["name"].(string)
	if !c.Meta.Tasks {
		return text("Hello, "+name+"!", nil)
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	id := "kept-" + hex.EncodeToString(b)
	t := &keptTask{name: name, created: time.Now()}
	k.mu.Lock()
	if k.tasks == nil {
		k.tasks = map[string]*keptTask{}
	}
	k.tasks[id] = t
	k.mu.Unlock()
	return &sdk.Result{Task: k.snapshot(id, t)}, nil
}

func (k *keptTasks) snapshot(id string, t *keptTask) *sdk.Task {
	out := &sdk.Task{ID: id, Tool: "test_tool_with_task", Status: sdk.TaskWorking, StatusMessage: "greeting " + t.name,
		CreatedAt: t.created, UpdatedAt: t.created, PollIntervalMs: 200}
	switch {
	case t.cancelled:
		out.Status, out.StatusMessage = sdk.TaskCancelled, "cancelled"
	case time.Since(t.created) >= keptDelay:
		res, _ := text("Hello, "+t.name+"! (from a provider-kept task)", nil)
		out.Status, out.Result, out.StatusMessage = sdk.TaskCompleted, res, ""
		out.UpdatedAt = t.created.Add(keptDelay)
	}
	return out
}

// GetTask reports a kept task.
func (p *conformance) GetTask(_ context.Context, id string, _ sdk.Meta) (*sdk.Task, error) {
	p.tasks.mu.Lock()
	defer p.tasks.mu.Unlock()
	t, ok := p.tasks.tasks[id]
	if !ok {
		return nil, sdk.ErrTaskNotFound
	}
	return p.tasks.snapshot(id, t), nil
}

// CancelTask cancels a kept task that has not completed yet.
func (p *conformance) CancelTask(_ context.Context, id string, _ sdk.Meta) (*sdk.Task, error) {
	p.tasks.mu.Lock()
	defer p.tasks.mu.Unlock()
	t, ok := p.tasks.tasks[id]
	if !ok {
		return nil, sdk.ErrTaskNotFound
	}
	if time.Since(t.created) < keptDelay {
		t.cancelled = true
	}
	return p.tasks.snapshot(id, t), nil
}
