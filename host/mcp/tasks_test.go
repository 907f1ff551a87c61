package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/fluxgit/fluxgit/host/catalog"
	"github.com/fluxgit/fluxgit/internal/wire"
)

// taskSpec is a tool file of the task test catalog.
func taskSpec(name, extra string) *fstest.MapFile {
	return &fstest.MapFile{Data: []byte(`name: ` + name + `
title: ` + name + `
description: A tool of the task tests.
provider: jobs
tier: free
result: plain
` + extra + `
annotations:
  readOnlyHint: true
inputSchema:
  type: object
  additionalProperties: false
  properties:
    ms: {type: integer, minimum: 0, description: How long the job runs.}
outputSchema:
  type: object
  description: What the job returned.
  properties:
    text: {type: string, description: The text.}
    error:
      type: object
      description: The tool error.
      properties:
        code: {type: integer, description: Code.}
        message: {type: string, description: Message.}
        data: {description: Details.}
`)}
}

// jobs is a provider whose tools behave by name: job.sleep sleeps ms,
// job.ask asks the client one question, job.fail fails with an internal
// error, job.toolerr returns a tool error, job.sync is never a task and
// job.kept answers with a task it keeps itself (GetTask, CancelTask).
type jobs struct {
	fixedDispatcher
	mu        sync.Mutex
	cancelled int                   // calls that ended by cancellation
	kept      map[string]*wire.Task // job.kept's tasks
	gets      int                   // GetTask calls
}

