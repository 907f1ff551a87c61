package audit

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// The ledger's canonical JSON is the byte form every hash and signature is
// computed over, so a verifier in any language must reproduce it exactly:
//
//   - object keys sorted by their UTF-8 bytes, recursively; arrays keep
//     their order; no whitespace anywhere;
//   - strings escape only '"', '\\' and control characters below U+0020
//     (\b \f \n \r \t, otherwise \u00XX in lower-case hex); everything else,
//     including '/', '<', '>', '&', DEL and non-ASCII, is written as UTF-8;
//   - integers that fit int64 (negative) or uint64 (non-negative) are
//     written in decimal; every other number is an IEEE-754 double printed
//     in its shortest round-trip form the way serde_json (ryu) prints it:
//     "1.0", "0.001", "1e30", "1.5e-7", "-0.0".
//
// That is byte-for-byte what the reference sidecar's serde_json produces,
// so fingerprints and hashes agree across implementations.

// Object is a JSON object whose members are kept sorted by key (UTF-8 byte
// order) with unique keys. Parse always returns sorted objects and Set
// keeps them sorted; Get and Set need a sorted object, while the encoder
// sorts a hand-written literal itself.
type Object []Member

// Member is one key/value pair of an Object.
type Member struct {
	Key   string
	Value any
}

// Number is a JSON number in canonical form (see the package rules).
type Number string

// Get returns the value of key.
func (o Object) Get(key string) (any, bool) {
	i := sort.Search(len(o), func(i int) bool { return o[i].Key >= key })
	if i < len(o) && o[i].Key == key {
		return o[i].Value, true
	}
	return nil, false
}

// Set inserts or replaces key, keeping the object sorted.
func (o Object) Set(key string, v any) Object {
	i := sort.Search(len(o), func(i int) bool { return o[i].Key >= key })
	if i < len(o) && o[i].Key == key {
		o[i].Value = v
		return o
	}
	o = append(o, Member{})
	copy(o[i+1:], o[i:])
	o[i] = Member{key, v}
	return o
}

// Without returns a copy of o without the given keys.
func (o Object) Without(keys ...string) Object {
	out := make(Object, 0, len(o))
	for _, m := range o {
		drop := false
		for _, k := range keys {
			if m.Key == k {
				drop = true
				break
			}
		}
		if !drop {
			out = append(out, m)
		}
	}
	return out
}

// Canonical returns the canonical JSON of v. Values are nil, bool, string,
// Number, int, int64, uint64, Object, map[string]any and []any.
func Canonical(v any) ([]byte, error) {
	return appendCanonical(nil, v)
}

// AppendCanonical appends the canonical JSON of v to dst.
func AppendCanonical(dst []byte, v any) ([]byte, error) {
	return appendCanonical(dst, v)
}

