package mcp

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/fluxgit/fluxgit/internal/wire"
)

// noteStream is a session's transport that keeps the notifications the
// session routes (it is a Router), for the follow tests.
type noteStream struct{ notes chan note }

type note struct {
	related *jsonrpc2.ID
	method  string
	params  map[string]any
}

func (n *noteStream) WriteObject(any) error { return nil }
func (n *noteStream) ReadObject(any) error  { return io.EOF }
func (n *noteStream) Close() error          { return nil }
func (n *noteStream) RelateOutgoing(_, _ jsonrpc2.ID) {
}
func (n *noteStream) NotifyRelated(related *jsonrpc2.ID, method string, params any) error {
	var m map[string]any
	_ = json.Unmarshal(asJSON(params), &m)
	n.notes <- note{related, method, m}
	return nil
}

// noted gives sess a noteStream.
func noted(sess *Session) *noteStream {
	ns := &noteStream{notes: make(chan note, 64)}
	sess.stream = ns
	return ns
}

// next waits for the next notification.
func (n *noteStream) next(t *testing.T) note {
	t.Helper()
	select {
	case got := <-n.notes:
		return got
	case <-time.After(5 * time.Second):
		t.Fatal("no notification within 5s")
		return note{}
	}
}

// quiet asserts nothing more is sent for a while.
func (n *noteStream) quiet(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case got := <-n.notes:
		t.Fatalf("unexpected %s: %v", got.method, got.params)
	case <-time.After(d):
	}
}

// set changes a kept task at the provider, as a person's decision does
// at the gateway.
func (j *jobs) set(id, status, msg string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	t := j.kept[id]
	t.Status, t.StatusMessage = status, msg
	if status == taskCompleted {
		t.Result = &wire.Result{Data: json.RawMessage(`{"text":"kept done"}`), Text: "kept done"}
	}
}

func (j *jobs) getCalls() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.gets
}

// listenFor opens a 2026-07-28 subscriptions/listen on sess naming ids
// and returns the acknowledged taskIds and the function that ends the
// stream (and waits for it to end).
func listenFor(t *testing.T, sess *Session, ns *noteStream, ids ...string) ([]string, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	raw := json.RawMessage(asJSON(map[string]any{"notifications": map[string]any{"taskIds": ids}, "_meta": tasksMeta(false)}))
	ended := make(chan error, 1)
	go func() {
		_, err := sess.dispatch(ctx, &jsonrpc2.Request{Method: "subscriptions/listen", Params: &raw, ID: jsonrpc2.ID{Str: "L", IsString: true}})
		ended <- err
	}()
	ack := ns.next(t)
	if ack.method != "notifications/subscriptions/acknowledged" {
		cancel()
		t.Fatalf("first notification %s, want the acknowledgement: %v", ack.method, ack.params)
	}
	var got []string
	n, _ := ack.params["notifications"].(map[string]any)
	for _, v := range n["taskIds"].([]any) {
		got = append(got, v.(string))
	}
	return got, func() {
		cancel()
		select {
		case <-ended:
		case <-time.After(5 * time.Second):
			t.Fatal("the listen did not end")
		}
	}
}

// stable waits until GetTask calls stop increasing, and fails if they
// do not.
func stable(t *testing.T, j *jobs, every time.Duration) {
	t.Helper()
	time.Sleep(2 * every)
	before := j.getCalls()
	time.Sleep(10 * every)
	if after := j.getCalls(); after != before {
		t.Fatalf("GetTask still called: %d, then %d", before, after)
	}
}

