package rpc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"unicode/utf8"

	"github.com/sourcegraph/jsonrpc2"
)

// Action says what a transport does with a frame after Envelope.Inspect.
type Action int

const (
	// Deliver: hand Verdict.Message to jsonrpc2 (it is what ReadObject
	// decodes). Nothing is written to the peer.
	Deliver Action = iota + 1
	// Answer: write Verdict.Reply to the peer. Nothing reaches jsonrpc2.
	Answer
	// Drop: write nothing and deliver nothing; log Verdict.Details.
	Drop
)

// String names the action for logs and test failures.
func (a Action) String() string {
	switch a {
	case Deliver:
		return "deliver"
	case Answer:
		return "answer"
	case Drop:
		return "drop"
	}
	return "Action(" + strconv.Itoa(int(a)) + ")"
}

// InvalidResponseMessage is error.message of the error an Envelope delivers
// to jsonrpc2, with code -32600 and data.details, in place of a malformed
// response to a request this side sent: the waiting Call fails at once
// instead of waiting for an answer that will never be well-formed.
const InvalidResponseMessage = "Invalid response"

// Verdict is an Envelope's judgement of one frame.
type Verdict struct {
	Action Action
	// Message (Deliver) is the canonical message for jsonrpc2: a request
	// {"jsonrpc":"2.0","id":…,"method":…,"params":…} (id substituted where
	// needed), or a response {"jsonrpc":"2.0","id":N,"result"|"error":…} to
	// a request this side sent.
	Message []byte
	// Response (Deliver) reports that Message is a response.
	Response bool
	// Reply (Answer) is one compact JSON-RPC error response, without a line
	// terminator.
	Reply []byte
	// Code (Answer) is Reply's error.code.
	Code int64
	// Details says what was wrong (Answer: also Reply's error.data.details;
	// Drop; Deliver of an InvalidResponseMessage error).
	Details string

	id          []byte // Deliver request: the peer's raw id, nil for a notification
	sub         uint64 // Deliver request: substitution to release if decoding fails
	outID       uint64 // Deliver response: the request id it answers
	synthesized bool   // Deliver response: Message is an InvalidResponseMessage error
}

// Envelope applies the envelope rules of one connection independently of
// how frames are delimited: Inspect judges an incoming frame, Outbound
// prepares an outgoing message. It owns the request-id substitutions
// (OriginalID, HandlerID, Forget) and the ids of the requests this side sent
// that still await a response (Call, ForgetOutgoing). One Envelope serves
// one connection; its methods are safe for concurrent use, but frames must
// be inspected in the order they arrived.
type Envelope struct {
	max  int
	logf func(format string, args ...any)
	ids  idTable
	out  outTable
}

// NewEnvelope returns an Envelope. WithMaxFrameSize caps the messages
// Outbound produces and the error replies it builds; the logger options set
// where Outbound reports what it refused or replaced.
func NewEnvelope(opts ...Option) *Envelope {
	return newEnvelope(newConfig(opts))
}

func newEnvelope(c config) *Envelope {
	e := &Envelope{max: c.max, logf: c.logf}
	e.ids.init()
	e.out.init()
	return e
}

// MaxFrameSize reports the frame cap in bytes.
func (e *Envelope) MaxFrameSize() int { return e.max }

// envelope holds the spans of the members the rules care about.
type envelope struct {
	jsonrpc, id, method, params, result, error []byte
	duplicate                                  string
}

