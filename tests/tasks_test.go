package tests

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// tasksMeta is a 2026-07-28 _meta declaring the Tasks extension and
// elicitation.
func tasksMeta() map[string]any {
	m := modernMeta()
	m["io.modelcontextprotocol/clientCapabilities"] = map[string]any{
		"elicitation": map[string]any{},
		"extensions":  map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}},
	}
	return m
}

// taskResult decodes a result object.
func taskResult(t *testing.T, r response) map[string]any {
	t.Helper()
	if r.Error != nil {
		t.Fatalf("request failed: %s", r.raw)
	}
	var m map[string]any
	if err := json.Unmarshal(r.Result, &m); err != nil {
		t.Fatalf("result: %v in %s", err, r.raw)
	}
	return m
}

// The real binary, over stdio, with the conformance provider: host-run
// tasks through cancel (followed on a subscriptions/listen stream) and
// input_required answered with tasks/update, a provider-kept task created
// after an input_required round, and the errors for a client without the
// extension.
func TestTasksLifecycleStdio(t *testing.T) {
	s := startServer(t, conformanceEnv(t))
	id := 0
	call := func(method string, p map[string]any) response {
		id++
		if _, ok := p["_meta"]; !ok {
			p["_meta"] = tasksMeta()
		}
		return s.call(id, method, p)
	}
	poll := func(taskID, want string) map[string]any {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			got := taskResult(t, call("tasks/get", map[string]any{"taskId": taskID}))
			st, _ := got["status"].(string)
			if st == want || st == "completed" || st == "failed" || st == "cancelled" || time.Now().After(deadline) {
				return got
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	// A long task, followed on a listen stream, then cancelled.
	created := taskResult(t, call("tools/call", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": 60, "label": "e2e"}}))
	long, _ := created["taskId"].(string)
	if created["resultType"] != "task" || long == "" {
		t.Fatalf("slow_compute did not create a task: %v", created)
	}
	s.sendJSON(map[string]any{"jsonrpc": "2.0", "id": "listen", "method": "subscriptions/listen",
		"params": map[string]any{"notifications": map[string]any{"taskIds": []string{long, "not-a-task"}}, "_meta": tasksMeta()}})
	ack := s.next(10 * time.Second)
	if !strings.Contains(ack, "notifications/subscriptions/acknowledged") || !strings.Contains(ack, `"taskIds":["`+long+`"]`) {
		t.Fatalf("listen acknowledgement = %s", ack)
	}
	if got := taskResult(t, call("tasks/cancel", map[string]any{"taskId": long})); got["resultType"] != "complete" || got["status"] != nil {
		t.Fatalf("cancel ack = %v", got)
	}
	if got := poll(long, "cancelled"); got["status"] != "cancelled" {
		t.Fatalf("after cancel: %v", got)
	}
	notified := false
	for _, l := range s.stray {
		if strings.Contains(l, `"method":"notifications/tasks"`) && strings.Contains(l, long) && strings.Contains(l, `"status":"cancelled"`) {
			notified = true
		}
	}
	if !notified {
		t.Errorf("no notifications/tasks cancelled on the listen stream; saw %q", s.stray)
	}
	s.sendJSON(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": map[string]any{"requestId": "listen"}})

	// A task that asks the user, answered through tasks/update.
	created = taskResult(t, call("tools/call", map[string]any{"name": "confirm_delete", "arguments": map[string]any{"filename": "a.txt"}}))
	ask := created["taskId"].(string)
	got := poll(ask, "input_required")
	reqs, _ := got["inputRequests"].(map[string]any)
	if got["status"] != "input_required" || len(reqs) != 1 {
		t.Fatalf("confirm_delete task = %v", got)
	}
	responses := map[string]any{}
	for k := range reqs {
		responses[k] = map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}
	}
	if ack := taskResult(t, call("tasks/update", map[string]any{"taskId": ask, "inputResponses": responses})); ack["resultType"] != "complete" {
		t.Fatalf("tasks/update ack = %v", ack)
	}
	got = poll(ask, "completed")
	if got["status"] != "completed" || !strings.Contains(compact(got["result"]), `action=accept`) {
		t.Fatalf("confirm_delete after update = %v", got)
	}

	// An input_required round, then a task the provider keeps itself.
	first := taskResult(t, call("tools/call", map[string]any{"name": "test_tool_with_task", "arguments": map[string]any{}}))
	if first["resultType"] != "input_required" || first["taskId"] != nil {
		t.Fatalf("round 1 = %v", first)
	}
	answers := map[string]any{}
	for k := range first["inputRequests"].(map[string]any) {
		answers[k] = map[string]any{"action": "accept", "content": map[string]any{"name": "Alice"}}
	}
	second := taskResult(t, call("tools/call", map[string]any{"name": "test_tool_with_task", "arguments": map[string]any{},
		"inputResponses": answers, "requestState": first["requestState"]}))
	kept, _ := second["taskId"].(string)
	if second["resultType"] != "task" || !strings.HasPrefix(kept, "kept-") || second["requestState"] != nil {
		t.Fatalf("round 2 = %v", second)
	}
	got = poll(kept, "completed")
	if got["status"] != "completed" || !strings.Contains(compact(got["result"]), "Hello, Alice!") {
		t.Fatalf("provider-kept task = %v", got)
	}

	// A client without the extension: no task methods, and a required-task
	// tool is refused with the capability to declare.
	plain := modernMeta()
	for _, tc := range []struct {
		method string
		params map[string]any
	}{
		{"tasks/get", map[string]any{"taskId": kept, "_meta": plain}},
		{"tools/call", map[string]any{"name": "failing_job", "arguments": map[string]any{}, "_meta": plain}},
	} {
		r := call(tc.method, tc.params)
		if r.Error == nil || r.Error.Code != -32021 || !strings.Contains(string(r.Error.Data), "io.modelcontextprotocol/tasks") {
			t.Errorf("%s without the extension = %s, want -32021 naming the extension", tc.method, r.raw)
		}
	}
	if r := call("tasks/get", map[string]any{"taskId": "no-such-task"}); r.Error == nil || r.Error.Code != -32602 {
		t.Errorf("unknown task = %s, want -32602", r.raw)
	}
}

// compact is v as JSON.
func compact(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// 2025-11-25 experimental tasks over stdio: a task-augmented call returns
// the task, the provider's question reaches the client as a request tied
// to the task, and tasks/result returns the call's own result.
func TestLegacyTasksStdio(t *testing.T) {
	s := startServer(t, conformanceEnv(t))
	init := s.call(0, "initialize", map[string]any{"protocolVersion": "2025-11-25",
		"capabilities": map[string]any{"elicitation": map[string]any{}, "tasks": map[string]any{}},
		"clientInfo":   map[string]any{"name": "legacy-tasks", "version": "1"}})
	if !strings.Contains(init.raw, `"tasks":{`) {
		t.Fatalf("initialize does not advertise tasks: %s", init.raw)
	}
	created := taskResult(t, s.call(1, "tools/call", map[string]any{"name": "confirm_delete",
		"arguments": map[string]any{"filename": "b.txt"}, "task": map[string]any{"ttl": 60000}}))
	task, _ := created["task"].(map[string]any)
	id, _ := task["taskId"].(string)
	if id == "" || task["status"] != "working" || task["ttl"] != float64(60000) {
		t.Fatalf("CreateTaskResult = %v", created)
	}
	// The question arrives as a server request carrying the task's id.
	var ask struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Meta map[string]map[string]string `json:"_meta"`
		} `json:"params"`
	}
	deadline := time.Now().Add(10 * time.Second)
	for ask.Method != "elicitation/create" {
		line := s.next(time.Until(deadline))
		if strings.Contains(line, `"method":"elicitation/create"`) {
			if err := json.Unmarshal([]byte(line), &ask); err != nil {
				t.Fatal(err)
			}
		}
	}
	if ask.Params.Meta["io.modelcontextprotocol/related-task"]["taskId"] != id {
		t.Fatalf("elicitation/create is not tied to task %s: %+v", id, ask.Params.Meta)
	}
	if got := taskResult(t, s.call(2, "tasks/get", map[string]any{"taskId": id})); got["status"] != "input_required" {
		t.Errorf("task while the question is out = %v", got)
	}
	s.sendJSON(map[string]any{"jsonrpc": "2.0", "id": ask.ID, "result": map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}})
	res := s.call(3, "tasks/result", map[string]any{"taskId": id})
	if res.Error != nil || !strings.Contains(res.raw, "action=accept") || !strings.Contains(res.raw, id) {
		t.Fatalf("tasks/result = %s", res.raw)
	}
	if r := s.call(4, "tasks/cancel", map[string]any{"taskId": id}); r.Error == nil || r.Error.Code != -32602 {
		t.Errorf("cancel of a completed 2025-11-25 task = %s, want -32602", r.raw)
	}
	if r := s.call(5, "tasks/list", map[string]any{}); !strings.Contains(r.raw, id) {
		t.Errorf("tasks/list = %s", r.raw)
	}
}
