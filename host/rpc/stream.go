package rpc

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"reflect"
	"sync"

	"github.com/sourcegraph/jsonrpc2"
)

// Limits of the wire format; README.md (Errors) documents them.
const (
	// DefaultMaxFrameSize caps one frame, in and out: 8 MiB.
	DefaultMaxFrameSize = 8 << 20
	// MaxHeaderBlockSize caps a Content-Length header block, terminators included.
	MaxHeaderBlockSize = 8 << 10
	// MaxIDBytes caps a request id: a string's decoded bytes or an integer's digits.
	MaxIDBytes = 1024
)

// Error messages written by the stream.
const (
	msgParseError     = "Parse error"
	msgInvalidRequest = "Invalid request"
	msgBatch          = "Batch requests are not supported"
	msgInternal       = "Internal error"
	msgTooLarge       = "Response exceeds the MCP frame limit"
)

// readBufferSize is the bufio.Reader size; longer lines are assembled in
// Stream.line. keepLineBuffer bounds the line buffer kept between frames.
const (
	readBufferSize = 64 << 10
	keepLineBuffer = 1 << 20
)

// Option configures a Stream.
type Option func(*Stream)

// WithMaxFrameSize sets the frame cap for input and output (default
// DefaultMaxFrameSize). Values ≤ 0 keep the default.
func WithMaxFrameSize(n int) Option {
	return func(s *Stream) {
		if n > 0 {
			s.max = n
		}
	}
}

// WithLogger sends diagnostics to l (default: os.Stderr). A nil l discards them.
func WithLogger(l *log.Logger) Option {
	return func(s *Stream) {
		if l == nil {
			s.logf = func(string, ...any) {}
			return
		}
		s.logf = l.Printf
	}
}

// WithLogFunc sends diagnostics to f. A nil f discards them.
func WithLogFunc(f func(format string, args ...any)) Option {
	return func(s *Stream) {
		if f == nil {
			f = func(string, ...any) {}
		}
		s.logf = f
	}
}

// Stream is a jsonrpc2.ObjectStream over a byte stream (normally stdin and
// stdout). ReadObject must be called from one goroutine at a time (jsonrpc2
// does); WriteObject, WriteError, OriginalID and HandlerID are safe for
// concurrent use.
type Stream struct {
	max  int
	logf func(format string, args ...any)

	// Read side; owned by the ReadObject goroutine.
	r    *bufio.Reader
	line []byte // assembles lines longer than the bufio buffer
	rerr error  // sticky error of the underlying reader

	// Write side.
	wmu     sync.Mutex
	w       io.Writer
	flusher interface{ Flush() error }

	ids idTable

	closers   []io.Closer
	closeOnce sync.Once
	closeErr  error
}

var _ jsonrpc2.ObjectStream = (*Stream)(nil)

// NewStream returns a Stream reading frames from r and writing messages to w.
// Close closes r and w when they implement io.Closer.
func NewStream(r io.Reader, w io.Writer, opts ...Option) *Stream {
	s := &Stream{
		max:  DefaultMaxFrameSize,
		logf: log.New(os.Stderr, "fluxgit rpc: ", log.LstdFlags).Printf,
		r:    bufio.NewReaderSize(r, readBufferSize),
		w:    w,
	}
	if f, ok := w.(interface{ Flush() error }); ok {
		s.flusher = f
	}
	if c, ok := r.(io.Closer); ok {
		s.closers = append(s.closers, c)
	}
	if c, ok := w.(io.Closer); ok && (len(s.closers) == 0 || !sameCloser(s.closers[0], c)) {
		s.closers = append(s.closers, c)
	}
	for _, o := range opts {
		if o != nil {
			o(s)
		}
	}
	s.ids.init()
	return s
}

// MaxFrameSize reports the frame cap in bytes.
func (s *Stream) MaxFrameSize() int { return s.max }

