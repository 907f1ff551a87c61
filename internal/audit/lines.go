package audit

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

var (
	errLineTooLong  = errors.New("line exceeds the line limit")
	errUnterminated = errors.New("unterminated record at end of file")
	errBlankLine    = errors.New("blank line")
)

// lineReader yields newline-terminated lines of at most limit bytes
// (newline included) with bounded memory.
type lineReader struct {
	r     *bufio.Reader
	limit int
	buf   []byte
}

func newLineReader(r io.Reader, limit int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), limit: limit}
}

// next returns the next line without its newline. The slice is valid until
// the next call. It returns io.EOF at a clean end.
func (lr *lineReader) next() ([]byte, error) {
	lr.buf = lr.buf[:0]
	for {
		chunk, err := lr.r.ReadSlice('\n')
		if len(lr.buf)+len(chunk) > lr.limit {
			return nil, errLineTooLong
		}
		switch {
		case err == nil:
			if len(lr.buf) == 0 {
				return chunk[:len(chunk)-1], nil
			}
			lr.buf = append(lr.buf, chunk...)
			return lr.buf[:len(lr.buf)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			lr.buf = append(lr.buf, chunk...)
		case errors.Is(err, io.EOF):
			if len(lr.buf)+len(chunk) == 0 {
				return nil, io.EOF
			}
			return nil, errUnterminated
		default:
			return nil, err
		}
	}
}

// readLastLine returns the last complete line of a file of the given size
// that ends with a newline, reading at most limit+1 bytes from the end.
func readLastLine(f *os.File, size int64, limit int) ([]byte, error) {
	n := min(size, int64(limit)+1)
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, size-n); err != nil {
		return nil, err
	}
	if n == 0 || buf[n-1] != '\n' {
		return nil, errUnterminated
	}
	body := buf[:n-1]
	j := bytes.LastIndexByte(body, '\n')
	if j < 0 && n < size {
		return nil, errLineTooLong
	}
	last := body[j+1:]
	if len(last) == 0 {
		return nil, errBlankLine
	}
	return last, nil
}

// parseObject parses one ledger line as a JSON object.
func parseObject(line []byte) (Object, error) {
	v, err := Parse(line)
	if err != nil {
		return nil, err
	}
	o, ok := v.(Object)
	if !ok {
		return nil, fmt.Errorf("record is not a JSON object")
	}
	return o, nil
}