func (j *jobs) CallTool(ctx context.Context, _ string, c *wire.Call, _ bool, events wire.EventFunc) (*wire.Result, error) {
	var in struct {
		Ms int `json:"ms"`
	}
	_ = json.Unmarshal(c.Arguments, &in)
	text := func(s string) *wire.Result {
		return &wire.Result{Data: json.RawMessage(`{"text":` + string(asJSON(s)) + `}`), Text: s}
	}
	switch c.Tool {
	case "job.sleep", "job.sync":
		select {
		case <-time.After(time.Duration(in.Ms) * time.Millisecond):
			return text("slept"), nil
		case <-ctx.Done():
			j.mu.Lock()
			j.cancelled++
			j.mu.Unlock()
			return nil, ctx.Err()
		}
	case "job.ask":
		got := make(chan *wire.Answer, 1)
		events(wire.Event{Request: &wire.ClientRequest{ID: 7, Method: wire.MethodElicitation, Params: json.RawMessage(`{"message":"confirm?","requestedSchema":{"type":"object"}}`)}},
			func(_ context.Context, a *wire.Answer) error { got <- a; return nil })
		select {
		case a := <-got:
			if a.Failure != nil {
				return nil, a.Failure
			}
			return text("answer " + string(a.Result)), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	case "job.fail":
		return nil, errors.New("the job broke")
	case "job.toolerr":
		return &wire.Result{Error: &wire.ToolError{Code: 10000, Message: "job failed"}, Text: "job failed"}, nil
	case "job.kept":
		if !c.Meta.Tasks {
			return text("done at once"), nil
		}
		t := &wire.Task{ID: "kept-1", Status: taskWorking, Tool: "job.kept"}
		j.mu.Lock()
		j.kept = map[string]*wire.Task{t.ID: t}
		j.mu.Unlock()
		return &wire.Result{Task: t}, nil
	}
	return nil, &wire.Failure{Kind: wire.KindNotFound, Message: "unknown tool"}
}

func (j *jobs) GetTask(_ context.Context, _ string, req *wire.TaskRequest) (*wire.Task, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.gets++
	t, ok := j.kept[req.ID]
	if !ok {
		return nil, &wire.Failure{Kind: wire.KindNotFound, Message: "Task not found"}
	}
	out := *t
	return &out, nil
}

func (j *jobs) CancelTask(ctx context.Context, p string, req *wire.TaskRequest) (*wire.Task, error) {
	j.mu.Lock()
	if t, ok := j.kept[req.ID]; ok {
		t.Status = taskCancelled
	}
	j.mu.Unlock()
	return j.GetTask(ctx, p, req)
}

func (j *jobs) TaskKeepers() []string { return []string{"jobs"} }

func (j *jobs) complete(id string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	t := j.kept[id]
	t.Status = taskCompleted
	t.Result = &wire.Result{Data: json.RawMessage(`{"text":"kept done"}`), Text: "kept done"}
}

func asJSON(v any) []byte { b, _ := json.Marshal(v); return b }

// taskServer is a server over the task test catalog and a jobs provider.
func taskServer(t *testing.T) (*Server, *jobs, *memRecorder) {
	t.Helper()
	cat, err := catalog.Load(fstest.MapFS{
		"tools/job.sleep.yaml":   taskSpec("job.sleep", "taskSupport: optional"),
		"tools/job.ask.yaml":     taskSpec("job.ask", "taskSupport: optional"),
		"tools/job.fail.yaml":    taskSpec("job.fail", "taskSupport: optional"),
		"tools/job.toolerr.yaml": taskSpec("job.toolerr", "taskSupport: required"),
		"tools/job.sync.yaml":    taskSpec("job.sync", ""),
		"tools/job.kept.yaml":    taskSpec("job.kept", "taskSupport: optional\ntaskKeeper: provider"),
	})
	if err != nil {
		t.Fatal(err)
	}
	j := &jobs{}
	rec := &memRecorder{}
	s := New(Options{Catalog: cat, Providers: j, Name: "fluxgit", Version: "test", Recorder: rec})
	t.Cleanup(s.Close)
	return s, j, rec
}

// tasksMeta is a 2026-07-28 _meta that declares the Tasks extension (and
// elicitation) unless plain.
func tasksMeta(plain bool) map[string]any {
	caps := map[string]any{"elicitation": map[string]any{}}
	if !plain {
		caps["extensions"] = map[string]any{extTasks: map[string]any{}}
	}
	return modernWith(caps)
}

// rpcCall sends method and decodes the result object; the error is the
// *rpcError.
func rpcCall(t *testing.T, sess *Session, method string, p map[string]any) (map[string]any, *rpcError) {
	t.Helper()
	raw, err := send(t, sess, method, p)
	if err != nil {
		var re *rpcError
		if !errors.As(err, &re) {
			t.Fatalf("%s: %v", method, err)
		}
		return nil, re
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s: %v in %s", method, err, raw)
	}
	return m, nil
}

// poll calls tasks/get until the task reaches want (or a terminal state).
func poll(t *testing.T, sess *Session, id, want string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, re := rpcCall(t, sess, "tasks/get", map[string]any{"taskId": id, "_meta": tasksMeta(false)})
		if re != nil {
			t.Fatalf("tasks/get %s: %v", id, re)
		}
		st, _ := got["status"].(string)
		if st == want || terminal(st) || time.Now().After(deadline) {
			return got
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Every way a host-run task can end, as tasks/get reports it, and the
// audit record written when it ends.
func TestTaskStates(t *testing.T) {
	tests := []struct {
		tool    string
		args    map[string]any
		cancel  bool
		status  string
		isError bool
		code    float64 // error.code of a failed task
		outcome Outcome
	}{
		{tool: "job.sleep", args: map[string]any{"ms": 10}, status: taskCompleted, outcome: OutcomeSuccess},
		{tool: "job.toolerr", status: taskCompleted, isError: true, outcome: OutcomeError},
		{tool: "job.fail", status: taskFailed, code: codeInternal, outcome: OutcomeError},
		{tool: "job.sleep", args: map[string]any{"ms": 60000}, cancel: true, status: taskCancelled, outcome: OutcomeBlocked},
	}
	for _, tc := range tests {
		t.Run(tc.tool+"/"+tc.status, func(t *testing.T) {
			s, j, rec := taskServer(t)
			sess := s.NewSession()
			created, re := rpcCall(t, sess, "tools/call", map[string]any{"name": tc.tool, "arguments": tc.args, "_meta": tasksMeta(false)})
			if re != nil {
				t.Fatal(re)
			}
			id, _ := created["taskId"].(string)
			if created["resultType"] != "task" || id == "" || created["status"] != taskWorking {
				t.Fatalf("CreateTaskResult = %v", created)
			}
			for _, k := range []string{"result", "error", "inputRequests", "requestState", "ttl", "pollInterval"} {
				if _, ok := created[k]; ok {
					t.Errorf("CreateTaskResult carries %s: %v", k, created)
				}
			}
			if created["ttlMs"] != float64(taskTTL.Milliseconds()) || created["pollIntervalMs"] != float64(taskPoll.Milliseconds()) {
				t.Errorf("ttlMs/pollIntervalMs = %v/%v", created["ttlMs"], created["pollIntervalMs"])
			}
			if _, err := time.Parse(time.RFC3339, created["createdAt"].(string)); err != nil {
				t.Errorf("createdAt: %v", err)
			}
			if tc.cancel {
				ack, re := rpcCall(t, sess, "tasks/cancel", map[string]any{"taskId": id, "_meta": tasksMeta(false)})
				if re != nil || ack["resultType"] != "complete" || ack["status"] != nil {
					t.Fatalf("cancel ack = %v, %v", ack, re)
				}
			}
			got := poll(t, sess, id, tc.status)
			if got["status"] != tc.status || got["resultType"] != "complete" {
				t.Fatalf("tasks/get = %v, want status %s", got, tc.status)
			}
			res, hasResult := got["result"].(map[string]any)
			errObj, hasError := got["error"].(map[string]any)
			switch tc.status {
			case taskCompleted:
				if !hasResult || hasError || (res["isError"] == true) != tc.isError {
					t.Errorf("completed task = %v", got)
				}
			case taskFailed:
				if hasResult || !hasError || errObj["code"] != tc.code || errObj["message"] == "" {
					t.Errorf("failed task = %v", got)
				}
			case taskCancelled:
				if hasResult || hasError {
					t.Errorf("cancelled task = %v", got)
				}
				// The call is stopped, and a second cancel is the same ack.
				deadline := time.Now().Add(2 * time.Second)
				for j.cancelledCalls() == 0 && time.Now().Before(deadline) {
					time.Sleep(10 * time.Millisecond)
				}
				if j.cancelledCalls() != 1 {
					t.Errorf("provider call was not cancelled")
				}
				if ack, re := rpcCall(t, sess, "tasks/cancel", map[string]any{"taskId": id, "_meta": tasksMeta(false)}); re != nil || ack["resultType"] != "complete" {
					t.Errorf("cancel of a cancelled task = %v, %v", ack, re)
				}
			}
			deadline := time.Now().Add(2 * time.Second)
			for rec.count() == 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if rec.count() != 1 || rec.last().Outcome != tc.outcome || rec.last().Tool != tc.tool {
				t.Errorf("audit records = %+v, want one %s for %s", rec.recs, tc.outcome, tc.tool)
			}
		})
	}
}

func (j *jobs) cancelledCalls() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.cancelled
}

func (m *memRecorder) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.recs)
}

