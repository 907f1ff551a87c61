package agentdetect

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Agents append to their JSONL stores for the whole life of a storeSession, so
// a transcript reaches tens or hundreds of megabytes. The newest activity
// is at its end: one bounded read of the tail answers every question a
// source asks, whatever the file's size.
const (
	tailReadMax = 256 << 10
	headReadMax = 64 << 10
)

// tailReadHook, when set (tests only), is told how many bytes each read
// of a store file returned, so a test can prove a huge file costs one
// small read.
var tailReadHook func(path string, n int)

// openStoreFile opens a regular file without following a final symbolic
// link; FIFOs, devices and links are refused so a store entry can neither
// block the scan nor lead it out of the store.
func openStoreFile(path string) (*os.File, fs.FileInfo, error) {
	li, err := os.Lstat(path)
	if err != nil {
		return nil, nil, err
	}
	if !li.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("store file %s is not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || !os.SameFile(li, fi) {
		f.Close()
		return nil, nil, fmt.Errorf("store file %s changed while it was opened", path)
	}
	return f, fi, nil
}

// readTailLines returns the complete lines among the last max bytes of a
// JSONL file, oldest first. When the read starts inside the file, the
// first (partial) line is dropped; empty lines are skipped. Callers skip
// lines that do not parse.
func readTailLines(path string, max int64) ([][]byte, fs.FileInfo, error) {
	if max <= 0 || max > tailReadMax {
		max = tailReadMax
	}
	f, fi, err := openStoreFile(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	size := fi.Size()
	// The first byte read only tells whether the next one starts a line:
	// the partial line to drop then ends at that byte.
	off := tailMax64(0, size-max)
	buf := make([]byte, size-off)
	n, err := f.ReadAt(buf, off)
	if tailReadHook != nil {
		tailReadHook(path, n)
	}
	if err != nil && err != io.EOF {
		return nil, fi, fmt.Errorf("read tail of %s: %w", path, err)
	}
	buf = buf[:n]
	if off > 0 {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			return nil, fi, nil
		}
		buf = buf[i+1:]
	}
	var lines [][]byte
	for len(buf) > 0 {
		i := bytes.IndexByte(buf, '\n')
		var line []byte
		if i < 0 {
			// The last line may still be being written: it is kept only
			// if it parses, which the caller decides.
			line, buf = buf, nil
		} else {
			line, buf = buf[:i], buf[i+1:]
		}
		line = bytes.TrimSpace(line)
		if len(line) > 0 {
			lines = append(lines, line)
		}
	}
	return lines, fi, nil
}

// readHeadLine returns the first line of a file when it ends within max
// bytes (the storeSession header some agents write once, at the start).
func readHeadLine(path string, max int64) ([]byte, error) {
	if max <= 0 || max > headReadMax {
		max = headReadMax
	}
	f, _, err := openStoreFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, max)
	n, err := io.ReadFull(f, buf)
	if tailReadHook != nil {
		tailReadHook(path, n)
	}
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return nil, fmt.Errorf("read head of %s: %w", path, err)
	}
	buf = buf[:n]
	i := bytes.IndexByte(buf, '\n')
	if i < 0 {
		if n < int(max) {
			return bytes.TrimSpace(buf), nil
		}
		return nil, fmt.Errorf("first line of %s is longer than %d bytes", path, max)
	}
	return bytes.TrimSpace(buf[:i]), nil
}

// readStoreSmall reads a whole JSON document that is expected to be small
// (registries, metadata); larger ones are refused rather than read.
func readStoreSmall(path string, max int64) ([]byte, fs.FileInfo, error) {
	f, fi, err := openStoreFile(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	if fi.Size() > max {
		return nil, fi, fmt.Errorf("store file %s is %d bytes, more than the %d this source reads", path, fi.Size(), max)
	}
	b, err := io.ReadAll(io.LimitReader(f, max))
	if tailReadHook != nil {
		tailReadHook(path, len(b))
	}
	if err != nil {
		return nil, fi, fmt.Errorf("read %s: %w", path, err)
	}
	return b, fi, nil
}

func tailMax64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}
