package catalog

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"runtime"
	"strings"
)

// Schemas served to MCP clients must be self-contained: a client cannot
// fetch ../fragments/common.yaml. The inliner therefore replaces every $ref
// — to another file of the layer or to a JSON pointer within the same file —
// by (a copy of) its target, recursively, so the result contains no $ref at
// all. $defs and definitions sections are dropped from the output since
// nothing points into them any more. Recursive schemas (a ref reachable from
// its own target) cannot be flattened and are reported as cycles.

// Keywords whose value is a schema, a map of schemas or a list of schemas
// (JSON Schema 2020-12 plus the older spellings). Everything else is data
// (const, enum, default, examples, ...) and is copied verbatim.
var (
	schemaKeywords = map[string]bool{
		"additionalProperties": true, "contains": true, "propertyNames": true,
		"not": true, "if": true, "then": true, "else": true, "unevaluatedItems": true,
		"unevaluatedProperties": true, "contentSchema": true, "additionalItems": true,
	}
	schemaMapKeywords = map[string]bool{
		"properties": true, "patternProperties": true, "dependentSchemas": true,
	}
	schemaListKeywords = map[string]bool{
		"allOf": true, "anyOf": true, "oneOf": true, "prefixItems": true,
	}
	// annotationKeywords may sit next to a $ref and simply override the
	// target's value when the two are merged.
	annotationKeywords = map[string]bool{
		"title": true, "description": true, "default": true, "examples": true,
		"deprecated": true, "readOnly": true, "writeOnly": true, "$comment": true,
		PathKeyword: true,
	}
)

// maxInlinedBytes caps one inlined schema; refs can multiply a small spec.
const maxInlinedBytes = 4 << 20

// docSource parses and caches the files of one layer.
type docSource struct {
	fsys fs.FS
	docs map[string]any
	errs map[string]error
}

func newDocSource(fsys fs.FS) *docSource {
	return &docSource{fsys: fsys, docs: map[string]any{}, errs: map[string]error{}}
}

// prefetch parses the named files concurrently. YAML parsing is most of
// the host's start-up time, and the files are independent; doc then serves
// them from the cache in the order the loader needs.
func (d *docSource) prefetch(names []string) {
	type parsed struct {
		name string
		v    any
		err  error
	}
	work := make(chan string)
	out := make(chan parsed)
	workers := runtime.GOMAXPROCS(0)
	for i := 0; i < workers; i++ {
		go func() {
			for name := range work {
				v, err := readDoc(d.fsys, name)
				out <- parsed{name, v, err}
			}
		}()
	}
	go func() {
		for _, n := range names {
			work <- n
		}
		close(work)
	}()
	for range names {
		p := <-out
		if p.err != nil {
			d.errs[p.name] = p.err
		} else {
			d.docs[p.name] = p.v
		}
	}
}

// doc returns the parsed document at name (a slash path in the layer).
func (d *docSource) doc(name string) (any, error) {
	if v, ok := d.docs[name]; ok {
		return v, nil
	}
	if err, ok := d.errs[name]; ok {
		return nil, err
	}
	v, err := readDoc(d.fsys, name)
	if err != nil {
		d.errs[name] = err
		return nil, err
	}
	d.docs[name] = v
	return v, nil
}

// readDoc reads and parses one YAML or JSON file.
func readDoc(fsys fs.FS, name string) (any, error) {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, err
	}
	if strings.HasSuffix(name, ".json") {
		return parseJSON(b)
	}
	return parseYAML(b)
}

// inliner resolves the $refs of schemas within one layer.
type inliner struct {
	src   *docSource
	memo  map[string]any // "file#pointer" → inlined target
	stack []string       // refs being resolved, for cycle detection
}

func newInliner(src *docSource) *inliner {
	return &inliner{src: src, memo: map[string]any{}}
}

// RefError reports a $ref that cannot be inlined.
type refError struct {
	ref string
	msg string
}

func (e *refError) Error() string { return fmt.Sprintf("$ref %q: %s", e.ref, e.msg) }

// errCycle marks cyclic references (wrapped in a refError).
var errCycle = errors.New("reference cycle")

// schemaAt inlines the schema found at JSON pointer ptr of file.
func (in *inliner) schemaAt(file, ptr string) (any, error) {
	doc, err := in.src.doc(file)
	if err != nil {
		return nil, err
	}
	node, ok := lookupPointer(doc, ptr)
	if !ok {
		return nil, fmt.Errorf("%s#%s not found", file, ptr)
	}
	key := file + "#" + ptr
	in.stack = append(in.stack, key)
	defer func() { in.stack = in.stack[:len(in.stack)-1] }()
	return in.schema(file, node)
}