// Inspect applies the envelope rules to one frame: one complete JSON text
// (surrounding whitespace is ignored). A Deliver verdict for a request with
// a substituted id records the substitution before Inspect returns.
func (e *Envelope) Inspect(frame []byte) Verdict {
	frame = trimSpace(frame)
	if !json.Valid(frame) {
		return e.answer(nil, jsonrpc2.CodeParseError, msgParseError, syntaxDetails(frame))
	}
	switch frame[0] {
	case '{':
	case '[':
		return e.answer(nil, jsonrpc2.CodeInvalidRequest, msgBatch, "JSON-RPC batch arrays are not supported; send one message per line")
	default:
		return e.answer(nil, jsonrpc2.CodeInvalidRequest, msgInvalidRequest, "a JSON-RPC message must be a JSON object")
	}

	env := scanEnvelope(frame)
	if env.method == nil && (env.result != nil || env.error != nil) {
		return e.inspectResponse(&env)
	}

	var cls idClass
	if env.id != nil {
		cls = classifyID(env.id)
		if cls.kind == idInvalid {
			return e.answer(nil, jsonrpc2.CodeInvalidRequest, msgInvalidRequest,
				fmt.Sprintf("id must be an integer or a string of at most %d bytes (%s)", MaxIDBytes, cls.reason))
		}
	}
	invalid := func(details string) Verdict {
		return e.answer(env.id, jsonrpc2.CodeInvalidRequest, msgInvalidRequest, details)
	}
	switch {
	case env.duplicate == "id":
		return e.answer(nil, jsonrpc2.CodeInvalidRequest, msgInvalidRequest, `duplicate member "id"`)
	case env.duplicate != "":
		return invalid(fmt.Sprintf("duplicate member %q", env.duplicate))
	case env.jsonrpc == nil:
		return invalid(`missing member "jsonrpc"; it must be "2.0"`)
	case !isVersion20(env.jsonrpc):
		return invalid(fmt.Sprintf(`"jsonrpc" must be exactly "2.0", got %s`, truncate(env.jsonrpc, 32)))
	case env.method == nil:
		return invalid(`missing member "method"`)
	case env.method[0] != '"':
		return invalid(`"method" must be a string`)
	case env.result != nil || env.error != nil:
		return invalid(`a request must not contain "result" or "error"`)
	}

	// Canonical request: {"jsonrpc":"2.0","id":…,"method":…,"params":…}.
	size := 40 + len(env.method) + len(env.params) + len(env.id) + len(privateJSONPrefix)
	canon := make([]byte, 0, size)
	canon = append(canon, `{"jsonrpc":"2.0"`...)
	v := Verdict{Action: Deliver, id: env.id}
	if env.id != nil {
		canon = append(canon, `,"id":`...)
		if cls.kind == idSubstitute {
			n, ok := e.ids.substitute(env.id, cls.key)
			if !ok {
				return invalid(fmt.Sprintf("too many requests in flight whose ids need translation (limit %d)", MaxSubstitutions))
			}
			v.sub = n
			canon = appendPrivateID(canon, n)
		} else {
			canon = append(canon, env.id...)
		}
	}
	canon = append(canon, `,"method":`...)
	canon = append(canon, env.method...)
	if env.params != nil {
		canon = append(canon, `,"params":`...)
		canon = append(canon, env.params...)
	}
	v.Message = append(canon, '}')
	return v
}

// scanEnvelope collects the envelope members of the valid JSON object frame.
func scanEnvelope(frame []byte) envelope {
	var env envelope
	eachMember(frame, func(key, val []byte) bool {
		var slot *[]byte
		switch string(memberNameBytes(key)) {
		case "jsonrpc":
			slot = &env.jsonrpc
		case "id":
			slot = &env.id
		case "method":
			slot = &env.method
		case "params":
			slot = &env.params
		case "result":
			slot = &env.result
		case "error":
			slot = &env.error
		default:
			return true // other members are dropped
		}
		if *slot != nil && env.duplicate == "" {
			env.duplicate = memberName(key)
		}
		*slot = val
		return true
	})
	return env
}

// inspectResponse judges a message with result or error and no method. Only
// an answer to a request this side sent and still awaits goes to jsonrpc2.
func (e *Envelope) inspectResponse(env *envelope) Verdict {
	n, ok := outgoingIDOf(env.id)
	if !ok || env.duplicate == "id" || !e.out.take(n) {
		return Verdict{Action: Drop, Details: fmt.Sprintf("response-like message (id %s) ignored: no request of this server awaits it", idForLog(env.id))}
	}
	canon, problem := canonicalResponse(n, env)
	if problem != "" {
		return invalidResponse(n, problem)
	}
	return Verdict{Action: Deliver, Response: true, Message: canon, outID: n}
}

