package rpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/sourcegraph/jsonrpc2"
)

const (
	parseErr   = jsonrpc2.CodeParseError
	invalidReq = jsonrpc2.CodeInvalidRequest
	internal   = jsonrpc2.CodeInternalError
)

func TestEnvelope(t *testing.T) {
	long1024 := `"` + strings.Repeat("a", 1024) + `"`
	long1025 := `"` + strings.Repeat("a", 1025) + `"`
	ok := req("1", "after") + "\n"
	after := want{ID: "1", Method: "after"}

	tests := []struct {
		name   string
		input  string
		want   []want
		notifs []string
	}{
		{"plain request", req("1", "ping") + "\n", []want{{ID: "1", Method: "ping"}}, nil},
		{"string id stays a string", req(`"7"`, "ping") + "\n", []want{{ID: `"7"`, Method: "ping"}}, nil},
		{"zero id", req("0", "ping") + "\n", []want{{ID: "0", Method: "ping"}}, nil},
		{"max int64 id passes through", req("9223372036854775807", "a") + "\n", []want{{ID: "9223372036854775807", Method: "a"}}, nil},
		{"2^63 id", req("9223372036854775808", "a") + "\n", []want{{ID: "9223372036854775808", Method: "a"}}, nil},
		{"max uint64 id", req("18446744073709551615", "a") + "\n", []want{{ID: "18446744073709551615", Method: "a"}}, nil},
		{"2^64 id", req("18446744073709551616", "a") + "\n", []want{{ID: "18446744073709551616", Method: "a"}}, nil},
		{"negative id", req("-5", "a") + "\n", []want{{ID: "-5", Method: "a"}}, nil},
		{"minus zero id", req("-0", "a") + "\n", []want{{ID: "-0", Method: "a"}}, nil},
		{"very negative id", req("-123456789012345678901234567890", "a") + "\n", []want{{ID: "-123456789012345678901234567890", Method: "a"}}, nil},
		{"escaped string id echoed byte-exactly", req(`"\u0037"`, "a") + "\n", []want{{ID: `"\u0037"`, Method: "a"}}, nil},
		{"html characters in string id", req(`"a<b>&c"`, "a") + "\n", []want{{ID: `"a<b>&c"`, Method: "a"}}, nil},
		{"html escapes in string id echoed byte-exactly", req(`"\u003c\u003E\u0026"`, "a") + "\n", []want{{ID: `"\u003c\u003E\u0026"`, Method: "a"}}, nil},
		{"invalid UTF-8 in string id", req("\"\xff\xfe\"", "a") + "\n", []want{{ID: "\"\xff\xfe\"", Method: "a"}}, nil},
		{"U+2028 in string id", req("\"a\u2028b\"", "a") + "\n", []want{{ID: "\"a\u2028b\"", Method: "a"}}, nil},
		{"unicode string id", req(`"héllo wörld"`, "a") + "\n", []want{{ID: `"héllo wörld"`, Method: "a"}}, nil},
		{"client id with the private prefix", req(`"\u0000fluxgit-rpc:1"`, "a") + "\n", []want{{ID: `"\u0000fluxgit-rpc:1"`, Method: "a"}}, nil},
		{"string id of 1024 bytes", req(long1024, "a") + "\n", []want{{ID: long1024, Method: "a"}}, nil},
		{"empty string id", req(`""`, "a") + "\n", []want{{ID: `""`, Method: "a"}}, nil},

		{"string id of 1025 bytes", req(long1025, "a") + "\n" + ok, []want{{ID: "null", Code: invalidReq, Message: "Invalid request"}, after}, nil},
		{"escaped string id over 1024 bytes", req(`"`+strings.Repeat(`\u00e9`, 513)+`"`, "a") + "\n" + ok, []want{{ID: "null", Code: invalidReq}, after}, nil},
		{"null id", req("null", "a") + "\n" + ok, []want{{ID: "null", Code: invalidReq, Message: "Invalid request"}, after}, nil},
		{"bool id", req("true", "a") + "\n" + ok, []want{{ID: "null", Code: invalidReq}, after}, nil},
		{"fractional id", req("1.5", "a") + "\n" + ok, []want{{ID: "null", Code: invalidReq}, after}, nil},
		{"exponent id", req("1e3", "a") + "\n" + ok, []want{{ID: "null", Code: invalidReq}, after}, nil},
		{"1.0 id", req("1.0", "a") + "\n" + ok, []want{{ID: "null", Code: invalidReq}, after}, nil},
		{"object id", req(`{"a":1}`, "a") + "\n" + ok, []want{{ID: "null", Code: invalidReq}, after}, nil},
		{"array id", req(`[1]`, "a") + "\n" + ok, []want{{ID: "null", Code: invalidReq}, after}, nil},
		{"integer id over 1024 digits", req(strings.Repeat("9", 1025), "a") + "\n" + ok, []want{{ID: "null", Code: invalidReq}, after}, nil},

		{"garbage", "hello world\n" + ok, []want{{ID: "null", Code: parseErr, Message: "Parse error"}, after}, nil},
		{"truncated JSON", `{"jsonrpc":"2.0","id":1,` + "\n" + ok, []want{{ID: "null", Code: parseErr}, after}, nil},
		{"two values on a line", req("1", "a") + " " + req("2", "b") + "\n" + ok, []want{{ID: "null", Code: parseErr}, after}, nil},
		{"batch", "[" + req("1", "a") + "]\n" + ok, []want{{ID: "null", Code: invalidReq, Message: "Batch requests are not supported"}, after}, nil},
		{"empty batch", "[]\n" + ok, []want{{ID: "null", Code: invalidReq, Message: "Batch requests are not supported"}, after}, nil},
		{"string message", `"hello"` + "\n" + ok, []want{{ID: "null", Code: invalidReq, Message: "Invalid request"}, after}, nil},
		{"number message", "42\n" + ok, []want{{ID: "null", Code: invalidReq}, after}, nil},
		{"null message", "null\n" + ok, []want{{ID: "null", Code: invalidReq}, after}, nil},
		{"empty object", "{}\n" + ok, []want{{ID: "null", Code: invalidReq}, after}, nil},
		{"jsonrpc 1.0 keeps the id", `{"jsonrpc":"1.0","id":3,"method":"a"}` + "\n" + ok, []want{{ID: "3", Code: invalidReq, Message: "Invalid request"}, after}, nil},
		{"jsonrpc missing", `{"id":"x","method":"a"}` + "\n" + ok, []want{{ID: `"x"`, Code: invalidReq}, after}, nil},
		{"jsonrpc as number", `{"jsonrpc":2.0,"id":3,"method":"a"}` + "\n" + ok, []want{{ID: "3", Code: invalidReq}, after}, nil},
		{"jsonrpc escaped is fine", `{"jsonrpc":"2\u002e0","id":3,"method":"a"}` + "\n", []want{{ID: "3", Method: "a"}}, nil},
		{"negative id kept in an error", `{"jsonrpc":"1.0","id":-5,"method":"a"}` + "\n" + ok, []want{{ID: "-5", Code: invalidReq}, after}, nil},
		{"method not a string", `{"jsonrpc":"2.0","id":4,"method":5}` + "\n" + ok, []want{{ID: "4", Code: invalidReq}, after}, nil},
		{"method null", `{"jsonrpc":"2.0","id":4,"method":null}` + "\n" + ok, []want{{ID: "4", Code: invalidReq}, after}, nil},
		{"method missing", `{"jsonrpc":"2.0","id":4}` + "\n" + ok, []want{{ID: "4", Code: invalidReq}, after}, nil},
		{"method missing and bad id", `{"jsonrpc":"2.0","id":1.5}` + "\n" + ok, []want{{ID: "null", Code: invalidReq}, after}, nil},
		{"notification with bad version", `{"jsonrpc":"1.0","method":"a"}` + "\n" + ok, []want{{ID: "null", Code: invalidReq}, after}, nil},
		{"method with result", `{"jsonrpc":"2.0","id":4,"method":"a","result":1}` + "\n" + ok, []want{{ID: "4", Code: invalidReq}, after}, nil},
		{"duplicate method", `{"jsonrpc":"2.0","id":4,"method":"a","method":"b"}` + "\n" + ok, []want{{ID: "4", Code: invalidReq}, after}, nil},
		{"duplicate id", `{"jsonrpc":"2.0","id":4,"id":5,"method":"a"}` + "\n" + ok, []want{{ID: "null", Code: invalidReq}, after}, nil},
		{"escaped key counts as id", `{"jsonrpc":"2.0","\u0069d":-4,"method":"a"}` + "\n", []want{{ID: "-4", Method: "a"}}, nil},

		{"response with result dropped", `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n" + ok, []want{after}, nil},
		{"response with null result dropped", `{"jsonrpc":"2.0","id":1,"result":null}` + "\n" + ok, []want{after}, nil},
		{"response with error dropped", `{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"x"}}` + "\n" + ok, []want{after}, nil},
		{"response with bad version dropped", `{"jsonrpc":"1.0","id":true,"result":1}` + "\n" + ok, []want{after}, nil},

		{"notification passes, no reply", req("", "notifications/initialized") + "\n" + ok, []want{after}, []string{"notifications/initialized"}},
		{"notification tools/call not answered", `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x"}}` + "\n", nil, []string{"tools/call"}},
		{"case variants of members are dropped", `{"jsonrpc":"2.0","id":1,"method":"a","Method":5,"RESULT":1,"ID":null,"Error":{}}` + "\n", []want{{ID: "1", Method: "a"}}, nil},
		{"unknown members are dropped", `{"jsonrpc":"2.0","id":1,"method":"a","meta":5,"extra":[1,2,{"x":"}"}]}` + "\n", []want{{ID: "1", Method: "a"}}, nil},
		{"members in any order", `{"params":{"a":[1,"]"]},"method":"a","id":"q","jsonrpc":"2.0"}` + "\n", []want{{ID: `"q"`, Method: "a"}}, nil},

		{"blank and whitespace lines", "\n\n   \n\t\r\n" + req("1", "a") + "\n\n", []want{{ID: "1", Method: "a"}}, nil},
		{"CRLF", req("1", "a") + "\r\n" + req("2", "b") + "\r\n", []want{{ID: "1", Method: "a"}, {ID: "2", Method: "b"}}, nil},
		{"surrounding whitespace", "  \t" + req("1", "a") + " \r\n", []want{{ID: "1", Method: "a"}}, nil},
		{"no final newline", req("1", "a"), []want{{ID: "1", Method: "a"}}, nil},
		{"form feed is not whitespace", "\f" + req("1", "a") + "\n" + ok, []want{{ID: "null", Code: parseErr}, after}, nil},

		{"Content-Length frame", clFrame(req("1", "a")), []want{{ID: "1", Method: "a"}}, nil},
		{"Content-Length frames back to back", clFrame(req("1", "a")) + clFrame(req("2", "b")), []want{{ID: "1", Method: "a"}, {ID: "2", Method: "b"}}, nil},
		{"Content-Length then NDJSON", clFrame(req("1", "a")) + "\r\n" + req("2", "b") + "\n", []want{{ID: "1", Method: "a"}, {ID: "2", Method: "b"}}, nil},
		{"lower-case header, no space", "content-length:" + strings.TrimPrefix(clFrame(req("1", "a")), "Content-Length: "), []want{{ID: "1", Method: "a"}}, nil},
		{"upper-case header", "CONTENT-LENGTH: " + strings.TrimPrefix(clFrame(req("1", "a")), "Content-Length: "), []want{{ID: "1", Method: "a"}}, nil},
		{"LF-only headers", "Content-Length: 40\n\n" + req("1", "ping") + "\n", []want{{ID: "1", Method: "ping"}}, nil},
		{"extra headers", "Content-Length: 37\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n" + req("1", "a"), []want{{ID: "1", Method: "a"}}, nil},
		{"pretty-printed body", clFrame("{\n  \"jsonrpc\": \"2.0\",\n  \"id\": -9,\n  \"method\": \"a\"\n}\n"), []want{{ID: "-9", Method: "a"}}, nil},
		{"Content-Length body is garbage", clFrame("nope") + "\n" + ok, []want{{ID: "null", Code: parseErr}, after}, nil},
		{"Content-Length body is a batch", clFrame("["+req("1", "a")+"]") + "\n" + ok, []want{{ID: "null", Code: invalidReq, Message: "Batch requests are not supported"}, after}, nil},
		{"duplicate Content-Length", "Content-Length: 37\r\nContent-Length: 37\r\n\r\n" + req("1", "a") + "\n" + ok, []want{{ID: "null", Code: parseErr}, {ID: "1", Method: "a"}, after}, nil},
		{"non-numeric Content-Length", "Content-Length: abc\r\n\r\n" + ok, []want{{ID: "null", Code: parseErr}, after}, nil},
		{"signed Content-Length", "Content-Length: +37\r\n\r\n" + ok, []want{{ID: "null", Code: parseErr}, after}, nil},
		{"empty Content-Length", "Content-Length:\r\n\r\n" + ok, []want{{ID: "null", Code: parseErr}, after}, nil},
		{"zero Content-Length", "Content-Length: 0\r\n\r\n" + ok, []want{{ID: "null", Code: parseErr}, after}, nil},
		{"huge Content-Length is refused", "Content-Length: 99999999999999999999999999\r\n\r\n" + ok, []want{{ID: "null", Code: parseErr}, after}, nil},
		{"Content-Length shorter than the body", "Content-Length: 5\r\n\r\n" + req("1", "a") + "\n" + ok, []want{{ID: "null", Code: parseErr}, {ID: "null", Code: parseErr}, after}, nil},
		{"Content-Length longer than the body", "Content-Length: 47\r\n\r\n" + req("1", "a") + "\nxxxxxxxxxyyyy\n" + ok, []want{{ID: "null", Code: parseErr}, {ID: "null", Code: parseErr}, after}, nil},
		{"malformed header line", "Content-Length: 37\r\n" + req("7", "lost") + "\n" + ok, []want{{ID: "null", Code: parseErr}, after}, nil},
		{"header block over 8 KiB", "Content-Length: 37\r\nX-Pad: " + strings.Repeat("p", 9000) + "\r\n\r\n" + req("1", "a") + "\n" + ok, []want{{ID: "null", Code: parseErr}, {ID: "1", Method: "a"}, after}, nil},
		{"header line over 8 KiB", "Content-Length: 37" + strings.Repeat(" ", 9000) + "\r\n\r\n" + ok, []want{{ID: "null", Code: parseErr}, after}, nil},
		{"Content-Length cut short by EOF", "Content-Length: 37\r\n\r\n{\"jsonrpc\"", nil, nil},
		{"header block cut short by EOF", "Content-Length: 37\r\n", nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, notifs := serve(t, []byte(tc.input))
			checkReplies(t, parseReplies(t, out), tc.want)
			if strings.Join(notifs, ",") != strings.Join(tc.notifs, ",") {
				t.Errorf("notifications %q, want %q", notifs, tc.notifs)
			}
		})
	}
}

