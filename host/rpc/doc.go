// Package rpc is fluxgit's JSON-RPC transport layer for
// github.com/sourcegraph/jsonrpc2: an Envelope that applies every
// envelope-level rule listed in docs/protocol.md (Errors) to one connection,
// whatever delimits its frames, and the stdio Stream, a jsonrpc2.ObjectStream
// that delimits frames and writes lines and leaves the rules to its Envelope.
// jsonrpc2 only ever sees well-formed requests and well-formed responses to
// requests this side sent.
//
// # Why the transport does more than framing
//
// jsonrpc2.Conn closes the connection on any ReadObject error, and it cannot
// answer a frame it failed to decode. The MCP contract, however, wants a
// malformed frame answered (-32700, id null) and the connection kept open.
// So every frame is judged before jsonrpc2 sees it, the transport writes the
// error reply itself, and keeps reading. Only real I/O errors and end of
// input end ReadObject.
//
// # Envelope: one frame in, one verdict out
//
// Envelope.Inspect takes one frame (a complete JSON text; surrounding
// whitespace ignored) and returns a Verdict: Deliver (Message, the canonical
// form to decode as jsonrpc2's message), Answer (Reply, the error response to
// write; Code), or Drop (Details, for the log). Frames must be inspected in
// the order they arrived. The rules:
//
//   - not JSON                          → -32700 "Parse error", id null
//   - a JSON array (batch)              → -32600 "Batch requests are not supported", id null
//   - id present but not an integer or a string of at most 1,024 bytes
//     (null, bool, 1.5, 1e3, objects, arrays, long strings, integers longer
//     than 1,024 digits)                → -32600 "Invalid request", id null
//   - not an object, duplicate envelope member, jsonrpc not exactly "2.0",
//     method missing or not a string, method together with result/error
//     → -32600 "Invalid request" (the message's id if valid, else null)
//   - no method but result or error     → a response; see below
//   - no id member                      → a notification, delivered
//
// A request that passes is delivered as a canonical re-encoding
// {"jsonrpc":"2.0","id":…,"method":…,"params":…}: the method and params bytes
// are copied verbatim, every other member is dropped. Handing over the
// client's own bytes is not safe: encoding/json matches struct fields
// case-insensitively, so a stray "Method":5 or "RESULT" member makes
// jsonrpc2's message decoder fail, which would close the connection. If the
// decoder refuses a delivered message all the same, Envelope.Refused says
// what to do instead (a request is answered -32600).
//
// Envelope.Outbound turns an outgoing jsonrpc2 message into the bytes to
// send. A response that serializes to more than the frame cap is replaced by
// -32603 "Response exceeds the MCP frame limit" with the same id; a response
// that cannot be serialized becomes -32603 with retryable:false.
// Envelope.ErrorResponse builds an error reply a handler sends itself.
//
// # Stdio framing (Stream)
//
// Input is newline-delimited JSON: one value per line, blank or
// whitespace-only lines skipped, trailing CR tolerated. A frame may instead
// use the legacy "Content-Length: N" header framing (name case-insensitive,
// header lines up to an empty line, header block at most 8 KiB, a second
// Content-Length is an error, N above the frame cap refused before anything
// is allocated, then exactly N body bytes). A line longer than the cap is
// discarded up to its newline without being buffered and answered with
// -32700. Each frame goes to Envelope.Inspect.
//
// Output is one compact JSON value and "\n" per message, under a mutex,
// followed by a Flush when the writer has one. Content-Length is never
// written.
//
// # Responses to the server's own requests
//
// The host sends the client requests too (sampling/createMessage,
// elicitation/create) through jsonrpc2.Conn. Outbound records the id of
// every request it writes that is not a notification; jsonrpc2 numbers
// requests with unsigned integers, and a request with a string id is
// refused, since its answer could not be matched. A client message with
// result or error and no method is delivered to jsonrpc2 only when its id is
// exactly one of those integers (plain digits: not "5", 5.0 or 5e0) and the
// request still awaits an answer; the id then stops awaiting one, so a
// repeated answer is dropped like any other response (logged, no reply).
// The answer is delivered as {"jsonrpc":"2.0","id":N,"result":…} or
// {"jsonrpc":"2.0","id":N,"error":{"code":…,"message":…,"data":…}}. An answer
// to an awaited id that is malformed (jsonrpc not "2.0", duplicate member,
// both result and error, error not an object with an integer code of at most
// 64 bits and a string message, or refused by jsonrpc2's decoder) is
// delivered as an error with code -32600, message InvalidResponseMessage and
// data.details saying what was wrong, so the waiting call fails at once
// rather than at its timeout.
//
// At most MaxPendingOutgoing requests await answers; recording one more
// forgets the oldest. A call abandoned by timeout or cancellation must be
// forgotten (ForgetOutgoing) so a late answer is dropped: its Call has
// returned and nothing reads the answer. Envelope.Call (Stream.Call) picks the id, waits,
// forgets the id on return whatever the outcome, and returns the id for the
// notifications/cancelled the caller then sends. Send every request of a
// connection through Call, or none: its ids and jsonrpc2's own numbering
// would collide (Outbound refuses an id that already awaits an answer).
// Handlers that call the client must not run on jsonrpc2's read goroutine
// (use a goroutine or jsonrpc2.AsyncHandler), or the answer is never read.
//
// # Request ids
//
// jsonrpc2.ID holds only a uint64 or a string, and jsonrpc2 v0.2.3 decodes
// numeric ids with Int64, so only 0…2^63-1 survive a round trip. Ids that
// cannot pass through jsonrpc2 byte-exactly are substituted on the way in by a
// private string id and restored on the way out:
//
//   - integers < 0 (including -0) or > 2^63-1 (including > 2^64-1);
//   - strings whose bytes are not exactly what Outbound writes for their
//     value, which is encoding/json's spelling with '<', '>' and '&' left
//     as they are (escapes such as "\u0037" or "\u003c", invalid UTF-8, …);
//   - strings that begin with the private prefix (so no client id can ever
//     collide with a substitute).
//
// Integers in 0…2^63-1 and ordinary strings pass through unchanged, so the
// handler sees them as they are. In every case the id written on the response
// is byte-for-byte the id the client sent.
//
// A handler that needs the client's view of an id (logging, audit, progress
// tokens) calls [Envelope.OriginalID]. To implement notifications/cancelled,
// key the in-flight table by the jsonrpc2.ID the handler received and
// translate params.requestId with [Envelope.HandlerID] (Stream has the same
// methods):
//
//	var p struct{ RequestID json.RawMessage `json:"requestId"` }
//	_ = json.Unmarshal(*req.Params, &p)
//	if id, ok := stream.HandlerID(p.RequestID); ok {
//		inflight.Cancel(id) // the same jsonrpc2.ID the tools/call handler got
//	}
//
// A substitution lives until the response carrying it is written (through
// Outbound, WriteObject, ErrorResponse or WriteError) or the handler calls
// [Envelope.Forget] for a request it will not answer (a cancelled one); at
// most MaxSubstitutions are in flight, further requests needing one get
// -32600. Inspect records a substitution before it returns, and frames are
// inspected in order, so a cancellation that follows its request on the wire
// always finds it; register the request in the in-flight table before
// handing it to a goroutine (i.e. outside jsonrpc2.AsyncHandler) so the host
// side has the same guarantee.
package rpc
