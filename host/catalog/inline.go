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
// to another file of the layer, and every #/... $ref of the spec file itself
// (its top-level $defs, an authoring convenience like a fragment), by (a
// copy of) its target, recursively. $defs and definitions sections are
// dropped from the output since nothing points into them any more.
// Recursive schemas (a ref reachable from its own target) cannot be
// flattened and are reported as cycles.
//
// One exception: an inputSchema or outputSchema that declares its own $defs
// at its top level is served as written, JSON Schema 2020-12 style (the
// form SEP-1613 says clients must receive unchanged). Inside it, "#" means
// the schema itself, as a client reads it, so its #/... refs and every $defs
// it holds are kept; only refs to fragment files are still inlined. The
// host's own walks over the arguments (path marks, lint rules) need every
// subschema in place, so such a schema is also expanded: its local refs
// replaced by their targets, as if they had been written inline
// (expandLocal). Local refs must resolve within the schema and must not
// recurse.

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
		PathKeyword: true, ServedKeyword: true,
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
	return in.schema(file, node, false)
}

// schema returns a copy of schema node (located in file) with every $ref
// replaced by its target. With keepLocal (node lies inside a schema that
// declares its own $defs), #/... refs and $defs are kept as written.
func (in *inliner) schema(file string, node any, keepLocal bool) (any, error) {
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
		if keepLocal && strings.HasPrefix(ref, "#") {
			return in.schemaKeepingRef(file, o)
		}
		t, err := in.resolve(file, ref)
		if err != nil {
			return nil, err
		}
		target, hasRef = t, true
	}
	out, err := in.members(file, o, keepLocal)
	if err != nil {
		return nil, err
	}
	if !hasRef {
		return out, nil
	}
	return mergeRef(target, out), nil
}

// schemaKeepingRef copies o, whose $ref is local to the schema being served
// as written, with its $ref in place and its members inlined.
func (in *inliner) schemaKeepingRef(file string, o *object) (any, error) {
	out, err := in.members(file, o, true)
	if err != nil {
		return nil, err
	}
	kept := newObject(out.len() + 1)
	for _, k := range o.keys {
		if k == "$ref" {
			kept.set(k, o.vals[k])
		} else if v, ok := out.get(k); ok {
			kept.set(k, v)
		}
	}
	return kept, nil
}

// members copies the keywords of o except $ref, inlining the schemas they
// hold. $defs and definitions are dropped unless keepLocal (then $defs is
// kept, its schemas inlined like any other).
func (in *inliner) members(file string, o *object, keepLocal bool) (*object, error) {
	out := newObject(o.len())
	for _, k := range o.keys {
		v := o.vals[k]
		switch {
		case k == "$ref" || k == "definitions" || (k == "$defs" && !keepLocal):
			continue
		case schemaKeywords[k]:
			s, err := in.schema(file, v, keepLocal)
			if err != nil {
				return nil, err
			}
			out.set(k, s)
		case k == "items" || schemaListKeywords[k]:
			// items is a single schema in 2020-12 and a list in older drafts.
			list, ok := v.([]any)
			if !ok {
				if k == "items" {
					s, err := in.schema(file, v, keepLocal)
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
				s, err := in.schema(file, e, keepLocal)
				if err != nil {
					return nil, err
				}
				l[i] = s
			}
			out.set(k, l)
		case schemaMapKeywords[k] || k == "$defs":
			m, ok := v.(*object)
			if !ok {
				out.set(k, v)
				continue
			}
			mm := newObject(m.len())
			for _, pk := range m.keys {
				s, err := in.schema(file, m.vals[pk], keepLocal)
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
	return out, nil
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

// inlineSchema returns the JSON to serve for the schema at ptr in file, as
// a value and marshalled, plus the value with every local ref expanded for
// the host's own walks (the same value unless the schema declares its own
// $defs).
func inlineSchema(in *inliner, file, ptr string) (served, expanded any, raw []byte, err error) {
	doc, err := in.src.doc(file)
	if err != nil {
		return nil, nil, nil, err
	}
	node, ok := lookupPointer(doc, ptr)
	if !ok {
		return nil, nil, nil, fmt.Errorf("%s#%s not found", file, ptr)
	}
	root, _ := node.(*object)
	_, ownDefs := root.get("$defs")
	key := file + "#" + ptr
	in.stack = append(in.stack, key)
	served, err = in.schema(file, node, ownDefs)
	in.stack = in.stack[:len(in.stack)-1]
	if err != nil {
		return nil, nil, nil, err
	}
	expanded = served
	if ownDefs {
		if expanded, err = in.expandLocal(key, served); err != nil {
			return nil, nil, nil, err
		}
	}
	b, err := marshal(served)
	if err != nil {
		return nil, nil, nil, err
	}
	if len(b) > maxInlinedBytes {
		return nil, nil, nil, fmt.Errorf("inlined schema is %d bytes, more than the %d allowed", len(b), maxInlinedBytes)
	}
	return served, expanded, b, nil
}

// expandLocal returns served (a schema kept with its own $defs, named key)
// with its local refs inlined and its $defs dropped: the form a schema
// without them would have had. The served schema is registered as a
// document of its own under key, which no $ref can name (a file name ends
// where a ref's "#" begins), so that its refs resolve against the schema
// as a client reads it.
func (in *inliner) expandLocal(key string, served any) (any, error) {
	if err := checkLocalRefs(served, served); err != nil {
		return nil, err
	}
	in.src.docs[key] = served
	v, err := in.schemaAt(key, "")
	if err != nil {
		return nil, fmt.Errorf("%w (local references are expanded for the host's path and lint checks, so they must not recurse)", err)
	}
	return v, nil
}

// checkLocalRefs reports the first $ref in schema node (part of the served
// schema root) whose target is not in root. A spec author may expect #/...
// to mean the spec file, as it does in a schema without its own $defs; the
// error says why it does not here.
func checkLocalRefs(root, node any) error {
	o, ok := node.(*object)
	if !ok {
		return nil
	}
	if ref, ok := o.vals["$ref"].(string); ok {
		_, ptr, err := splitRef("", ref)
		if err != nil {
			return &refError{ref: ref, msg: err.Error()}
		}
		if _, found := lookupPointer(root, ptr); !found {
			return &refError{ref: ref, msg: "not found in this schema; a schema with its own $defs is served as written, " +
				"so #/... refers to the schema itself, not to the spec file: move the definition into the schema's $defs " +
				"or reference a fragment file"}
		}
	}
	var err error
	eachSubschema(o, func(sub any) {
		if err == nil {
			err = checkLocalRefs(root, sub)
		}
	})
	return err
}

// eachSubschema calls fn for every schema that o holds directly: the values
// of the schema keywords, of items, of the list and map keywords, and of
// $defs. Data keywords (const, enum, default, ...) are not schemas.
func eachSubschema(o *object, fn func(any)) {
	for _, k := range o.keys {
		v := o.vals[k]
		switch {
		case schemaKeywords[k]:
			fn(v)
		case k == "items" || schemaListKeywords[k]:
			if l, ok := v.([]any); ok {
				for _, e := range l {
					fn(e)
				}
			} else if k == "items" {
				fn(v)
			}
		case schemaMapKeywords[k] || k == "$defs":
			if m, ok := v.(*object); ok {
				for _, mk := range m.keys {
					fn(m.vals[mk])
				}
			}
		}
	}
}
