package rpc

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"log"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"
)

// echoResult is what echoHandler replies to an ordinary request.
type echoResult struct {
	Method    string           `json:"method"`
	Params    *json.RawMessage `json:"params,omitempty"`
	Orig      hexBytes         `json:"orig"`      // stream.OriginalID(req.ID)
	HandlerID string           `json:"handlerID"` // req.ID as jsonrpc2 saw it
}

// echoHandler answers requests for tests:
//   - "big" {"size":N}: a result holding an N-byte string;
//   - "unmarshalable": a response whose result is not JSON;
//   - "ask": first sends the client a request ("client/ask", numbered by
//     jsonrpc2, not waited for), then replies with echoResult;
//   - anything else: echoResult.
//
// Notifications are recorded and never answered.
type echoHandler struct {
	stream *Stream
	bigCap int // caps "big" sizes when > 0

	mu        sync.Mutex
	notifs    []string
	responses int // client responses jsonrpc2 received
	stray     int // of those, ones jsonrpc2 had no waiting call for, or malformed
}

// onRecv counts the client responses the stream delivered to jsonrpc2.
func (h *echoHandler) onRecv(req *jsonrpc2.Request, resp *jsonrpc2.Response) {
	if resp == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.responses++
	if req == nil || (resp.Result == nil) == (resp.Error == nil) {
		h.stray++
	}
}

func (h *echoHandler) Handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	if req.Notif {
		h.mu.Lock()
		h.notifs = append(h.notifs, req.Method)
		h.mu.Unlock()
		return
	}
	switch req.Method {
	case "big":
		var p struct{ Size int }
		if req.Params != nil {
			_ = json.Unmarshal(*req.Params, &p)
		}
		p.Size = max(p.Size, 0)
		if h.bigCap > 0 {
			p.Size = min(p.Size, h.bigCap)
		}
		_ = conn.Reply(ctx, req.ID, strings.Repeat("x", p.Size))
	case "ask":
		if _, err := conn.DispatchCall(ctx, "client/ask", map[string]string{"q": "?"}); err != nil {
			_ = conn.ReplyWithError(ctx, req.ID, &jsonrpc2.Error{Code: internal, Message: err.Error()})
			return
		}
		_ = conn.Reply(ctx, req.ID, echoResult{Method: req.Method, Orig: hexBytes(h.stream.OriginalID(req.ID)), HandlerID: req.ID.String()})
	case "unmarshalable":
		bad := json.RawMessage(`{not json`)
		_ = conn.SendResponse(ctx, &jsonrpc2.Response{ID: req.ID, Result: &bad})
	default:
		_ = conn.Reply(ctx, req.ID, echoResult{
			Method:    req.Method,
			Params:    req.Params,
			Orig:      hexBytes(h.stream.OriginalID(req.ID)),
			HandlerID: req.ID.String(),
		})
	}
}

func (h *echoHandler) notifications() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.notifs...)
}

// hexBytes carries raw bytes through JSON unchanged (as hex), so the test
// sees exactly what OriginalID returned.
type hexBytes []byte

func (h hexBytes) MarshalText() ([]byte, error) { return []byte(hex.EncodeToString(h)), nil }

func (h *hexBytes) UnmarshalText(b []byte) error {
	d, err := hex.DecodeString(string(b))
	*h = d
	return err
}

var quietConn = jsonrpc2.SetLogger(log.New(io.Discard, "", 0))

// serve runs input through a Stream under a real jsonrpc2.Conn with a
// synchronous echo handler (so every reply is written before the next read)
// and returns what was written and the notifications the handler saw.
func serve(tb testing.TB, input []byte, opts ...Option) (out []byte, notifs []string) {
	tb.Helper()
	out, notifs, _ = serveStream(tb, input, 0, opts...)
	return out, notifs
}

