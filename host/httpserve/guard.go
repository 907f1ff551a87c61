package httpserve

import (
	"io"
	"net/http"
	"sync/atomic"
	"time"
)

// guardBody bounds the arrival of r's body and makes every answer given
// before the body was read whole (a 401 from the authenticator, a 403 for
// the Origin, a 413, a 408 for a stalled body) leave at once and close the
// connection.
//
// Why both: net/http, answering a request whose body is still unread,
// first reads up to 256 KiB of that body "to keep the connection", and it
// does so with no deadline of its own. A client that declares
// Content-Length: 1000 and sends one byte therefore held the connection,
// and never saw its answer, forever (issue 22, finding 5). "Connection:
// close" skips that read before the answer; a read deadline already passed
// ends the one net/http makes after it.
//
// Requests without a body (GET streams, DELETE) get no deadline: net/http
// is already reading their connection in the background to notice a
// client that leaves, and a deadline there would cancel the stream.
func (h *Handler) guardBody(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, *http.Request) {
	if r.Body == nil || r.Body == http.NoBody || (r.ContentLength == 0 && len(r.TransferEncoding) == 0) {
		return w, r
	}
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(h.opts.BodyTimeout))
	body := &eofReader{r: r.Body}
	// A shallow copy: the server's own request keeps its body type, which
	// net/http inspects when it answers (Expect: 100-continue).
	r2 := r.WithContext(r.Context())
	r2.Body = body
	return &guardedWriter{ResponseWriter: w, rc: rc, body: body}, r2
}

// eofReader records whether its reader reached the end.
type eofReader struct {
	r   io.ReadCloser
	eof atomic.Bool
}

func (e *eofReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err == io.EOF {
		e.eof.Store(true)
	}
	return n, err
}

func (e *eofReader) Close() error { return e.r.Close() }

// guardedWriter closes the connection when the response starts before the
// body was read whole (see guardBody).
type guardedWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	body    *eofReader
	started bool
}

// Unwrap lets http.ResponseController reach the server's writer (Flush,
// deadlines).
func (g *guardedWriter) Unwrap() http.ResponseWriter { return g.ResponseWriter }

func (g *guardedWriter) start() {
	if g.started {
		return
	}
	g.started = true
	if !g.body.eof.Load() {
		g.Header().Set("Connection", "close")
		_ = g.rc.SetReadDeadline(time.Now())
	}
}

// WriteHeader implements http.ResponseWriter.
func (g *guardedWriter) WriteHeader(code int) {
	g.start()
	g.ResponseWriter.WriteHeader(code)
}

// Write implements http.ResponseWriter.
func (g *guardedWriter) Write(b []byte) (int, error) {
	g.start()
	return g.ResponseWriter.Write(b)
}