// appendObjectExcept appends o without the top-level keys skip (used to
// hash an entry without entryHash and signature without copying it).
func appendObjectExcept(dst []byte, o Object, skip ...string) ([]byte, error) {
	o = sorted(o)
	dst = append(dst, '{')
	first := true
	var err error
outer:
	for _, m := range o {
		for _, k := range skip {
			if m.Key == k {
				continue outer
			}
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = appendString(dst, m.Key)
		dst = append(dst, ':')
		if dst, err = appendCanonical(dst, m.Value); err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
}

func appendCanonical(dst []byte, v any) ([]byte, error) {
	var err error
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case bool:
		if x {
			return append(dst, "true"...), nil
		}
		return append(dst, "false"...), nil
	case string:
		return appendString(dst, x), nil
	case Number:
		return append(dst, x...), nil
	case int:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(dst, x, 10), nil
	case uint64:
		return strconv.AppendUint(dst, x, 10), nil
	case Object:
		return appendObjectExcept(dst, x)
	case map[string]any:
		o := make(Object, 0, len(x))
		for k, val := range x {
			o = append(o, Member{k, val})
		}
		sort.Slice(o, func(a, b int) bool { return o[a].Key < o[b].Key })
		return appendObjectExcept(dst, o)
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = appendCanonical(dst, e); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	default:
		return nil, fmt.Errorf("audit: canonical JSON: unsupported type %T", v)
	}
}

// sorted returns o, or a sorted copy when o is out of order (an Object
// literal written by hand). Keys must be unique either way.
func sorted(o Object) Object {
	for i := 1; i < len(o); i++ {
		if o[i-1].Key >= o[i].Key {
			s := append(Object(nil), o...)
			sort.SliceStable(s, func(a, b int) bool { return s[a].Key < s[b].Key })
			return s
		}
	}
	return o
}

const hexDigits = "0123456789abcdef"

func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// maxDepth bounds nesting while parsing (serde_json's recursion limit).
const maxDepth = 128

// ErrDuplicateKey reports an object with the same key twice: such a line
// could be read differently by different tools, so it is never canonical.
var ErrDuplicateKey = errors.New("duplicate object key")

// Parse decodes one JSON value into the canonical model: Object (sorted,
// duplicate keys rejected), []any, string, Number, bool, nil. Strings must
// be valid UTF-8 without lone surrogates; numbers that do not fit a double
// are rejected.
func Parse(data []byte) (any, error) {
	p := parser{data: data}
	p.skipSpace()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos != len(p.data) {
		return nil, p.errorf("trailing data after JSON value")
	}
	return v, nil
}

type parser struct {
	data []byte
	pos  int
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("invalid JSON at offset %d: %s", p.pos, fmt.Sprintf(format, args...))
}

func (p *parser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) (any, error) {
	if p.pos >= len(p.data) {
		return nil, p.errorf("unexpected end of input")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object(depth + 1)
	case c == '[':
		return p.array(depth + 1)
	case c == '"':
		return p.string()
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case p.literal("true"):
		return true, nil
	case p.literal("false"):
		return false, nil
	case p.literal("null"):
		return nil, nil
	default:
		return nil, p.errorf("unexpected character %q", c)
	}
}

func (p *parser) literal(word string) bool {
	if strings.HasPrefix(string(p.data[p.pos:min(len(p.data), p.pos+len(word))]), word) {
		p.pos += len(word)
		return true
	}
	return false
}

func (p *parser) object(depth int) (any, error) {
	if depth > maxDepth {
		return nil, p.errorf("nesting deeper than %d", maxDepth)
	}
	p.pos++ // {
	// A ledger entry has 20 to 23 members.
	o := make(Object, 0, 24)
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return o, nil
	}
	sorted := true
	for {
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return nil, p.errorf("object key must be a string")
		}
		k, err := p.key()
		if err != nil {
			return nil, err
		}
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, p.errorf("missing ':' after object key")
		}
		p.pos++
		p.skipSpace()
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		key := k
		if n := len(o); n > 0 && o[n-1].Key >= key {
			sorted = false
		}
		o = append(o, Member{key, v})
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, p.errorf("unterminated object")
		}
		if p.data[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.data[p.pos] == '}' {
			p.pos++
			break
		}
		return nil, p.errorf("expected ',' or '}' in object")
	}
	if !sorted {
		sort.SliceStable(o, func(a, b int) bool { return o[a].Key < o[b].Key })
		for i := 1; i < len(o); i++ {
			if o[i-1].Key == o[i].Key {
				return nil, ErrDuplicateKey
			}
		}
	}
	return o, nil
}

func (p *parser) array(depth int) (any, error) {
	if depth > maxDepth {
		return nil, p.errorf("nesting deeper than %d", maxDepth)
	}
	p.pos++ // [
	a := []any{}
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return a, nil
	}
	for {
		p.skipSpace()
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, p.errorf("unterminated array")
		}
		if p.data[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.data[p.pos] == ']' {
			p.pos++
			return a, nil
		}
		return nil, p.errorf("expected ',' or ']' in array")
	}
}

// knownKeys are the keys of ledger entries and checkpoints: parsing them
// reuses these strings instead of allocating one per line.
var knownKeys = func() map[string]string {
	m := map[string]string{}
	for _, k := range []string{"approval", "args_fingerprint", "auditChainVersion", "auditSchemaVersion",
		"duration_ms", "entryHash", "event_type", "id", "previousHash", "readOnly", "repo_scope", "result",
		"risk", "segmentId", "sequence", "session_id", "sidecarReadOnly", "signature", "signatureKeyId",
		"signatureVersion", "summary", "timestamp", "tool", "auditCheckpointVersion", "createdAt",
		"nextSequence", "prunedThroughSequence"} {
		m[k] = k
	}
	return m
}()

// key parses an object key, reusing the string of a known key.
func (p *parser) key() (string, error) {
	start := p.pos + 1
	for i := start; i < len(p.data) && i-start <= 32; i++ {
		if c := p.data[i]; c == '"' {
			if k, ok := knownKeys[string(p.data[start:i])]; ok {
				p.pos = i + 1
				return k, nil
			}
			break
		} else if c == '\\' || c < 0x20 {
			break
		}
	}
	v, err := p.string()
	if err != nil {
		return "", err
	}
	return v.(string), nil
}