func serveStream(tb testing.TB, input []byte, bigCap int, opts ...Option) (out []byte, notifs []string, s *Stream) {
	tb.Helper()
	var buf bytes.Buffer
	opts = append([]Option{WithLogger(nil)}, opts...)
	s = NewStream(bytes.NewReader(input), &buf, opts...)
	h := &echoHandler{stream: s, bigCap: bigCap}
	conn := jsonrpc2.NewConn(context.Background(), s, h, quietConn, jsonrpc2.OnRecv(h.onRecv))
	select {
	case <-conn.DisconnectNotify():
	case <-time.After(20 * time.Second):
		tb.Fatalf("stream did not finish reading %d bytes of input", len(input))
	}
	h.mu.Lock()
	stray := h.stray
	h.mu.Unlock()
	if stray != 0 {
		tb.Errorf("%d responses reached jsonrpc2 without a waiting call or malformed", stray)
	}
	return buf.Bytes(), h.notifications(), s
}

// reply is one decoded output line.
type reply struct {
	line    string
	ID      json.RawMessage `json:"id"`
	JSONRPC string          `json:"jsonrpc"`
	Result  *echoResult     `json:"result"`
	Error   *struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

func parseReplies(tb testing.TB, out []byte) []reply {
	tb.Helper()
	if len(out) == 0 {
		return nil
	}
	if out[len(out)-1] != '\n' {
		tb.Fatalf("output does not end with a newline: %q", truncate(out, 200))
	}
	var rs []reply
	for _, line := range bytes.Split(out[:len(out)-1], []byte("\n")) {
		var r reply
		if err := json.Unmarshal(line, &r); err != nil {
			// "big" results are strings, not echoResult: decode loosely.
			var loose struct {
				ID      json.RawMessage `json:"id"`
				JSONRPC string          `json:"jsonrpc"`
			}
			if err2 := json.Unmarshal(line, &loose); err2 != nil {
				tb.Fatalf("output line is not JSON (%v): %q", err, truncate(line, 200))
			}
			r.ID, r.JSONRPC = loose.ID, loose.JSONRPC
		}
		r.line = string(line)
		rs = append(rs, r)
	}
	return rs
}

// want describes an expected reply: ID is the exact raw JSON of the id;
// Code 0 means a successful echo of Method.
type want struct {
	ID      string
	Code    int64
	Message string
	Method  string
}

func checkReplies(tb testing.TB, got []reply, wants []want) {
	tb.Helper()
	if len(got) != len(wants) {
		var lines []string
		for _, r := range got {
			lines = append(lines, truncate([]byte(r.line), 300))
		}
		tb.Fatalf("got %d replies, want %d:\n%s", len(got), len(wants), strings.Join(lines, "\n"))
	}
	for i, w := range wants {
		r := got[i]
		if r.JSONRPC != "2.0" {
			tb.Errorf("reply %d: jsonrpc = %q: %s", i, r.JSONRPC, r.line)
		}
		if string(r.ID) != w.ID {
			tb.Errorf("reply %d: id = %s, want %s: %s", i, r.ID, w.ID, truncate([]byte(r.line), 300))
		}
		if w.Code == 0 {
			if r.Error != nil || r.Result == nil {
				tb.Errorf("reply %d: want a result, got %s", i, truncate([]byte(r.line), 300))
				continue
			}
			if r.Result.Method != w.Method {
				tb.Errorf("reply %d: echoed method %q, want %q", i, r.Result.Method, w.Method)
			}
			if string(r.Result.Orig) != w.ID {
				tb.Errorf("reply %d: OriginalID = %s, want %s", i, r.Result.Orig, w.ID)
			}
			continue
		}
		if r.Error == nil {
			tb.Errorf("reply %d: want error %d, got %s", i, w.Code, truncate([]byte(r.line), 300))
			continue
		}
		if r.Error.Code != w.Code {
			tb.Errorf("reply %d: code %d, want %d: %s", i, r.Error.Code, w.Code, r.line)
		}
		if w.Message != "" && r.Error.Message != w.Message {
			tb.Errorf("reply %d: message %q, want %q", i, r.Error.Message, w.Message)
		}
	}
}

func req(id, method string) string {
	if id == "" {
		return `{"jsonrpc":"2.0","method":"` + method + `"}`
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `"}`
}

func clFrame(body string) string {
	return "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
}
