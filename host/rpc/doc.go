// Package rpc is fluxgit's stdio transport: a jsonrpc2.ObjectStream that owns
// framing and every envelope-level rule listed in README.md (Errors), so that
// github.com/sourcegraph/jsonrpc2 only ever sees well-formed requests.
//
// # Why the stream does more than framing
//
// jsonrpc2.Conn closes the connection on any ReadObject error, and it cannot
// answer a frame it failed to decode. The MCP contract, however, wants a
// malformed frame answered (-32700, id null) and the connection kept open.
// So the Stream validates every frame itself, writes the error reply itself,
// and keeps reading. Only real I/O errors and end of input end ReadObject.
//
// # Input
//
// Newline-delimited JSON: one value per line, blank or whitespace-only lines
// skipped, trailing CR tolerated. A frame may instead use the legacy
// "Content-Length: N" header framing (name case-insensitive, header lines up
// to an empty line, header block at most 8 KiB, a second Content-Length is an
// error, N above the frame cap refused before anything is allocated, then
// exactly N body bytes). A line longer than the cap is discarded up to its
// newline without being buffered and answered with -32700.
//
// Each valid frame is checked against the JSON-RPC envelope rules:
//
//   - not JSON                          → -32700 "Parse error", id null
//   - a JSON array (batch)              → -32600 "Batch requests are not supported", id null
//   - id present but not an integer or a string of at most 1,024 bytes
//     (null, bool, 1.5, 1e3, objects, arrays, long strings, integers longer
//     than 1,024 digits)                → -32600 "Invalid request", id null
//   - not an object, duplicate envelope member, jsonrpc not exactly "2.0",
//     method missing or not a string, method together with result/error
//     → -32600 "Invalid request" (the message's id if valid, else null)
//   - no method but result or error     → a response: dropped, logged, no reply
//   - no id member                      → a notification, passed through
//
// A request that passes is handed to jsonrpc2 as a canonical re-encoding
// {"jsonrpc":"2.0","id":…,"method":…,"params":…}: the method and params bytes
// are copied verbatim, every other member is dropped. Handing over the
// client's own bytes is not safe: encoding/json matches struct fields
// case-insensitively, so a stray "Method":5 or "RESULT" member makes
// jsonrpc2's message decoder fail, which would close the connection.
//
// # Output
//
// One compact JSON value and "\n" per message, under a mutex, followed by a
// Flush when the writer has one. Content-Length is never written. A response
// that serializes to more than the frame cap is replaced by -32603 "Response
// exceeds the MCP frame limit" with the same id; a response that cannot be
// serialized becomes -32603 with retryable:false.
//
// # Request ids
//
// jsonrpc2.ID holds only a uint64 or a string, and jsonrpc2 v0.2.3 decodes
// numeric ids with Int64, so only 0…2^63-1 survive a round trip. Ids that
// cannot pass through jsonrpc2 byte-exactly are substituted on the way in by a
// private string id and restored on the way out:
//
//   - integers < 0 (including -0) or > 2^63-1 (including > 2^64-1);
//   - strings whose bytes are not exactly what encoding/json would write for
//     their value (escapes such as "\u0037", "<", invalid UTF-8, …);
//   - strings that begin with the private prefix (so no client id can ever
//     collide with a substitute).
//
// Integers in 0…2^63-1 and ordinary strings pass through unchanged, so the
// handler sees them as they are. In every case the id written on the response
// is byte-for-byte the id the client sent.
//
// A handler that needs the client's view of an id (logging, audit, progress
// tokens) calls [Stream.OriginalID]. To implement notifications/cancelled, key
// the in-flight table by the jsonrpc2.ID the handler received and translate
// params.requestId with [Stream.HandlerID]:
//
//	var p struct{ RequestID json.RawMessage `json:"requestId"` }
//	_ = json.Unmarshal(*req.Params, &p)
//	if id, ok := stream.HandlerID(p.RequestID); ok {
//		inflight.Cancel(id) // the same jsonrpc2.ID the tools/call handler got
//	}
//
// A substitution lives until the response carrying it is written (through
// WriteObject or WriteError) or the handler calls [Stream.Forget] for a
// request it will not answer (a cancelled one); at most MaxSubstitutions are
// in flight, further requests needing one get -32600. ReadObject returns a request only after its
// substitution is recorded, and requests are read in order, so a cancellation
// that follows its request on the wire always finds it; register the request
// in the in-flight table before handing it to a goroutine (i.e. outside
// jsonrpc2.AsyncHandler) so the host side has the same guarantee.
package rpc
