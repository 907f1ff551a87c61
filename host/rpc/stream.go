package rpc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"os"
	"reflect"
	"sync"

	"github.com/sourcegraph/jsonrpc2"
)

// Limits of the wire format; docs/protocol.md (Errors) documents them.
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

// Option configures a Stream or an Envelope.
type Option func(*config)

type config struct {
	max  int
	logf func(format string, args ...any)
}

func newConfig(opts []Option) config {
	c := config{
		max:  DefaultMaxFrameSize,
		logf: log.New(os.Stderr, "fluxgit rpc: ", log.LstdFlags).Printf,
	}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// WithMaxFrameSize sets the frame cap for input and output (default
// DefaultMaxFrameSize). Values ≤ 0 keep the default.
func WithMaxFrameSize(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.max = n
		}
	}
}

// WithLogger sends diagnostics to l (default: os.Stderr). A nil l discards them.
func WithLogger(l *log.Logger) Option {
	return func(c *config) {
		if l == nil {
			c.logf = func(string, ...any) {}
			return
		}
		c.logf = l.Printf
	}
}

// WithLogFunc sends diagnostics to f. A nil f discards them.
func WithLogFunc(f func(format string, args ...any)) Option {
	return func(c *config) {
		if f == nil {
			f = func(string, ...any) {}
		}
		c.logf = f
	}
}

// Stream is a jsonrpc2.ObjectStream over a byte stream (normally stdin and
// stdout): it delimits frames and writes lines, and leaves every envelope
// rule to its Envelope. ReadObject must be called from one goroutine at a
// time (jsonrpc2 does); every other method is safe for concurrent use.
type Stream struct {
	max  int
	logf func(format string, args ...any)
	env  *Envelope

	// Read side; owned by the ReadObject goroutine.
	r    *bufio.Reader
	line []byte // assembles lines longer than the bufio buffer
	rerr error  // sticky error of the underlying reader

	// Write side.
	wmu     sync.Mutex
	w       io.Writer
	flusher interface{ Flush() error }

	closers   []io.Closer
	closeOnce sync.Once
	closeErr  error
}

var _ jsonrpc2.ObjectStream = (*Stream)(nil)

// NewStream returns a Stream reading frames from r and writing messages to w.
// Close closes r and w when they implement io.Closer.
func NewStream(r io.Reader, w io.Writer, opts ...Option) *Stream {
	c := newConfig(opts)
	s := &Stream{
		max:  c.max,
		logf: c.logf,
		env:  newEnvelope(c),
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
	return s
}

// MaxFrameSize reports the frame cap in bytes.
func (s *Stream) MaxFrameSize() int { return s.max }

// Envelope returns the Envelope that judges this stream's frames and owns
// its id tables.
func (s *Stream) Envelope() *Envelope { return s.env }

// OriginalID is Envelope.OriginalID.
func (s *Stream) OriginalID(id jsonrpc2.ID) json.RawMessage { return s.env.OriginalID(id) }

// HandlerID is Envelope.HandlerID.
func (s *Stream) HandlerID(clientID json.RawMessage) (jsonrpc2.ID, bool) {
	return s.env.HandlerID(clientID)
}

// Forget is Envelope.Forget.
func (s *Stream) Forget(id jsonrpc2.ID) { s.env.Forget(id) }

// ForgetOutgoing is Envelope.ForgetOutgoing.
func (s *Stream) ForgetOutgoing(id jsonrpc2.ID) { s.env.ForgetOutgoing(id) }

// Call is Envelope.Call.
func (s *Stream) Call(ctx context.Context, conn *jsonrpc2.Conn, method string, params, result any) (jsonrpc2.ID, error) {
	return s.env.Call(ctx, conn, method, params, result)
}

// ReadObject reads frames until one is delivered to jsonrpc2 (a request or
// notification that passes the envelope checks, or a response to a request
// this side sent), and decodes its canonical form into v. Frames that fail
// are answered or dropped and reading continues. It returns io.EOF at the
// end of input, io.ErrUnexpectedEOF when input ends inside a Content-Length
// frame, and any other read or write error as is.
func (s *Stream) ReadObject(v any) error {
	for {
		frame, err := s.readFrame()
		if err != nil {
			var fe *frameError
			if !errors.As(err, &fe) {
				return err
			}
			s.logf("rejected frame: %s", fe.details)
			if werr := s.writeLine(s.env.encodeError(nil, jsonrpc2.CodeParseError, msgParseError, fe.data())); werr != nil {
				return werr
			}
			continue
		}

		verdict := s.env.Inspect(frame)
		for verdict.Action == Deliver {
			err := json.Unmarshal(verdict.Message, v)
			if err == nil {
				if verdict.synthesized {
					s.logf("malformed response delivered as an error: %s", verdict.Details)
				}
				return nil
			}
			var inv *json.InvalidUnmarshalError
			if errors.As(err, &inv) {
				return err // programming error: v is not a non-nil pointer
			}
			// jsonrpc2 disagreed with the envelope checks. Answer instead of
			// letting the connection die.
			resetValue(v)
			s.logf("message rejected by decoder: %v", err)
			verdict = s.env.Refused(verdict, err)
		}
		if verdict.Action == Drop {
			s.logf("dropped message: %s", verdict.Details)
			continue
		}
		s.logf("rejected message (code %d): %s", verdict.Code, verdict.Details)
		if werr := s.writeLine(verdict.Reply); werr != nil {
			return werr
		}
	}
}

// WriteObject writes Envelope.Outbound(v) as one line; see Outbound for what
// it restores, records, replaces and refuses. A request that cannot be
// written stops awaiting a response.
func (s *Stream) WriteObject(v any) error {
	b, reqID, isRequest, err := s.env.outbound(v)
	if err != nil {
		return err
	}
	if err := s.writeLine(b); err != nil {
		if isRequest {
			s.env.out.take(reqID)
		}
		return err
	}
	return nil
}

// WriteError writes an error response directly; see Envelope.ErrorResponse.
func (s *Stream) WriteError(id json.RawMessage, code int64, message string, data any) error {
	b, err := s.env.ErrorResponse(id, code, message, data)
	if err != nil {
		return err
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
