package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/fluxgit/fluxgit/host/catalog"
	"github.com/fluxgit/fluxgit/host/rpc"
	"github.com/fluxgit/fluxgit/internal/wire"
)

// Tasks (the MCP Tasks extension, io.modelcontextprotocol/tasks, on
// 2026-07-28; the experimental tasks of 2025-11-25) let a tools/call
// answer with a handle the client polls instead of the result.
//
// Two kinds of task exist. A host-run task is any call of a tool whose
// spec sets taskSupport (and not taskKeeper: provider) from a client that
// declared tasks: the host runs the provider's CallTool in the background
// and keeps the task in memory here; a question the provider puts to the
// client (Call.Elicit, Call.Sample) turns the task input_required until
// tasks/update answers it. A provider-kept task is one a provider answered
// a call with (sdk.Result.Task): the host keeps only a routing entry and
// asks the provider (sdk.TaskKeeper) on every tasks/get and tasks/cancel,
// so the task outlives the host process.

// extTasks is the Tasks extension's identifier.
const extTasks = "io.modelcontextprotocol/tasks"

// metaRelatedTask ties a 2025-11-25 message to its task.
const metaRelatedTask = "io.modelcontextprotocol/related-task"

// Task states, as both task generations spell them.
const (
	taskWorking       = "working"
	taskInputRequired = "input_required"
	taskCompleted     = "completed"
	taskFailed        = "failed"
	taskCancelled     = "cancelled"
)

func terminal(status string) bool {
	return status == taskCompleted || status == taskFailed || status == taskCancelled
}

// Task limits. A task is kept for its TTL from creation (a client may ask
// for less on 2025-11-25, never more), then forgotten, and cancelled if it
// still runs; at most maxTasks live in the table server-wide.
const (
	taskTTL      = time.Hour
	taskPoll     = time.Second
	maxTasks     = 1024
	minTaskTTL   = time.Second
	timestampFmt = "2006-01-02T15:04:05.000Z07:00"
)

// hostTask is one task in the table: host-run, or (provider set) the
// routing entry of a provider-kept task.
type hostTask struct {
	id       string
	agent    string   // the authenticated agent that created it ("" when none)
	sess     *Session // the owning session of a 2025-11-25 task; nil for 2026-07-28
	tool     *catalog.Tool
	gen      generation // the creating request's: capabilities and result shape
	repoPath string
	argsIn   json.RawMessage
	created  time.Time
	ttl      time.Duration
	provider string // non-empty: a provider-kept task
	cancel   context.CancelFunc
	done     chan struct{} // closed when a host-run call has ended

	mu      sync.Mutex
	status  string
	message string
	updated time.Time
	result  json.RawMessage // CallToolResult, when completed
	failure *rpcError       // the JSON-RPC error, when failed
	pending map[string]input
}

type taskTable struct {
	mu    sync.Mutex
	tasks map[string]*hostTask
}

// add registers t after forgetting expired tasks; it refuses when the
// table is full of live ones.
func (tt *taskTable) add(t *hostTask) error {
	now := time.Now()
	tt.mu.Lock()
	defer tt.mu.Unlock()
	for id, old := range tt.tasks {
		if now.After(old.created.Add(old.ttl)) {
			delete(tt.tasks, id)
			if old.cancel != nil {
				old.cancel()
			}
		}
	}
	if len(tt.tasks) >= maxTasks {
		return errorf(codeInternal, map[string]any{"retryable": true, "limit": maxTasks,
			"details": fmt.Sprintf("the server already keeps %d tasks; wait for some to finish (or cancel them with tasks/cancel) and call again", maxTasks)},
			"Too many tasks")
	}
	tt.tasks[t.id] = t
	return nil
}

func (tt *taskTable) get(id string) *hostTask {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	t := tt.tasks[id]
	if t != nil && time.Now().After(t.created.Add(t.ttl)) {
		delete(tt.tasks, id)
		if t.cancel != nil {
			t.cancel()
		}
		return nil
	}
	return t
}