// The errors the extension names, and what a client without it gets.
func TestTaskErrors(t *testing.T) {
	s, _, _ := taskServer(t)
	sess := s.NewSession()
	created, re := rpcCall(t, sess, "tools/call", map[string]any{"name": "job.sleep", "arguments": map[string]any{"ms": 60000}, "_meta": tasksMeta(false)})
	if re != nil {
		t.Fatal(re)
	}
	live := created["taskId"].(string)
	tests := []struct {
		name   string
		method string
		params map[string]any
		code   int64
		want   string // in the message or data
	}{
		{"get without the extension", "tasks/get", map[string]any{"taskId": live, "_meta": tasksMeta(true)}, codeMissingCapability, extTasks},
		{"update without the extension", "tasks/update", map[string]any{"taskId": live, "inputResponses": map[string]any{}, "_meta": tasksMeta(true)}, codeMissingCapability, extTasks},
		{"cancel without the extension", "tasks/cancel", map[string]any{"taskId": live, "_meta": tasksMeta(true)}, codeMissingCapability, extTasks},
		{"listen for tasks without the extension", "subscriptions/listen", map[string]any{"notifications": map[string]any{"taskIds": []string{live}}, "_meta": tasksMeta(true)}, codeMissingCapability, extTasks},
		{"required task without the extension", "tools/call", map[string]any{"name": "job.toolerr", "arguments": map[string]any{}, "_meta": tasksMeta(true)}, codeMissingCapability, "runs only as a task"},
		{"unknown id", "tasks/get", map[string]any{"taskId": "no-such-task", "_meta": tasksMeta(false)}, codeInvalidParams, "no task"},
		{"unknown id on cancel", "tasks/cancel", map[string]any{"taskId": "no-such-task", "_meta": tasksMeta(false)}, codeInvalidParams, "no task"},
		{"missing id", "tasks/get", map[string]any{"_meta": tasksMeta(false)}, codeInvalidParams, "params.taskId"},
		{"inputResponses not an object", "tasks/update", map[string]any{"taskId": live, "inputResponses": []int{1}, "_meta": tasksMeta(false)}, codeInvalidParams, "inputResponses"},
		{"tasks/result is gone", "tasks/result", map[string]any{"taskId": live, "_meta": tasksMeta(false)}, codeMethodNotFound, "Method not found"},
		{"tasks/list is gone", "tasks/list", map[string]any{"_meta": tasksMeta(false)}, codeMethodNotFound, "Method not found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, re := rpcCall(t, sess, tc.method, tc.params)
			if re == nil || re.Code != tc.code {
				t.Fatalf("%s: error %v, want code %d", tc.method, re, tc.code)
			}
			if text := re.Message + string(asJSON(re.Data)); !strings.Contains(text, tc.want) {
				t.Errorf("error %s lacks %q", text, tc.want)
			}
		})
	}
	// A client without the extension gets today's result for an optional
	// task tool, and a task tool's required-capability data has the
	// extension's shape.
	res, re := rpcCall(t, sess, "tools/call", map[string]any{"name": "job.sleep", "arguments": map[string]any{"ms": 0}, "_meta": tasksMeta(true)})
	if re != nil || res["resultType"] != "complete" || res["taskId"] != nil || res["content"] == nil {
		t.Errorf("non-declaring tools/call = %v, %v", res, re)
	}
	// A declared sync tool is never promoted, even with a legacy task param.
	res, re = rpcCall(t, sess, "tools/call", map[string]any{"name": "job.sync", "arguments": map[string]any{}, "task": map[string]any{"ttl": 1000}, "_meta": tasksMeta(false)})
	if re != nil || res["resultType"] != "complete" || res["taskId"] != nil {
		t.Errorf("sync tool = %v, %v", res, re)
	}
	// Another authenticated agent cannot see the task.
	other := s.NewSession()
	other.SetAuthenticatedAgent("someone-else")
	if _, re := rpcCall(t, other, "tasks/get", map[string]any{"taskId": live, "_meta": tasksMeta(false)}); re == nil || re.Code != codeInvalidParams {
		t.Errorf("another agent's tasks/get = %v, want -32602", re)
	}
	if _, re := rpcCall(t, other, "tasks/cancel", map[string]any{"taskId": live, "_meta": tasksMeta(false)}); re == nil || re.Code != codeInvalidParams {
		t.Errorf("another agent's tasks/cancel = %v, want -32602", re)
	}
	if got := poll(t, sess, live, taskWorking); got["status"] != taskWorking {
		t.Errorf("the owner's task changed after the other agent's cancel: %v", got)
	}
}