// A listen stream follows a provider-kept task: one notifications/tasks
// per change the provider reports (status or status message), tagged with
// the subscription, and the poller stops after the terminal one; a caller
// who may not see the task is not acknowledged; ending the stream stops
// the poller; a task that ended before the stream opened is sent once.
func TestFollowProviderKeptTask(t *testing.T) {
	const every = 20 * time.Millisecond
	start := func(t *testing.T) (*Server, *jobs) {
		s, j, _ := taskServer(t)
		s.kept.every = every
		if created, re := rpcCall(t, s.NewSession(), "tools/call", map[string]any{"name": "job.kept", "arguments": map[string]any{}, "_meta": tasksMeta(false)}); re != nil || created["taskId"] != "kept-1" {
			t.Fatalf("CreateTaskResult = %v, %v", created, re)
		}
		return s, j
	}

	t.Run("to the end", func(t *testing.T) {
		s, j := start(t)
		sess := s.NewSession()
		ns := noted(sess)
		acked, end := listenFor(t, sess, ns, "kept-1", "no-such-task")
		defer end()
		if len(acked) != 1 || acked[0] != "kept-1" || s.keptPollers() != 1 {
			t.Fatalf("acknowledged %v with %d pollers, want [kept-1] and one", acked, s.keptPollers())
		}
		ns.quiet(t, 5*every) // nothing changed yet
		steps := []struct{ status, msg string }{
			{taskWorking, "approved by the person"},
			{taskWorking, "running"},
			{taskCompleted, ""},
		}
		for _, st := range steps {
			j.set("kept-1", st.status, st.msg)
			got := ns.next(t)
			meta, _ := got.params["_meta"].(map[string]any)
			if got.method != "notifications/tasks" || got.related == nil || got.related.Str != "L" || meta[metaSubscriptionID] != `L` {
				t.Fatalf("notification %s related %v, _meta %v", got.method, got.related, meta)
			}
			if got.params["taskId"] != "kept-1" || got.params["status"] != st.status || (st.msg != "" && got.params["statusMessage"] != st.msg) {
				t.Fatalf("after %s/%q: %v", st.status, st.msg, got.params)
			}
			if st.status == taskCompleted && !strings.Contains(string(asJSON(got.params["result"])), "kept done") {
				t.Fatalf("completed without the result: %v", got.params)
			}
		}
		stable(t, j, every)
		if n := s.keptPollers(); n != 0 {
			t.Fatalf("%d pollers after the terminal state", n)
		}
		ns.quiet(t, 3*every)
	})

	t.Run("not visible", func(t *testing.T) {
		s, j := start(t)
		other := s.NewSession()
		other.SetAuthenticatedAgent("someone-else")
		ns := noted(other)
		acked, end := listenFor(t, other, ns, "kept-1")
		defer end()
		if len(acked) != 0 || s.keptPollers() != 0 {
			t.Fatalf("another agent's listen acknowledged %v (%d pollers)", acked, s.keptPollers())
		}
		j.set("kept-1", taskCompleted, "")
		ns.quiet(t, 5*every)
	})

	t.Run("stream ends", func(t *testing.T) {
		s, j := start(t)
		sess := s.NewSession()
		ns := noted(sess)
		// Two streams share one poller; it stops with the last.
		acked, end := listenFor(t, sess, ns, "kept-1")
		sess2 := s.NewSession()
		acked2, end2 := listenFor(t, sess2, noted(sess2), "kept-1")
		if len(acked) != 1 || len(acked2) != 1 || s.keptPollers() != 1 {
			t.Fatalf("acknowledged %v and %v with %d pollers", acked, acked2, s.keptPollers())
		}
		end()
		time.Sleep(3 * every)
		if before := j.getCalls(); s.keptPollers() != 1 || func() bool { time.Sleep(5 * every); return j.getCalls() == before }() {
			t.Fatal("the poller stopped while a stream still follows the task")
		}
		end2()
		if n := s.keptPollers(); n != 0 {
			t.Fatalf("%d pollers after both streams ended", n)
		}
		stable(t, j, every)
	})

	t.Run("already ended", func(t *testing.T) {
		s, j := start(t)
		j.set("kept-1", taskCompleted, "")
		sess := s.NewSession()
		ns := noted(sess)
		acked, end := listenFor(t, sess, ns, "kept-1")
		defer end()
		if got := ns.next(t); len(acked) != 1 || got.method != "notifications/tasks" || got.params["status"] != taskCompleted {
			t.Fatalf("acknowledged %v, then %s %v", acked, got.method, got.params)
		}
		if s.keptPollers() != 0 {
			t.Fatal("a poller for a task that had ended")
		}
		ns.quiet(t, 5*every)
	})

	t.Run("over the bound", func(t *testing.T) {
		s, _ := start(t)
		s.kept.mu.Lock()
		for i := 0; i < maxKeptPollers; i++ {
			s.kept.pollers[followKey{id: newToken(), modern: true}] = &keptPoller{stop: make(chan struct{})}
		}
		s.kept.mu.Unlock()
		sess := s.NewSession()
		acked, end := listenFor(t, sess, noted(sess), "kept-1")
		defer end()
		if len(acked) != 0 || s.keptPollers() != maxKeptPollers {
			t.Fatalf("over %d pollers: acknowledged %v, %d pollers", maxKeptPollers, acked, s.keptPollers())
		}
	})
}

// A 2025-11-25 session that created a provider-kept task gets
// notifications/tasks/status for it, as for the tasks the host runs, until
// it ends; the session's end stops the poller.
func TestFollowProviderKeptTaskLegacy(t *testing.T) {
	const every = 20 * time.Millisecond
	tests := []struct {
		name   string
		finish bool // the task completes; otherwise the session ends first
	}{{"completes", true}, {"session ends", false}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, j, _ := taskServer(t)
			s.kept.every = every
			sess := s.NewSession()
			ns := noted(sess)
			if _, err := send(t, sess, "initialize", map[string]any{"protocolVersion": V20251125,
				"capabilities": map[string]any{"tasks": map[string]any{}}, "clientInfo": map[string]any{"name": "legacy", "version": "1"}}); err != nil {
				t.Fatal(err)
			}
			created, re := rpcCall(t, sess, "tools/call", map[string]any{"name": "job.kept", "arguments": map[string]any{}, "task": map[string]any{"ttl": 60000}})
			if re != nil || !strings.Contains(string(asJSON(created)), `"kept-1"`) || s.keptPollers() != 1 {
				t.Fatalf("CreateTaskResult = %v, %v (%d pollers)", created, re, s.keptPollers())
			}
			if !tc.finish {
				s.removeSession(sess)
				if s.keptPollers() != 0 {
					t.Fatal("the poller outlived its session")
				}
				stable(t, j, every)
				return
			}
			j.set("kept-1", taskCompleted, "")
			got := ns.next(t)
			if got.method != "notifications/tasks/status" || got.related != nil || got.params["taskId"] != "kept-1" || got.params["status"] != taskCompleted {
				t.Fatalf("notification %s %v", got.method, got.params)
			}
			if _, ok := got.params["pollInterval"]; !ok {
				t.Errorf("not the 2025-11-25 shape: %v", got.params)
			}
			stable(t, j, every)
			if s.keptPollers() != 0 {
				t.Fatal("a poller after the terminal state")
			}
		})
	}
}