func TestErrorShapes(t *testing.T) {
	out, _ := serve(t, []byte("nope\n[1]\n"+req("1.5", "a")+"\n"+`{"jsonrpc":"1.0","id":"k","method":"a"}`+"\n"))
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	wants := []string{
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":{"details":"invalid character 'o' in literal null (expecting 'u')"}}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Batch requests are not supported","data":{"details":"JSON-RPC batch arrays are not supported; send one message per line"}}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request","data":{"details":"id must be an integer or a string of at most 1024 bytes (number is not an integer)"}}}`,
		`{"jsonrpc":"2.0","id":"k","error":{"code":-32600,"message":"Invalid request","data":{"details":"\"jsonrpc\" must be exactly \"2.0\", got \"1.0\""}}}`,
	}
	if len(lines) != len(wants) {
		t.Fatalf("got %d lines: %q", len(lines), lines)
	}
	for i := range wants {
		if lines[i] != wants[i] {
			t.Errorf("line %d:\n got %s\nwant %s", i, lines[i], wants[i])
		}
	}
}

func TestParamsReachHandler(t *testing.T) {
	params := `{"name":"repo.brief","arguments":{"repoPath":"/tmp/x","n":12345678901234567890,"s":"a\nb","deep":[[[{}]]]}}`
	out, _ := serve(t, []byte(`{"jsonrpc":"2.0","id":-1,"method":"tools/call","params":`+params+`}`+"\n"))
	rs := parseReplies(t, out)
	checkReplies(t, rs, []want{{ID: "-1", Method: "tools/call"}})
	var got, exp any
	if err := json.Unmarshal(*rs[0].Result.Params, &got); err != nil {
		t.Fatal(err)
	}
	_ = json.Unmarshal([]byte(params), &exp)
	gb, _ := json.Marshal(got)
	eb, _ := json.Marshal(exp)
	if !bytes.Equal(gb, eb) {
		t.Errorf("params changed:\n got %s\nwant %s", gb, eb)
	}
}

