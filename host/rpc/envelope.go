package rpc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/sourcegraph/jsonrpc2"
)

// rejection is the stream's verdict on a frame that is not handed to jsonrpc2.
type rejection struct {
	drop    bool   // a response-like message: log it, no reply
	id      []byte // reply id (raw JSON); nil means null
	code    int64
	message string
	details string
}

// request is a frame that passed: its canonical form for jsonrpc2.
type request struct {
	canon []byte
	id    []byte // the client's raw id, nil for a notification
	sub   uint64 // substitution to release if decoding fails; 0 if none
}

// envelope holds the spans of the members the stream cares about.
type envelope struct {
	jsonrpc, id, method, params, result, error []byte
	duplicate                                  string
}

// inspect applies the envelope rules to one frame (trimmed, non-empty).
func (s *Stream) inspect(frame []byte) (*request, *rejection) {
	if !json.Valid(frame) {
		return nil, &rejection{code: jsonrpc2.CodeParseError, message: msgParseError, details: syntaxDetails(frame)}
	}
	switch frame[0] {
	case '{':
	case '[':
		return nil, &rejection{code: jsonrpc2.CodeInvalidRequest, message: msgBatch,
			details: "JSON-RPC batch arrays are not supported; send one message per line"}
	default:
		return nil, &rejection{code: jsonrpc2.CodeInvalidRequest, message: msgInvalidRequest,
			details: "a JSON-RPC message must be a JSON object"}
	}

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

	if env.method == nil && (env.result != nil || env.error != nil) {
		return nil, &rejection{drop: true, details: fmt.Sprintf("response-like message (id %s) ignored: this server sends no requests", idForLog(env.id))}
	}

	var cls idClass
	if env.id != nil {
		cls = classifyID(env.id)
		if cls.kind == idInvalid {
			return nil, &rejection{code: jsonrpc2.CodeInvalidRequest, message: msgInvalidRequest,
				details: fmt.Sprintf("id must be an integer or a string of at most %d bytes (%s)", MaxIDBytes, cls.reason)}
		}
	}
	invalid := func(details string) (*request, *rejection) {
		return nil, &rejection{id: env.id, code: jsonrpc2.CodeInvalidRequest, message: msgInvalidRequest, details: details}
	}
	switch {
	case env.duplicate == "id":
		return nil, &rejection{code: jsonrpc2.CodeInvalidRequest, message: msgInvalidRequest, details: `duplicate member "id"`}
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
	req := &request{id: env.id}
	if env.id != nil {
		canon = append(canon, `,"id":`...)
		if cls.kind == idSubstitute {
			n, ok := s.ids.substitute(env.id, cls.key)
			if !ok {
				return invalid(fmt.Sprintf("too many requests in flight whose ids need translation (limit %d)", MaxSubstitutions))
			}
			req.sub = n
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
	canon = append(canon, '}')
	req.canon = canon
	return req, nil
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
// is exactly what encoding/json writes for the value, i.e. whether jsonrpc2
// echoes it byte-exactly. ok is false when the value exceeds MaxIDBytes.
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
	again, err := json.Marshal(v)
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
