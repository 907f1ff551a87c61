package catalog

import (
	"fmt"
	"slices"
)

// ServedKeyword marks an input argument that tools/list leaves out of the
// inputSchema it serves, because telling the model about it costs tokens
// and buys nothing: the argument is informational (repoId on a git read:
// the client's own label for the repository, which changes no result). The
// only valid value is false, and it may only sit on the schema of a
// property that is not required. The host still validates every call
// against the full spec schema, so the argument stays accepted, checked
// and bounded; the served copy is only ever looser than the spec (see
// servedSchema), never stricter.
const ServedKeyword = "x-fluxgit-served"

// serveInformational splits t.InputSchema, as inlined (path marks already
// stripped), into the full schema the host validates against (the mark
// removed) and the schema tools/list serves (marked properties removed).
// A schema without marks is left as it is, and SpecInputSchema stays
// empty: the two are the same.
func (t *Tool) serveInformational() error {
	if len(t.InputSchema) == 0 {
		return nil
	}
	v, err := parseJSON(t.InputSchema)
	if err != nil {
		return err
	}
	if !hasServedMark(v) {
		return nil
	}
	full, err := marshal(servedSchema(v, false))
	if err != nil {
		return err
	}
	served, err := marshal(servedSchema(v, true))
	if err != nil {
		return err
	}
	t.SpecInputSchema, t.InputSchema = full, served
	return nil
}

// hasServedMark reports whether ServedKeyword appears at a schema position
// of s.
func hasServedMark(s any) bool {
	found := false
	walkSchemaObjects(s, func(o *object) {
		if _, ok := o.get(ServedKeyword); ok {
			found = true
		}
	})
	return found
}

// walkSchemaObjects calls fn for s and every subschema of s (the keywords
// whose values are schemas, maps of schemas or lists of schemas; data such
// as enum, const, default and examples is not walked).
func walkSchemaObjects(s any, fn func(*object)) {
	o, ok := s.(*object)
	if !ok {
		return
	}
	fn(o)
	for _, k := range o.keys {
		v := o.vals[k]
		switch {
		case schemaKeywords[k] || k == "items":
			if l, ok := v.([]any); ok {
				for _, e := range l {
					walkSchemaObjects(e, fn)
				}
			} else {
				walkSchemaObjects(v, fn)
			}
		case schemaListKeywords[k]:
			if l, ok := v.([]any); ok {
				for _, e := range l {
					walkSchemaObjects(e, fn)
				}
			}
		case schemaMapKeywords[k] || k == "$defs":
			if m, ok := v.(*object); ok {
				for _, pk := range m.keys {
					walkSchemaObjects(m.vals[pk], fn)
				}
			}
		}
	}
}

// servedSchema returns a copy of s without ServedKeyword. With drop, every
// property whose schema carries the mark is removed as well, and an object
// schema that lost a property also loses additionalProperties: false (and
// unevaluatedProperties: false): a client that still sends the argument
// must not be told it is forbidden. Everything else is kept, so the result
// accepts every instance s accepts.
func servedSchema(s any, drop bool) any {
	o, ok := s.(*object)
	if !ok {
		return s
	}
	var dropped []string
	if props := o.obj("properties"); drop && props != nil {
		for _, k := range props.keys {
			if p, ok := props.vals[k].(*object); ok {
				if _, marked := p.get(ServedKeyword); marked {
					dropped = append(dropped, k)
				}
			}
		}
	}
	out := newObject(o.len())
	for _, k := range o.keys {
		v := o.vals[k]
		switch {
		case k == ServedKeyword:
			continue
		case len(dropped) > 0 && (k == "additionalProperties" || k == "unevaluatedProperties") && v == false:
			continue
		case len(dropped) > 0 && k == "required":
			var req []any
			if l, ok := v.([]any); ok {
				for _, e := range l {
					if name, _ := e.(string); !slices.Contains(dropped, name) {
						req = append(req, e)
					}
				}
			}
			if len(req) > 0 {
				out.set(k, req)
			}
			continue
		case schemaKeywords[k] || k == "items":
			if l, ok := v.([]any); ok {
				v = servedList(l, drop)
			} else {
				v = servedSchema(v, drop)
			}
		case schemaListKeywords[k]:
			if l, ok := v.([]any); ok {
				v = servedList(l, drop)
			}
		case schemaMapKeywords[k] || k == "$defs":
			if m, ok := v.(*object); ok {
				mm := newObject(m.len())
				for _, pk := range m.keys {
					if k == "properties" && slices.Contains(dropped, pk) {
						continue
					}
					mm.set(pk, servedSchema(m.vals[pk], drop))
				}
				v = mm
			}
		}
		out.set(k, v)
	}
	return out
}

func servedList(l []any, drop bool) []any {
	out := make([]any, len(l))
	for i, e := range l {
		out[i] = servedSchema(e, drop)
	}
	return out
}

// servedMarkFindings reports misuse of ServedKeyword in an input schema: a
// value other than false, a mark that is not on the schema of a property
// (only a named argument can be left out of a schema), or a mark on a
// required property (a client could not know to send it).
func servedMarkFindings(schema any) []string {
	var problems []string
	onProperty := map[*object]bool{}
	walkSchemaObjects(schema, func(o *object) {
		props := o.obj("properties")
		if props == nil {
			return
		}
		required := stringList(toPlain(o.vals["required"]))
		for _, k := range props.keys {
			p, ok := props.vals[k].(*object)
			if !ok {
				continue
			}
			v, marked := p.get(ServedKeyword)
			if !marked {
				continue
			}
			onProperty[p] = true
			if v != false {
				problems = append(problems, fmt.Sprintf("property %s: %s must be false (leave the argument out of the served schema), not %s", k, ServedKeyword, jsonText(toPlain(v))))
			}
			if slices.Contains(required, k) {
				problems = append(problems, fmt.Sprintf("property %s is required, so %s: false would hide an argument every call needs", k, ServedKeyword))
			}
		}
	})
	misplaced := false
	walkSchemaObjects(schema, func(o *object) {
		if _, ok := o.get(ServedKeyword); ok && !onProperty[o] {
			misplaced = true
		}
	})
	if misplaced {
		problems = append(problems, ServedKeyword+" may only sit on the schema of a named property (an argument)")
	}
	return problems
}
