package rpc

import (
	"bytes"
	"encoding/json"
)

// Marshal encodes v as compact JSON without HTML escaping: '<', '>' and
// '&' stay themselves. MCP results are read by models and clients, not
// embedded in HTML, and encoding/json's default turns every '<' of a diff
// into the six characters \u003c.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

// UnescapeHTML rewrites the escapes \u003c, \u003e and \u0026 inside the
// strings of the JSON text b back to '<', '>' and '&'. Those escapes are
// what encoding/json's default writes; json.RawMessage values already
// escaped that way (a provider's payload, jsonrpc2's own encoding of
// results and notifications) keep them through a non-escaping encoder, so
// the frame writer undoes them here. The value is unchanged; only its
// spelling is. b must be valid JSON; it is returned as is when it holds no
// such escape, and otherwise a new slice is returned.
func UnescapeHTML(b []byte) []byte {
	first := bytes.Index(b, []byte(`\u00`))
	if first < 0 {
		return b
	}
	var out []byte
	inString := false
	copied := 0 // b[:copied] is already in out
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !inString {
			if c == '"' {
				inString = true
			}
			continue
		}
		switch c {
		case '"':
			inString = false
		case '\\':
			if i+1 >= len(b) {
				return b
			}
			if b[i+1] != 'u' {
				i++ // a two-byte escape such as \\ or \"
				continue
			}
			if i+5 >= len(b) {
				return b
			}
			if r, ok := htmlEscape(b[i+2 : i+6]); ok {
				if out == nil {
					out = make([]byte, 0, len(b))
				}
				out = append(out, b[copied:i]...)
				out = append(out, r)
				copied = i + 6
			}
			i += 5
		}
	}
	if out == nil {
		return b
	}
	return append(out, b[copied:]...)
}

// htmlEscape reports which of '<', '>', '&' the four hex digits of a \u
// escape name, if any.
func htmlEscape(hex []byte) (byte, bool) {
	if hex[0] != '0' || hex[1] != '0' {
		return 0, false
	}
	switch {
	case hex[2] == '3' && (hex[3] == 'c' || hex[3] == 'C'):
		return '<', true
	case hex[2] == '3' && (hex[3] == 'e' || hex[3] == 'E'):
		return '>', true
	case hex[2] == '2' && hex[3] == '6':
		return '&', true
	}
	return 0, false
}