// canonicalResponse re-encodes a response to request n as
// {"jsonrpc":"2.0","id":n,"result":…} or
// {"jsonrpc":"2.0","id":n,"error":{"code":…,"message":…,"data":…}}, or says
// what is wrong with it.
func canonicalResponse(n uint64, env *envelope) (canon []byte, problem string) {
	switch {
	case env.duplicate != "":
		return nil, fmt.Sprintf("duplicate member %q", env.duplicate)
	case env.jsonrpc == nil:
		return nil, `missing member "jsonrpc"; it must be "2.0"`
	case !isVersion20(env.jsonrpc):
		return nil, fmt.Sprintf(`"jsonrpc" must be exactly "2.0", got %s`, truncate(env.jsonrpc, 32))
	case env.result != nil && env.error != nil:
		return nil, `a response must contain exactly one of "result" and "error", not both`
	}
	canon = make([]byte, 0, 64+len(env.result)+len(env.error))
	canon = append(canon, `{"jsonrpc":"2.0","id":`...)
	canon = strconv.AppendUint(canon, n, 10)
	if env.result != nil {
		canon = append(canon, `,"result":`...)
		canon = append(canon, env.result...)
		return append(canon, '}'), ""
	}

	const shape = `; it must be an object with an integer "code", a string "message" and an optional "data"`
	if env.error[0] != '{' {
		return nil, `"error" is not an object` + shape
	}
	var code, message, data []byte
	dup := ""
	eachMember(env.error, func(key, val []byte) bool {
		var slot *[]byte
		switch string(memberNameBytes(key)) {
		case "code":
			slot = &code
		case "message":
			slot = &message
		case "data":
			slot = &data
		default:
			return true
		}
		if *slot != nil && dup == "" {
			dup = memberName(key)
		}
		*slot = val
		return true
	})
	if dup != "" {
		return nil, fmt.Sprintf(`duplicate member %q in "error"`, dup)
	}
	if code == nil {
		return nil, `"error.code" is missing` + shape
	}
	c, err := strconv.ParseInt(string(code), 10, 64)
	if err != nil {
		return nil, fmt.Sprintf(`"error.code" must be an integer of at most 64 bits, got %s`, truncate(code, 32))
	}
	if message == nil || message[0] != '"' {
		return nil, `"error.message" is missing or not a string` + shape
	}
	canon = append(canon, `,"error":{"code":`...)
	canon = strconv.AppendInt(canon, c, 10)
	canon = append(canon, `,"message":`...)
	canon = append(canon, message...)
	if data != nil {
		canon = append(canon, `,"data":`...)
		canon = append(canon, data...)
	}
	return append(canon, "}}"...), ""
}

// invalidResponse is the error delivered to jsonrpc2 in place of a
// malformed response to request n.
func invalidResponse(n uint64, problem string) Verdict {
	details := fmt.Sprintf("the response to request %d is malformed: %s", n, problem)
	b, err := Marshal(errorResponse{JSONRPC: "2.0", ID: strconv.AppendUint(nil, n, 10), Error: errorObject{
		Code: jsonrpc2.CodeInvalidRequest, Message: InvalidResponseMessage, Data: detailsData{Details: details}}})
	if err != nil { // cannot happen: every part is a plain value
		b = []byte(`{"jsonrpc":"2.0","id":` + strconv.FormatUint(n, 10) + `,"error":{"code":-32600,"message":"` + InvalidResponseMessage + `"}}`)
	}
	return Verdict{Action: Deliver, Response: true, Message: b, Details: details, outID: n, synthesized: true}
}