// ReadObject reads frames until one is a request or notification that passes
// the envelope checks, and decodes its canonical form into v. Frames that
// fail are answered (or, for responses, dropped) and reading continues. It
// returns io.EOF at the end of input, io.ErrUnexpectedEOF when input ends
// inside a Content-Length frame, and any other read or write error as is.
func (s *Stream) ReadObject(v any) error {
	for {
		frame, err := s.readFrame()
		if err != nil {
			var fe *frameError
			if !errors.As(err, &fe) {
				return err
			}
			s.logf("rejected frame: %s", fe.details)
			if werr := s.writeError(nil, jsonrpc2.CodeParseError, msgParseError, fe.data()); werr != nil {
				return werr
			}
			continue
		}

		req, rej := s.inspect(frame)
		if rej != nil {
			if rej.drop {
				s.logf("dropped message: %s", rej.details)
				continue
			}
			s.logf("rejected message (code %d): %s", rej.code, rej.details)
			if werr := s.writeError(rej.id, rej.code, rej.message, detailsData{Details: rej.details}); werr != nil {
				return werr
			}
			continue
		}

		if err := json.Unmarshal(req.canon, v); err != nil {
			var inv *json.InvalidUnmarshalError
			if errors.As(err, &inv) {
				return err // programming error: v is not a non-nil pointer
			}
			// jsonrpc2 disagreed with our checks. Answer instead of letting
			// the connection die, and forget the substitution.
			resetValue(v)
			if req.sub != 0 {
				s.ids.release(req.sub)
			}
			s.logf("request rejected by decoder: %v", err)
			if werr := s.writeError(req.id, jsonrpc2.CodeInvalidRequest, msgInvalidRequest, detailsData{Details: err.Error()}); werr != nil {
				return werr
			}
			continue
		}
		return nil
	}
}

// WriteObject serializes v (normally a jsonrpc2 message) as one compact line.
// If v is a response whose id was substituted, the client's original id is
// written instead. A response larger than the frame cap is replaced by a
// -32603 error with the same id (retryable:true); a response that cannot be
// serialized is replaced by -32603 with retryable:false and nil is returned.
// A non-response that is too large or cannot be serialized is not written and
// an error is returned.
func (s *Stream) WriteObject(v any) error {
	b, err := Marshal(v)
	if err != nil {
		id, ok := responseIDOf(v)
		if !ok {
			return fmt.Errorf("rpc: marshal message: %w", err)
		}
		raw, known := s.ids.restoreID(id)
		if !known {
			return fmt.Errorf("rpc: marshal response: %w (and its id %s is not in flight)", err, id)
		}
		s.logf("response %s cannot be serialized: %v", raw, err)
		return s.writeError(raw, jsonrpc2.CodeInternalError, msgInternal, retryData{Details: "the response could not be serialized: " + err.Error(), Retryable: false})
	}
	// jsonrpc2 encodes results, error data and notification params with
	// encoding/json's HTML escaping before they reach this writer.
	return s.send(UnescapeHTML(b))
}

// send writes b (a compact JSON value produced by encoding/json), restoring
// a substituted id and enforcing the frame cap.
func (s *Stream) send(b []byte) error {
	idStart, idEnd, hasID := findMember(b, "id")
	if hasID {
		if n, ok := privateIDInJSON(b[idStart:idEnd]); ok {
			raw, ok := s.ids.release(n)
			if !ok {
				s.logf("message for unknown or already answered request id %d not written", n)
				return fmt.Errorf("rpc: response for unknown or already answered request (private id %d)", n)
			}
			b = splice(b, idStart, idEnd, raw)
			idEnd = idStart + len(raw)
		}
	}
	if len(b) > s.max || containsNewline(b) {
		_, _, isRequest := findMember(b, "method")
		if isRequest || !hasID {
			s.logf("outgoing message of %d bytes not written: exceeds the %d-byte frame limit or contains a newline", len(b), s.max)
			return fmt.Errorf("rpc: outgoing message of %d bytes exceeds the %d-byte frame limit", len(b), s.max)
		}
		id := b[idStart:idEnd]
		if len(b) > s.max {
			s.logf("response %s of %d bytes exceeds the %d-byte frame limit", truncate(id, 64), len(b), s.max)
			return s.writeError(id, jsonrpc2.CodeInternalError, msgTooLarge, limitData{
				Details:         fmt.Sprintf("the response serialized to %d bytes, more than the %d-byte frame limit", len(b), s.max),
				LimitBytes:      s.max,
				SerializedBytes: len(b),
				Retryable:       true,
			})
		}
		return s.writeError(id, jsonrpc2.CodeInternalError, msgInternal, retryData{Details: "the response contains a raw line break", Retryable: false})
	}
	return s.writeLine(b)
}

// WriteError writes an error response directly. id is the client's id as
// JSON, exactly as it should appear on the wire (for a request a handler
// received, use OriginalID(req.ID)); nil or empty means null. data, if not
// nil, becomes error.data. Since this answers the request, a substitution
// recorded for that id (compared by value, as HandlerID does) is released.
func (s *Stream) WriteError(id json.RawMessage, code int64, message string, data any) error {
	raw := trimSpace(id)
	if len(raw) == 0 {
		raw = nil
	} else if !json.Valid(raw) {
		return fmt.Errorf("rpc: WriteError: id %q is not JSON", truncate(raw, 64))
	}
	if raw != nil {
		if hid, ok := s.HandlerID(raw); ok {
			if n, ok := privateNumber(hid); ok {
				s.ids.release(n)
			}
		}
	}
	return s.writeError(raw, code, message, data)
}

