package rpc

import (
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/sourcegraph/jsonrpc2"
)

// loopReader yields data over and over.
type loopReader struct {
	data []byte
	off  int
}

func (l *loopReader) Read(p []byte) (int, error) {
	n := copy(p, l.data[l.off:])
	l.off = (l.off + n) % len(l.data)
	return n, nil
}

type loopRWC struct {
	io.Reader
	io.Writer
}

func (loopRWC) Close() error { return nil }

// BenchmarkReadWrite measures one request frame read (framing, envelope
// checks, jsonrpc2 decoding) plus one response write.
func BenchmarkReadWrite(b *testing.B) {
	call := func(id string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"repo.status","arguments":{"repoPath":"/home/user/src/project","includeUntracked":true}}}`
	}
	bigParams := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":{"patch":"` + strings.Repeat("abcdefgh", 8<<10) + `"}}}`
	result := json.RawMessage(`{"content":[{"type":"text","text":"{\"tool\":\"repo.status\",\"readOnly\":true}"}],"structuredContent":{"tool":"repo.status","readOnly":true},"isError":false}`)

	cases := []struct{ name, input string }{
		{"ndjson", call("42") + "\n"},
		{"ndjson-crlf-string-id", call(`"req-42"`) + "\r\n"},
		{"ndjson-negative-id", call("-42") + "\n"},
		{"content-length", clFrame(call("42"))},
		{"ndjson-64KiB-params", bigParams + "\n"},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			s := NewStream(&loopReader{data: []byte(tc.input)}, io.Discard, WithLogger(nil))
			b.SetBytes(int64(len(tc.input)))
			b.ReportAllocs()
			for b.Loop() {
				var r jsonrpc2.Request
				if err := s.ReadObject(&r); err != nil {
					b.Fatal(err)
				}
				if err := s.WriteObject(&jsonrpc2.Response{ID: r.ID, Result: &result}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}

	// Baseline: jsonrpc2's own newline stream, which does no checking.
	b.Run("baseline-jsonrpc2-plain", func(b *testing.B) {
		input := call("42") + "\n"
		s := jsonrpc2.NewPlainObjectStream(loopRWC{&loopReader{data: []byte(input)}, io.Discard})
		b.SetBytes(int64(len(input)))
		b.ReportAllocs()
		for b.Loop() {
			var r jsonrpc2.Request
			if err := s.ReadObject(&r); err != nil {
				b.Fatal(err)
			}
			if err := s.WriteObject(&jsonrpc2.Response{ID: r.ID, Result: &result}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
