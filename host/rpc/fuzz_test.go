package rpc

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
)

// fuzzFrameCap is small so that oversize lines, oversize Content-Length
// values and oversize responses are all within the fuzzer's reach.
const fuzzFrameCap = 512

var fuzzSeeds = []string{
	req("1", "initialize") + "\n" + req("", "notifications/initialized") + "\n" + req("2", "tools/list") + "\n",
	req("-5", "ping") + "\r\n" + req(`"7"`, "ping") + "\r\n" + req("18446744073709551616", "ping") + "\n",
	req(`"\u0037"`, "a") + "\n" + req(`"\u0000fluxgit-rpc:1"`, "b") + "\n" + req("-0", "c") + "\n",
	"garbage\n[]\n[1,2]\n{}\nnull\n\"s\"\n" + req("null", "a") + "\n" + req("1.5", "a") + "\n",
	`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n" + `{"jsonrpc":"1.0","id":2,"method":"a"}` + "\n",
	`{"jsonrpc":"2.0","id":3,"method":"a","Method":5,"RESULT":1,"params":{"x":[1,{"y":"}"}]}}` + "\n",
	clFrame(req("1", "a")) + clFrame(req("-2", "b")) + "\r\n" + req("3", "c") + "\n",
	"Content-Length: 5\r\n\r\n" + req("1", "a") + "\n",
	"Content-Length: 99999999999999999999\r\n\r\n" + req("1", "a") + "\n",
	"Content-Length: 10\r\nContent-Length: 10\r\n\r\n0123456789",
	"content-length: 2\r\nX-A: b\r\n\r\n{}",
	"Content-Length: 37\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\n",
	`{"jsonrpc":"2.0","id":1,"method":"big","params":{"size":600}}` + "\n" + req("2", "unmarshalable") + "\n",
	strings.Repeat("x", fuzzFrameCap+3) + "\n" + req("1", "a"),
	`{"jsonrpc":"2.0","id":"` + strings.Repeat("\\u00e9", 200) + `","method":"a"}` + "\n",
	"\xff\xfe{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"\xff\"}\n",
	// Responses to the server's own requests ("ask" makes it send client/ask
	// with ids 0, 1, …): good, error, forged, malformed, repeated.
	req("1", "ask") + "\n" + `{"jsonrpc":"2.0","id":0,"result":{"a":1}}` + "\n" + `{"jsonrpc":"2.0","id":0,"result":2}` + "\n" +
		req("2", "ask") + "\n" + `{"jsonrpc":"2.0","id":"1","result":{}}` + "\n" + `{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"x"}}` + "\n",
	req("1", "ask") + "\n" + req("2", "ask") + "\n" + `{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"no","data":[1e400]}}` + "\n" +
		`{"jsonrpc":"2.0","id":0,"error":{"code":1.5,"message":"x"}}` + "\n" + `{"id":7,"result":null}` + "\n",
}

func FuzzStream(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, _, s := serveStream(t, data, 2*fuzzFrameCap, WithMaxFrameSize(fuzzFrameCap))
		checkOutput(t, out, fuzzFrameCap)
		if n := s.env.ids.len(); n != 0 {
			t.Errorf("%d id substitutions left after every request was answered", n)
		}
	})
}

// checkOutput checks the invariants of everything the server writes.
func checkOutput(t *testing.T, out []byte, frameCap int) {
	t.Helper()
	if len(out) == 0 {
		return
	}
	if out[len(out)-1] != '\n' {
		t.Fatalf("output does not end with a newline")
	}
	for i, line := range bytes.Split(out[:len(out)-1], []byte("\n")) {
		fail := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("line %d %q: "+format, append([]any{i, truncate(line, 300)}, args...)...)
		}
		// Error replies the stream makes itself echo the id (at most
		// 6×1024+2 raw bytes) and may exceed a tiny test cap by that much.
		if len(line) > frameCap && (!bytes.Contains(line, []byte(`"error":{`)) || len(line) > frameCap+7*MaxIDBytes) {
			fail("%d bytes, over the %d-byte cap", len(line), frameCap)
		}
		if bytes.IndexByte(line, '\r') >= 0 {
			fail("raw CR")
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(line, &m); err != nil {
			fail("not a JSON object: %v", err)
		}
		if string(m["jsonrpc"]) != `"2.0"` {
			fail(`jsonrpc is not "2.0"`)
		}
		if method, isRequest := m["method"]; isRequest {
			// The server's own request ("ask"): an integer id, no result/error.
			if _, ok := outgoingIDOf(m["id"]); !ok || string(method) != `"client/ask"` || m["result"] != nil || m["error"] != nil {
				fail("malformed outgoing request")
			}
			continue
		}
		id, hasID := m["id"]
		if !hasID {
			fail("no id")
		}
		if !validReplyID(id) {
			fail("id %s is not null, an integer or a string", id)
		}
		_, hasResult := m["result"]
		errObj, hasError := m["error"]
		if hasResult == hasError {
			fail("want exactly one of result and error")
		}
		if hasError {
			var e struct {
				Code    *int64
				Message *string
			}
			if json.Unmarshal(errObj, &e) != nil || e.Code == nil || e.Message == nil {
				fail("malformed error object")
			}
			continue
		}
		// Echo results carry OriginalID(req.ID): the response id must be
		// exactly those bytes.
		var res struct {
			Orig *string `json:"orig"`
		}
		if json.Unmarshal(m["result"], &res) == nil && res.Orig != nil {
			orig, err := hex.DecodeString(*res.Orig)
			if err != nil || !bytes.Equal(orig, id) {
				fail("response id %s differs from the id the handler was told (%s)", id, orig)
			}
		}
	}
}

func validReplyID(id json.RawMessage) bool {
	if string(id) == "null" {
		return true
	}
	switch c := id[0]; {
	case c == '"':
		var s string
		return json.Unmarshal(id, &s) == nil
	case c == '-' || ('0' <= c && c <= '9'):
		return !bytes.ContainsAny(id, ".eE+")
	}
	return false
}