// visible reports whether the request may see t: the same authenticated
// agent, and on 2025-11-25 the same session. On 2026-07-28 (no sessions)
// the unguessable id is the handle.
func (t *hostTask) visible(rq *request) bool {
	agent := ""
	if rq.sess != nil {
		rq.sess.mu.Lock()
		agent = rq.sess.agent
		rq.sess.mu.Unlock()
	}
	if t.agent != agent {
		return false
	}
	return t.sess == nil || t.sess == rq.sess
}

// taskDeclared reports whether a tools/call may become a task: on
// 2026-07-28 the request declared the extension; on 2025-11-25 it carries
// params.task (an object).
func taskDeclared(g generation, p params) bool {
	if g.modern {
		return g.caps.tasks
	}
	raw, ok := p["task"]
	return ok && g.version == V20251125 && len(raw) > 0 && raw[0] == '{'
}

// taskRequired is the refusal of a required-task tool called without
// tasks.
func taskRequired(g generation, tool string) *rpcError {
	if g.modern {
		return errorf(codeMissingCapability, map[string]any{
			"requiredCapabilities": map[string]any{"extensions": map[string]any{extTasks: map[string]any{}}},
			"details":              "tool " + tool + " runs only as a task: declare the " + extTasks + " extension in _meta[\"" + metaClientCaps + "\"].extensions and call again",
		}, "Missing required client capability")
	}
	return errorf(codeMethodNotFound, map[string]any{
		"details": "tool " + tool + " runs only as a task (execution.taskSupport required): call it with params.task",
	}, "Task augmentation required for tools/call requests")
}

// requestedTTL is the ttl a 2025-11-25 client asked for in params.task,
// bounded by taskTTL.
func requestedTTL(p params) time.Duration {
	var t struct {
		TTL *float64 `json:"ttl"`
	}
	if raw, ok := p["task"]; ok && json.Unmarshal(raw, &t) == nil && t.TTL != nil {
		d := time.Duration(*t.TTL) * time.Millisecond
		if d < minTaskTTL {
			d = minTaskTTL
		}
		if d < taskTTL {
			return d
		}
	}
	return taskTTL
}

func (s *Server) newTask(rq *request, tool *catalog.Tool, p params) *hostTask {
	now := time.Now().UTC()
	t := &hostTask{id: newToken(), tool: tool, gen: rq.gen, repoPath: rq.repoPath, argsIn: p["arguments"],
		created: now, updated: now, ttl: taskTTL, status: taskWorking, pending: map[string]input{}}
	if rq.sess != nil {
		rq.sess.mu.Lock()
		t.agent = rq.sess.agent
		rq.sess.mu.Unlock()
		if !rq.gen.modern {
			t.sess = rq.sess
		}
	}
	if !rq.gen.modern {
		t.ttl = requestedTTL(p)
	}
	return t
}

// startTask creates a host-run task for call and runs it in the
// background; the reply is the CreateTaskResult. The task is in the table
// before the reply is built, so an immediate tasks/get finds it.
func (s *Server) startTask(rq *request, tool *catalog.Tool, call *wire.Call, p params) (json.RawMessage, error) {
	t := s.newTask(rq, tool, p)
	ctx, cancel := context.WithCancel(s.ctx)
	t.cancel, t.done = cancel, make(chan struct{})
	if err := s.tasks.add(t); err != nil {
		cancel()
		return nil, err
	}
	rq.taskCreated, rq.taskRunning = true, true
	rq.finish()
	// Rendered before the call starts: the reply is the seed state, even
	// for a call that ends at once.
	res, err := s.createResult(t)
	go s.runTask(ctx, t, call)
	return res, err
}