// writeError writes {"jsonrpc":"2.0","id":id,"error":{…}}; a nil id is null.
func (s *Stream) writeError(id []byte, code int64, message string, data any) error {
	b, err := Marshal(errorResponse{JSONRPC: "2.0", ID: json.RawMessage(id), Error: errorObject{Code: code, Message: message, Data: data}})
	if err != nil {
		// id or data does not serialize: fall back to what always does.
		s.logf("error response cannot be serialized: %v", err)
		b, err = json.Marshal(errorResponse{JSONRPC: "2.0", Error: errorObject{Code: jsonrpc2.CodeInternalError, Message: msgInternal, Data: retryData{Details: "the error response could not be serialized", Retryable: false}}})
		if err != nil {
			return err
		}
	}
	if len(b) > s.max {
		b, err = json.Marshal(errorResponse{JSONRPC: "2.0", ID: json.RawMessage(id), Error: errorObject{Code: jsonrpc2.CodeInternalError, Message: msgTooLarge, Data: limitData{
			Details:         fmt.Sprintf("the error response serialized to %d bytes, more than the %d-byte frame limit", len(b), s.max),
			LimitBytes:      s.max,
			SerializedBytes: len(b),
			Retryable:       true,
		}}})
		if err != nil {
			return err
		}
	}
	return s.writeLine(b)
}

// writeLine writes b and a newline in one Write, then flushes.
func (s *Stream) writeLine(b []byte) error {
	b = append(b, '\n')
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if _, err := s.w.Write(b); err != nil {
		return err
	}
	if s.flusher != nil {
		return s.flusher.Flush()
	}
	return nil
}

// Close closes the reader and the writer when they implement io.Closer (once
// if they are the same value). Later calls return the first call's result.
func (s *Stream) Close() error {
	s.closeOnce.Do(func() {
		for _, c := range s.closers {
			if err := c.Close(); err != nil && s.closeErr == nil {
				s.closeErr = err
			}
		}
	})
	return s.closeErr
}

type errorResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   errorObject     `json:"error"`
}

type errorObject struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

type detailsData struct {
	Details string `json:"details"`
}

type retryData struct {
	Details   string `json:"details"`
	Retryable bool   `json:"retryable"`
}

type limitData struct {
	Details         string `json:"details"`
	LimitBytes      int    `json:"limitBytes"`
	SerializedBytes int    `json:"serializedBytes"`
	Retryable       bool   `json:"retryable"`
}

type frameLimitData struct {
	Details    string `json:"details"`
	LimitBytes int    `json:"limitBytes,omitempty"`
}

var responseType = reflect.TypeFor[*jsonrpc2.Response]()

// responseIDOf finds the id of a response that failed to serialize: a
// jsonrpc2.Response, or jsonrpc2's internal message wrapper (a struct with a
// *jsonrpc2.Response field named "response"), read by reflection since the
// wrapper is unexported. Reading unexported fields' scalar values is allowed.
func responseIDOf(v any) (jsonrpc2.ID, bool) {
	switch m := v.(type) {
	case *jsonrpc2.Response:
		if m == nil {
			return jsonrpc2.ID{}, false
		}
		return m.ID, true
	case jsonrpc2.Response:
		return m.ID, true
	}
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface {
		if rv.IsNil() {
			return jsonrpc2.ID{}, false
		}
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct {
		return jsonrpc2.ID{}, false
	}
	f := rv.FieldByName("response")
	if !f.IsValid() || f.Type() != responseType || f.IsNil() {
		return jsonrpc2.ID{}, false
	}
	idv := f.Elem().FieldByName("ID")
	return jsonrpc2.ID{
		Num:      idv.FieldByName("Num").Uint(),
		Str:      idv.FieldByName("Str").String(),
		IsString: idv.FieldByName("IsString").Bool(),
	}, true
}

// resetValue zeroes *v after a failed decode so no partial state leaks into
// the next ReadObject.
func resetValue(v any) {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer && !rv.IsNil() && rv.Elem().CanSet() {
		rv.Elem().SetZero()
	}
}

// sameCloser reports whether a and b are the same value; values of
// non-comparable dynamic types are treated as different.
func sameCloser(a, b io.Closer) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}