func TestFrameLimits(t *testing.T) {
	const max = 256
	pad := func(n int) string { // a request line of exactly n bytes
		base := req("1", "a")
		return base[:len(base)-1] + `,"p":"` + strings.Repeat("x", n-len(base)-7) + `"}`
	}
	if len(pad(max)) != max {
		t.Fatalf("pad(%d) has %d bytes", max, len(pad(max)))
	}
	ok := req("2", "after") + "\n"
	after := want{ID: "2", Method: "after"}
	tests := []struct {
		name  string
		input string
		want  []want
	}{
		{"line at the cap", pad(max) + "\n" + ok, []want{{ID: "1", Method: "a"}, after}},
		{"line at the cap with CRLF", pad(max) + "\r\n" + ok, []want{{ID: "1", Method: "a"}, after}},
		{"line one over the cap", pad(max+1) + "\n" + ok, []want{{ID: "null", Code: parseErr}, after}},
		{"line far over the cap", pad(10*max) + "\n" + ok, []want{{ID: "null", Code: parseErr}, after}},
		{"over the cap at EOF", pad(10 * max), []want{{ID: "null", Code: parseErr}}},
		{"several long lines", pad(300) + "\n" + pad(301) + "\n" + ok, []want{{ID: "null", Code: parseErr}, {ID: "null", Code: parseErr}, after}},
		{"Content-Length at the cap", clFrame(pad(max)) + ok, []want{{ID: "1", Method: "a"}, after}},
		{"Content-Length over the cap", "Content-Length: 257\r\n\r\n" + ok, []want{{ID: "null", Code: parseErr}, after}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// The echo reply of a 100-byte request is larger than 100
			// bytes: check the requests arrive, not their echoes.
			out, _ := serve(t, []byte(tc.input), WithMaxFrameSize(max))
			rs := parseReplies(t, out)
			if len(rs) != len(tc.want) {
				t.Fatalf("got %d replies, want %d: %s", len(rs), len(tc.want), out)
			}
			for i, w := range tc.want {
				r := rs[i]
				if string(r.ID) != w.ID {
					t.Errorf("reply %d: id %s, want %s", i, r.ID, w.ID)
				}
				switch {
				case w.Code == parseErr && (r.Error == nil || r.Error.Code != parseErr):
					t.Errorf("reply %d: want a parse error: %s", i, r.line)
				case w.Code == 0 && r.Error != nil && r.Error.Message != msgTooLarge:
					t.Errorf("reply %d: want the request served: %s", i, r.line)
				}
			}
		})
	}
}