// A question the provider asks turns the task input_required; tasks/update
// ignores keys not asked and resumes the task with the answer.
func TestTaskInputRequired(t *testing.T) {
	s, _, _ := taskServer(t)
	sess := s.NewSession()
	created, re := rpcCall(t, sess, "tools/call", map[string]any{"name": "job.ask", "arguments": map[string]any{}, "_meta": tasksMeta(false)})
	if re != nil {
		t.Fatal(re)
	}
	id := created["taskId"].(string)
	got := poll(t, sess, id, taskInputRequired)
	reqs, _ := got["inputRequests"].(map[string]any)
	if got["status"] != taskInputRequired || len(reqs) != 1 {
		t.Fatalf("tasks/get = %v", got)
	}
	var key string
	for k, v := range reqs {
		key = k
		if v.(map[string]any)["method"] != wire.MethodElicitation {
			t.Errorf("inputRequest = %v", v)
		}
	}
	steps := []struct {
		responses map[string]any
		status    string
	}{
		{map[string]any{"not-asked": map[string]any{"action": "accept"}}, taskInputRequired},
		{map[string]any{key: map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}}, taskCompleted},
	}
	for _, st := range steps {
		ack, re := rpcCall(t, sess, "tasks/update", map[string]any{"taskId": id, "inputResponses": st.responses, "_meta": tasksMeta(false)})
		if re != nil || ack["resultType"] != "complete" || ack["taskId"] != nil {
			t.Fatalf("tasks/update ack = %v, %v", ack, re)
		}
		if got = poll(t, sess, id, st.status); got["status"] != st.status {
			t.Fatalf("after update %v: %v, want %s", st.responses, got, st.status)
		}
	}
	text := string(asJSON(got["result"]))
	if !strings.Contains(text, `confirm`) {
		t.Errorf("result does not carry the answer: %s", text)
	}
	// A client that cannot answer gets the task failed with -32021.
	created, _ = rpcCall(t, sess, "tools/call", map[string]any{"name": "job.ask", "arguments": map[string]any{},
		"_meta": modernWith(map[string]any{"extensions": map[string]any{extTasks: map[string]any{}}})})
	got = poll(t, sess, created["taskId"].(string), taskFailed)
	if got["status"] != taskFailed || got["error"].(map[string]any)["code"] != float64(codeMissingCapability) {
		t.Errorf("task without elicitation = %v", got)
	}
}

