package rpc

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"sync"

	"github.com/sourcegraph/jsonrpc2"
)

// A substituted id is the string privatePrefix + decimal sequence number.
// The NUL byte keeps it out of any plausible client's id space, and client
// ids that start with the prefix are themselves substituted, so a private id
// can never be confused with a client's.
const (
	// MaxSubstitutions bounds the substituted ids in flight; a request that
	// would need one more is answered -32600. It is a backstop against a
	// handler that neither answers nor Forgets requests.
	MaxSubstitutions = 4096

	privatePrefix     = "\x00fluxgit-rpc:"
	privateJSONPrefix = `"\u0000fluxgit-rpc:` // how encoding/json writes privatePrefix
)

// idTable records the substituted ids of requests in flight.
type idTable struct {
	mu    sync.Mutex
	next  uint64
	byNum map[uint64]substitution // private number → original
	byKey map[string]uint64       // semantic key of the original → latest private number
}

type substitution struct {
	raw []byte // the client's id, byte for byte
	key string
}

func (t *idTable) init() {
	t.byNum = make(map[uint64]substitution)
	t.byKey = make(map[string]uint64)
}

// substitute records raw and returns the private number standing for it, or
// false when MaxSubstitutions are already in flight.
func (t *idTable) substitute(raw []byte, key string) (uint64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.byNum) >= MaxSubstitutions {
		return 0, false
	}
	t.next++
	n := t.next
	t.byNum[n] = substitution{raw: bytes.Clone(raw), key: key}
	t.byKey[key] = n
	return n, true
}

// release forgets substitution n and returns the original id.
func (t *idTable) release(n uint64) ([]byte, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	sub, ok := t.byNum[n]
	if !ok {
		return nil, false
	}
	delete(t.byNum, n)
	if t.byKey[sub.key] == n {
		delete(t.byKey, sub.key)
	}
	return sub.raw, true
}

// lookup returns the original id of substitution n without releasing it.
func (t *idTable) lookup(n uint64) ([]byte, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	sub, ok := t.byNum[n]
	return sub.raw, ok
}

// restoreID returns the client's id for a response id, releasing a
// substitution. known is false for a private id that is not in flight.
func (t *idTable) restoreID(id jsonrpc2.ID) (raw []byte, known bool) {
	if n, ok := privateNumber(id); ok {
		return t.release(n)
	}
	b, err := json.Marshal(id)
	return b, err == nil
}

func (t *idTable) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.byNum)
}

// Forget releases the substitution behind id, for a request that will not be
// answered (MCP asks servers not to answer a cancelled request). Without it a
// substitution lives until a response carrying id is written. It is a no-op
// for ids that were not substituted or are no longer in flight.
func (s *Stream) Forget(id jsonrpc2.ID) {
	if n, ok := privateNumber(id); ok {
		s.ids.release(n)
	}
}

// OriginalID returns the id the client sent, byte for byte, for the request
// that jsonrpc2 handed to a handler with id. For ids that were not
// substituted this is simply id's JSON encoding. It returns nil for a
// substituted id that is no longer in flight (its response was written).
func (s *Stream) OriginalID(id jsonrpc2.ID) json.RawMessage {
	if n, ok := privateNumber(id); ok {
		raw, ok := s.ids.lookup(n)
		if !ok {
			return nil
		}
		return bytes.Clone(raw)
	}
	b, err := json.Marshal(id)
	if err != nil {
		return nil
	}
	return b
}

// HandlerID translates an id as the client writes it (for example
// params.requestId of notifications/cancelled) into the jsonrpc2.ID under
// which that request was handed to a handler. Ids are compared by value:
// "7" and "\u0037" are the same string, -5 is -5. ok is false when clientID
// is not a valid request id, or when it is one that would have been
// substituted and no such request is in flight. For ids that pass through
// unchanged the stream keeps no record, so ok is true whether or not the
// request is still running: the caller's in-flight table decides.
func (s *Stream) HandlerID(clientID json.RawMessage) (jsonrpc2.ID, bool) {
	raw := trimSpace(clientID)
	if len(raw) == 0 || !json.Valid(raw) {
		return jsonrpc2.ID{}, false
	}
	cls := classifyID(raw)
	if cls.kind == idInvalid {
		return jsonrpc2.ID{}, false
	}
	s.ids.mu.Lock()
	n, found := s.ids.byKey[cls.key]
	s.ids.mu.Unlock()
	if found {
		return privateID(n), true
	}
	if cls.kind != idPassThrough {
		return jsonrpc2.ID{}, false
	}
	if raw[0] == '"' {
		return jsonrpc2.ID{Str: cls.str, IsString: true}, true
	}
	num, err := strconv.ParseUint(string(raw), 10, 64)
	if err != nil {
		return jsonrpc2.ID{}, false
	}
	return jsonrpc2.ID{Num: num}, true
}

func privateID(n uint64) jsonrpc2.ID {
	return jsonrpc2.ID{Str: privatePrefix + strconv.FormatUint(n, 10), IsString: true}
}

func appendPrivateID(dst []byte, n uint64) []byte {
	dst = append(dst, privateJSONPrefix...)
	dst = strconv.AppendUint(dst, n, 10)
	return append(dst, '"')
}

func hasPrivatePrefix(s string) bool { return strings.HasPrefix(s, privatePrefix) }

// parsePrivate parses privatePrefix + canonical decimal.
func parsePrivate(s string) (uint64, bool) {
	if !hasPrivatePrefix(s) {
		return 0, false
	}
	digits := s[len(privatePrefix):]
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil || n == 0 || strconv.FormatUint(n, 10) != digits {
		return 0, false
	}
	return n, true
}

func privateNumber(id jsonrpc2.ID) (uint64, bool) {
	if !id.IsString {
		return 0, false
	}
	return parsePrivate(id.Str)
}

// privateIDInJSON reports whether the JSON value v is a private id.
func privateIDInJSON(v []byte) (uint64, bool) {
	// A private id contains NUL, which JSON can only spell with an escape.
	if len(v) < 2 || v[0] != '"' || bytes.IndexByte(v, '\\') < 0 {
		return 0, false
	}
	if len(v) > len(privateJSONPrefix) && bytes.HasPrefix(v, []byte(privateJSONPrefix)) && v[len(v)-1] == '"' {
		if n, ok := parsePrivate(privatePrefix + string(v[len(privateJSONPrefix):len(v)-1])); ok {
			return n, true
		}
	}
	var str string
	if json.Unmarshal(v, &str) != nil {
		return 0, false
	}
	return parsePrivate(str)
}