func (p *parser) string() (any, error) {
	p.pos++ // opening quote
	start := p.pos
	// Fast path: no escapes.
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		if c == '"' {
			s := p.data[start:p.pos]
			p.pos++
			if !utf8.Valid(s) {
				return nil, p.errorf("string is not valid UTF-8")
			}
			return string(s), nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return nil, p.errorf("control character in string")
		}
		p.pos++
	}
	buf := append([]byte(nil), p.data[start:p.pos]...)
	for {
		if p.pos >= len(p.data) {
			return nil, p.errorf("unterminated string")
		}
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			if !utf8.Valid(buf) {
				return nil, p.errorf("string is not valid UTF-8")
			}
			return string(buf), nil
		case c < 0x20:
			return nil, p.errorf("control character in string")
		case c != '\\':
			buf = append(buf, c)
			p.pos++
			continue
		}
		p.pos++
		if p.pos >= len(p.data) {
			return nil, p.errorf("unterminated escape")
		}
		e := p.data[p.pos]
		p.pos++
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, err := p.hex4()
			if err != nil {
				return nil, err
			}
			if utf16.IsSurrogate(r) {
				if r >= 0xdc00 || p.pos+1 >= len(p.data) || p.data[p.pos] != '\\' || p.data[p.pos+1] != 'u' {
					return nil, p.errorf("lone surrogate in \\u escape")
				}
				p.pos += 2
				r2, err := p.hex4()
				if err != nil {
					return nil, err
				}
				if r2 < 0xdc00 || r2 > 0xdfff {
					return nil, p.errorf("lone surrogate in \\u escape")
				}
				r = utf16.DecodeRune(r, r2)
			}
			buf = utf8.AppendRune(buf, r)
		default:
			return nil, p.errorf("invalid escape \\%c", e)
		}
	}
}

func (p *parser) hex4() (rune, error) {
	if p.pos+4 > len(p.data) {
		return 0, p.errorf("short \\u escape")
	}
	var r rune
	for _, c := range p.data[p.pos : p.pos+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c-'a') + 10
		case c >= 'A' && c <= 'F':
			r |= rune(c-'A') + 10
		default:
			return 0, p.errorf("invalid \\u escape")
		}
	}
	p.pos += 4
	return r, nil
}

func (p *parser) number() (any, error) {
	start := p.pos
	if p.data[p.pos] == '-' {
		p.pos++
	}
	digits := func() int {
		n := 0
		for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	intStart := p.pos
	if digits() == 0 {
		return nil, p.errorf("invalid number")
	}
	if p.data[intStart] == '0' && p.pos-intStart > 1 {
		return nil, p.errorf("leading zero in number")
	}
	isInt := true
	if p.pos < len(p.data) && p.data[p.pos] == '.' {
		isInt = false
		p.pos++
		if digits() == 0 {
			return nil, p.errorf("invalid number")
		}
	}
	if p.pos < len(p.data) && (p.data[p.pos] == 'e' || p.data[p.pos] == 'E') {
		isInt = false
		p.pos++
		if p.pos < len(p.data) && (p.data[p.pos] == '+' || p.data[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return nil, p.errorf("invalid number")
		}
	}
	n, err := canonicalNumber(string(p.data[start:p.pos]), isInt)
	if err != nil {
		return nil, p.errorf("%v", err)
	}
	return n, nil
}

// canonicalNumber normalizes a JSON number literal as serde_json would
// re-print it after parsing.
func canonicalNumber(lit string, isInt bool) (Number, error) {
	if isInt {
		if lit[0] == '-' {
			if i, err := strconv.ParseInt(lit, 10, 64); err == nil && i != 0 {
				return Number(strconv.FormatInt(i, 10)), nil
			}
			// -0 and integers below int64 become doubles.
		} else if u, err := strconv.ParseUint(lit, 10, 64); err == nil {
			return Number(strconv.FormatUint(u, 10)), nil
		}
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil || math.IsInf(f, 0) {
		return "", fmt.Errorf("number %s out of range", abbreviate(lit))
	}
	return Number(formatDouble(f)), nil
}

func abbreviate(s string) string {
	if len(s) > 32 {
		return s[:32] + "..."
	}
	return s
}

// formatDouble prints a finite double like ryu's format64 (serde_json).
func formatDouble(f float64) string {
	var b []byte
	if math.Signbit(f) {
		b = append(b, '-')
		f = -f
	}
	if f == 0 {
		return string(append(b, "0.0"...))
	}
	// Shortest round-trip digits d.ddddde±x.
	e := strconv.FormatFloat(f, 'e', -1, 64)
	mant, exp, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	x, _ := strconv.Atoi(exp)
	length := len(digits)
	k := x - (length - 1) // value = digits × 10^k
	kk := length + k      // 10^(kk-1) <= value < 10^kk
	switch {
	case 0 <= k && kk <= 16:
		b = append(b, digits...)
		b = append(b, strings.Repeat("0", kk-length)...)
		b = append(b, ".0"...)
	case 0 < kk && kk <= 16:
		b = append(b, digits[:kk]...)
		b = append(b, '.')
		b = append(b, digits[kk:]...)
	case -5 < kk && kk <= 0:
		b = append(b, "0."...)
		b = append(b, strings.Repeat("0", -kk)...)
		b = append(b, digits...)
	case length == 1:
		b = append(b, digits...)
		b = append(b, 'e')
		b = strconv.AppendInt(b, int64(kk-1), 10)
	default:
		b = append(b, digits[0], '.')
		b = append(b, digits[1:]...)
		b = append(b, 'e')
		b = strconv.AppendInt(b, int64(kk-1), 10)
	}
	return string(b)
}