// A provider-kept task: the CreateTaskResult carries the provider's id,
// tasks/get and tasks/cancel go to the provider, and a new server (a
// restarted host, no routing entry) still finds the task.
func TestProviderKeptTask(t *testing.T) {
	s, j, rec := taskServer(t)
	sess := s.NewSession()
	created, re := rpcCall(t, sess, "tools/call", map[string]any{"name": "job.kept", "arguments": map[string]any{}, "_meta": tasksMeta(false)})
	if re != nil || created["resultType"] != "task" || created["taskId"] != "kept-1" {
		t.Fatalf("CreateTaskResult = %v, %v", created, re)
	}
	if rec.count() != 1 || rec.last().Tool != "job.kept" || rec.last().Outcome != OutcomeSuccess {
		t.Errorf("the call that created a provider-kept task was not recorded: %+v", rec.recs)
	}
	if got := poll(t, sess, "kept-1", taskWorking); got["status"] != taskWorking {
		t.Fatalf("tasks/get = %v", got)
	}
	j.complete("kept-1")
	restarted := New(Options{Catalog: s.opts.Catalog, Providers: j, Name: "fluxgit", Version: "test"})
	defer restarted.Close()
	got := poll(t, restarted.NewSession(), "kept-1", taskCompleted)
	if got["status"] != taskCompleted || !strings.Contains(string(asJSON(got["result"])), "kept done") {
		t.Fatalf("tasks/get after restart = %v", got)
	}
	// Without the extension the same tool answers at once.
	res, re := rpcCall(t, sess, "tools/call", map[string]any{"name": "job.kept", "arguments": map[string]any{}, "_meta": tasksMeta(true)})
	if re != nil || res["resultType"] != "complete" || !strings.Contains(string(asJSON(res)), "done at once") {
		t.Errorf("non-declaring call = %v, %v", res, re)
	}
	if _, re := rpcCall(t, sess, "tasks/cancel", map[string]any{"taskId": "kept-1", "_meta": tasksMeta(false)}); re != nil {
		t.Errorf("tasks/cancel of a kept task: %v", re)
	}
	j.mu.Lock()
	st := j.kept["kept-1"].Status
	j.mu.Unlock()
	if st != taskCancelled {
		t.Errorf("the provider's CancelTask was not called (status %s)", st)
	}
}