func TestOversizeResponse(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":-7,"method":"big","params":{"size":2000}}` + "\n" +
		`{"jsonrpc":"2.0","id":"s","method":"big","params":{"size":10}}` + "\n"
	out, _ := serve(t, []byte(in), WithMaxFrameSize(1000))
	rs := parseReplies(t, out)
	if len(rs) != 2 {
		t.Fatalf("replies: %s", out)
	}
	want := `{"jsonrpc":"2.0","id":-7,"error":{"code":-32603,"message":"Response exceeds the MCP frame limit","data":{"details":"the response serialized to 2037 bytes, more than the 1000-byte frame limit","limitBytes":1000,"serializedBytes":2037,"retryable":true}}}`
	if rs[0].line != want {
		t.Errorf("oversize reply:\n got %s\nwant %s", rs[0].line, want)
	}
	if rs[1].line != `{"id":"s","result":"xxxxxxxxxx","jsonrpc":"2.0"}` {
		t.Errorf("small reply: %s", rs[1].line)
	}
}

func TestUnmarshalableResponse(t *testing.T) {
	out, _ := serve(t, []byte(req("-3", "unmarshalable")+"\n"+req("4", "unmarshalable")+"\n"))
	rs := parseReplies(t, out)
	checkReplies(t, rs, []want{{ID: "-3", Code: internal}, {ID: "4", Code: internal}})
	for _, r := range rs {
		var d struct {
			Details   string
			Retryable *bool
		}
		_ = json.Unmarshal(r.Error.Data, &d)
		if d.Retryable == nil || *d.Retryable || d.Details == "" {
			t.Errorf("data = %s, want details and retryable:false", r.Error.Data)
		}
	}
}

