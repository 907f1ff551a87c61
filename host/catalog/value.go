package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Spec documents are decoded into a small JSON value model that keeps the
// key order of YAML mappings, so that served schemas list properties in the
// order the author wrote them (repoPath first, not alphabetically):
//
//	*object            JSON object (ordered)
//	[]any              JSON array
//	string, bool, nil  as usual
//	int64, float64    numbers from YAML
//	json.Number        numbers from JSON
//
// Values are never mutated once built; the inliner shares subtrees freely.

// object is an insertion-ordered JSON object.
type object struct {
	keys []string
	vals map[string]any
}

func newObject(n int) *object {
	return &object{keys: make([]string, 0, n), vals: make(map[string]any, n)}
}

func (o *object) get(k string) (any, bool) {
	if o == nil {
		return nil, false
	}
	v, ok := o.vals[k]
	return v, ok
}

// set adds or replaces k, keeping the position of an existing key.
func (o *object) set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o *object) len() int {
	if o == nil {
		return 0
	}
	return len(o.keys)
}

// str returns the string value of key k, or "" when absent or not a string.
func (o *object) str(k string) string {
	v, _ := o.get(k)
	s, _ := v.(string)
	return s
}

// obj returns the object value of key k, or nil.
func (o *object) obj(k string) *object {
	v, _ := o.get(k)
	m, _ := v.(*object)
	return m
}

// maxNodes bounds the number of values one document may expand to (YAML
// aliases can multiply a small file into a huge tree).
const maxNodes = 1 << 20

// parseYAML decodes one YAML (or JSON, which is YAML) document into the value
// model. Only plain data is accepted: no merge keys, no NaN or infinities, at
// most one document.
func parseYAML(b []byte) (any, error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty document")
		}
		return nil, err
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, errors.New("more than one YAML document")
	} else if !errors.Is(err, io.EOF) {
		return nil, err
	}
	budget := maxNodes
	return fromNode(&doc, &budget)
}

func fromNode(n *yaml.Node, budget *int) (any, error) {
	*budget--
	if *budget < 0 {
		return nil, errors.New("document expands to too many values (alias bomb?)")
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, errors.New("empty document")
		}
		return fromNode(n.Content[0], budget)
	case yaml.AliasNode:
		return fromNode(n.Alias, budget)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := fromNode(c, budget)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		o := newObject(len(n.Content) / 2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			kn, vn := n.Content[i], n.Content[i+1]
			if kn.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("line %d: mapping keys must be scalars", kn.Line)
			}
			if kn.ShortTag() == "!!merge" {
				return nil, fmt.Errorf("line %d: YAML merge keys (<<) are not supported", kn.Line)
			}
			if _, dup := o.vals[kn.Value]; dup {
				return nil, fmt.Errorf("line %d: duplicate key %q", kn.Line, kn.Value)
			}
			v, err := fromNode(vn, budget)
			if err != nil {
				return nil, err
			}
			o.set(kn.Value, v)
		}
		return o, nil
	case yaml.ScalarNode:
		return fromScalar(n)
	}
	return nil, fmt.Errorf("line %d: unsupported YAML node", n.Line)
}

func fromScalar(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, err
		}
		return b, nil
	case "!!int":
		var i int64
		if err := n.Decode(&i); err != nil {
			return nil, fmt.Errorf("line %d: integer %s out of range", n.Line, n.Value)
		}
		return i, nil
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, err
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("line %d: %s is not a JSON number", n.Line, n.Value)
		}
		return f, nil
	default: // !!str, !!timestamp, !!binary and custom tags keep their text
		return n.Value, nil
	}
}

// parseJSON decodes JSON into the value model (numbers as json.Number).
func parseJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	v, err := decodeJSONValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("trailing data after JSON value")
	}
	return v, nil
}

func decodeJSONValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := newObject(4)
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := decodeJSONValue(dec)
				if err != nil {
					return nil, err
				}
				o.set(k, v)
			}
			_, err := dec.Token()
			return o, err
		case '[':
			out := []any{}
			for dec.More() {
				v, err := decodeJSONValue(dec)
				if err != nil {
					return nil, err
				}
				out = append(out, v)
			}
			_, err := dec.Token()
			return out, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		return t, nil
	}
}

// toPlain converts the value model into what encoding/json produces for
// `any` (map[string]any, []any, ...), the form the jsonschema validator
// accepts.
func toPlain(v any) any {
	switch t := v.(type) {
	case *object:
		m := make(map[string]any, len(t.keys))
		for _, k := range t.keys {
			m[k] = toPlain(t.vals[k])
		}
		return m
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = toPlain(e)
		}
		return out
	default:
		return v
	}
}

// marshal encodes a value-model tree as compact JSON, keeping key order and
// without HTML escaping.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := writeJSON(&buf, v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func writeJSON(buf *bytes.Buffer, v any) error {
	switch t := v.(type) {
	case nil:
		buf.WriteString("null")
	case bool:
		buf.WriteString(strconv.FormatBool(t))
	case string:
		writeString(buf, t)
	case int64:
		buf.WriteString(strconv.FormatInt(t, 10))
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return fmt.Errorf("%v is not a JSON number", t)
		}
		if t == math.Trunc(t) && math.Abs(t) < 1e15 {
			buf.WriteString(strconv.FormatFloat(t, 'f', -1, 64))
		} else {
			buf.WriteString(strconv.FormatFloat(t, 'g', -1, 64))
		}
	case json.Number:
		buf.WriteString(t.String())
	case []any:
		buf.WriteByte('[')
		for i, e := range t {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeJSON(buf, e); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case *object:
		buf.WriteByte('{')
		for i, k := range t.keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeString(buf, k)
			buf.WriteByte(':')
			if err := writeJSON(buf, t.vals[k]); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	default:
		return fmt.Errorf("unsupported value of type %T", v)
	}
	return nil
}

func writeString(buf *bytes.Buffer, s string) {
	plain := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			plain = false
			break
		}
	}
	if plain { // the common case needs no escaping
		buf.WriteByte('"')
		buf.WriteString(s)
		buf.WriteByte('"')
		return
	}
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // cannot fail for a string
	buf.Truncate(buf.Len() - 1)
}

// lookupPointer follows an RFC 6901 JSON pointer ("" or "/a/0/b") through a
// value-model tree.
func lookupPointer(root any, ptr string) (any, bool) {
	if ptr == "" {
		return root, true
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, false
	}
	toks := strings.Split(ptr[1:], "/")
	for i, tok := range toks {
		toks[i] = unescapeToken(tok)
	}
	return lookupTokens(root, toks)
}

// lookupTokens follows already unescaped pointer tokens.
func lookupTokens(root any, toks []string) (any, bool) {
	cur := root
	for _, tok := range toks {
		switch t := cur.(type) {
		case *object:
			v, ok := t.get(tok)
			if !ok {
				return nil, false
			}
			cur = v
		case map[string]any:
			v, ok := t[tok]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(t) || (len(tok) > 1 && tok[0] == '0') {
				return nil, false
			}
			cur = t[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

func unescapeToken(tok string) string {
	if !strings.Contains(tok, "~") {
		return tok
	}
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
}

func escapeToken(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}
