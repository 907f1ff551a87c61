package rpc

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/sourcegraph/jsonrpc2"
)

// Outgoing request ids awaiting a response in TestEnvelopeInspect.
const (
	pendingID    = 5
	pendingMaxID = uint64(18446744073709551615)
)

// newTestEnvelope returns an Envelope whose requests 5 and 2^64-1 (sent
// through Outbound, as a transport would) await responses.
func newTestEnvelope(t *testing.T) *Envelope {
	t.Helper()
	e := NewEnvelope(WithLogger(nil))
	for _, id := range []uint64{pendingID, pendingMaxID} {
		if _, err := e.Outbound(&jsonrpc2.Request{Method: "sampling/createMessage", ID: jsonrpc2.ID{Num: id}}); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func invalidResponseJSON(id, problem string) string {
	details, _ := json.Marshal("the response to request " + id + " is malformed: " + problem)
	return `{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32600,"message":"Invalid response","data":{"details":` + string(details) + `}}}`
}

// TestEnvelopeInspect feeds one frame to an Envelope on its own and checks
// the verdict.
func TestEnvelopeInspect(t *testing.T) {
	const bothProblem = `a response must contain exactly one of "result" and "error", not both`
	tests := []struct {
		name     string
		frame    string
		action   Action
		response bool
		message  string // Deliver: the exact canonical message
		reply    string // Answer: the exact reply
		details  string // a substring of Details
	}{
		// Requests and notifications.
		{name: "request", frame: req("1", "ping"), action: Deliver, message: `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
		{name: "surrounding whitespace", frame: " \t" + req(`"a"`, "ping") + "\r\n", action: Deliver, message: `{"jsonrpc":"2.0","id":"a","method":"ping"}`},
		{name: "members reordered, case variants dropped", frame: `{"params":{"x":[1,"]"]},"Method":5,"RESULT":1,"method":"tools/call","id":7,"jsonrpc":"2.0","meta":{}}`,
			action: Deliver, message: `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"x":[1,"]"]}}`},
		{name: "negative id substituted", frame: req("-5", "a"), action: Deliver, message: `{"jsonrpc":"2.0","id":"\u0000fluxgit-rpc:1","method":"a"}`},
		{name: "escaped string id substituted", frame: req(`"\u0037"`, "a"), action: Deliver, message: `{"jsonrpc":"2.0","id":"\u0000fluxgit-rpc:1","method":"a"}`},
		{name: "notification", frame: `{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`, action: Deliver, message: `{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`},

		// Rejected requests.
		{name: "not JSON", frame: "nope", action: Answer,
			reply: `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":{"details":"invalid character 'o' in literal null (expecting 'u')"}}}`},
		{name: "empty frame", frame: "  ", action: Answer, details: "unexpected end of JSON input",
			reply: `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":{"details":"unexpected end of JSON input"}}}`},
		{name: "batch", frame: "[" + req("1", "a") + "]", action: Answer,
			reply: `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Batch requests are not supported","data":{"details":"JSON-RPC batch arrays are not supported; send one message per line"}}}`},
		{name: "not an object", frame: `"hi"`, action: Answer,
			reply: `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request","data":{"details":"a JSON-RPC message must be a JSON object"}}}`},
		{name: "bad version keeps the id", frame: `{"jsonrpc":"1.0","id":-3,"method":"a"}`, action: Answer,
			reply: `{"jsonrpc":"2.0","id":-3,"error":{"code":-32600,"message":"Invalid request","data":{"details":"\"jsonrpc\" must be exactly \"2.0\", got \"1.0\""}}}`},
		{name: "null id", frame: req("null", "a"), action: Answer,
			reply: `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request","data":{"details":"id must be an integer or a string of at most 1024 bytes (null)"}}}`},
		{name: "method with result, even for an awaited id", frame: `{"jsonrpc":"2.0","id":5,"method":"a","result":1}`, action: Answer,
			reply: `{"jsonrpc":"2.0","id":5,"error":{"code":-32600,"message":"Invalid request","data":{"details":"a request must not contain \"result\" or \"error\""}}}`},
		{name: "html characters in an id stay unescaped", frame: `{"jsonrpc":"2.0","id":"<a&b>"}`, action: Answer,
			reply: `{"jsonrpc":"2.0","id":"<a&b>","error":{"code":-32600,"message":"Invalid request","data":{"details":"missing member \"method\""}}}`},

		// Responses to requests this side sent.
		{name: "result", frame: `{"jsonrpc":"2.0","id":5,"result":{"role":"assistant","content":{"type":"text","text":"hi"}}}`, action: Deliver, response: true,
			message: `{"jsonrpc":"2.0","id":5,"result":{"role":"assistant","content":{"type":"text","text":"hi"}}}`},
		{name: "null result", frame: `{"result":null,"id":5,"jsonrpc":"2.0"}`, action: Deliver, response: true, message: `{"jsonrpc":"2.0","id":5,"result":null}`},
		{name: "largest id", frame: `{"jsonrpc":"2.0","id":18446744073709551615,"result":1}`, action: Deliver, response: true,
			message: `{"jsonrpc":"2.0","id":18446744073709551615,"result":1}`},
		{name: "error, extra members dropped", frame: `{"jsonrpc":"2.0","id":5,"error":{"data":{"k":[1]},"message":"User rejected","code":-1,"extra":true},"Result":1,"meta":2}`,
			action: Deliver, response: true, message: `{"jsonrpc":"2.0","id":5,"error":{"code":-1,"message":"User rejected","data":{"k":[1]}}}`},
		{name: "error without data", frame: `{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"Method not found"}}`, action: Deliver, response: true,
			message: `{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"Method not found"}}`},
		{name: "error code -0", frame: `{"jsonrpc":"2.0","id":5,"error":{"code":-0,"message":"x"}}`, action: Deliver, response: true,
			message: `{"jsonrpc":"2.0","id":5,"error":{"code":0,"message":"x"}}`},

		// Malformed responses to an awaited id: the call fails at once.
		{name: "result and error", frame: `{"jsonrpc":"2.0","id":5,"result":1,"error":{"code":1,"message":"x"}}`, action: Deliver, response: true,
			message: invalidResponseJSON("5", bothProblem), details: bothProblem},
		{name: "no jsonrpc", frame: `{"id":5,"result":1}`, action: Deliver, response: true,
			message: invalidResponseJSON("5", `missing member "jsonrpc"; it must be "2.0"`)},
		{name: "jsonrpc 1.0", frame: `{"jsonrpc":"1.0","id":5,"result":1}`, action: Deliver, response: true,
			message: invalidResponseJSON("5", `"jsonrpc" must be exactly "2.0", got "1.0"`)},
		{name: "duplicate result", frame: `{"jsonrpc":"2.0","id":5,"result":1,"result":2}`, action: Deliver, response: true,
			message: invalidResponseJSON("5", `duplicate member "result"`)},
		{name: "error not an object", frame: `{"jsonrpc":"2.0","id":5,"error":"boom"}`, action: Deliver, response: true, details: `"error" is not an object`},
		{name: "error code missing", frame: `{"jsonrpc":"2.0","id":5,"error":{"message":"x"}}`, action: Deliver, response: true, details: `"error.code" is missing`},
		{name: "error code a string", frame: `{"jsonrpc":"2.0","id":5,"error":{"code":"1","message":"x"}}`, action: Deliver, response: true,
			details: `"error.code" must be an integer of at most 64 bits, got "1"`},
		{name: "error code fractional", frame: `{"jsonrpc":"2.0","id":5,"error":{"code":1.5,"message":"x"}}`, action: Deliver, response: true, details: `got 1.5`},
		{name: "error code beyond int64", frame: `{"jsonrpc":"2.0","id":5,"error":{"code":9223372036854775808,"message":"x"}}`, action: Deliver, response: true,
			details: `"error.code" must be an integer of at most 64 bits`},
		{name: "error message missing", frame: `{"jsonrpc":"2.0","id":5,"error":{"code":1}}`, action: Deliver, response: true, details: `"error.message" is missing or not a string`},
		{name: "error message a number", frame: `{"jsonrpc":"2.0","id":5,"error":{"code":1,"message":2}}`, action: Deliver, response: true, details: `"error.message" is missing or not a string`},
		{name: "duplicate error code", frame: `{"jsonrpc":"2.0","id":5,"error":{"code":1,"code":2,"message":"x"}}`, action: Deliver, response: true,
			details: `duplicate member "code" in "error"`},

		// Responses nothing awaits: dropped.
		{name: "unknown id", frame: `{"jsonrpc":"2.0","id":6,"result":1}`, action: Drop, details: "id 6"},
		{name: "string id", frame: `{"jsonrpc":"2.0","id":"5","result":1}`, action: Drop, details: `id "5"`},
		{name: "fractional id", frame: `{"jsonrpc":"2.0","id":5.0,"result":1}`, action: Drop},
		{name: "exponent id", frame: `{"jsonrpc":"2.0","id":5e0,"result":1}`, action: Drop},
		{name: "negative id", frame: `{"jsonrpc":"2.0","id":-5,"result":1}`, action: Drop},
		{name: "id beyond uint64", frame: `{"jsonrpc":"2.0","id":18446744073709551616,"result":1}`, action: Drop},
		{name: "null id", frame: `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`, action: Drop, details: "id null"},
		{name: "no id", frame: `{"jsonrpc":"2.0","result":1}`, action: Drop, details: "id absent"},
		{name: "duplicate id", frame: `{"jsonrpc":"2.0","id":5,"id":5,"result":1}`, action: Drop},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEnvelope(t)
			v := e.Inspect([]byte(tc.frame))
			if v.Action != tc.action || v.Response != tc.response {
				t.Fatalf("verdict %v (response %v), want %v (response %v): %+v", v.Action, v.Response, tc.action, tc.response, v)
			}
			if !strings.Contains(v.Details, tc.details) {
				t.Errorf("details %q do not contain %q", v.Details, tc.details)
			}
			switch v.Action {
			case Deliver:
				if tc.message != "" && string(v.Message) != tc.message {
					t.Errorf("message\n got %s\nwant %s", v.Message, tc.message)
				}
				if v.Reply != nil {
					t.Errorf("a delivered frame has a reply: %s", v.Reply)
				}
				checkDecodes(t, v)
			case Answer:
				if string(v.Reply) != tc.reply {
					t.Errorf("reply\n got %s\nwant %s", v.Reply, tc.reply)
				}
				var r struct{ Error struct{ Code int64 } }
				if err := json.Unmarshal(v.Reply, &r); err != nil || r.Error.Code != v.Code {
					t.Errorf("Code %d does not match the reply (%v)", v.Code, err)
				}
				if v.Message != nil {
					t.Errorf("an answered frame has a message: %s", v.Message)
				}
			case Drop:
				if v.Message != nil || v.Reply != nil || v.Details == "" {
					t.Errorf("a dropped frame has output or no details: %+v", v)
				}
			}
		})
	}
}

// checkDecodes checks that jsonrpc2's own types accept a delivered message.
func checkDecodes(t *testing.T, v Verdict) {
	t.Helper()
	if v.Response {
		var r jsonrpc2.Response
		if err := json.Unmarshal(v.Message, &r); err != nil || (r.Result == nil) == (r.Error == nil) {
			t.Errorf("jsonrpc2.Response does not decode %s: %v", v.Message, err)
		}
		return
	}
	var r jsonrpc2.Request
	if err := json.Unmarshal(v.Message, &r); err != nil {
		t.Errorf("jsonrpc2.Request does not decode %s: %v", v.Message, err)
	}
}

// TestEnvelopeResponseLifecycle follows awaited ids through answers,
// repeats, ForgetOutgoing and the MaxPendingOutgoing bound.
func TestEnvelopeResponseLifecycle(t *testing.T) {
	result := func(id string) []byte { return []byte(`{"jsonrpc":"2.0","id":` + id + `,"result":{}}`) }
	e := newTestEnvelope(t)

	// Answered once; a repeat is dropped.
	if v := e.Inspect(result("5")); v.Action != Deliver {
		t.Fatalf("first answer: %+v", v)
	}
	if v := e.Inspect(result("5")); v.Action != Drop {
		t.Errorf("repeated answer: %+v", v)
	}
	// A malformed answer also settles the id.
	if v := e.Inspect([]byte(`{"jsonrpc":"2.0","id":18446744073709551615}`)); v.Action != Answer {
		t.Errorf("no result, no error, no method is an invalid request: %+v", v)
	}
	if v := e.Inspect([]byte(`{"jsonrpc":"2.0","id":18446744073709551615,"result":1,"error":{}}`)); v.Action != Deliver || !v.Response {
		t.Errorf("malformed answer: %+v", v)
	}
	if v := e.Inspect(result("18446744073709551615")); v.Action != Drop {
		t.Errorf("answer after a malformed one: %+v", v)
	}

	// ForgetOutgoing: a late answer to an abandoned call is dropped.
	if _, err := e.Outbound(&jsonrpc2.Request{Method: "elicitation/create", ID: jsonrpc2.ID{Num: 9}}); err != nil {
		t.Fatal(err)
	}
	e.ForgetOutgoing(jsonrpc2.ID{Num: 9})
	e.ForgetOutgoing(jsonrpc2.ID{Str: "9", IsString: true}) // no-op
	if v := e.Inspect(result("9")); v.Action != Drop {
		t.Errorf("answer to a forgotten request: %+v", v)
	}
	if n := e.out.len(); n != 0 {
		t.Errorf("%d ids still awaited", n)
	}

	// The bound: one request more than MaxPendingOutgoing evicts the oldest.
	for i := range MaxPendingOutgoing + 1 {
		if _, err := e.Outbound(&jsonrpc2.Request{Method: "m", ID: jsonrpc2.ID{Num: uint64(100 + i)}}); err != nil {
			t.Fatal(err)
		}
	}
	if n := e.out.len(); n != MaxPendingOutgoing {
		t.Errorf("%d ids awaited, want %d", n, MaxPendingOutgoing)
	}
	if v := e.Inspect(result("100")); v.Action != Drop {
		t.Errorf("answer to the evicted request: %+v", v)
	}
	for _, id := range []int{101, 100 + MaxPendingOutgoing} {
		if v := e.Inspect(result(strconv.Itoa(id))); v.Action != Deliver {
			t.Errorf("answer to request %d: %+v", id, v)
		}
	}
}

func TestEnvelopeOutbound(t *testing.T) {
	params := json.RawMessage(`{"q":"<?>"}`)
	res := json.RawMessage(`{"a":"\u003cb\u003e"}`)
	tests := []struct {
		name    string
		v       any
		want    string // exact output
		err     string // substring of the error, when one is expected
		awaited bool   // the message is a request now awaiting a response
	}{
		{name: "request", v: &jsonrpc2.Request{Method: "sampling/createMessage", Params: &params, ID: jsonrpc2.ID{Num: 3}},
			want: `{"id":3,"jsonrpc":"2.0","method":"sampling/createMessage","params":{"q":"<?>"}}`, awaited: true},
		{name: "request with id 0", v: jsonrpc2.Request{Method: "ping"}, want: `{"id":0,"jsonrpc":"2.0","method":"ping"}`, awaited: true},
		{name: "notification", v: &jsonrpc2.Request{Method: "notifications/progress", Params: &params, Notif: true},
			want: `{"jsonrpc":"2.0","method":"notifications/progress","params":{"q":"<?>"}}`},
		{name: "response, HTML escapes undone", v: &jsonrpc2.Response{ID: jsonrpc2.ID{Num: 4}, Result: &res}, want: `{"id":4,"result":{"a":"<b>"},"jsonrpc":"2.0"}`},
		{name: "request with a string id", v: &jsonrpc2.Request{Method: "roots/list", ID: jsonrpc2.ID{Str: "r1", IsString: true}},
			err: `outgoing request "roots/list" has the string id "r1"`},
		{name: "response that cannot be serialized", v: &jsonrpc2.Response{ID: jsonrpc2.ID{Num: 4}, Result: &json.RawMessage{'{'}},
			want: `{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"Internal error","data":{"details":"the response could not be serialized: json: error calling MarshalJSON for type *jsonrpc2.Response: json: error calling MarshalJSON for type *json.RawMessage: unexpected end of JSON input","retryable":false}}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := NewEnvelope(WithLogger(nil))
			b, err := e.Outbound(tc.v)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.want {
				t.Errorf("output\n got %s\nwant %s", b, tc.want)
			}
			if awaited := e.out.len() == 1; awaited != tc.awaited {
				t.Errorf("awaited = %v, want %v", awaited, tc.awaited)
			}
		})
	}

	// The same id twice while the first awaits its answer is refused.
	e := NewEnvelope(WithLogger(nil))
	for i, wantErr := range []bool{false, true} {
		_, err := e.Outbound(&jsonrpc2.Request{Method: "m", ID: jsonrpc2.ID{Num: 8}})
		if (err != nil) != wantErr {
			t.Errorf("send %d of id 8: error %v", i, err)
		}
	}
}

func TestEnvelopeRefused(t *testing.T) {
	e := newTestEnvelope(t)
	cause := errors.New("decoder says no")

	// A substituted request: answered with its own id, substitution released.
	v := e.Inspect([]byte(req("-9", "a")))
	if v.Action != Deliver || e.ids.len() != 1 {
		t.Fatalf("verdict %+v, %d substitutions", v, e.ids.len())
	}
	r := e.Refused(v, cause)
	if want := `{"jsonrpc":"2.0","id":-9,"error":{"code":-32600,"message":"Invalid request","data":{"details":"decoder says no"}}}`; r.Action != Answer || string(r.Reply) != want {
		t.Errorf("refused request: %+v\nwant reply %s", r, want)
	}
	if e.ids.len() != 0 {
		t.Errorf("substitution not released")
	}

	// A response: the waiting call gets an Invalid response error instead.
	v = e.Inspect([]byte(`{"jsonrpc":"2.0","id":5,"result":[1e400]}`))
	r = e.Refused(v, cause)
	if r.Action != Deliver || !r.Response || string(r.Message) != invalidResponseJSON("5", "it cannot be decoded: decoder says no") {
		t.Errorf("refused response: %+v (%s)", r, r.Message)
	}
	// Refusing that too drops it rather than looping.
	if r2 := e.Refused(r, cause); r2.Action != Drop {
		t.Errorf("refused synthesized response: %+v", r2)
	}
	// Other verdicts pass unchanged.
	drop := e.Inspect([]byte(`{"jsonrpc":"2.0","id":77,"result":1}`))
	if r := e.Refused(drop, cause); r.Action != Drop || r.Details != drop.Details {
		t.Errorf("refused drop: %+v", r)
	}
}

func TestEnvelopeErrorResponse(t *testing.T) {
	e := NewEnvelope(WithLogger(nil), WithMaxFrameSize(200))
	v := e.Inspect([]byte(req(`"\u0041"`, "a")))
	if v.Action != Deliver || e.ids.len() != 1 {
		t.Fatalf("%+v", v)
	}
	b, err := e.ErrorResponse(json.RawMessage(`"A"`), -32800, "Request cancelled", nil)
	if err != nil || string(b) != `{"jsonrpc":"2.0","id":"A","error":{"code":-32800,"message":"Request cancelled"}}` {
		t.Errorf("ErrorResponse: %s, %v", b, err)
	}
	if e.ids.len() != 0 {
		t.Error("the answered request's substitution was not released")
	}
	if _, err := e.ErrorResponse(json.RawMessage(`{`), 1, "x", nil); err == nil {
		t.Error("an id that is not JSON was accepted")
	}
	// Over the cap: replaced by the frame-limit error, same id.
	b, err = e.ErrorResponse(json.RawMessage(`7`), 1, strings.Repeat("m", 300), nil)
	if err != nil || !strings.HasPrefix(string(b), `{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"Response exceeds the MCP frame limit"`) {
		t.Errorf("oversize error response: %s, %v", b, err)
	}
}