// TestIDMapping drives ReadObject/WriteObject by hand, as the host does.
func TestIDMapping(t *testing.T) {
	in := req("-5", "slow") + "\n" + req(`"\u0037"`, "b") + "\n" + req("8", "c") + "\n" + req(`"s"`, "d") + "\n" + req(`"\u0000fluxgit-rpc:1"`, "e") + "\n"
	var out bytes.Buffer
	s := NewStream(strings.NewReader(in), &out, WithLogger(nil))
	var reqs []jsonrpc2.Request
	for {
		var r jsonrpc2.Request
		err := s.ReadObject(&r)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		reqs = append(reqs, r)
	}
	if len(reqs) != 5 {
		t.Fatalf("read %d requests", len(reqs))
	}
	if got := s.env.ids.len(); got != 3 {
		t.Errorf("%d substitutions in flight, want 3", got)
	}
	// Substituted ids are private strings; others are as sent.
	for i, r := range reqs[:5] {
		priv := r.ID.IsString && strings.HasPrefix(r.ID.Str, privatePrefix)
		if wantPriv := i == 0 || i == 1 || i == 4; priv != wantPriv {
			t.Errorf("request %d: id %s private=%v", i, r.ID, priv)
		}
	}
	if reqs[2].ID != (jsonrpc2.ID{Num: 8}) || reqs[3].ID != (jsonrpc2.ID{Str: "s", IsString: true}) {
		t.Errorf("pass-through ids changed: %v %v", reqs[2].ID, reqs[3].ID)
	}
	if reqs[4].ID.Str == privatePrefix+"1" {
		t.Errorf("a client id with the private prefix reached the handler unchanged")
	}

	// OriginalID gives the client's bytes.
	for i, want := range []string{"-5", `"\u0037"`, "8", `"s"`, `"\u0000fluxgit-rpc:1"`} {
		if got := string(s.OriginalID(reqs[i].ID)); got != want {
			t.Errorf("OriginalID(%v) = %s, want %s", reqs[i].ID, got, want)
		}
	}

	// HandlerID translates a cancellation's requestId, by value.
	for _, tc := range []struct {
		client string
		want   jsonrpc2.ID
		ok     bool
	}{
		{"-5", reqs[0].ID, true},
		{" -5 ", reqs[0].ID, true},
		{`"7"`, reqs[1].ID, true},
		{`"\u0037"`, reqs[1].ID, true},
		{"8", jsonrpc2.ID{Num: 8}, true},
		{`"s"`, jsonrpc2.ID{Str: "s", IsString: true}, true},
		{`"\u0000fluxgit-rpc:1"`, reqs[4].ID, true},
		{`"\u0038"`, jsonrpc2.ID{Str: "8", IsString: true}, true}, // another spelling of a pass-through string
		{`"\u0073"`, jsonrpc2.ID{Str: "s", IsString: true}, true},
		{`"\u0000fluxgit-rpc:2"`, jsonrpc2.ID{}, false},
		{"-6", jsonrpc2.ID{}, false},
		{"1.5", jsonrpc2.ID{}, false},
		{"null", jsonrpc2.ID{}, false},
		{"", jsonrpc2.ID{}, false},
		{"{", jsonrpc2.ID{}, false},
	} {
		got, ok := s.HandlerID(json.RawMessage(tc.client))
		if ok != tc.ok || got != tc.want {
			t.Errorf("HandlerID(%s) = %v, %v; want %v, %v", tc.client, got, ok, tc.want, tc.ok)
		}
	}

	// Responses restore the ids and release the substitutions.
	for _, r := range reqs[:4] {
		res := json.RawMessage(`{}`)
		if err := s.WriteObject(&jsonrpc2.Response{ID: r.ID, Result: &res}); err != nil {
			t.Fatal(err)
		}
	}
	// WriteError writes the client's id verbatim, even one that looks like
	// a private id, and releases the substitution it answers.
	if err := s.WriteError(s.OriginalID(reqs[4].ID), -32800, "Request cancelled", nil); err != nil {
		t.Fatal(err)
	}
	want := `{"id":-5,"result":{},"jsonrpc":"2.0"}
{"id":"\u0037","result":{},"jsonrpc":"2.0"}
{"id":8,"result":{},"jsonrpc":"2.0"}
{"id":"s","result":{},"jsonrpc":"2.0"}
{"jsonrpc":"2.0","id":"\u0000fluxgit-rpc:1","error":{"code":-32800,"message":"Request cancelled"}}
`
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), want)
	}
	if got := s.env.ids.len(); got != 0 {
		t.Errorf("%d substitutions left, want 0", got)
	}
	if _, ok := s.HandlerID(json.RawMessage("-5")); ok {
		t.Errorf("HandlerID(-5) still resolves after its response")
	}
	if s.OriginalID(reqs[0].ID) != nil {
		t.Errorf("OriginalID of an answered substituted id is not nil")
	}
	// A second response for an answered substituted id is refused.
	res := json.RawMessage(`1`)
	if err := s.WriteObject(&jsonrpc2.Response{ID: reqs[0].ID, Result: &res}); err == nil {
		t.Errorf("duplicate response written")
	}
}

