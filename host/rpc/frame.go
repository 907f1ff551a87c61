package rpc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// frameError is a framing problem the stream recovers from: it is answered
// with -32700 (id null) and reading continues.
type frameError struct {
	details string
	limit   int // reported as data.limitBytes when > 0
}

func (e *frameError) Error() string { return "rpc: " + e.details }

func (e *frameError) data() any {
	return frameLimitData{Details: e.details, LimitBytes: e.limit}
}

// errLineTooLong is returned by readLine when a line is longer than its
// limit; the line has been consumed up to and including its newline.
type errLineTooLong struct{ size int }

func (e *errLineTooLong) Error() string { return fmt.Sprintf("line of %d bytes is too long", e.size) }

const contentLengthName = "content-length"

// readFrame returns the next non-blank frame: a line in NDJSON mode, or the
// body of a Content-Length frame. The result is valid until the next read.
// Recoverable problems are *frameError; anything else ends the stream.
func (s *Stream) readFrame() ([]byte, error) {
	for {
		line, err := s.readLine(s.max + 2) // + CRLF
		if err != nil {
			var tl *errLineTooLong
			if errors.As(err, &tl) {
				return nil, &frameError{
					details: fmt.Sprintf("line of %d bytes exceeds the %d-byte frame limit; discarded", tl.size, s.max),
					limit:   s.max,
				}
			}
			return nil, err
		}
		t := trimSpace(line)
		if len(t) == 0 {
			continue
		}
		if isContentLengthHeader(t) {
			return s.readContentLengthFrame(line)
		}
		if len(t) > s.max {
			return nil, &frameError{
				details: fmt.Sprintf("frame of %d bytes exceeds the %d-byte frame limit", len(t), s.max),
				limit:   s.max,
			}
		}
		return t, nil
	}
}