// outgoingIDOf parses an id that can only match an outgoing request's:
// plain decimal digits within uint64 (jsonrpc2 numbers its requests so).
func outgoingIDOf(raw []byte) (uint64, bool) {
	if len(raw) == 0 || len(raw) > 20 {
		return 0, false
	}
	for _, c := range raw {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	if len(raw) > 1 && raw[0] == '0' {
		return 0, false
	}
	n, err := strconv.ParseUint(string(raw), 10, 64)
	return n, err == nil
}

// Refused turns a Deliver verdict whose Message the caller's decoder
// (jsonrpc2) would not accept into what to do instead: a request is answered
// with -32600 and its substitution released; a response becomes an
// InvalidResponseMessage error for the waiting call. Other verdicts are
// returned unchanged.
func (e *Envelope) Refused(v Verdict, cause error) Verdict {
	if v.Action != Deliver {
		return v
	}
	if v.Response {
		if v.synthesized {
			return Verdict{Action: Drop, Details: fmt.Sprintf("response to request %d cannot be delivered: %v", v.outID, cause)}
		}
		return invalidResponse(v.outID, "it cannot be decoded: "+cause.Error())
	}
	if v.sub != 0 {
		e.ids.release(v.sub)
	}
	return e.answer(v.id, jsonrpc2.CodeInvalidRequest, msgInvalidRequest, cause.Error())
}

// answer builds an Answer verdict.
func (e *Envelope) answer(id []byte, code int64, message, details string) Verdict {
	return Verdict{Action: Answer, Reply: e.encodeError(id, code, message, detailsData{Details: details}), Code: code, Details: details}
}

// Outbound serializes v (normally a jsonrpc2 message) into the bytes to
// send, without a line terminator. A response whose id was substituted gets
// the peer's original id back and releases the substitution. A response
// larger than the frame cap becomes a -32603 error with the same id
// (retryable:true); a response that cannot be serialized becomes -32603
// with retryable:false; neither is an error. A request that is not a
// notification must have an integer id; its id is recorded as awaiting a
// response before Outbound returns (ForgetOutgoing it if the transport then
// fails to send it). Anything else that is too large or cannot be
// serialized is an error.
func (e *Envelope) Outbound(v any) ([]byte, error) {
	b, _, _, err := e.outbound(v)
	return b, err
}

// outbound is Outbound, also reporting the id of an outgoing request.
func (e *Envelope) outbound(v any) (b []byte, reqID uint64, isRequest bool, err error) {
	reqID, isRequest, err = outgoingRequestID(v)
	if err != nil {
		return nil, 0, false, err
	}
	b, err = Marshal(v)
	if err != nil {
		id, ok := responseIDOf(v)
		if !ok {
			return nil, 0, false, fmt.Errorf("rpc: marshal message: %w", err)
		}
		raw, known := e.ids.restoreID(id)
		if !known {
			return nil, 0, false, fmt.Errorf("rpc: marshal response: %w (and its id %s is not in flight)", err, id)
		}
		e.logf("response %s cannot be serialized: %v", raw, err)
		return e.encodeError(raw, jsonrpc2.CodeInternalError, msgInternal, retryData{Details: "the response could not be serialized: " + err.Error(), Retryable: false}), 0, false, nil
	}
	// jsonrpc2 encodes results, error data and notification params with
	// encoding/json's HTML escaping before they reach this writer.
	b = UnescapeHTML(b)

	idStart, idEnd, hasID := findMember(b, "id")
	if hasID && !isRequest {
		if n, ok := privateIDInJSON(b[idStart:idEnd]); ok {
			raw, ok := e.ids.release(n)
			if !ok {
				e.logf("message for unknown or already answered request id %d not written", n)
				return nil, 0, false, fmt.Errorf("rpc: response for unknown or already answered request (private id %d)", n)
			}
			b = splice(b, idStart, idEnd, raw)
			idEnd = idStart + len(raw)
		}
	}
	if len(b) > e.max || containsNewline(b) {
		_, _, hasMethod := findMember(b, "method")
		if hasMethod || !hasID {
			e.logf("outgoing message of %d bytes not written: exceeds the %d-byte frame limit or contains a newline", len(b), e.max)
			return nil, 0, false, fmt.Errorf("rpc: outgoing message of %d bytes exceeds the %d-byte frame limit", len(b), e.max)
		}
		id := b[idStart:idEnd]
		if len(b) > e.max {
			e.logf("response %s of %d bytes exceeds the %d-byte frame limit", truncate(id, 64), len(b), e.max)
			return e.encodeError(id, jsonrpc2.CodeInternalError, msgTooLarge, limitData{
				Details:         fmt.Sprintf("the response serialized to %d bytes, more than the %d-byte frame limit", len(b), e.max),
				LimitBytes:      e.max,
				SerializedBytes: len(b),
				Retryable:       true,
			}), 0, false, nil
		}
		return e.encodeError(id, jsonrpc2.CodeInternalError, msgInternal, retryData{Details: "the response contains a raw line break", Retryable: false}), 0, false, nil
	}
	if isRequest {
		evicted, didEvict, err := e.out.add(reqID)
		if err != nil {
			e.logf("%v", err)
			return nil, 0, false, err
		}
		if didEvict {
			e.logf("request %d no longer awaits a response (its response will be dropped): %d requests await responses, the limit; abandoned calls must be forgotten with ForgetOutgoing", evicted, MaxPendingOutgoing)
		}
	}
	return b, reqID, isRequest, nil
}

var (
	requestType    = reflect.TypeFor[jsonrpc2.Request]()
	requestPtrType = reflect.TypeFor[*jsonrpc2.Request]()
)

// outgoingRequestID reports whether v is a request that expects a response
// (a jsonrpc2.Request, or jsonrpc2's internal message wrapper holding one in
// a field named "request", read by reflection like responseIDOf), and its
// id, which must be an integer for the response to be matched.
func outgoingRequestID(v any) (id uint64, ok bool, err error) {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface {
		if rv.IsNil() {
			return 0, false, nil
		}
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct {
		return 0, false, nil
	}
	if rv.Type() != requestType {
		f := rv.FieldByName("request")
		if !f.IsValid() || f.Type() != requestPtrType || f.IsNil() {
			return 0, false, nil
		}
		rv = f.Elem()
	}
	if rv.FieldByName("Notif").Bool() {
		return 0, false, nil
	}
	idv := rv.FieldByName("ID")
	if idv.FieldByName("IsString").Bool() {
		return 0, false, fmt.Errorf("rpc: outgoing request %q has the string id %q: responses are matched to integer ids only; let jsonrpc2 number the request or use Envelope.Call",
			rv.FieldByName("Method").String(), idv.FieldByName("Str").String())
	}
	return idv.FieldByName("Num").Uint(), true, nil
}

// ErrorResponse encodes an error response for a transport to send. id is
// the peer's id as JSON, exactly as it should appear on the wire (for a
// request a handler received, OriginalID(req.ID)); nil or empty means null.
// data, if not nil, becomes error.data. Since this answers the request, a
// substitution recorded for that id (compared by value, as HandlerID does)
// is released.
func (e *Envelope) ErrorResponse(id json.RawMessage, code int64, message string, data any) ([]byte, error) {
	raw := trimSpace(id)
	if len(raw) == 0 {
		raw = nil
	} else if !json.Valid(raw) {
		return nil, fmt.Errorf("rpc: error response: id %q is not JSON", truncate(raw, 64))
	}
	if raw != nil {
		if hid, ok := e.HandlerID(raw); ok {
			if n, ok := privateNumber(hid); ok {
				e.ids.release(n)
			}
		}
	}
	return e.encodeError(raw, code, message, data), nil
}

// encodeError encodes {"jsonrpc":"2.0","id":id,"error":{…}}; a nil id is
// null. A reply over the frame cap is replaced by msgTooLarge.
func (e *Envelope) encodeError(id []byte, code int64, message string, data any) []byte {
	b, err := Marshal(errorResponse{JSONRPC: "2.0", ID: json.RawMessage(id), Error: errorObject{Code: code, Message: message, Data: data}})
	if err != nil {
		// id or data does not serialize: fall back to what always does.
		e.logf("error response cannot be serialized: %v", err)
		return []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error","data":{"details":"the error response could not be serialized","retryable":false}}}`)
	}
	if len(b) > e.max {
		b, err = Marshal(errorResponse{JSONRPC: "2.0", ID: json.RawMessage(id), Error: errorObject{Code: jsonrpc2.CodeInternalError, Message: msgTooLarge, Data: limitData{
			Details:         fmt.Sprintf("the error response serialized to %d bytes, more than the %d-byte frame limit", len(b), e.max),
			LimitBytes:      e.max,
			SerializedBytes: len(b),
			Retryable:       true,
		}}})
		if err != nil {
			return []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Response exceeds the MCP frame limit"}}`)
		}
	}
	return b
}

// syntaxDetails describes why frame is not JSON.
func syntaxDetails(frame []byte) string {
	var raw json.RawMessage
	if err := json.Unmarshal(frame, &raw); err != nil {
		return err.Error()
	}
	return "invalid JSON"
}

func isVersion20(v []byte) bool {
	if string(v) == `"2.0"` {
		return true
	}
	if v[0] != '"' || bytes.IndexByte(v, '\\') < 0 {
		return false
	}
	var str string
	return json.Unmarshal(v, &str) == nil && str == "2.0"
}

func idForLog(id []byte) string {
	if id == nil {
		return "absent"
	}
	return truncate(id, 64)
}

// ---- request id classification ----

type idKind int

const (
	idInvalid     idKind = iota
	idPassThrough        // jsonrpc2 round-trips it byte-exactly
	idSubstitute         // replaced by a private id on the way in
)

type idClass struct {
	kind   idKind
	key    string // semantic key ("n:<digits>" or "s:<value>") for HandlerID
	str    string // the decoded value of a string id
	reason string // why an id is invalid
}

// classifyID classifies a syntactically valid JSON value used as an id.
func classifyID(raw []byte) idClass {
	switch c := raw[0]; {
	case c == '"':
		v, canonical, ok := decodeIDString(raw)
		if !ok {
			return idClass{reason: "string longer than 1024 bytes"}
		}
		cls := idClass{kind: idPassThrough, key: "s:" + v, str: v}
		if !canonical || hasPrivatePrefix(v) {
			cls.kind = idSubstitute
		}
		return cls
	case c == '-' || ('0' <= c && c <= '9'):
		if bytes.ContainsAny(raw, ".eE") {
			return idClass{reason: "number is not an integer"}
		}
		if len(raw) > MaxIDBytes {
			return idClass{reason: "integer longer than 1024 digits"}
		}
		cls := idClass{kind: idSubstitute, key: "n:" + string(raw)}
		if c != '-' && fitsInt64(raw) {
			cls.kind = idPassThrough
		}
		return cls
	case c == 'n':
		return idClass{reason: "null"}
	case c == 't' || c == 'f':
		return idClass{reason: "boolean"}
	case c == '{':
		return idClass{reason: "object"}
	default:
		return idClass{reason: "array"}
	}
}

// decodeIDString decodes a JSON string token. canonical reports whether raw
// is exactly what Outbound writes for the value (encoding/json's spelling
// with '<', '>' and '&' unescaped), i.e. whether the id goes back to the
// client byte-exactly. ok is false when the value exceeds MaxIDBytes.
func decodeIDString(raw []byte) (v string, canonical, ok bool) {
	inner := raw[1 : len(raw)-1]
	if len(inner) > 6*MaxIDBytes { // an escape is at most 6 bytes per decoded byte
		return "", false, false
	}
	if isPlainJSONString(inner) {
		if len(inner) > MaxIDBytes {
			return "", false, false
		}
		return string(inner), true, true
	}
	if err := json.Unmarshal(raw, &v); err != nil || len(v) > MaxIDBytes {
		return "", false, false
	}
	again, err := Marshal(v)
	return v, err == nil && bytes.Equal(again, raw), true
}

// isPlainJSONString reports whether inner (a string token's content) has no
// escapes and nothing encoding/json would escape: then the token is canonical.
func isPlainJSONString(inner []byte) bool {
	for i := 0; i < len(inner); i++ {
		switch c := inner[i]; {
		case c == '\\', c == '<', c == '>', c == '&', c < 0x20:
			return false
		case c == 0xE2 && i+2 < len(inner) && inner[i+1] == 0x80 && (inner[i+2] == 0xA8 || inner[i+2] == 0xA9):
			return false // U+2028, U+2029
		}
	}
	return utf8.Valid(inner)
}

// fitsInt64 reports whether a non-negative JSON integer is ≤ 2^63-1.
func fitsInt64(digits []byte) bool {
	const maxInt64 = "9223372036854775807"
	switch {
	case len(digits) < len(maxInt64):
		return true
	case len(digits) > len(maxInt64):
		return false
	}
	return string(digits) <= maxInt64
}

// ---- a scanner for syntactically valid JSON ----

// eachMember calls fn with the raw key token and raw value of each top-level
// member of the valid JSON object b, in order, until fn returns false.
func eachMember(b []byte, fn func(key, val []byte) bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return
	}
	i = skipSpace(b, i+1)
	for i < len(b) && b[i] == '"' {
		ke := skipString(b, i)
		key := b[i:ke]
		i = skipSpace(b, ke)
		if i >= len(b) || b[i] != ':' {
			return
		}
		vs := skipSpace(b, i+1)
		ve := skipValue(b, vs)
		if !fn(key, b[vs:ve]) {
			return
		}
		i = skipSpace(b, ve)
		if i >= len(b) || b[i] != ',' {
			return
		}
		i = skipSpace(b, i+1)
	}
}

// findMember returns the span of the value of the first top-level member
// named name in the valid JSON object b.
func findMember(b []byte, name string) (start, end int, ok bool) {
	eachMember(b, func(key, val []byte) bool {
		if string(memberNameBytes(key)) == name {
			start, end = spanOf(b, val)
			ok = true
			return false
		}
		return true
	})
	return start, end, ok
}

// spanOf returns the offsets of sub-slice sub within b.
func spanOf(b, sub []byte) (int, int) {
	start := cap(b) - cap(sub)
	return start, start + len(sub)
}

// memberName returns the decoded key.
func memberName(key []byte) string { return string(memberNameBytes(key)) }

// memberNameBytes returns the decoded key; plain keys are not copied.
func memberNameBytes(key []byte) []byte {
	inner := key[1 : len(key)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return inner
	}
	var v string
	if json.Unmarshal(key, &v) != nil {
		return nil
	}
	return []byte(v)
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// skipString returns the index after the string token starting at b[i] == '"'.
func skipString(b []byte, i int) int {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return len(b)
		}
		j += k
		bs := 0
		for p := j - 1; p > i && b[p] == '\\'; p-- {
			bs++
		}
		j++
		if bs%2 == 0 {
			return j
		}
	}
}

// skipValue returns the index after the value starting at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); {
			switch b[j] {
			case '"':
				j = skipString(b, j)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
			j++
		}
		return len(b)
	default: // number, true, false, null
		j := i
		for j < len(b) && !isSpace(b[j]) && b[j] != ',' && b[j] != '}' && b[j] != ']' {
			j++
		}
		return j
	}
}

// splice returns b with b[start:end] replaced by repl.
func splice(b []byte, start, end int, repl []byte) []byte {
	out := make([]byte, 0, len(b)-(end-start)+len(repl)+1)
	out = append(out, b[:start]...)
	out = append(out, repl...)
	return append(out, b[end:]...)
}

// containsNewline reports a raw line break (encoding/json never writes one).
func containsNewline(b []byte) bool {
	return bytes.IndexByte(b, '\n') >= 0 || bytes.IndexByte(b, '\r') >= 0
}
