package tests

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Issue 26: an agent host waiting for a person's decision is told when it
// happens. Over the real `fluxgit serve --transport http` and a real
// gateway, a 2026-07-28 client (raw JSON-RPC: no SDK speaks the Tasks
// extension yet) proposes a merge, gets the task named by the previewId,
// opens subscriptions/listen for it, and the person decides on their
// terminal: the stream receives notifications/tasks with the outcome.
func TestProposalTaskFollowedHTTP(t *testing.T) {
	g := startGateway(t, loopEnv(t))
	s := startHTTP(t, g.mcpEnv())
	caps := map[string]any{
		// Form-only elicitation: the call answers with the task at once.
		"elicitation": map[string]any{},
		"extensions":  map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}},
	}
	meta := func() map[string]any {
		m := modernMeta()
		m["io.modelcontextprotocol/clientCapabilities"] = caps
		return m
	}
	tests := []struct {
		name   string
		verb   string
		flags  []string
		status string
		check  func(t *testing.T, repo string, task map[string]any)
	}{
		{"approve", "approve", nil, "completed", func(t *testing.T, repo string, task map[string]any) {
			res, _ := task["result"].(map[string]any)
			sc, _ := res["structuredContent"].(map[string]any)
			data, _ := sc["data"].(map[string]any)
			out, _ := data["result"].(map[string]any)
			if head := revParse(t, repo, "main"); out["mergeCommit"] != head {
				t.Fatalf("notified mergeCommit %v, main is %s: %s", out["mergeCommit"], head, jsonOf(task))
			}
		}},
		{"reject", "reject", []string{"--reason", "Not before the release."}, "failed", func(t *testing.T, repo string, task map[string]any) {
			if e, _ := task["error"].(map[string]any); !strings.Contains(jsonOf(e), "Not before the release.") {
				t.Fatalf("notified failure lacks the person's reason: %s", jsonOf(task))
			}
			if revParse(t, repo, "main") == revParse(t, repo, "feature") {
				t.Fatal("a rejected merge changed main")
			}
		}},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			repo := e2eRepo(t)
			body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 10 + i, "method": "tools/call",
				"params": map[string]any{"name": "operation.preview.merge", "arguments": mergeArgs(repo), "_meta": meta()}})
			resp, raw := post(t, s.url, body, modernHeaders("tools/call", "operation.preview.merge"))
			task := sseResult(t, resp, raw)
			id, _ := task["taskId"].(string)
			if task["resultType"] != "task" || id == "" || task["status"] != "working" {
				t.Fatalf("want a working task, got %s", jsonOf(task))
			}

			events := followTask(t, s.url, id, meta())
			ack := nextEvent(t, events)
			if ack["method"] != "notifications/subscriptions/acknowledged" || !strings.Contains(jsonOf(ack), `"taskIds":["`+id+`"]`) {
				t.Fatalf("listen acknowledgement: %s", jsonOf(ack))
			}
			g.decide(t, tc.verb, id, tc.flags...)
			// Working states with a new message may come first (approved,
			// executing); the terminal one ends the wait.
			for {
				ev := nextEvent(t, events)
				p, _ := ev["params"].(map[string]any)
				if ev["method"] != "notifications/tasks" || p["taskId"] != id {
					t.Fatalf("unexpected message on the listen stream: %s", jsonOf(ev))
				}
				if p["status"] == "working" {
					continue
				}
				if p["status"] != tc.status {
					t.Fatalf("notified %s, want %s: %s", p["status"], tc.status, jsonOf(p))
				}
				tc.check(t, repo, p)
				break
			}
		})
	}
}

// sseResult decodes the result of a POST answered as JSON or as an SSE
// stream.
func sseResult(t *testing.T, resp *http.Response, raw []byte) map[string]any {
	t.Helper()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("HTTP %d: %s", resp.StatusCode, raw)
	}
	msgs := [][]byte{raw}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		msgs = nil
		for _, l := range bytes.Split(raw, []byte("\n")) {
			if d, ok := bytes.CutPrefix(l, []byte("data:")); ok {
				msgs = append(msgs, bytes.TrimSpace(d))
			}
		}
	}
	for _, m := range msgs {
		var r struct {
			Result map[string]any  `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(m, &r) != nil {
			continue
		}
		if r.Error != nil {
			t.Fatalf("JSON-RPC error: %s", m)
		}
		if r.Result != nil {
			return r.Result
		}
	}
	t.Fatalf("no result in %s", raw)
	return nil
}

// followTask opens subscriptions/listen for task id and delivers the
// stream's messages; the stream ends with the test.
func followTask(t *testing.T, url, id string, meta map[string]any) <-chan map[string]any {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "follow-" + id, "method": "subscriptions/listen",
		"params": map[string]any{"notifications": map[string]any{"taskIds": []string{id}}, "_meta": meta}})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range modernHeaders("subscriptions/listen", "") {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		t.Fatalf("listen: HTTP %d", resp.StatusCode)
	}
	events := make(chan map[string]any, 16)
	go func() {
		defer resp.Body.Close()
		defer close(events)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
		for sc.Scan() {
			d, ok := strings.CutPrefix(sc.Text(), "data:")
			if !ok {
				continue
			}
			var m map[string]any
			if json.Unmarshal([]byte(strings.TrimSpace(d)), &m) == nil {
				events <- m
			}
		}
	}()
	return events
}

// nextEvent waits for the next message of a listen stream.
func nextEvent(t *testing.T, events <-chan map[string]any) map[string]any {
	t.Helper()
	select {
	case ev, ok := <-events:
		if !ok {
			t.Fatal("the listen stream ended")
		}
		return ev
	case <-time.After(30 * time.Second):
		t.Fatal("nothing on the listen stream within 30s")
	}
	return nil
}
