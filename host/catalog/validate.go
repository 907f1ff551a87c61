package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/url"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// ValidationError is returned by Tool.ValidateArguments and
// Tool.ValidatePayload when a value does not satisfy the schema. Details
// names the offending location, rooted at "arguments" or "payload", and is
// meant to be sent to the client verbatim (JSON-RPC -32602 data.details):
//
//	arguments.maxBytes must be <= 1048576
//	arguments.foo is not allowed
//	arguments.targets[0].path is required
//	arguments.base must not start with '-' (refused to prevent git option injection)
//
// When several constraints fail, Details describes the most specific one
// (the deepest location).
type ValidationError struct {
	Details string
}

// Error returns Details.
func (e *ValidationError) Error() string { return e.Details }

// newCompiler returns a 2020-12 compiler that never loads anything: every
// schema it compiles must have been added with AddResource.
func newCompiler() *jsonschema.Compiler {
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.LoadURL = func(u string) (io.ReadCloser, error) {
		return nil, fmt.Errorf("refusing to load %s: spec schemas are compiled offline and must be self-contained", u)
	}
	return c
}

// compileJSON compiles one self-contained schema document.
func compileJSON(url string, raw []byte) (*jsonschema.Schema, any, error) {
	if len(raw) == 0 {
		return nil, nil, errors.New("empty schema")
	}
	doc, err := decodeNumbers(raw)
	if err != nil {
		return nil, nil, err
	}
	c := newCompiler()
	if err := c.AddResource(url, bytes.NewReader(raw)); err != nil {
		return nil, nil, err
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, nil, errors.New(cleanCompileError(err, url))
	}
	return sch, doc, nil
}

// cleanCompileError shortens a compiler error: the internal mem:/// URL means
// nothing to a spec author.
func cleanCompileError(err error, url string) string {
	msg := err.Error()
	var se *jsonschema.SchemaError
	if errors.As(err, &se) {
		var ve *jsonschema.ValidationError
		if errors.As(se.Err, &ve) {
			// The schema itself violates the 2020-12 metaschema.
			leaf := ve
			for len(leaf.Causes) > 0 {
				leaf = leaf.Causes[0]
			}
			loc := leaf.InstanceLocation
			if loc == "" {
				loc = "/"
			}
			return fmt.Sprintf("not a valid JSON Schema at %s: %s", loc, leaf.Message)
		}
		if se.Err != nil {
			msg = strings.TrimPrefix(se.Err.Error(), "jsonschema: ")
		}
	}
	msg = strings.ReplaceAll(msg, url+"#", "#")
	return strings.ReplaceAll(msg, url, "schema")
}