// runTask runs a host-run task's provider call to its end. Progress and
// log messages are not forwarded (neither task generation carries them
// for a task); a question for the client waits in the task's
// inputRequests.
func (s *Server) runTask(ctx context.Context, t *hostTask, call *wire.Call) {
	defer close(t.done)
	defer t.cancel()
	call.Meta.Progress, call.Meta.LogLevel = false, ""
	events := func(ev wire.Event, answer func(context.Context, *wire.Answer) error) {
		if ev.Request == nil {
			return
		}
		if fail := capabilityRefusal(t.gen.caps, ev.Request, true); fail != nil {
			go func() { _ = answer(ctx, &wire.Answer{RequestID: ev.Request.ID, Failure: fail}) }()
			return
		}
		in := input{req: ev.Request, answer: answer}
		key := s.taskAsk(t, in)
		if t.sess != nil && key != "" {
			// 2025-11-25 has no tasks/update: the question goes to the
			// client as a request of its own, tied to the task.
			go s.legacyTaskAsk(ctx, t, key, in)
		}
	}
	pres, err := s.opts.Providers.CallTool(ctx, t.tool.Provider, call, t.tool.ReadOnly, events)
	var (
		res  json.RawMessage
		fail *rpcError
	)
	switch {
	case ctx.Err() != nil && err != nil:
		fail = errorf(codeRequestCancelled, nil, "Request cancelled")
	case err != nil:
		fail = s.callFailure(err, t.tool, t.gen)
	default:
		res, err = s.toolResult(t.tool, t.gen, t.repoPath, pres)
		if err != nil {
			if !errors.As(err, &fail) {
				fail = errorf(codeInternal, map[string]any{"details": err.Error()}, "Internal error")
			}
		}
	}
	t.mu.Lock()
	if !terminal(t.status) {
		if fail != nil {
			t.status, t.failure = taskFailed, fail
			t.message = fail.Message
		} else {
			t.status, t.result = taskCompleted, res
		}
		t.updated = time.Now().UTC()
	}
	t.pending = map[string]input{}
	t.mu.Unlock()
	s.taskChanged(t)
	s.recordTask(t)
}

// callFailure maps a provider call's error to the JSON-RPC error the
// generation expects, as toolsCall does for a call that is not a task.
func (s *Server) callFailure(err error, tool *catalog.Tool, g generation) *rpcError {
	var (
		f  *wire.Failure
		re *rpcError
	)
	switch {
	case errors.As(err, &re):
		return re
	case errors.As(err, &f):
		return s.failure(f, g, tool.Provider, tool.ReadOnly)
	}
	s.log.Error("provider call failed", "provider", tool.Provider, "tool", tool.Name, "err", err)
	return errorf(codeInternal, map[string]any{"provider": tool.Provider, "details": err.Error(), "retryable": tool.ReadOnly},
		"Provider %s failed", tool.Provider)
}

// taskAsk parks a provider question in the task: input_required until
// every question is answered.
func (s *Server) taskAsk(t *hostTask, in input) string {
	t.mu.Lock()
	if terminal(t.status) {
		t.mu.Unlock()
		return ""
	}
	key := in.key(t.pending)
	t.pending[key] = in
	t.status, t.message = taskInputRequired, "waiting for the client's answer to "+in.req.Method
	t.updated = time.Now().UTC()
	t.mu.Unlock()
	s.taskChanged(t)
	return key
}

// legacyTaskAsk puts a 2025-11-25 task's question to its session as a
// server request carrying the related-task _meta, and hands the answer
// back; the task is working again once nothing is pending.
func (s *Server) legacyTaskAsk(ctx context.Context, t *hostTask, key string, in input) {
	params := map[string]json.RawMessage{}
	_ = json.Unmarshal(in.req.Params, &params)
	var meta map[string]any
	if raw, ok := params["_meta"]; !ok || json.Unmarshal(raw, &meta) != nil || meta == nil {
		meta = map[string]any{}
	}
	meta[metaRelatedTask] = map[string]any{"taskId": t.id}
	params["_meta"], _ = rpc.Marshal(meta)
	res, fail := t.sess.askUnrelated(ctx, in.req.Method, params)
	t.mu.Lock()
	_, still := t.pending[key]
	delete(t.pending, key)
	if still && len(t.pending) == 0 && t.status == taskInputRequired {
		t.status, t.message, t.updated = taskWorking, "", time.Now().UTC()
	}
	t.mu.Unlock()
	if !still {
		return // the task ended meanwhile
	}
	s.taskChanged(t)
	actx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = in.answer(actx, &wire.Answer{RequestID: in.req.ID, Result: res, Failure: fail})
}

