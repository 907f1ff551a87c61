package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"
)

// nextRaw returns the next line the server wrote, undecoded.
func (p *pipeServer) nextRaw() []byte {
	p.t.Helper()
	select {
	case line, ok := <-p.lines:
		if !ok {
			p.t.Fatal("server closed its output")
		}
		return line
	case <-time.After(time.Minute): // a hang guard, not a timing assertion
		p.t.Fatal("nothing written within a minute")
	}
	return nil
}

// outgoingRequest reads the request the server sent the client and returns
// its id.
func (p *pipeServer) outgoingRequest(method string) uint64 {
	p.t.Helper()
	line := p.nextRaw()
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(line, &m); err != nil {
		p.t.Fatalf("server wrote %s: %v", line, err)
	}
	id, ok := outgoingIDOf(m.ID)
	if m.JSONRPC != "2.0" || m.Method != method || !ok || string(m.Params) != `{"maxTokens":5}` {
		p.t.Fatalf("not the %s request with an integer id: %s", method, line)
	}
	return id
}

// alive checks that the connection still serves requests.
func (p *pipeServer) alive(n int) {
	p.t.Helper()
	id := strconv.Itoa(1000 + n)
	p.send(req(id, "still-alive") + "\n")
	p.expect(want{ID: id, Method: "still-alive"})
}

type callOutcome struct {
	id     jsonrpc2.ID
	result json.RawMessage
	err    error
}

// TestPipeCallToClient runs server-initiated calls (sampling/createMessage)
// over a real jsonrpc2.Conn on a Stream wired to pipes, the "client" side
// answering by hand.
func TestPipeCallToClient(t *testing.T) {
	const answer = `{"role":"assistant","content":{"type":"text","text":"ok"},"model":"m"}`
	result := func(id uint64, res string) string {
		return `{"jsonrpc":"2.0","id":` + strconv.FormatUint(id, 10) + `,"result":` + res + `}` + "\n"
	}
	tests := []struct {
		name    string
		answers func(id uint64) []string // what the client writes, in order
		cancel  bool                     // abandon the call after the answers
		result  string                   // the result Call decodes
		code    int64                    // or the *jsonrpc2.Error it returns
		message string
		data    string // the error's data, exactly
	}{
		{name: "result", answers: func(id uint64) []string { return []string{result(id, answer)} }, result: answer},
		{name: "null result", answers: func(id uint64) []string { return []string{result(id, "null")} }, result: "null"},
		{name: "error", answers: func(id uint64) []string {
			return []string{`{"jsonrpc":"2.0","id":` + strconv.FormatUint(id, 10) + `,"error":{"code":-1,"message":"User rejected sampling request","data":{"reason":"declined"}}}` + "\n"}
		}, code: -1, message: "User rejected sampling request", data: `{"reason":"declined"}`},
		{name: "forged ids first", answers: func(id uint64) []string {
			return []string{
				result(id+1, `"forged: next id"`),
				`{"jsonrpc":"2.0","id":"` + strconv.FormatUint(id, 10) + `","result":"forged: string id"}` + "\n",
				`{"jsonrpc":"2.0","id":` + strconv.FormatUint(id, 10) + `.0,"result":"forged: fractional id"}` + "\n",
				`{"jsonrpc":"2.0","id":null,"result":"forged: null id"}` + "\n",
				result(id, `"genuine"`),
			}
		}, result: `"genuine"`},
		{name: "result and error", answers: func(id uint64) []string {
			return []string{`{"jsonrpc":"2.0","id":` + strconv.FormatUint(id, 10) + `,"result":{},"error":{"code":1,"message":"x"}}` + "\n"}
		}, code: invalidReq, message: InvalidResponseMessage, data: `{"details":"the response to request 1 is malformed: a response must contain exactly one of \"result\" and \"error\", not both"}`},
		{name: "answered twice", answers: func(id uint64) []string {
			return []string{result(id, `"first"`), result(id, `"second"`)}
		}, result: `"first"`},
		{name: "error code not an integer", answers: func(id uint64) []string {
			return []string{`{"jsonrpc":"2.0","id":` + strconv.FormatUint(id, 10) + `,"error":{"code":"E1","message":"x"}}` + "\n"}
		}, code: invalidReq, message: InvalidResponseMessage, data: `{"details":"the response to request 1 is malformed: \"error.code\" must be an integer of at most 64 bits, got \"E1\""}`},
		{name: "result jsonrpc2 cannot decode", answers: func(id uint64) []string { return []string{result(id, `[1e400]`)} },
			code: invalidReq, message: InvalidResponseMessage},
		{name: "abandoned, then answered late", answers: func(uint64) []string { return nil }, cancel: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newPipeServer(t, nil)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan callOutcome, 1)
			go func() {
				var res json.RawMessage
				id, err := p.stream.Call(ctx, p.conn, "sampling/createMessage", map[string]int{"maxTokens": 5}, &res)
				done <- callOutcome{id, res, err}
			}()
			id := p.outgoingRequest("sampling/createMessage")
			if id != 1 {
				t.Errorf("first call of a stream has id %d, want 1", id)
			}
			for _, a := range tc.answers(id) {
				p.send(a)
			}
			if tc.cancel {
				cancel()
			}
			var got callOutcome
			select {
			case got = <-done:
			case <-time.After(time.Minute): // a hang guard, not a timing assertion
				t.Fatal("Call did not return")
			}
			if got.id != (jsonrpc2.ID{Num: id}) {
				t.Errorf("Call returned id %v, the request had %d", got.id, id)
			}
			switch {
			case tc.cancel:
				if !errors.Is(got.err, context.Canceled) {
					t.Errorf("abandoned call: %v", got.err)
				}
				p.send(result(id, `"late"`)) // dropped: nothing awaits it
			case tc.code != 0:
				var rpcErr *jsonrpc2.Error
				if !errors.As(got.err, &rpcErr) {
					t.Fatalf("want a *jsonrpc2.Error, got %v", got.err)
				}
				if rpcErr.Code != tc.code || rpcErr.Message != tc.message {
					t.Errorf("error %d %q, want %d %q", rpcErr.Code, rpcErr.Message, tc.code, tc.message)
				}
				if tc.data != "" && (rpcErr.Data == nil || string(*rpcErr.Data) != tc.data) {
					t.Errorf("error data %s, want %s", rawString(rpcErr.Data), tc.data)
				}
				if !strings.Contains(got.err.Error(), "sampling/createMessage (request 1)") {
					t.Errorf("error lacks context: %v", got.err)
				}
			default:
				if got.err != nil || string(got.result) != tc.result {
					t.Errorf("Call = %s, %v; want %s", got.result, got.err, tc.result)
				}
			}
			// Repeats, forgeries and late answers were dropped without a
			// reply, and the connection still serves requests and calls.
			p.alive(0)
			if n := p.stream.env.out.len(); n != 0 {
				t.Errorf("%d ids still awaited", n)
			}
			go func() {
				var res json.RawMessage
				id, err := p.stream.Call(context.Background(), p.conn, "sampling/createMessage", map[string]int{"maxTokens": 5}, &res)
				done <- callOutcome{id, res, err}
			}()
			id2 := p.outgoingRequest("sampling/createMessage")
			p.send(result(id2, `"again"`))
			if got := <-done; got.err != nil || string(got.result) != `"again"` || id2 != 2 {
				t.Errorf("second call (id %d): %s, %v", id2, got.result, got.err)
			}
			p.alive(1)
		})
	}
}

