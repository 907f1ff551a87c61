package rpc

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"
)

// pipeServer is a Stream under jsonrpc2.NewConn with an AsyncHandler, spoken
// to over io.Pipe as an MCP client would over stdio.
type pipeServer struct {
	t      *testing.T
	in     *io.PipeWriter // client → server
	lines  chan []byte    // server → client, one message per line
	conn   *jsonrpc2.Conn
	stream *Stream
}

func newPipeServer(t *testing.T, h func(s *Stream) jsonrpc2.Handler, opts ...Option) *pipeServer {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	opts = append([]Option{WithLogger(nil)}, opts...)
	stream := NewStream(inR, outW, opts...)
	if h == nil {
		h = func(s *Stream) jsonrpc2.Handler { return jsonrpc2.AsyncHandler(&echoHandler{stream: s}) }
	}
	conn := jsonrpc2.NewConn(context.Background(), stream, h(stream), quietConn)
	p := &pipeServer{t: t, in: inW, lines: make(chan []byte, 64), conn: conn, stream: stream}
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<16), 16<<20)
		for sc.Scan() {
			p.lines <- append([]byte(nil), sc.Bytes()...)
		}
	}()
	t.Cleanup(func() {
		_ = inW.Close()
		_ = conn.Close()
		_ = outR.Close()
	})
	return p
}

func (p *pipeServer) send(s string) {
	p.t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := io.WriteString(p.in, s)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			p.t.Fatalf("write: %v", err)
		}
	case <-time.After(time.Minute): // a hang guard, not a timing assertion
		p.t.Fatalf("server stopped reading")
	}
}

// next returns the next message the server wrote.
func (p *pipeServer) next() reply {
	p.t.Helper()
	select {
	case line, ok := <-p.lines:
		if !ok {
			p.t.Fatal("server closed its output")
		}
		rs := parseReplies(p.t, append(line, '\n'))
		return rs[0]
	case <-time.After(time.Minute): // a hang guard, not a timing assertion
		p.t.Fatal("no reply within a minute")
	}
	return reply{}
}

// expect reads one reply and checks it.
func (p *pipeServer) expect(w want) reply {
	p.t.Helper()
	r := p.next()
	checkReplies(p.t, []reply{r}, []want{w})
	return r
}

// quiet checks that nothing is written for a while.
func (p *pipeServer) quiet() {
	p.t.Helper()
	select {
	case line := <-p.lines:
		p.t.Fatalf("unexpected output: %s", truncate(line, 200))
	case <-time.After(50 * time.Millisecond):
	}
}

func TestPipeGarbageThenRequest(t *testing.T) {
	p := newPipeServer(t, nil)
	p.send("this is not json\n")
	r := p.expect(want{ID: "null", Code: parseErr, Message: "Parse error"})
	if !strings.Contains(string(r.Error.Data), `"details"`) {
		t.Errorf("no details: %s", r.line)
	}
	p.send(req("1", "initialize") + "\n")
	p.expect(want{ID: "1", Method: "initialize"})
}

func TestPipeBatchAndBadIDs(t *testing.T) {
	p := newPipeServer(t, nil)
	p.send("[" + req("1", "a") + "," + req("2", "b") + "]\n")
	p.expect(want{ID: "null", Code: invalidReq, Message: "Batch requests are not supported"})
	for _, id := range []string{"null", "true", "false", "1.5", "1e3", `{"x":1}`, `[1]`, `"` + strings.Repeat("z", 1025) + `"`} {
		p.send(req(id, "a") + "\n")
		p.expect(want{ID: "null", Code: invalidReq, Message: "Invalid request"})
	}
	p.send(`{"jsonrpc":"2.0","id":2,"method":7}` + "\n")
	p.expect(want{ID: "2", Code: invalidReq})
	p.send(req("3", "still-alive") + "\n")
	p.expect(want{ID: "3", Method: "still-alive"})
}

