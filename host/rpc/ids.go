package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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
	b, err := idJSON(id)
	return b, err == nil
}

// idJSON spells id as Outbound writes it: jsonrpc2.ID's own encoding
// escapes '<', '>' and '&', which Outbound undoes.
func idJSON(id jsonrpc2.ID) ([]byte, error) {
	if id.IsString {
		return Marshal(id.Str)
	}
	return strconv.AppendUint(nil, id.Num, 10), nil
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
func (e *Envelope) Forget(id jsonrpc2.ID) {
	if n, ok := privateNumber(id); ok {
		e.ids.release(n)
	}
}

// OriginalID returns the id the client sent, byte for byte, for the request
// that jsonrpc2 handed to a handler with id. For ids that were not
// substituted this is simply id's JSON encoding. It returns nil for a
// substituted id that is no longer in flight (its response was written).
func (e *Envelope) OriginalID(id jsonrpc2.ID) json.RawMessage {
	if n, ok := privateNumber(id); ok {
		raw, ok := e.ids.lookup(n)
		if !ok {
			return nil
		}
		return bytes.Clone(raw)
	}
	b, err := idJSON(id)
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
// substituted whatever its spelling (a negative or huge integer, a string
// with the private prefix) and no such request is in flight. For ids that pass through
// unchanged the stream keeps no record, so ok is true whether or not the
// request is still running: the caller's in-flight table decides.
func (e *Envelope) HandlerID(clientID json.RawMessage) (jsonrpc2.ID, bool) {
	raw := trimSpace(clientID)
	if len(raw) == 0 || !json.Valid(raw) {
		return jsonrpc2.ID{}, false
	}
	cls := classifyID(raw)
	if cls.kind == idInvalid {
		return jsonrpc2.ID{}, false
	}
	e.ids.mu.Lock()
	n, found := e.ids.byKey[cls.key]
	e.ids.mu.Unlock()
	if found {
		return privateID(n), true
	}
	if raw[0] == '"' && !hasPrivatePrefix(cls.str) {
		// Another spelling of a string that, spelled canonically, passes
		// through.
		return jsonrpc2.ID{Str: cls.str, IsString: true}, true
	}
	if cls.kind != idPassThrough {
		return jsonrpc2.ID{}, false
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

// MaxPendingOutgoing bounds the requests sent to the peer that await a
// response. Recording one more forgets the oldest, whose response is then
// dropped: a backstop against a caller that abandons calls without
// ForgetOutgoing, so the set cannot grow without limit.
const MaxPendingOutgoing = 1024

// outTable records the ids of requests this side sent that await a response.
type outTable struct {
	mu      sync.Mutex
	order   uint64            // recording counter, for eviction
	pending map[uint64]uint64 // request id → when it was recorded
	next    uint64            // the last id Call picked
}

func (t *outTable) init() { t.pending = make(map[uint64]uint64) }

// add records id. When MaxPendingOutgoing are recorded it forgets the oldest
// and reports it. An id already awaiting a response is an error: the two
// responses could not be told apart.
func (t *outTable) add(id uint64) (evicted uint64, didEvict bool, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, dup := t.pending[id]; dup {
		return 0, false, fmt.Errorf("rpc: outgoing request id %d already awaits a response; pick ids either through Envelope.Call or through jsonrpc2, not both", id)
	}
	if len(t.pending) >= MaxPendingOutgoing {
		oldest := ^uint64(0)
		for k, at := range t.pending {
			if at < oldest {
				oldest, evicted = at, k
			}
		}
		delete(t.pending, evicted)
		didEvict = true
	}
	t.order++
	t.pending[id] = t.order
	return evicted, didEvict, nil
}

// take removes id and reports whether it awaited a response.
func (t *outTable) take(id uint64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.pending[id]
	delete(t.pending, id)
	return ok
}

func (t *outTable) nextID() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.next++
	return t.next
}

func (t *outTable) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.pending)
}

// ForgetOutgoing stops waiting for the response to the request this side
// sent with id, for a call abandoned by timeout or cancellation: its Call
// has returned and nothing reads the answer, so a late one is dropped. It is a no-op for
// an id that is not awaited (already answered, or a string id).
func (e *Envelope) ForgetOutgoing(id jsonrpc2.ID) {
	if !id.IsString {
		e.out.take(id.Num)
	}
}

// Call sends a request to the peer through conn (a jsonrpc2.Conn running
// over this Envelope's transport) and waits for its response, decoding the
// result into result as conn.Call does. The id is picked here, so send every
// request on the connection through Call: ids jsonrpc2 picks itself would
// collide with these. Whatever the outcome, the id no longer awaits a
// response when Call returns; it is returned so that the caller can tell the
// peer a request it abandoned is cancelled (MCP notifications/cancelled,
// params.requestId). Errors wrap ctx.Err() when ctx ended first, a
// *jsonrpc2.Error when the peer answered with an error (InvalidResponseMessage
// when its answer was malformed), or a write or decode error.
func (e *Envelope) Call(ctx context.Context, conn *jsonrpc2.Conn, method string, params, result any) (jsonrpc2.ID, error) {
	id := jsonrpc2.ID{Num: e.out.nextID()}
	if err := ctx.Err(); err != nil {
		return id, fmt.Errorf("rpc: %s not sent: %w", method, err)
	}
	defer e.ForgetOutgoing(id)
	if err := conn.Call(ctx, method, params, result, jsonrpc2.PickID(id)); err != nil {
		return id, fmt.Errorf("rpc: %s (request %d): %w", method, id.Num, err)
	}
	return id, nil
}