func rawString(r *json.RawMessage) string {
	if r == nil {
		return "<nil>"
	}
	return string(*r)
}

// TestPipeConnNumberedCall: a call jsonrpc2 numbers itself (conn.Call) is
// matched too, and ForgetOutgoing drops a late answer to an abandoned one.
func TestPipeConnNumberedCall(t *testing.T) {
	p := newPipeServer(t, nil)
	done := make(chan error, 1)
	var res string
	go func() {
		done <- p.conn.Call(context.Background(), "elicitation/create", map[string]int{"maxTokens": 5}, &res)
	}()
	id := p.outgoingRequest("elicitation/create")
	p.send(`{"jsonrpc":"2.0","id":` + strconv.FormatUint(id, 10) + `,"result":"accepted"}` + "\n")
	if err := <-done; err != nil || res != "accepted" {
		t.Fatalf("conn.Call = %q, %v", res, err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	go func() { done <- p.conn.Call(ctx, "elicitation/create", map[string]int{"maxTokens": 5}, &res) }()
	id = p.outgoingRequest("elicitation/create")
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("abandoned conn.Call: %v", err)
	}
	p.stream.ForgetOutgoing(jsonrpc2.ID{Num: id})
	if n := p.stream.env.out.len(); n != 0 {
		t.Errorf("%d ids awaited after ForgetOutgoing", n)
	}
	p.send(`{"jsonrpc":"2.0","id":` + strconv.FormatUint(id, 10) + `,"result":"late"}` + "\n")
	p.alive(0)
}

// TestResponsesReachConn counts what jsonrpc2 receives for the fuzz seeds
// that answer the server's own requests.
func TestResponsesReachConn(t *testing.T) {
	tests := []struct {
		name      string
		input     string
		responses int
	}{
		{"good, repeated, string id, malformed", req("1", "ask") + "\n" + `{"jsonrpc":"2.0","id":0,"result":{"a":1}}` + "\n" + `{"jsonrpc":"2.0","id":0,"result":2}` + "\n" +
			req("2", "ask") + "\n" + `{"jsonrpc":"2.0","id":"1","result":{}}` + "\n" + `{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"x"}}` + "\n", 2},
		{"undecodable data, bad code, unknown id", req("1", "ask") + "\n" + req("2", "ask") + "\n" + `{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"no","data":[1e400]}}` + "\n" +
			`{"jsonrpc":"2.0","id":0,"error":{"code":1.5,"message":"x"}}` + "\n" + `{"id":7,"result":null}` + "\n", 2},
		{"answer before the question", `{"jsonrpc":"2.0","id":0,"result":1}` + "\n" + req("1", "ask") + "\n", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			s := NewStream(strings.NewReader(tc.input), &out, WithLogger(nil))
			h := &echoHandler{stream: s}
			conn := jsonrpc2.NewConn(context.Background(), s, h, quietConn, jsonrpc2.OnRecv(h.onRecv))
			<-conn.DisconnectNotify()
			h.mu.Lock()
			defer h.mu.Unlock()
			if h.responses != tc.responses || h.stray != 0 {
				t.Errorf("jsonrpc2 received %d responses (%d stray), want %d; output:\n%s", h.responses, h.stray, tc.responses, out.String())
			}
			checkOutput(t, []byte(out.String()), DefaultMaxFrameSize)
		})
	}
}