// recordTask writes a finished host-run task to the audit ledger.
func (s *Server) recordTask(t *hostTask) {
	if s.opts.Recorder == nil {
		return
	}
	t.mu.Lock()
	status, failure, result := t.status, t.failure, t.result
	t.mu.Unlock()
	rec := CallRecord{Tool: t.tool.Name, Known: true, ReadOnly: t.tool.ReadOnly, Arguments: t.argsIn,
		ClientName: t.gen.client.Name, ClientVersion: t.gen.client.Version, Start: t.created,
		Event: t.tool.Audit.Event, Risk: t.tool.Audit.Risk, Scope: scopeArguments(t.argsIn, t.tool.Paths)}
	switch status {
	case taskCompleted:
		var r struct {
			IsError bool `json:"isError"`
		}
		_ = json.Unmarshal(result, &r)
		rec.Outcome = OutcomeSuccess
		if r.IsError {
			rec.Outcome = OutcomeError
		}
	case taskFailed:
		rec.Outcome, rec.ErrorCode, rec.ErrorMessage = OutcomeError, failure.Code, failure.auditMessage()
	default:
		rec.Outcome, rec.ErrorCode, rec.ErrorMessage = OutcomeBlocked, codeRequestCancelled, "cancelled by tasks/cancel"
	}
	rec.Duration = time.Since(t.created)
	s.opts.Recorder.RecordCall(context.Background(), rec)
}

// providerTask turns the task a provider answered a call with into the
// CreateTaskResult, keeping a routing entry so tasks/get goes straight to
// that provider.
func (s *Server) providerTask(rq *request, tool *catalog.Tool, p params, wt *wire.Task) (json.RawMessage, error) {
	if wt.ID == "" {
		return nil, s.brokenProvider(tool.Provider, "tool "+tool.Name+" answered with a task without an id")
	}
	t := s.newTask(rq, tool, p)
	t.id, t.provider = wt.ID, tool.Provider
	if !wt.CreatedAt.IsZero() {
		t.created = wt.CreatedAt.UTC()
	}
	if wt.TTLMs > 0 {
		t.ttl = time.Duration(wt.TTLMs) * time.Millisecond
	}
	if err := s.tasks.add(t); err != nil {
		return nil, err
	}
	view, err := s.providerView(t, wt)
	if err != nil {
		return nil, err
	}
	rq.taskCreated = true
	s.followCreated(rq, view)
	return s.createResult(view)
}

// providerView is a snapshot of a provider-kept task in the host's shape;
// entry (the routing entry, or a stand-in) supplies the tool and times
// the provider left out.
func (s *Server) providerView(entry *hostTask, wt *wire.Task) (*hostTask, error) {
	v := &hostTask{id: wt.ID, agent: entry.agent, sess: entry.sess, tool: entry.tool, gen: entry.gen,
		created: entry.created, ttl: entry.ttl, provider: entry.provider,
		status: wt.Status, message: wt.StatusMessage, updated: entry.created}
	if wt.Tool != "" {
		if t, ok := s.opts.Catalog.Tool(wt.Tool); ok {
			v.tool = t
		}
	}
	if !wt.CreatedAt.IsZero() {
		v.created = wt.CreatedAt.UTC()
	}
	if !wt.UpdatedAt.IsZero() {
		v.updated = wt.UpdatedAt.UTC()
	} else if terminal(wt.Status) || wt.Status != taskWorking {
		v.updated = time.Now().UTC()
	}
	if wt.TTLMs > 0 {
		v.ttl = time.Duration(wt.TTLMs) * time.Millisecond
	}
	switch wt.Status {
	case taskWorking, taskInputRequired, taskCancelled:
	case taskCompleted:
		if wt.Result == nil || v.tool == nil {
			return nil, s.brokenProvider(entry.provider, "completed task "+wt.ID+" has no result or names no served tool")
		}
		res, err := s.toolResult(v.tool, v.gen, "", wt.Result)
		if err != nil {
			return nil, err
		}
		v.result = res
	case taskFailed:
		v.failure = errorf(codeInternal, nil, "Task failed")
		if wt.Error != nil {
			v.failure = &rpcError{Code: int64(wt.Error.Code), Message: wt.Error.Message}
			if len(wt.Error.Data) > 0 {
				v.failure.Data = wt.Error.Data
			}
		}
		if v.message == "" {
			v.message = v.failure.Message
		}
	default:
		return nil, s.brokenProvider(entry.provider, fmt.Sprintf("task %s has unknown status %q", wt.ID, wt.Status))
	}
	return v, nil
}