func TestWriteError(t *testing.T) {
	var out bytes.Buffer
	s := NewStream(strings.NewReader(""), &out, WithLogger(nil))
	if err := s.WriteError(nil, -32601, "Method not found", map[string]string{"method": "x"}); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteError(json.RawMessage(` "a" `), -32602, "Invalid params", nil); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteError(json.RawMessage(`{bad`), 1, "x", nil); err == nil {
		t.Error("WriteError accepted an id that is not JSON")
	}
	if err := s.WriteError(json.RawMessage(`"\u0000fluxgit-rpc:99"`), 1, "x", nil); err != nil {
		t.Error(err)
	}
	want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"Method not found","data":{"method":"x"}}}
{"jsonrpc":"2.0","id":"a","error":{"code":-32602,"message":"Invalid params"}}
{"jsonrpc":"2.0","id":"\u0000fluxgit-rpc:99","error":{"code":1,"message":"x"}}
`
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), want)
	}
}

func TestWriteObjectNonResponses(t *testing.T) {
	var out bytes.Buffer
	s := NewStream(strings.NewReader(""), &out, WithLogger(nil), WithMaxFrameSize(200))
	params := json.RawMessage(`{"uri":"shift://status"}`)
	if err := s.WriteObject(&jsonrpc2.Request{Method: "notifications/resources/updated", Params: &params, Notif: true}); err != nil {
		t.Fatal(err)
	}
	big := json.RawMessage(`"` + strings.Repeat("x", 300) + `"`)
	if err := s.WriteObject(&jsonrpc2.Request{Method: "n", Params: &big, Notif: true}); err == nil {
		t.Error("oversize notification written")
	}
	if err := s.WriteObject(func() {}); err == nil {
		t.Error("unmarshalable value written")
	}
	want := `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"shift://status"}}` + "\n"
	if out.String() != want {
		t.Errorf("output %q, want %q", out.String(), want)
	}
}

type flushRecorder struct {
	bytes.Buffer
	flushedAt []int
}

func (f *flushRecorder) Flush() error {
	f.flushedAt = append(f.flushedAt, f.Len())
	return nil
}

func TestFlushEachMessage(t *testing.T) {
	var fr flushRecorder
	bw := bufio.NewWriterSize(&fr, 1<<16)
	s := NewStream(strings.NewReader(""), bw, WithLogger(nil))
	res := json.RawMessage(`true`)
	for i := uint64(1); i <= 3; i++ {
		if err := s.WriteObject(&jsonrpc2.Response{ID: jsonrpc2.ID{Num: i}, Result: &res}); err != nil {
			t.Fatal(err)
		}
		if bw.Buffered() != 0 {
			t.Fatalf("message %d left %d bytes in the buffer", i, bw.Buffered())
		}
	}
	if strings.Count(fr.String(), "\n") != 3 || strings.Contains(fr.String(), "Content-Length") {
		t.Errorf("output %q", fr.String())
	}
}

type closeCounter struct {
	io.Reader
	io.Writer
	n int
}

func (c *closeCounter) Close() error { c.n++; return nil }

func TestClose(t *testing.T) {
	r := &closeCounter{Reader: strings.NewReader("")}
	w := &closeCounter{Writer: io.Discard}
	s := NewStream(r, w)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	if r.n != 1 || w.n != 1 {
		t.Errorf("closes: reader %d, writer %d", r.n, w.n)
	}
	rw := &closeCounter{Reader: strings.NewReader(""), Writer: io.Discard}
	_ = NewStream(rw, rw).Close()
	if rw.n != 1 {
		t.Errorf("a ReadWriteCloser closed %d times", rw.n)
	}
	_ = NewStream(strings.NewReader(""), io.Discard).Close() // no closers
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("stdout closed") }

type failingReader struct{ data io.Reader }

func (f failingReader) Read(p []byte) (int, error) {
	n, err := f.data.Read(p)
	if errors.Is(err, io.EOF) {
		return n, errors.New("read failure")
	}
	return n, err
}

func TestIOErrors(t *testing.T) {
	s := NewStream(strings.NewReader("garbage\n"), failingWriter{}, WithLogger(nil))
	var v jsonrpc2.Request
	if err := s.ReadObject(&v); err == nil || !strings.Contains(err.Error(), "stdout closed") {
		t.Errorf("ReadObject with a failing writer: %v", err)
	}

	s = NewStream(failingReader{strings.NewReader(req("1", "a") + "\n")}, io.Discard, WithLogger(nil))
	if err := s.ReadObject(&v); err != nil || v.Method != "a" {
		t.Fatalf("first read: %v %v", err, v)
	}
	for range 2 { // sticky
		if err := s.ReadObject(&v); err == nil || err.Error() != "read failure" {
			t.Errorf("read error: %v", err)
		}
	}

	s = NewStream(strings.NewReader(""), io.Discard, WithLogger(nil))
	if err := s.ReadObject(&v); !errors.Is(err, io.EOF) {
		t.Errorf("empty input: %v", err)
	}
	s = NewStream(strings.NewReader("Content-Length: 10\r\n\r\n{}"), io.Discard, WithLogger(nil))
	if err := s.ReadObject(&v); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("truncated body: %v", err)
	}
	s = NewStream(strings.NewReader(req("1", "a")), io.Discard, WithLogger(nil))
	if err := s.ReadObject(nil); err == nil {
		t.Errorf("ReadObject(nil) succeeded")
	}
}

// TestNoAllocation checks that refused frames are not buffered.
func TestNoAllocation(t *testing.T) {
	measure := func(input []byte) (allocated uint64, out string) {
		var buf bytes.Buffer
		s := NewStream(bytes.NewReader(input), &buf, WithLogger(nil))
		var v jsonrpc2.Request
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		err := s.ReadObject(&v)
		runtime.ReadMemStats(&after)
		if err != nil || v.Method != "after" {
			t.Fatalf("ReadObject: %v %+v", err, v)
		}
		return after.TotalAlloc - before.TotalAlloc, buf.String()
	}
	ok := req("1", "after") + "\n"

	alloc, out := measure([]byte("Content-Length: 1099511627776\r\n\r\n" + ok))
	if alloc > 1<<20 || !strings.Contains(out, `"code":-32700`) {
		t.Errorf("huge Content-Length: %d bytes allocated, output %s", alloc, out)
	}
	alloc, out = measure([]byte("Content-Length: 8388609\r\n\r\n" + ok))
	if alloc > 1<<20 || !strings.Contains(out, "exceeds the 8388608-byte frame limit") {
		t.Errorf("Content-Length cap+1: %d bytes allocated, output %s", alloc, out)
	}
	// A line is buffered up to the cap (it might still end in time), never
	// beyond: a 40 MiB line costs about 2×8 MiB of allocations.
	alloc, out = measure([]byte(strings.Repeat("x", 40<<20) + "\n" + ok))
	if alloc > 20<<20 || !strings.Contains(out, `"code":-32700`) || !strings.Contains(out, `"limitBytes":8388608`) {
		t.Errorf("40 MiB line: %d bytes allocated, output %s", alloc, out)
	}
	t.Logf("40 MiB line: %d bytes allocated", alloc)
}

func TestConcurrentWrites(t *testing.T) {
	var buf bytes.Buffer
	s := NewStream(strings.NewReader(strings.Repeat("junk\n", 50)), &buf, WithLogger(nil))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var v jsonrpc2.Request
		_ = s.ReadObject(&v) // answers 50 parse errors
	}()
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := json.RawMessage(`"` + strings.Repeat("r", 1000) + `"`)
			for j := range 50 {
				_ = s.WriteObject(&jsonrpc2.Response{ID: jsonrpc2.ID{Num: uint64(i*100 + j)}, Result: &res})
			}
		}()
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 450 {
		t.Fatalf("%d lines", len(lines))
	}
	for _, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Fatalf("interleaved output: %q", truncate([]byte(l), 100))
		}
	}
}

func TestClassifyIDCanonical(t *testing.T) {
	// The fast path of decodeIDString must agree with the spelling the
	// stream writes: encoding/json's, with '<', '>' and '&' left unescaped.
	for _, s := range []string{"", "a", "7", "héllo", "a<b", "a>b", "a&b", "\u2028", "\u2029", "\u2027", "\x7f", "日本", "\U0001F600", "\uFFFD", `"`, `\`, "\x01"} {
		raw, _ := Marshal(s)
		v, canonical, ok := decodeIDString(raw)
		if !ok || !canonical || v != s {
			t.Errorf("decodeIDString(%s) = %q, %v, %v", raw, v, canonical, ok)
		}
		if plain := isPlainJSONString(raw[1 : len(raw)-1]); plain && !bytes.Equal(raw[1:len(raw)-1], []byte(s)) {
			t.Errorf("isPlainJSONString(%s) = true for an escaped token", raw)
		}
	}
	for _, raw := range []string{`"\u0037"`, `"\/"`, "\"\xff\"", "\"a\xc3\"", `"\ufffd"`, `"\u00e9"`, `"a\u003cb"`, `"\u0026"`, `"\u003E"`, "\"\u2028\""} {
		if _, canonical, ok := decodeIDString([]byte(raw)); !ok || canonical {
			t.Errorf("decodeIDString(%s) canonical=%v ok=%v", raw, canonical, ok)
		}
	}
}