// 2025-11-25 experimental tasks: execution.taskSupport in tools/list for
// a client that declared tasks (and only for it), the task under "task",
// tasks/result, tasks/list, and cancel's -32602 for a finished task;
// another session sees none of it.
func TestLegacyTasks(t *testing.T) {
	s, _, _ := taskServer(t)
	plain := s.NewSession()
	initializeAs(t, plain, V20251125, map[string]any{"name": "plain", "version": "1"})
	if list, _ := rpcCall(t, plain, "tools/list", map[string]any{}); strings.Contains(string(asJSON(list)), `"execution"`) {
		t.Errorf("a client without capabilities.tasks is shown execution: %v", list)
	}
	sess := s.NewSession()
	if _, err := send(t, sess, "initialize", map[string]any{"protocolVersion": V20251125,
		"capabilities": map[string]any{"tasks": map[string]any{}}, "clientInfo": map[string]any{"name": "legacy", "version": "1"}}); err != nil {
		t.Fatal(err)
	}
	list, _ := rpcCall(t, sess, "tools/list", map[string]any{})
	if !strings.Contains(string(asJSON(list)), `"execution":{"taskSupport":"optional"}`) {
		t.Errorf("tools/list lacks execution.taskSupport: %v", list)
	}
	init, _ := send(t, sess, "initialize", map[string]any{"protocolVersion": V20251125, "capabilities": map[string]any{}})
	if !strings.Contains(string(init), `"tasks":{`) || strings.Contains(string(init), `"extensions"`) {
		t.Errorf("2025-11-25 capabilities = %s", init)
	}
	created, re := rpcCall(t, sess, "tools/call", map[string]any{"name": "job.sleep", "arguments": map[string]any{"ms": 50}, "task": map[string]any{"ttl": 5000}})
	if re != nil {
		t.Fatal(re)
	}
	task, _ := created["task"].(map[string]any)
	id, _ := task["taskId"].(string)
	if id == "" || task["ttl"] != float64(5000) || task["status"] != taskWorking || created["resultType"] != nil {
		t.Fatalf("CreateTaskResult = %v", created)
	}
	res, re := rpcCall(t, sess, "tasks/result", map[string]any{"taskId": id})
	if re != nil || !strings.Contains(string(asJSON(res)), `"slept"`) || !strings.Contains(string(asJSON(res)), metaRelatedTask) {
		t.Fatalf("tasks/result = %v, %v", res, re)
	}
	listed, _ := rpcCall(t, sess, "tasks/list", map[string]any{})
	if !strings.Contains(string(asJSON(listed)), id) {
		t.Errorf("tasks/list = %v", listed)
	}
	if _, re := rpcCall(t, sess, "tasks/cancel", map[string]any{"taskId": id}); re == nil || re.Code != codeInvalidParams {
		t.Errorf("cancel of a completed task = %v, want -32602", re)
	}
	other := s.NewSession()
	initializeAs(t, other, V20251125, map[string]any{"name": "legacy", "version": "1"})
	if _, re := rpcCall(t, other, "tasks/get", map[string]any{"taskId": id}); re == nil || re.Code != codeInvalidParams {
		t.Errorf("another session's tasks/get = %v, want -32602", re)
	}
	// Without params.task a required tool is refused, as 2025-11-25 says.
	if _, re := rpcCall(t, sess, "tools/call", map[string]any{"name": "job.toolerr", "arguments": map[string]any{}}); re == nil || re.Code != codeMethodNotFound {
		t.Errorf("required task tool without params.task = %v, want -32601", re)
	}
	// Older sessions have no task methods.
	old := s.NewSession()
	initializeAs(t, old, V20250618, nil)
	if _, re := rpcCall(t, old, "tasks/get", map[string]any{"taskId": id}); re == nil || re.Code != codeMethodNotFound {
		t.Errorf("2025-06-18 tasks/get = %v, want -32601", re)
	}
}

// The table forgets (and cancels) tasks past their TTL and refuses a
// task over maxTasks live ones.
func TestTaskTableLimits(t *testing.T) {
	tests := []struct {
		name    string
		age     time.Duration // of the tasks already held
		held    int
		wantErr bool
		wantLen int
	}{
		{"room left", 0, 3, false, 4},
		{"full of live tasks", 0, maxTasks, true, maxTasks},
		{"full of expired tasks", 2 * taskTTL, maxTasks, false, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tt := &taskTable{tasks: map[string]*hostTask{}}
			cancelled := 0
			for i := 0; i < tc.held; i++ {
				id := newToken()
				tt.tasks[id] = &hostTask{id: id, created: time.Now().Add(-tc.age), ttl: taskTTL, cancel: func() { cancelled++ }}
			}
			err := tt.add(&hostTask{id: "new", created: time.Now(), ttl: taskTTL})
			var re *rpcError
			if (err != nil) != tc.wantErr || (err != nil && (!errors.As(err, &re) || re.Code != codeInternal)) {
				t.Fatalf("add = %v, want error %v", err, tc.wantErr)
			}
			if len(tt.tasks) != tc.wantLen {
				t.Errorf("table holds %d, want %d", len(tt.tasks), tc.wantLen)
			}
			if tc.age > 0 && cancelled != tc.held {
				t.Errorf("%d expired tasks cancelled, want %d", cancelled, tc.held)
			}
		})
	}
	tt := &taskTable{tasks: map[string]*hostTask{"old": {id: "old", created: time.Now().Add(-2 * time.Second), ttl: time.Second}}}
	if tt.get("old") != nil || len(tt.tasks) != 0 {
		t.Errorf("get returned an expired task")
	}
}