// readLine returns the next line without its '\n'. A line whose length,
// terminator included, exceeds limit is discarded up to its newline without
// being buffered, and *errLineTooLong is returned. An unterminated last line
// is returned as a line; the end of input is reported by the next call.
func (s *Stream) readLine(limit int) ([]byte, error) {
	if cap(s.line) > keepLineBuffer {
		s.line = nil
	}
	s.line = s.line[:0]
	if s.rerr != nil {
		return nil, s.rerr
	}
	for {
		chunk, err := s.r.ReadSlice('\n')
		if len(s.line)+len(chunk) > limit {
			size := len(s.line) + len(chunk)
			s.line = s.line[:0]
			for errors.Is(err, bufio.ErrBufferFull) {
				chunk, err = s.r.ReadSlice('\n')
				size += len(chunk)
			}
			if err != nil {
				s.rerr = err
			}
			return nil, &errLineTooLong{size: size}
		}
		switch {
		case err == nil:
			if len(s.line) == 0 {
				return chunk[:len(chunk)-1], nil // common case: no copy
			}
			s.appendLine(chunk, limit)
			return s.line[:len(s.line)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			s.appendLine(chunk, limit)
		default:
			s.rerr = err
			s.appendLine(chunk, limit)
			if len(s.line) > 0 {
				return s.line, nil
			}
			return nil, err
		}
	}
}

// appendLine appends chunk to s.line, growing it by doubling but never
// beyond limit, so a line near the cap costs about twice the cap in total
// allocations rather than four times.
func (s *Stream) appendLine(chunk []byte, limit int) {
	need := len(s.line) + len(chunk)
	if need > cap(s.line) {
		c := max(2*cap(s.line), need, 2*readBufferSize)
		c = min(c, max(limit, need))
		grown := make([]byte, len(s.line), c)
		copy(grown, s.line)
		s.line = grown
	}
	s.line = append(s.line, chunk...)
}

// readContentLengthFrame reads the rest of a header block whose first line
// (a Content-Length header) has been read, then exactly N body bytes.
//
// Errors in a well-formed header block (non-numeric or duplicate
// Content-Length, N above the cap) are reported once the whole block has been
// consumed, and no body is read: a length that cannot be trusted is not used
// to skip input. A malformed header line or an oversized block is reported at
// once. Either way NDJSON reading resumes at the next line.
func (s *Stream) readContentLengthFrame(first []byte) ([]byte, error) {
	used := len(first) + 1
	if used > MaxHeaderBlockSize {
		return nil, &frameError{details: fmt.Sprintf("Content-Length header block exceeds %d bytes", MaxHeaderBlockSize), limit: MaxHeaderBlockSize}
	}
	n, problem := s.parseContentLength(headerValue(trimRightCR(first)))

	for {
		line, err := s.readLine(MaxHeaderBlockSize - used)
		if err != nil {
			var tl *errLineTooLong
			if errors.As(err, &tl) {
				return nil, &frameError{details: fmt.Sprintf("Content-Length header block exceeds %d bytes", MaxHeaderBlockSize), limit: MaxHeaderBlockSize}
			}
			if errors.Is(err, io.EOF) {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		used += len(line) + 1
		h := trimRightCR(line)
		if len(trimSpace(h)) == 0 {
			break // end of the header block
		}
		if !isHeaderLine(h) {
			return nil, &frameError{details: fmt.Sprintf("malformed header line %q", truncate(h, 64))}
		}
		if isContentLengthHeader(h) && problem == "" {
			problem = "duplicate Content-Length header"
		}
		if s.rerr != nil {
			// The header line was the unterminated end of input.
			if errors.Is(s.rerr, io.EOF) {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, s.rerr
		}
	}
	if problem != "" {
		return nil, &frameError{details: problem, limit: s.max}
	}
	if n == 0 {
		return nil, &frameError{details: "empty Content-Length frame"}
	}

	// n ≤ s.max was checked by parseContentLength: allocating is safe now.
	body := make([]byte, n)
	if _, err := io.ReadFull(s.r, body); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			s.rerr = io.EOF
			return nil, io.ErrUnexpectedEOF
		}
		s.rerr = err
		return nil, err
	}
	t := trimSpace(body)
	if len(t) == 0 {
		return nil, &frameError{details: "blank Content-Length frame"}
	}
	return t, nil
}

// parseContentLength parses a decimal length. It never overflows: a value
// above the frame cap is reported, not computed.
func (s *Stream) parseContentLength(v []byte) (n int, problem string) {
	v = bytes.Trim(v, " \t")
	if len(v) == 0 {
		return 0, "empty Content-Length value"
	}
	tooLarge := false
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, fmt.Sprintf("non-numeric Content-Length value %q", truncate(v, 32))
		}
		if !tooLarge {
			n = n*10 + int(c-'0')
			if n > s.max {
				tooLarge = true
			}
		}
	}
	if tooLarge {
		return 0, fmt.Sprintf("Content-Length %s exceeds the %d-byte frame limit; refused", truncate(v, 32), s.max)
	}
	return n, ""
}

// isContentLengthHeader reports whether line starts with "Content-Length:"
// (any case).
func isContentLengthHeader(line []byte) bool {
	return len(line) > len(contentLengthName) &&
		line[len(contentLengthName)] == ':' &&
		bytes.EqualFold(line[:len(contentLengthName)], []byte(contentLengthName))
}

// isHeaderLine reports whether line is `token ":" value` (RFC 9110 token).
func isHeaderLine(line []byte) bool {
	i := bytes.IndexByte(line, ':')
	if i <= 0 {
		return false
	}
	for _, c := range line[:i] {
		if !isTokenChar(c) {
			return false
		}
	}
	return true
}

func isTokenChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}

func headerValue(line []byte) []byte {
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		return line[i+1:]
	}
	return nil
}

func trimRightCR(b []byte) []byte {
	for len(b) > 0 && b[len(b)-1] == '\r' {
		b = b[:len(b)-1]
	}
	return b
}

// trimSpace trims JSON whitespace (space, tab, CR, LF) from both ends.
func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// truncate shortens b for a log line or error detail.
func truncate(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "…"
}