// taskKeepers is the optional part of a Dispatcher that reaches
// provider-kept tasks (*providers.Manager implements it).
type taskKeepers interface {
	GetTask(ctx context.Context, provider string, req *wire.TaskRequest) (*wire.Task, error)
	CancelTask(ctx context.Context, provider string, req *wire.TaskRequest) (*wire.Task, error)
	TaskKeepers() []string
}

// unknownTask is the refusal for an id the host does not hold (or that
// belongs to someone else: the two are not told apart).
func unknownTask(id string) *rpcError {
	return refuseParams(fmt.Sprintf("no task %q is known to this server: it never existed, expired (tasks are kept for their ttlMs), or belongs to another client", id))
}

// findTask resolves id to a snapshot: a host-run task as it stands, or a
// provider-kept task as its provider reports it (asking every TaskKeeper
// when the host has no routing entry, as after a restart). With cancel,
// the task is cancelled first.
func (s *Server) findTask(ctx context.Context, rq *request, id string, cancel bool) (*hostTask, error) {
	t := s.tasks.get(id)
	if t != nil && !t.visible(rq) {
		return nil, unknownTask(id)
	}
	if t != nil && t.provider == "" {
		if cancel {
			s.cancelTask(t)
		}
		return t, nil
	}
	tk, ok := s.opts.Providers.(taskKeepers)
	if !ok {
		return nil, unknownTask(id)
	}
	entry := t
	var owners []string
	if entry != nil {
		owners = []string{entry.provider}
	} else {
		entry = s.newTask(rq, nil, params{})
		entry.id = id
		owners = tk.TaskKeepers()
	}
	req := &wire.TaskRequest{ID: id, Meta: rq.meta(s.opts.Roots.Roots)}
	req.Meta.Tasks = true
	for _, prov := range owners {
		var (
			wt  *wire.Task
			err error
		)
		if cancel {
			wt, err = tk.CancelTask(ctx, prov, req)
		} else {
			wt, err = tk.GetTask(ctx, prov, req)
		}
		var f *wire.Failure
		switch {
		case errors.Is(err, wire.ErrNotImplemented), errors.As(err, &f) && f.Kind == wire.KindNotFound:
			continue
		case err != nil:
			if errors.As(err, &f) {
				return nil, s.failure(f, rq.gen, prov, true)
			}
			return nil, errorf(codeInternal, map[string]any{"provider": prov, "details": err.Error(), "retryable": true}, "Provider %s failed", prov)
		}
		if wt.ID != id {
			return nil, s.brokenProvider(prov, fmt.Sprintf("asked for task %s, answered with task %s", id, wt.ID))
		}
		entry.provider = prov
		if t == nil && wt.Tool != "" {
			if tool, ok := s.opts.Catalog.Tool(wt.Tool); ok {
				entry.tool = tool
			}
		}
		return s.providerView(entry, wt)
	}
	return nil, unknownTask(id)
}

// cancelTask ends a live host-run task as cancelled at once (a cancelled
// task stays cancelled whatever its call does next) and stops its call.
func (s *Server) cancelTask(t *hostTask) bool {
	t.mu.Lock()
	if terminal(t.status) {
		t.mu.Unlock()
		return false
	}
	t.status, t.message = taskCancelled, "cancelled by the client"
	t.updated = time.Now().UTC()
	t.pending = map[string]input{}
	t.mu.Unlock()
	t.cancel()
	s.taskChanged(t)
	return true
}

// taskIDParam reads params.taskId.
func taskIDParam(p params) (string, error) {
	var id string
	if raw, ok := p["taskId"]; !ok || json.Unmarshal(raw, &id) != nil || id == "" {
		return "", refuseParams("params.taskId must be the non-empty string taskId that tools/call returned")
	}
	return id, nil
}