func TestPipeOversizeLine(t *testing.T) {
	p := newPipeServer(t, nil)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"a","params":{"x":"` + strings.Repeat("x", 9<<20) + `"}}` + "\n")
	r := p.expect(want{ID: "null", Code: parseErr})
	if !strings.Contains(string(r.Error.Data), `"limitBytes":8388608`) {
		t.Errorf("data: %s", r.Error.Data)
	}
	p.send(req("2", "next") + "\n")
	p.expect(want{ID: "2", Method: "next"})
}

func TestPipeContentLength(t *testing.T) {
	p := newPipeServer(t, nil)

	p.send(clFrame(req("1", "good")))
	p.expect(want{ID: "1", Method: "good"})

	// CRLF and blank lines between NDJSON messages.
	p.send("\r\n\r\n   \r\n" + req("2", "crlf") + "\r\n")
	p.expect(want{ID: "2", Method: "crlf"})

	// Length shorter than the body: the prefix and the rest both fail.
	body := req("3", "short")
	p.send("Content-Length: 5\r\n\r\n" + body + "\n")
	p.expect(want{ID: "null", Code: parseErr})
	p.expect(want{ID: "null", Code: parseErr})
	p.send(req("4", "after-short") + "\n")
	p.expect(want{ID: "4", Method: "after-short"})

	// Length longer than the body: the body swallows the next bytes.
	body = req("5", "long")
	p.send("Content-Length: " + strconv.Itoa(len(body)+10) + "\r\n\r\n" + body + "\n")
	p.quiet() // still waiting for 9 more body bytes
	p.send("123456789rest\n")
	p.expect(want{ID: "null", Code: parseErr}) // body
	p.expect(want{ID: "null", Code: parseErr}) // "rest"
	p.send(req("6", "after-long") + "\n")
	p.expect(want{ID: "6", Method: "after-long"})

	// Duplicate header: refused, the body is not read as a frame.
	body = req("7", "dup")
	p.send("Content-Length: " + strconv.Itoa(len(body)) + "\r\ncontent-length: " + strconv.Itoa(len(body)) + "\r\n\r\n")
	p.expect(want{ID: "null", Code: parseErr})
	p.send(req("8", "after-dup") + "\n")
	p.expect(want{ID: "8", Method: "after-dup"})

	// Huge length: refused at once, nothing allocated, nothing waited for.
	p.send("Content-Length: 1125899906842624\r\n\r\n")
	r := p.expect(want{ID: "null", Code: parseErr})
	if !strings.Contains(string(r.Error.Data), "refused") {
		t.Errorf("data: %s", r.Error.Data)
	}
	p.send(req("9", "after-huge") + "\n")
	p.expect(want{ID: "9", Method: "after-huge"})
}

func TestPipeIDs(t *testing.T) {
	p := newPipeServer(t, nil)
	for _, id := range []string{"-5", "18446744073709551616", "18446744073709551615", "9223372036854775808", `"7"`, "7", `"\u0037"`, `"<tag>"`} {
		p.send(req(id, "ping") + "\n")
		r := p.expect(want{ID: id, Method: "ping"})
		if !strings.HasPrefix(r.line, `{"id":`+id+`,`) {
			t.Errorf("id %s not echoed exactly: %s", id, r.line)
		}
	}
	if n := p.stream.env.ids.len(); n != 0 {
		t.Errorf("%d substitutions left after all responses", n)
	}
}

func TestPipeOversizeResponse(t *testing.T) {
	p := newPipeServer(t, nil)
	p.send(`{"jsonrpc":"2.0","id":-42,"method":"big","params":{"size":9437184}}` + "\n")
	r := p.expect(want{ID: "-42", Code: internal, Message: "Response exceeds the MCP frame limit"})
	var d struct {
		Details         string
		LimitBytes      int
		SerializedBytes int
		Retryable       bool
	}
	if err := json.Unmarshal(r.Error.Data, &d); err != nil {
		t.Fatal(err)
	}
	if d.LimitBytes != 8388608 || d.SerializedBytes != 9437184+38 || !d.Retryable || d.Details == "" {
		t.Errorf("data: %s", r.Error.Data)
	}
	p.send(`{"jsonrpc":"2.0","id":"s","method":"big","params":{"size":8388000}}` + "\n")
	if r := p.next(); string(r.ID) != `"s"` || len(r.line) != 8388000+38 {
		t.Errorf("response under the cap: id %s, %d bytes", r.ID, len(r.line))
	}
}

// cancelHandler shows the cancellation pattern documented in doc.go: the
// in-flight table is keyed by the jsonrpc2.ID the handler sees, requests are
// registered before their goroutine starts, and notifications/cancelled is
// translated with HandlerID.
type cancelHandler struct {
	stream   *Stream
	mu       sync.Mutex
	inflight map[jsonrpc2.ID]context.CancelFunc
}

func (h *cancelHandler) Handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	if req.Notif {
		if req.Method == "notifications/cancelled" && req.Params != nil {
			var p struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			_ = json.Unmarshal(*req.Params, &p)
			if id, ok := h.stream.HandlerID(p.RequestID); ok {
				h.mu.Lock()
				cancel := h.inflight[id]
				h.mu.Unlock()
				if cancel != nil {
					cancel()
				}
			}
		}
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	h.mu.Lock()
	h.inflight[req.ID] = cancel
	h.mu.Unlock()
	go func() {
		defer func() {
			h.mu.Lock()
			delete(h.inflight, req.ID)
			h.mu.Unlock()
			cancel()
		}()
		select {
		case <-ctx.Done():
			_ = conn.ReplyWithError(ctx, req.ID, &jsonrpc2.Error{Code: -32800, Message: "Request cancelled"})
		case <-time.After(time.Minute): // a hang guard, not a timing assertion
			_ = conn.Reply(ctx, req.ID, "timeout")
		}
	}()
}

func TestPipeCancellation(t *testing.T) {
	p := newPipeServer(t, func(s *Stream) jsonrpc2.Handler {
		return &cancelHandler{stream: s, inflight: map[jsonrpc2.ID]context.CancelFunc{}}
	})
	for _, id := range []string{"-5", `"job-1"`, "12", "99999999999999999999"} {
		p.send(req(id, "tools/call") + "\n")
		p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `,"reason":"user"}}` + "\n")
		p.expect(want{ID: id, Code: -32800, Message: "Request cancelled"})
	}
}