func decodeNumbers(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// lazySchema compiles a schema on first use, once.
type lazySchema struct {
	once sync.Once
	sch  *jsonschema.Schema
	doc  any // the schema as plain JSON, to quote keyword values in messages
	err  error
}

func (l *lazySchema) get(url string, raw []byte) (*jsonschema.Schema, any, error) {
	l.once.Do(func() { l.sch, l.doc, l.err = compileJSON(url, raw) })
	return l.sch, l.doc, l.err
}

// ValidateArguments checks tools/call arguments against the tool's
// inputSchema. args should be JSON decoded with json.Decoder.UseNumber
// (map[string]any, []any, json.Number, ...); a json.RawMessage or []byte is
// decoded first, and other Go values are converted through encoding/json.
// Missing arguments should be passed as an empty object, not nil.
//
// A failed check returns a *ValidationError. Any other error means the schema
// itself is broken (spec lint reports that before release).
func (t *Tool) ValidateArguments(args any) error {
	sch, doc, err := t.in.get("mem:///tools/"+url.PathEscape(t.Name)+"/input.json", t.FullInputSchema())
	if err != nil {
		return fmt.Errorf("catalog: tool %s: inputSchema: %w", t.Name, err)
	}
	return validateWith(sch, doc, args, "arguments")
}

// FullInputSchema is the input schema of the spec, the one calls are
// validated against: SpecInputSchema when the served InputSchema leaves
// informational arguments out, else InputSchema.
func (t *Tool) FullInputSchema() json.RawMessage {
	if len(t.SpecInputSchema) > 0 {
		return t.SpecInputSchema
	}
	return t.InputSchema
}

// ValidatePayload checks a result envelope (the payload the host built
// around the provider's data) against the tool's outputSchema. Same value
// conventions and error types as ValidateArguments; details are rooted at
// "payload".
func (t *Tool) ValidatePayload(payload any) error { return t.ValidatePayloadFor(payload, false) }

// ValidatePayloadFor checks a result envelope against the output schema
// in effect for the result shape (OutputSchemaFor): in reference mode the
// referenceOutputSchema when the tool has one.
func (t *Tool) ValidatePayloadFor(payload any, reference bool) error {
	lazy, raw, which, name := &t.out, t.OutputSchema, "outputSchema", "output.json"
	if reference && len(t.ReferenceOutputSchema) > 0 {
		lazy, raw, which, name = &t.ref, t.ReferenceOutputSchema, referenceOutputKey, "reference-output.json"
	}
	sch, doc, err := lazy.get("mem:///tools/"+url.PathEscape(t.Name)+"/"+name, raw)
	if err != nil {
		return fmt.Errorf("catalog: tool %s: %s: %w", t.Name, which, err)
	}
	return validateWith(sch, doc, payload, "payload")
}

// validateWith validates v and turns a failure into a *ValidationError whose
// details are rooted at label.
func validateWith(sch *jsonschema.Schema, schemaDoc, v any, label string) error {
	v, err := normalize(v)
	if err != nil {
		return &ValidationError{Details: fmt.Sprintf("%s is not valid JSON: %v", rootName(label), err)}
	}
	err = sch.Validate(v)
	var bad jsonschema.InvalidJSONTypeError
	if errors.As(err, &bad) {
		// Typed Go values (structs, []string, json.RawMessage inside a
		// map, ...): convert to plain JSON and try again.
		if v, err = roundTrip(v); err != nil {
			return &ValidationError{Details: fmt.Sprintf("%s is not valid JSON: %v", rootName(label), err)}
		}
		err = sch.Validate(v)
	}
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	return &ValidationError{Details: describe(ve, v, schemaDoc, label)}
}

func normalize(v any) (any, error) {
	switch t := v.(type) {
	case json.RawMessage:
		return decodeNumbers(t)
	case []byte:
		return decodeNumbers(t)
	}
	return v, nil
}

func roundTrip(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return decodeNumbers(b)
}

// cause is one leaf of the validator's error tree, described.
type cause struct {
	depth int
	rank  int
	text  string
}

// Ranks break ties between causes at the same depth: an unexpected key
// (often a misspelt one) first, then a missing key, a type mismatch, and any
// other failure.
const (
	rankUnknownKey = iota
	rankMissingKey
	rankType
	rankOther
)

// describe picks the most specific leaf of the error tree and renders it.
func describe(ve *jsonschema.ValidationError, instance, schemaDoc any, label string) string {
	var causes []cause
	var collect func(e *jsonschema.ValidationError)
	collect = func(e *jsonschema.ValidationError) {
		if c, branch, ok := discriminated(e, instance, schemaDoc, label); ok {
			if branch != nil {
				collect(branch)
			} else {
				causes = append(causes, c)
			}
			return
		}
		if len(e.Causes) == 0 {
			causes = append(causes, describeLeaf(e, instance, schemaDoc, label))
			return
		}
		for _, c := range e.Causes {
			collect(c)
		}
	}
	collect(ve)
	var best *cause
	for _, c := range causes {
		if best == nil || c.depth > best.depth ||
			(c.depth == best.depth && (c.rank < best.rank || (c.rank == best.rank && c.text < best.text))) {
			best = &c
		}
	}
	if best == nil {
		return rootName(label) + " is invalid"
	}
	return best.text
}

// discriminated handles a failed oneOf or anyOf whose alternatives are
// objects told apart by one property with a const in every alternative
// (operationType: merge | rebase | ...). The failures of alternatives the
// value never meant to match (another operationType) only mislead ("ontoRef
// is not allowed"), so: when the value names an alternative, only that
// alternative's failures are described (branch); when the property is
// missing or names none, that alone is the cause. ok is false for any other
// error, which is then described as usual.
func discriminated(e *jsonschema.ValidationError, instance, schemaDoc any, label string) (c cause, branch *jsonschema.ValidationError, ok bool) {
	_, kwPtr, _ := strings.Cut(e.AbsoluteKeywordLocation, "#")
	kwTokens := splitPointer(kwPtr)
	if n := len(kwTokens); n == 0 || (kwTokens[n-1] != "oneOf" && kwTokens[n-1] != "anyOf") {
		return c, nil, false
	}
	alts, _ := lookupTokens(schemaDoc, kwTokens)
	list, _ := alts.([]any)
	tokens := splitPointer(e.InstanceLocation)
	inst, _ := lookupTokens(instance, tokens)
	obj, isObj := inst.(map[string]any)
	if len(list) < 2 || !isObj {
		return c, nil, false
	}
	key, consts, required := discriminator(list)
	if key == "" {
		return c, nil, false
	}
	where := renderPath(label, instance, append(tokens, key))
	v, present := obj[key]
	if !present {
		if !required {
			return c, nil, false
		}
		return cause{depth: len(tokens) + 1, rank: rankMissingKey, text: where + " is required"}, nil, true
	}
	for i, cv := range consts {
		if !jsonEqual(cv, v) {
			continue
		}
		prefix := kwPtr + "/" + strconv.Itoa(i)
		for _, sub := range e.Causes {
			_, p, _ := strings.Cut(sub.AbsoluteKeywordLocation, "#")
			if p == prefix || strings.HasPrefix(p, prefix+"/") {
				return c, sub, true
			}
		}
		return c, nil, false
	}
	vals := make([]string, len(consts))
	for i, cv := range consts {
		vals[i] = jsonText(cv)
	}
	return cause{depth: len(tokens) + 1, rank: rankOther, text: where + " must be one of " + strings.Join(vals, ", ")}, nil, true
}

// discriminator finds the property every alternative pins with a const
// (the first such, in the first alternative's key order of a sorted
// listing), the consts in alternative order, and whether every alternative
// requires it.
func discriminator(alts []any) (key string, consts []any, required bool) {
	first, _ := alts[0].(map[string]any)
	props, _ := first["properties"].(map[string]any)
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
next:
	for _, k := range keys {
		consts = consts[:0]
		required = true
		for _, a := range alts {
			m, _ := a.(map[string]any)
			ps, _ := m["properties"].(map[string]any)
			p, _ := ps[k].(map[string]any)
			cv, ok := p["const"]
			if !ok {
				continue next
			}
			consts = append(consts, cv)
			found := false
			for _, r := range stringList(m["required"]) {
				found = found || r == k
			}
			required = required && found
		}
		return k, consts, required
	}
	return "", nil, false
}

// knownKeywords are the assertion keywords describeLeaf understands.
var knownKeywords = map[string]bool{
	"type": true, "required": true, "additionalProperties": true, "unevaluatedProperties": true,
	"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true,
	"minLength": true, "maxLength": true, "pattern": true, "enum": true, "const": true,
	"minItems": true, "maxItems": true, "uniqueItems": true, "minProperties": true,
	"maxProperties": true, "multipleOf": true, "format": true, "not": true, "oneOf": true,
	"dependentRequired": true, "dependencies": true, "contains": true, "minContains": true,
	"maxContains": true, "unevaluatedItems": true, "additionalItems": true, "propertyNames": true,
}

func describeLeaf(e *jsonschema.ValidationError, instance, schemaDoc any, label string) cause {
	tokens := splitPointer(e.InstanceLocation)
	inst, _ := lookupTokens(instance, tokens)
	where := renderPath(label, instance, tokens)
	c := cause{depth: len(tokens), rank: rankOther}

	// Locate the failing keyword and its value in the schema.
	_, kwPtr, _ := strings.Cut(e.AbsoluteKeywordLocation, "#")
	kwTokens := splitPointer(kwPtr)
	keyword := ""
	if n := len(kwTokens); n > 0 {
		keyword = kwTokens[n-1]
		if _, err := strconv.Atoi(keyword); err == nil && n >= 3 &&
			(kwTokens[n-3] == "dependentRequired" || kwTokens[n-3] == "dependencies") {
			keyword = kwTokens[n-3]
		}
	}
	kwVal, kwFound := lookupTokens(schemaDoc, kwTokens)
	var parent any
	if n := len(kwTokens); n > 0 {
		parent, _ = lookupTokens(schemaDoc, kwTokens[:n-1])
	}
	parentMap, _ := parent.(map[string]any)

	if kwFound && e.Message == "not allowed" {
		if b, ok := kwVal.(bool); ok && !b {
			// A false schema, e.g. properties: {legacy: false}.
			c.rank = rankUnknownKey
			c.text = where + " is not allowed"
			return c
		}
	}
	if !kwFound || !knownKeywords[keyword] {
		c.text = where + ": " + e.Message
		return c
	}

	switch keyword {
	case "type":
		c.rank = rankType
		c.text = fmt.Sprintf("%s must be of type %s, got %s", where, typeList(kwVal), jsonTypeOf(inst))
	case "required":
		c.rank, c.depth = rankMissingKey, c.depth+1
		obj, _ := inst.(map[string]any)
		for _, k := range stringList(kwVal) {
			if _, ok := obj[k]; !ok {
				c.text = renderPath(label, instance, append(tokens, k)) + " is required"
				return c
			}
		}
		c.text = where + ": " + e.Message
	case "additionalProperties", "unevaluatedProperties":
		c.rank, c.depth = rankUnknownKey, c.depth+1
		if k, ok := undeclaredKey(inst, parentMap); ok {
			c.text = renderPath(label, instance, append(tokens, k)) + " is not allowed"
		} else {
			c.text = where + ": " + e.Message
		}
	case "dependentRequired", "dependencies":
		c.rank, c.depth = rankMissingKey, c.depth+1
		n := len(kwTokens)
		dep := kwTokens[n-2]
		missing, _ := kwVal.(string)
		if missing == "" {
			c.text = where + ": " + e.Message
		} else {
			c.text = fmt.Sprintf("%s is required when %s is present",
				renderPath(label, instance, append(tokens, missing)), renderPath(label, instance, append(tokens, dep)))
		}
	case "minimum":
		c.text = fmt.Sprintf("%s must be >= %s", where, jsonText(kwVal))
	case "maximum":
		c.text = fmt.Sprintf("%s must be <= %s", where, jsonText(kwVal))
	case "exclusiveMinimum":
		c.text = fmt.Sprintf("%s must be > %s", where, jsonText(kwVal))
	case "exclusiveMaximum":
		c.text = fmt.Sprintf("%s must be < %s", where, jsonText(kwVal))
	case "multipleOf":
		c.text = fmt.Sprintf("%s must be a multiple of %s", where, jsonText(kwVal))
	case "minLength":
		if jsonText(kwVal) == "1" {
			c.text = where + " must not be empty"
		} else {
			c.text = fmt.Sprintf("%s must be at least %s characters long", where, jsonText(kwVal))
		}
	case "maxLength":
		c.text = fmt.Sprintf("%s must be at most %s characters long", where, jsonText(kwVal))
	case "pattern":
		p, _ := kwVal.(string)
		if p == optionGuardPattern {
			c.text = where + " must not start with '-' (refused to prevent git option injection)"
		} else {
			c.text = fmt.Sprintf("%s must match the pattern %s", where, p)
		}
	case "enum":
		var vals []string
		if l, ok := kwVal.([]any); ok {
			for _, v := range l {
				vals = append(vals, jsonText(v))
			}
		}
		c.text = fmt.Sprintf("%s must be one of %s", where, strings.Join(vals, ", "))
	case "const":
		c.text = fmt.Sprintf("%s must be %s", where, jsonText(kwVal))
	case "minItems":
		c.text = fmt.Sprintf("%s must have at least %s items", where, jsonText(kwVal))
	case "maxItems":
		c.text = fmt.Sprintf("%s must have at most %s items", where, jsonText(kwVal))
	case "minProperties":
		c.text = fmt.Sprintf("%s must have at least %s properties", where, jsonText(kwVal))
	case "maxProperties":
		c.text = fmt.Sprintf("%s must have at most %s properties", where, jsonText(kwVal))
	case "uniqueItems":
		if i, ok := firstDuplicate(inst); ok {
			c.depth++
			c.text = renderPath(label, instance, append(tokens, strconv.Itoa(i))) + " duplicates an earlier item"
		} else {
			c.text = where + " must not contain duplicate items"
		}
	case "format":
		c.text = fmt.Sprintf("%s is not a valid %s", where, jsonText(kwVal))
	case "not":
		// `not: {required: [k]}` forbids a key; name it.
		if m, ok := kwVal.(map[string]any); ok && len(m) <= 2 {
			obj, _ := inst.(map[string]any)
			for _, k := range stringList(m["required"]) {
				if _, present := obj[k]; present {
					c.rank, c.depth = rankUnknownKey, c.depth+1
					c.text = renderPath(label, instance, append(tokens, k)) + " is not allowed here"
					return c
				}
			}
		}
		if m, ok := kwVal.(map[string]any); ok {
			if p, ok := m["pattern"].(string); ok && len(m) <= 2 {
				// `not: {pattern: ^refs/}` forbids a form of value.
				c.text = fmt.Sprintf("%s must not match the pattern %s", where, p)
				return c
			}
		}
		c.text = where + " matches a schema it must not match"
	case "oneOf":
		c.text = where + " must match exactly one of the allowed forms, but matches several"
	default:
		c.text = where + ": " + e.Message
	}
	return c
}

// optionGuardPattern is the pattern of the shared revision fragment; its
// failure gets a message that says why the value is refused.
const optionGuardPattern = "^[^-]"

// undeclaredKey returns the first key (sorted) of inst that schema neither
// declares in properties nor matches with patternProperties.
func undeclaredKey(inst any, schema map[string]any) (string, bool) {
	obj, ok := inst.(map[string]any)
	if !ok {
		return "", false
	}
	props, _ := schema["properties"].(map[string]any)
	pats, _ := schema["patternProperties"].(map[string]any)
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
next:
	for _, k := range keys {
		if _, ok := props[k]; ok {
			continue
		}
		for p := range pats {
			if re, err := regexp.Compile(p); err == nil && re.MatchString(k) {
				continue next
			}
		}
		return k, true
	}
	return "", false
}

func firstDuplicate(inst any) (int, bool) {
	l, ok := inst.([]any)
	if !ok {
		return 0, false
	}
	for i := 1; i < len(l); i++ {
		for j := 0; j < i; j++ {
			if jsonEqual(l[i], l[j]) {
				return i, true
			}
		}
	}
	return 0, false
}

func jsonEqual(a, b any) bool {
	if x, ok := numberRat(a); ok {
		y, ok := numberRat(b)
		return ok && x.Cmp(y) == 0
	}
	return reflect.DeepEqual(a, b)
}

func numberRat(v any) (*big.Rat, bool) {
	switch v.(type) {
	case json.Number, float64, float32, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		r, ok := new(big.Rat).SetString(fmt.Sprint(v))
		return r, ok
	}
	return nil, false
}

// splitPointer splits a location reported by the validator into unescaped
// tokens. jsonschema v5 escapes each token as RFC 6901 and then URL-path
// escapes it ("odd key" -> "odd%20key"); both are undone here.
func splitPointer(p string) []string {
	if p == "" {
		return nil
	}
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i, t := range parts {
		if u, err := url.PathUnescape(t); err == nil {
			t = u
		}
		parts[i] = unescapeToken(t)
	}
	return parts
}

var identRE = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

// renderPath turns instance tokens into "label.a[0].b"; array indexes are
// recognised by walking the instance. An empty label renders paths of a
// whole document ("a[0].b", or "document" for the root).
func renderPath(label string, instance any, tokens []string) string {
	var b strings.Builder
	b.WriteString(label)
	cur := instance
	for _, tok := range tokens {
		var next any
		isIndex := false
		switch t := cur.(type) {
		case []any:
			if i, err := strconv.Atoi(tok); err == nil && i >= 0 {
				isIndex = true
				if i < len(t) {
					next = t[i]
				}
			}
		case map[string]any:
			next = t[tok]
		default:
			_, err := strconv.Atoi(tok)
			isIndex = err == nil && cur != nil
		}
		switch {
		case isIndex:
			b.WriteString("[" + tok + "]")
		case identRE.MatchString(tok):
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(tok)
		default:
			q, _ := json.Marshal(tok)
			b.WriteString("[" + string(q) + "]")
		}
		cur = next
	}
	if b.Len() == 0 {
		return rootName(label)
	}
	return b.String()
}

func rootName(label string) string {
	if label == "" {
		return "document"
	}
	return label
}

func jsonTypeOf(v any) string {
	switch t := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case json.Number, float64, float32:
		if r, ok := numberRat(t); ok && r.IsInt() {
			return "integer"
		}
		return "number"
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return "integer"
	}
	return fmt.Sprintf("%T", v)
}

func typeList(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case []any:
		var s []string
		for _, e := range t {
			s = append(s, fmt.Sprint(e))
		}
		return strings.Join(s, " or ")
	}
	return jsonText(v)
}

func stringList(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, e := range l {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func jsonText(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}