// tasksGate refuses the task methods to a 2026-07-28 request that did not
// declare the extension, and to legacy sessions older than 2025-11-25.
func tasksGate(g generation, method string) error {
	if g.modern {
		if !g.caps.tasks {
			return errorf(codeMissingCapability, map[string]any{
				"requiredCapabilities": map[string]any{"extensions": map[string]any{extTasks: map[string]any{}}},
				"details":              method + " belongs to the " + extTasks + " extension: declare it in _meta[\"" + metaClientCaps + "\"].extensions",
			}, "Missing required client capability")
		}
		return nil
	}
	if g.version != V20251125 {
		return methodNotFound(method)
	}
	return nil
}

// tasksMethod serves tasks/get, tasks/update, tasks/cancel (both
// generations) and tasks/result, tasks/list (2025-11-25).
func (s *Server) tasksMethod(ctx context.Context, rq *request, method string, p params) (json.RawMessage, error) {
	if err := tasksGate(rq.gen, method); err != nil {
		return nil, err
	}
	if method == "tasks/list" {
		return s.tasksList(rq, p)
	}
	id, err := taskIDParam(p)
	if err != nil {
		return nil, err
	}
	switch method {
	case "tasks/get":
		t, err := s.findTask(ctx, rq, id, false)
		if err != nil {
			return nil, err
		}
		return rpc.Marshal(t.view(rq.gen.modern, true))
	case "tasks/update":
		return s.tasksUpdate(rq, id, p)
	case "tasks/cancel":
		if !rq.gen.modern {
			// 2025-11-25 refuses to cancel a finished task.
			if t := s.tasks.get(id); t != nil && t.visible(rq) && t.provider == "" {
				if st := t.state(); terminal(st) {
					return nil, refuseParams(fmt.Sprintf("task %s is already %s; only a working or input_required task can be cancelled", id, st))
				}
			}
		}
		t, err := s.findTask(ctx, rq, id, true)
		if err != nil {
			return nil, err
		}
		if rq.gen.modern {
			return json.RawMessage(`{}`), nil
		}
		return rpc.Marshal(t.view(false, false))
	case "tasks/result":
		return s.tasksResult(ctx, rq, id)
	}
	return nil, methodNotFound(method)
}

// tasksUpdate hands the client's inputResponses to the questions they
// answer; keys not outstanding are ignored, as the extension asks.
func (s *Server) tasksUpdate(rq *request, id string, p params) (json.RawMessage, error) {
	var responses map[string]json.RawMessage
	if raw, ok := p["inputResponses"]; !ok || json.Unmarshal(raw, &responses) != nil || responses == nil {
		return nil, refuseParams("params.inputResponses must be an object mapping inputRequests keys (from tasks/get) to the client's results")
	}
	t := s.tasks.get(id)
	if t == nil || !t.visible(rq) {
		if t == nil {
			if _, err := s.findTask(rq.ctx, rq, id, false); err == nil {
				// A provider-kept task takes no input through the host.
				return json.RawMessage(`{}`), nil
			}
		}
		return nil, unknownTask(id)
	}
	t.mu.Lock()
	for k, v := range responses {
		if _, ok := t.pending[k]; !ok {
			continue
		}
		if len(v) == 0 || v[0] != '{' {
			t.mu.Unlock()
			return nil, refuseParams(fmt.Sprintf("params.inputResponses[%q] must be the result object of the request it answers (for elicitation/create: {\"action\": ..., \"content\": {...}})", k))
		}
	}
	answered := 0
	for k, v := range responses {
		in, ok := t.pending[k]
		if !ok {
			continue
		}
		delete(t.pending, k)
		answered++
		go func() { _ = in.answer(s.ctx, &wire.Answer{RequestID: in.req.ID, Result: v}) }()
	}
	changed := answered > 0 && len(t.pending) == 0 && t.status == taskInputRequired
	if changed {
		t.status, t.message = taskWorking, ""
	}
	if answered > 0 {
		t.updated = time.Now().UTC()
	}
	t.mu.Unlock()
	if answered > 0 {
		s.taskChanged(t)
	}
	return json.RawMessage(`{}`), nil
}