func TestScanner(t *testing.T) {
	doc := []byte(` { "a" : "x\"}" , "b\\" : [1,{"c":"]"}] ,"id":-5, "e":{"f":[]},"g":true,"h":null,"i":1.5e3} `)
	var keys, vals []string
	eachMember(doc, func(k, v []byte) bool {
		keys = append(keys, string(k))
		vals = append(vals, string(v))
		return true
	})
	wantKeys := []string{`"a"`, `"b\\"`, `"id"`, `"e"`, `"g"`, `"h"`, `"i"`}
	wantVals := []string{`"x\"}"`, `[1,{"c":"]"}]`, `-5`, `{"f":[]}`, `true`, `null`, `1.5e3`}
	if strings.Join(keys, " ") != strings.Join(wantKeys, " ") || strings.Join(vals, " ") != strings.Join(wantVals, " ") {
		t.Errorf("keys %q vals %q", keys, vals)
	}
	start, end, ok := findMember(doc, "id")
	if !ok || string(doc[start:end]) != "-5" {
		t.Errorf("findMember id: %d %d %v", start, end, ok)
	}
	if _, _, ok := findMember(doc, "zz"); ok {
		t.Error("findMember found a missing key")
	}
}

func TestForgetAndSubstitutionLimit(t *testing.T) {
	var in strings.Builder
	for i := range MaxSubstitutions + 1 {
		in.WriteString(req("-"+strconv.Itoa(i+1), "a") + "\n")
	}
	in.WriteString(req("", "notifications/cancelled") + "\n")
	in.WriteString(req("-1", "again") + "\n")
	var out bytes.Buffer
	s := NewStream(strings.NewReader(in.String()), &out, WithLogger(nil))
	read := func() jsonrpc2.Request {
		t.Helper()
		var r jsonrpc2.Request
		if err := s.ReadObject(&r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	var reqs []jsonrpc2.Request
	for range MaxSubstitutions {
		reqs = append(reqs, read())
	}
	// Request -4097 is refused (the table is full); the notification passes.
	if r := read(); r.Method != "notifications/cancelled" {
		t.Fatalf("got %+v", r)
	}
	want := `{"jsonrpc":"2.0","id":-4097,"error":{"code":-32600,"message":"Invalid request","data":{"details":"too many requests in flight whose ids need translation (limit 4096)"}}}` + "\n"
	if out.String() != want {
		t.Errorf("output %s", out.String())
	}
	// Forgetting a cancelled request frees its slot.
	s.Forget(reqs[0].ID)
	s.Forget(jsonrpc2.ID{Num: 5}) // not substituted: no-op
	if s.OriginalID(reqs[0].ID) != nil {
		t.Error("a forgotten id still resolves")
	}
	r := read()
	if r.Method != "again" || string(s.OriginalID(r.ID)) != "-1" {
		t.Errorf("after Forget: %+v (original %s)", r, s.OriginalID(r.ID))
	}
}
