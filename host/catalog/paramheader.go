package catalog

import (
	"fmt"
	"strings"
)

// A tool may mirror an argument into an HTTP header (MCP 2026-07-28,
// SEP-2243, docs/seps/2243-http-standardization.mdx in the specification
// repository): the argument's schema carries ParamHeaderKeyword with the
// header's name, and the client sends Mcp-Param-<name> next to the body.
// host/mcp reads the marks (ParamHeadersOf) and host/httpserve checks the
// headers; the rules of a valid mark live here, where spec lint holds
// every spec tree to them, so a third-party spec learns of a mark the host
// would ignore before a client drops the tool.

// ParamHeaderKeyword marks a tool argument mirrored into a header.
const ParamHeaderKeyword = "x-mcp-header"

// RuleParamHeader: an x-mcp-header mark the host cannot honour (SEP-2243):
// a name that is not an HTTP field-name token, one used twice ignoring
// case, a mark on something other than a string, integer or boolean
// property reached through properties alone (not array items, not
// additionalProperties), or a mark in an outputSchema.
const RuleParamHeader = "x-mcp-header"

// IsHeaderToken reports whether s is an HTTP field-name token (RFC 9110
// 5.1), the form SEP-2243 requires of a mark's name.
func IsHeaderToken(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// ParamHeaderType reports whether a property of JSON Schema type t may be
// mirrored into a header: SEP-2243 allows primitive values only.
func ParamHeaderType(t string) bool {
	return t == "string" || t == "integer" || t == "boolean"
}

// paramHeaderFindings lists what is wrong with the x-mcp-header marks of
// an inputSchema (in, the expanded form walkSchema walks).
func paramHeaderFindings(in *object) []string {
	var out []string
	// The host (host/mcp.ParamHeadersOf) follows properties alone: a mark
	// on any other node is never honoured.
	reached := map[*object]bool{}
	var follow func(o *object)
	follow = func(o *object) {
		props := o.obj("properties")
		if props == nil {
			return
		}
		for _, k := range props.keys {
			if p, ok := props.vals[k].(*object); ok && !reached[p] {
				reached[p] = true
				follow(p)
			}
		}
	}
	follow(in)
	names := map[string]string{} // lower-cased name → where first seen
	walkSchema(in, "arguments", func(s any, where string, _ bool) {
		o, ok := s.(*object)
		if !ok {
			return
		}
		raw, marked := o.get(ParamHeaderKeyword)
		if !marked {
			return
		}
		name, isString := raw.(string)
		switch {
		case !isString || !IsHeaderToken(name):
			out = append(out, fmt.Sprintf("%s: %s must be an HTTP header-name token (letters, digits, !#$%%&'*+-.^_`|~), got %v", where, ParamHeaderKeyword, raw))
			return
		case !reached[o]:
			out = append(out, fmt.Sprintf("%s: %s %q is not on a property reached through properties alone (array items, additionalProperties, allOf/anyOf/oneOf and if/then/else are not followed); put it on a named property", where, ParamHeaderKeyword, name))
			return
		}
		if t, _ := o.vals["type"].(string); !ParamHeaderType(t) {
			out = append(out, fmt.Sprintf("%s: %s %q needs type string, integer or boolean (SEP-2243 mirrors primitive values only)", where, ParamHeaderKeyword, name))
			return
		}
		if first, dup := names[strings.ToLower(name)]; dup && first != where {
			out = append(out, fmt.Sprintf("%s: %s %q is already used by %s (names are compared ignoring case); give each argument its own", where, ParamHeaderKeyword, name, first))
			return
		}
		names[strings.ToLower(name)] = where
	})
	return out
}

// hasParamHeader reports whether an outputSchema carries a mark, which
// means nothing there.
func hasParamHeader(out *object) bool {
	found := false
	walkSchema(out, "payload", func(s any, _ string, _ bool) {
		if o, ok := s.(*object); ok {
			if _, marked := o.get(ParamHeaderKeyword); marked {
				found = true
			}
		}
	})
	return found
}