// tasksResult (2025-11-25) waits for the task to end and returns what the
// call would have returned: its result, or its JSON-RPC error.
func (s *Server) tasksResult(ctx context.Context, rq *request, id string) (json.RawMessage, error) {
	for {
		t, err := s.findTask(ctx, rq, id, false)
		if err != nil {
			return nil, err
		}
		if terminal(t.state()) {
			return t.finalResult()
		}
		var wait <-chan struct{}
		if live := s.tasks.get(id); live != nil && live.done != nil {
			wait = live.done
		}
		select {
		case <-wait:
		case <-time.After(taskPoll):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// state is the task's status now.
func (t *hostTask) state() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.status
}

// finalResult is a terminal task's outcome as tasks/result returns it.
func (t *hostTask) finalResult() (json.RawMessage, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	related := map[string]any{metaRelatedTask: map[string]any{"taskId": t.id}}
	switch t.status {
	case taskCompleted:
		return spliceFields(t.result, "_meta", related)
	case taskFailed:
		return nil, t.failure
	}
	return nil, errorf(codeRequestCancelled, map[string]any{"taskId": t.id}, "Task cancelled")
}

// tasksList (2025-11-25) lists the session's tasks, newest first, in one
// page.
func (s *Server) tasksList(rq *request, p params) (json.RawMessage, error) {
	if err := checkCursor(p); err != nil {
		return nil, err
	}
	s.tasks.mu.Lock()
	var mine []*hostTask
	for _, t := range s.tasks.tasks {
		if t.provider == "" && t.sess != nil && t.visible(rq) {
			mine = append(mine, t)
		}
	}
	s.tasks.mu.Unlock()
	sort.Slice(mine, func(i, j int) bool { return mine[i].created.After(mine[j].created) })
	list := make([]map[string]any, 0, len(mine))
	for _, t := range mine {
		list = append(list, t.view(false, false))
	}
	return rpc.Marshal(map[string]any{"tasks": list})
}

// createResult is the tools/call reply that creates t: on 2026-07-28 the
// task's fields flat (resultType task is added by route), on 2025-11-25
// the task under "task".
func (s *Server) createResult(t *hostTask) (json.RawMessage, error) {
	if t.gen.modern {
		return rpc.Marshal(t.view(true, false))
	}
	return rpc.Marshal(map[string]any{"task": t.view(false, false)})
}

// view renders the task. modern picks the extension's field names (ttlMs,
// pollIntervalMs) over 2025-11-25's (ttl, pollInterval); detailed adds
// what the state carries: inputRequests, result or error (2026-07-28
// tasks/get and notifications; 2025-11-25 keeps those for tasks/result).
func (t *hostTask) view(modern, detailed bool) map[string]any {
	t.mu.Lock()
	defer t.mu.Unlock()
	v := map[string]any{
		"taskId":        t.id,
		"status":        t.status,
		"createdAt":     t.created.UTC().Format(timestampFmt),
		"lastUpdatedAt": t.updated.UTC().Format(timestampFmt),
	}
	if t.message != "" {
		v["statusMessage"] = t.message
	}
	if modern {
		v["ttlMs"], v["pollIntervalMs"] = t.ttl.Milliseconds(), taskPoll.Milliseconds()
	} else {
		v["ttl"], v["pollInterval"] = t.ttl.Milliseconds(), taskPoll.Milliseconds()
	}
	if !modern || !detailed {
		return v
	}
	switch t.status {
	case taskInputRequired:
		v["inputRequests"] = inputRequests(t.pending)
	case taskCompleted:
		v["result"] = t.result
	case taskFailed:
		e := map[string]any{"code": t.failure.Code, "message": t.failure.Message}
		if t.failure.Data != nil {
			e["data"] = t.failure.Data
		}
		v["error"] = e
	}
	return v
}

// taskChanged sends the task's new state to whoever follows it: the
// subscriptions/listen streams that named it (2026-07-28,
// notifications/tasks) or its session (2025-11-25,
// notifications/tasks/status).
func (s *Server) taskChanged(t *hostTask) {
	if t.sess != nil {
		params := t.view(false, false)
		t.sess.notify("notifications/tasks/status", params)
		return
	}
	for _, sess := range s.sessionList() {
		sess.taskChanged(t)
	}
}