// schema returns a copy of schema node (located in file) with every $ref
// replaced by its target.
func (in *inliner) schema(file string, node any) (any, error) {
	o, ok := node.(*object)
	if !ok {
		return node, nil // boolean schema (or garbage the compiler reports)
	}
	var target any
	hasRef := false
	if rv, ok := o.get("$ref"); ok {
		ref, isStr := rv.(string)
		if !isStr {
			return nil, errors.New("$ref must be a string")
		}
		t, err := in.resolve(file, ref)
		if err != nil {
			return nil, err
		}
		target, hasRef = t, true
	}
	out := newObject(o.len())
	for _, k := range o.keys {
		v := o.vals[k]
		switch {
		case k == "$ref" || k == "$defs" || k == "definitions":
			continue
		case schemaKeywords[k]:
			s, err := in.schema(file, v)
			if err != nil {
				return nil, err
			}
			out.set(k, s)
		case k == "items" || schemaListKeywords[k]:
			// items is a single schema in 2020-12 and a list in older drafts.
			list, ok := v.([]any)
			if !ok {
				if k == "items" {
					s, err := in.schema(file, v)
					if err != nil {
						return nil, err
					}
					out.set(k, s)
				} else {
					out.set(k, v)
				}
				continue
			}
			l := make([]any, len(list))
			for i, e := range list {
				s, err := in.schema(file, e)
				if err != nil {
					return nil, err
				}
				l[i] = s
			}
			out.set(k, l)
		case schemaMapKeywords[k]:
			m, ok := v.(*object)
			if !ok {
				out.set(k, v)
				continue
			}
			mm := newObject(m.len())
			for _, pk := range m.keys {
				s, err := in.schema(file, m.vals[pk])
				if err != nil {
					return nil, err
				}
				mm.set(pk, s)
			}
			out.set(k, mm)
		default:
			out.set(k, v)
		}
	}
	if !hasRef {
		return out, nil
	}
	return mergeRef(target, out), nil
}

// mergeRef combines the inlined target of a $ref with the keywords written
// next to it. When the siblings are annotations only (the usual
// `$ref` + description), they are merged into a copy of the target,
// overriding its annotations. Otherwise the exact 2020-12 meaning is kept with
// {allOf: [target], ...siblings}.
func mergeRef(target any, siblings *object) any {
	if siblings.len() == 0 {
		return target
	}
	onlyAnnotations := true
	for _, k := range siblings.keys {
		if !annotationKeywords[k] {
			onlyAnnotations = false
			break
		}
	}
	if t, ok := target.(*object); ok && onlyAnnotations {
		out := newObject(t.len() + siblings.len())
		for _, k := range t.keys {
			out.set(k, t.vals[k])
		}
		for _, k := range siblings.keys {
			out.set(k, siblings.vals[k])
		}
		return out
	}
	if b, ok := target.(bool); ok && b {
		return siblings
	}
	out := newObject(siblings.len() + 1)
	var all []any
	for _, k := range siblings.keys {
		if k == "allOf" {
			if l, ok := siblings.vals[k].([]any); ok {
				all = append(all, l...)
			}
			continue
		}
		out.set(k, siblings.vals[k])
	}
	out.set("allOf", append([]any{target}, all...))
	return out
}

// resolve inlines the target of ref, written in file.
func (in *inliner) resolve(file, ref string) (any, error) {
	target, ptr, err := splitRef(file, ref)
	if err != nil {
		return nil, &refError{ref: ref, msg: err.Error()}
	}
	key := target + "#" + ptr
	for _, k := range in.stack {
		if k == key {
			chain := append(append([]string(nil), in.stack...), key)
			return nil, &refError{ref: ref, msg: fmt.Sprintf("%v: %s", errCycle, strings.Join(chain, " -> "))}
		}
	}
	if v, ok := in.memo[key]; ok {
		return v, nil
	}
	v, err := in.schemaAt(target, ptr)
	if err != nil {
		var re *refError
		if errors.As(err, &re) {
			return nil, err
		}
		return nil, &refError{ref: ref, msg: err.Error()}
	}
	in.memo[key] = v
	return v, nil
}

// splitRef resolves ref relative to file and returns the target file (a
// clean slash path inside the layer) and the JSON pointer.
func splitRef(file, ref string) (string, string, error) {
	if u, err := url.Parse(ref); err != nil || u.Scheme != "" || u.Host != "" || u.RawQuery != "" {
		return "", "", errors.New("only relative references to files of the spec tree are supported")
	}
	rel, frag, _ := strings.Cut(ref, "#")
	frag, err := url.PathUnescape(frag)
	if err != nil {
		return "", "", fmt.Errorf("bad fragment: %v", err)
	}
	if frag != "" && !strings.HasPrefix(frag, "/") {
		return "", "", errors.New("only JSON-pointer fragments are supported (no anchors)")
	}
	target := file
	if rel != "" {
		rel, err = url.PathUnescape(rel)
		if err != nil {
			return "", "", fmt.Errorf("bad path: %v", err)
		}
		if strings.HasPrefix(rel, "/") {
			return "", "", errors.New("absolute paths are not supported; use a path relative to the referring file")
		}
		target = path.Join(path.Dir(file), rel)
		if !fs.ValidPath(target) {
			return "", "", errors.New("points outside the spec tree")
		}
	}
	return target, frag, nil
}

// inlineSchema returns the self-contained JSON of the schema at ptr in file.
func inlineSchema(in *inliner, file, ptr string) (any, []byte, error) {
	v, err := in.schemaAt(file, ptr)
	if err != nil {
		return nil, nil, err
	}
	b, err := marshal(v)
	if err != nil {
		return nil, nil, err
	}
	if len(b) > maxInlinedBytes {
		return nil, nil, fmt.Errorf("inlined schema is %d bytes, more than the %d allowed", len(b), maxInlinedBytes)
	}
	return v, b, nil
}
