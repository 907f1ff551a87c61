package mcp

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"github.com/fluxgit/fluxgit/host/catalog"
)

// A tool may mirror arguments into HTTP headers (MCP 2026-07-28, SEP-2243):
// a property of its inputSchema marked x-mcp-header: Name is sent by the
// client as the header Mcp-Param-Name too, so a load balancer can route on
// it without reading the body. The host/httpserve transport checks every
// such header against the body before the request is served.

// ParamHeaderKeyword marks a tool argument mirrored into a header.
const ParamHeaderKeyword = catalog.ParamHeaderKeyword

// ParamHeader is one tool argument mirrored into an HTTP header.
type ParamHeader struct {
	// Name is the header name after "Mcp-Param-".
	Name string
	// Path is the property path to the argument inside arguments.
	Path []string
}

// ParamHeaders are the mirrored arguments of the named tool, nil for an
// unknown tool or one without any.
func (s *Server) ParamHeaders(tool string) []ParamHeader {
	t, ok := s.opts.Catalog.Tool(tool)
	if !ok {
		return nil
	}
	s.paramMu.Lock()
	defer s.paramMu.Unlock()
	if h, ok := s.paramHeaders[tool]; ok {
		return h
	}
	h := ParamHeadersOf(t.InputSchema)
	s.paramHeaders[tool] = h
	return h
}

// ParamHeadersOf finds the x-mcp-header marks of an input schema, at any
// depth of properties, sorted by header name. Marks SEP-2243 forbids (an
// empty or non-token name, a name used twice ignoring case, a property
// whose type is not string, integer or boolean) are skipped: a client
// must drop such a tool, so no header is expected for them; spec lint
// reports them (catalog.RuleParamHeader).
func ParamHeadersOf(schema json.RawMessage) []ParamHeader {
	var out []ParamHeader
	seen := map[string]int{}
	var walk func(raw json.RawMessage, path []string)
	walk = func(raw json.RawMessage, path []string) {
		var node struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if json.Unmarshal(raw, &node) != nil {
			return
		}
		names := make([]string, 0, len(node.Properties))
		for k := range node.Properties {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			prop := node.Properties[k]
			p := append(append([]string(nil), path...), k)
			var mark struct {
				Header *string `json:"x-mcp-header"` // catalog.ParamHeaderKeyword
				Type   string  `json:"type"`
			}
			if json.Unmarshal(prop, &mark) == nil && mark.Header != nil {
				if catalog.IsHeaderToken(*mark.Header) && catalog.ParamHeaderType(mark.Type) {
					seen[strings.ToLower(*mark.Header)]++
					out = append(out, ParamHeader{Name: *mark.Header, Path: p})
				}
			}
			walk(prop, p)
		}
	}
	walk(schema, nil)
	kept := out[:0]
	for _, h := range out {
		if seen[strings.ToLower(h.Name)] == 1 {
			kept = append(kept, h)
		}
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].Name < kept[j].Name })
	if len(kept) == 0 {
		return nil
	}
	return kept
}

// ParamValue is the header form of the argument at h.Path in arguments:
// a string as is, an integer in decimal, a boolean as true or false. ok
// is false when the argument is absent or null: no header is expected.
func (h ParamHeader) ParamValue(arguments json.RawMessage) (value string, ok bool) {
	raw := arguments
	for _, k := range h.Path {
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return "", false
		}
		if raw, ok = m[k]; !ok {
			return "", false
		}
	}
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return "", false
	case raw[0] == '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		return s, true
	case string(raw) == "true" || string(raw) == "false":
		return string(raw), true
	}
	// A number: its decimal form, as a client renders an integer.
	if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return strconv.FormatInt(n, 10), true
	}
	return string(raw), true
}
