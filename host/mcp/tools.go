package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/fluxgit/fluxgit/host/catalog"
	"github.com/fluxgit/fluxgit/host/repopath"
	"github.com/fluxgit/fluxgit/host/rpc"
	"github.com/fluxgit/fluxgit/internal/wire"
)

// listVariant names the three shapes a tool definition takes across
// protocol versions; each is rendered once and reused.
func listVariant(g generation) int {
	switch {
	case !g.modern && g.version >= V20251125 && g.caps.legacyTasks:
		// execution.taskSupport (experimental tasks) exists only in
		// 2025-11-25, and only a client that declared tasks is shown it.
		return 3
	case g.structured():
		return 2
	case g.annotations():
		return 1
	}
	return 0
}

func (s *Server) toolsList(g generation, p params) (json.RawMessage, error) {
	if err := checkCursor(p); err != nil {
		return nil, err
	}
	v := listVariant(g)
	key := listKey(v, g)
	if cached, ok := s.lists.Load(key); ok {
		return cached.(json.RawMessage), nil
	}
	tools := make([]map[string]any, 0, len(s.opts.Catalog.Tools))
	for _, t := range s.opts.Catalog.Tools {
		def := map[string]any{
			"name":        t.Name,
			"description": t.Description,
			"inputSchema": t.InputSchema,
		}
		if v >= 1 {
			def["annotations"] = t.Annotations
		}
		if v >= 2 {
			def["title"] = t.Title
			def["outputSchema"] = t.OutputSchemaFor(s.opts.ReferenceShape)
		}
		if v >= 3 && t.Tasks() {
			def["execution"] = map[string]any{"taskSupport": t.TaskSupport}
		}
		if m := uiMeta(t.UI); m != nil && g.caps.ui {
			def["_meta"] = m
		}
		tools = append(tools, def)
	}
	raw, err := rpc.Marshal(map[string]any{"tools": tools})
	if err != nil {
		return nil, err
	}
	s.lists.Store(key, json.RawMessage(raw))
	return raw, nil
}

// envelope is the tool payload (the result envelope described in docs/protocol.md): the host adds identity and
// provenance around whatever the provider returned.
type envelope struct {
	Tool     string          `json:"tool"`
	ReadOnly bool            `json:"readOnly"`
	Source   string          `json:"source,omitempty"`
	Tier     string          `json:"tier,omitempty"`
	RepoPath string          `json:"repoPath,omitempty"`
	Data     json.RawMessage `json:"data,omitempty"`
	Error    *payloadError   `json:"error,omitempty"`
}

// payloadError is the envelope's error. Data is always sent in the
// reference shape (null when the provider gave none) and left out when
// empty in the lean shape.
type payloadError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (s *Server) unknownTool(name string) *rpcError {
	var ro, wr []string
	for _, t := range s.opts.Catalog.Tools {
		if t.ReadOnly {
			ro = append(ro, t.Name)
		} else {
			wr = append(wr, t.Name)
		}
	}
	sort.Strings(ro)
	sort.Strings(wr)
	if ro == nil {
		ro = []string{}
	}
	if wr == nil {
		wr = []string{}
	}
	return errorf(codeInvalidParams, map[string]any{
		"tool":               name,
		"reason":             "no tool of this name is served; call tools/list",
		"readOnlyTools":      ro,
		"writeProposalTools": wr,
	}, "Unknown tool '%s'", name)
}

// toolsCall runs one tools/call; isErr reports a tool result with isError.
// A call refused for its arguments may carry both a result (what the
// client is sent) and the refusal as err (what the audit ledger records).
func (s *Server) toolsCall(ctx context.Context, rq *request, p params) (res json.RawMessage, isErr bool, err error) {
	g := rq.gen
	var name string
	if raw, ok := p["name"]; !ok || json.Unmarshal(raw, &name) != nil || name == "" {
		return nil, false, invalidParams("missing tool name: params.name must be a non-empty string")
	}
	tool, ok := s.opts.Catalog.Tool(name)
	if !ok {
		return nil, false, s.unknownTool(name)
	}
	args := map[string]any{}
	if raw, ok := p["arguments"]; ok && string(raw) != "null" {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, false, invalidParams("arguments must be a JSON object")
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false, invalidParams("arguments must be a JSON object")
		}
		args = m
	}
	if err := tool.ValidateArguments(args); err != nil {
		return s.argumentRefused(tool, g, msgInvalidParams, validationDetails(err))
	}
	// Every argument the spec marks as a filesystem path (x-fluxgit-path),
	// whatever its name, is canonicalised and confined here; the provider
	// gets the canonical values.
	repoPath, err := s.opts.Roots.CanonicalizeArguments(args, tool.Paths)
	if err != nil {
		var re *repopath.Error
		if errors.As(err, &re) {
			if details, ok := re.Data["details"].(string); ok && re.Code == codeInvalidParams {
				return s.argumentRefused(tool, g, re.Message, details)
			}
			return nil, false, &rpcError{Code: re.Code, Message: re.Message, Data: re.Data}
		}
		return nil, false, err
	}
	rq.repoPath = repoPath
	argBytes, err := json.Marshal(args)
	if err != nil {
		return nil, false, fmt.Errorf("encode arguments: %w", err)
	}
	call := &wire.Call{Tool: name, Arguments: argBytes, Meta: rq.meta(s.opts.Roots.Roots)}
	rq.ctx = ctx
	declared := taskDeclared(g, p)
	call.Meta.Tasks = declared
	switch {
	case tool.TaskSupport == catalog.TaskRequired && !declared:
		return nil, false, taskRequired(g, name)
	case declared && tool.HostTasks():
		res, err := s.startTask(rq, tool, call, p)
		return res, false, err
	}
	var pres *wire.Result
	if rq.gen.modern && rq.gen.caps.any() && rq.sess != nil {
		// The modern generation asks the client through input_required
		// results (see mrtr.go), which may span several requests.
		var input json.RawMessage
		pres, input, err = s.callWithInput(ctx, rq, tool, call, p)
		if input != nil {
			return input, false, nil
		}
	} else {
		pres, err = s.opts.Providers.CallTool(ctx, tool.Provider, call, tool.ReadOnly, rq.events)
		rq.finish()
	}
	if err != nil {
		var (
			f  *wire.Failure
			re *rpcError
		)
		if errors.As(err, &re) {
			return nil, false, re // the host's own refusal (a bad requestState)
		}
		if errors.As(err, &f) {
			if f.Kind == wire.KindInvalidArgument {
				return s.argumentRefused(tool, g, msgInvalidParams, f.Details)
			}
			return nil, false, s.failure(f, g, tool.Provider, tool.ReadOnly)
		}
		if ctx.Err() != nil {
			return nil, false, errorf(codeRequestCancelled, nil, "Request cancelled")
		}
		s.log.Error("provider call failed", "provider", tool.Provider, "tool", name, "err", err)
		// Only a read may be retried blindly: a write proposal that failed
		// in the provider may or may not have reached the gateway, so the
		// agent must check (operation.status) rather than propose again.
		return nil, false, errorf(codeInternal, map[string]any{"provider": tool.Provider, "details": err.Error(), "retryable": tool.ReadOnly},
			"Provider %s failed", tool.Provider)
	}
	if pres.Task != nil && declared {
		// The provider answered with a task it keeps itself.
		res, err = s.providerTask(rq, tool, p, pres.Task)
		return res, false, err
	}
	res, err = s.toolResult(tool, g, repoPath, pres)
	return res, pres.Error != nil, err
}

// msgInvalidParams is JSON-RPC's message for -32602.
const msgInvalidParams = "Invalid params"

// argumentRefused answers a call whose arguments failed validation (the
// inputSchema, the path rules, or the provider's own checks). The MCP
// specification (2025-11-25) asks servers to report input validation
// errors as tool execution errors, so the model can read why and correct
// the call: for modern requests and legacy sessions on 2025-11-25 it is a
// tool result with isError whose payload error is -32602 with
// data.details. Older clients keep the JSON-RPC -32602 they were built
// for, with the details in the message too, because many clients show
// only the message to the model.
//
// Either way the refusal is returned as the error too, so the audit ledger
// records the call as refused; a caller that got a result sends the result.
func (s *Server) argumentRefused(tool *catalog.Tool, g generation, message, details string) (json.RawMessage, bool, error) {
	refusal := invalidParams(details)
	refusal.Message, refusal.audit = message+": "+details, message
	if !g.toolErrorsForArguments() {
		return nil, false, refusal
	}
	data, err := rpc.Marshal(map[string]any{"details": details})
	if err != nil {
		return nil, false, fmt.Errorf("encode details: %w", err)
	}
	env := envelope{Tool: tool.Name, ReadOnly: tool.ReadOnly,
		Error: &payloadError{Code: codeInvalidParams, Message: refusal.Message, Data: data}}
	if s.opts.ReferenceShape {
		env.Tier = tool.Tier
	}
	payload, err := rpc.Marshal(env)
	if err != nil {
		return nil, false, fmt.Errorf("encode payload: %w", err)
	}
	out := map[string]any{"content": []map[string]any{{"type": "text", "text": string(payload)}}, "isError": true}
	// structuredContent must match the tool's outputSchema (clients
	// validate it even on errors); a schema that does not foresee a
	// refusal gets the text alone, which an error result may be.
	if g.structured() && admits(tool, payload, s.opts.ReferenceShape) {
		out["structuredContent"] = json.RawMessage(payload)
	}
	res, err := rpc.Marshal(out)
	if err != nil {
		return nil, false, err
	}
	return res, true, refusal
}

// admits reports whether payload satisfies the tool's output schema in
// effect for the result shape.
func admits(tool *catalog.Tool, payload []byte, reference bool) bool {
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	var v any
	return dec.Decode(&v) == nil && tool.ValidatePayloadFor(v, reference) == nil
}

func validationDetails(err error) string {
	var ve *catalog.ValidationError
	if errors.As(err, &ve) {
		return ve.Details
	}
	return err.Error()
}

// toolResult wraps a provider result in the envelope, checks it against
// the tool's outputSchema and renders the MCP CallToolResult.
func (s *Server) toolResult(tool *catalog.Tool, g generation, repoPath string, res *wire.Result) (json.RawMessage, error) {
	if tool.Plain() {
		return s.plainResult(tool, g, res)
	}
	env := s.envelope(tool, repoPath, res)
	payload, err := rpc.Marshal(env)
	if err != nil {
		return nil, fmt.Errorf("encode payload: %w", err)
	}
	if payload, err = appendFields(payload, res.Fields); err != nil {
		s.log.Error("provider result fields rejected", "tool", tool.Name, "err", err)
		return nil, errorf(codeInternal, map[string]any{"details": err.Error(), "tool": tool.Name, "retryable": false},
			"Tool result does not match its outputSchema")
	}
	// The provider's data may arrive HTML-escaped (encoding/json's default
	// on its side); the text the model reads must show '<' as '<'.
	payload = rpc.UnescapeHTML(payload)
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	var decoded any
	if err := dec.Decode(&decoded); err != nil {
		return nil, fmt.Errorf("decode payload: %w", err)
	}
	if err := tool.ValidatePayloadFor(decoded, s.opts.ReferenceShape); err != nil {
		// A provider broke its own contract; never hand the agent data the
		// schema does not promise.
		s.log.Error("tool payload violates outputSchema", "tool", tool.Name, "details", validationDetails(err))
		return nil, errorf(codeInternal, map[string]any{"details": validationDetails(err), "tool": tool.Name, "retryable": false},
			"Tool result does not match its outputSchema")
	}
	content := []map[string]any{{"type": "text", "text": string(payload)}}
	if strings.TrimSpace(res.Text) != "" {
		content = append(content, map[string]any{"type": "text", "text": res.Text})
	}
	extra, err := providerContent(g, "result content", res.Content)
	if err != nil {
		return nil, s.brokenProvider(tool.Provider, fmt.Sprintf("tool %s: %v", tool.Name, err))
	}
	content = append(content, extra...)
	out := map[string]any{"content": content, "isError": env.Error != nil}
	if g.structured() {
		out["structuredContent"] = json.RawMessage(payload)
	}
	return rpc.Marshal(out)
}

// envelope wraps a provider result. The reference shape carries the tool's
// tier, the source and the repository path (on errors only when the
// provider named a source, as the reference does) and a null error.data;
// the lean shape (CONTRACT §3) leaves out what a model already knows: the
// tier, the repository path it passed itself, a local-git source and an
// empty error.data. A source that is not local git (the FluxGit app, a
// detector) stays: it says where the answer came from.
func (s *Server) envelope(tool *catalog.Tool, repoPath string, res *wire.Result) envelope {
	env := envelope{Tool: tool.Name, ReadOnly: tool.ReadOnly}
	ref := s.opts.ReferenceShape
	if ref {
		env.Source, env.Tier = res.Source, tool.Tier
	} else if res.Source != catalog.LocalGitSource {
		env.Source = res.Source
	}
	if res.Error != nil {
		data := res.Error.Data
		if len(data) == 0 || string(data) == "null" {
			data = nil
			if ref {
				data = json.RawMessage("null")
			}
		}
		env.Error = &payloadError{Code: res.Error.Code, Message: res.Error.Message, Data: data}
		if ref && res.Source != "" {
			env.RepoPath = repoPath
		}
		return env
	}
	if ref {
		env.RepoPath = repoPath
	}
	env.Data = res.Data
	if len(env.Data) == 0 {
		env.Data = json.RawMessage("{}")
	}
	return env
}

func (s *Server) resourcesList(g generation, p params, templates bool) (json.RawMessage, error) {
	if err := checkCursor(p); err != nil {
		return nil, err
	}
	if templates {
		list := make([]map[string]any, 0, len(s.opts.Catalog.Templates))
		for _, r := range s.opts.Catalog.Templates {
			if listedTo(r, g) {
				list = append(list, resourceDef(r, "uriTemplate", r.URITemplate))
			}
		}
		return rpc.Marshal(map[string]any{"resourceTemplates": list})
	}
	list := make([]map[string]any, 0, len(s.opts.Catalog.Resources))
	for _, r := range s.opts.Catalog.Resources {
		if listedTo(r, g) {
			list = append(list, resourceDef(r, "uri", r.URI))
		}
	}
	return rpc.Marshal(map[string]any{"resources": list})
}

func resourceDef(r *catalog.Resource, key, val string) map[string]any {
	d := map[string]any{key: val, "name": r.Name, "description": r.Description}
	if r.Title != "" {
		d["title"] = r.Title
	}
	if r.MimeType != "" {
		d["mimeType"] = r.MimeType
	}
	if m := uiMeta(r.UI); m != nil {
		d["_meta"] = m
	}
	return d
}

// resourceOwner finds the provider serving uri: an exact resource, or a
// template whose literal prefix (before the first expression) matches.
func (s *Server) resourceOwner(uri string) (string, bool) {
	for _, r := range s.opts.Catalog.Resources {
		if r.URI == uri {
			return r.Provider, true
		}
	}
	for _, r := range s.opts.Catalog.Templates {
		if templateMatches(r.URITemplate, uri) {
			return r.Provider, true
		}
	}
	return "", false
}

// templateMatches reports whether uri can be an expansion of an RFC 6570
// template, judged by the literal prefix and the first expression's
// operator: "shift://status{?workspace}" matches "shift://status" and
// "shift://status?workspace=a" but not "shift://statusX".
func templateMatches(tmpl, uri string) bool {
	prefix, expr, ok := strings.Cut(tmpl, "{")
	if !ok {
		return tmpl == uri
	}
	if prefix == "" || !strings.HasPrefix(uri, prefix) {
		return false
	}
	rest := uri[len(prefix):]
	switch {
	case strings.HasPrefix(expr, "?"):
		return rest == "" || rest[0] == '?'
	case strings.HasPrefix(expr, "/"):
		return rest == "" || rest[0] == '/'
	case strings.HasPrefix(expr, "#"):
		return rest == "" || rest[0] == '#'
	}
	return rest != ""
}

func (s *Server) resourcesRead(ctx context.Context, g generation, p params) (json.RawMessage, error) {
	var uri string
	if raw, ok := p["uri"]; !ok || json.Unmarshal(raw, &uri) != nil || uri == "" {
		return nil, invalidParams("params.uri must be a non-empty string")
	}
	notFound := func() error {
		// The modern generation folded resource-not-found into -32602.
		code := int64(codeResourceNotFound)
		if g.modern {
			code = codeInvalidParams
		}
		return errorf(code, map[string]any{"uri": uri}, "Resource not found")
	}
	owner, ok := s.resourceOwner(uri)
	if !ok {
		return nil, notFound()
	}
	res, err := s.opts.Providers.ReadResource(ctx, owner, uri, wire.Meta{ClientName: g.client.Name, ClientVersion: g.client.Version})
	var f *wire.Failure
	if errors.As(err, &f) && f.Kind == wire.KindNotFound {
		return nil, notFound()
	}
	if err != nil {
		return nil, errorf(codeInternal, map[string]any{"provider": owner, "details": err.Error(), "retryable": true}, "Provider %s failed", owner)
	}
	item := map[string]any{"uri": res.URI}
	if res.MimeType != "" {
		item["mimeType"] = res.MimeType
	}
	if res.Blob != nil {
		item["blob"] = res.Blob // []byte marshals as base64
	} else {
		item["text"] = res.Text
	}
	if r := s.resourceSpec(res.URI); r != nil && res.URI == uri {
		// A view's csp and border preference travel with its content,
		// where the host reads them to build the sandbox (apps.go).
		if m := uiMeta(r.UI); m != nil {
			item["_meta"] = m
		}
	}
	return rpc.Marshal(map[string]any{"contents": []any{item}})
}

// failure maps a provider failure of a known kind to the JSON-RPC error
// the generation expects. Providers never choose codes: the host does.
// retryable says whether the request may be repeated blindly (false for
// a write proposal, which may have reached the gateway).
func (s *Server) failure(f *wire.Failure, g generation, provider string, retryable bool) *rpcError {
	data := map[string]any{}
	for k, v := range f.Data {
		data[k] = v
	}
	if f.Details != "" {
		data["details"] = f.Details
	}
	switch f.Kind {
	case wire.KindInvalidArgument:
		return invalidParams(f.Details)
	case wire.KindOutsideRoots:
		return &rpcError{Code: repopath.CodeOutsideRoots, Message: f.Message, Data: data}
	case wire.KindNotFound:
		code := int64(codeResourceNotFound)
		if g.modern {
			code = codeInvalidParams
		}
		return &rpcError{Code: code, Message: f.Message, Data: data}
	case wire.KindClientCapability:
		// MCP 2026-07-28 names this refusal; legacy clients get the same
		// code, whose data says which capability to declare.
		if _, ok := data["details"]; !ok {
			data["details"] = f.Message + "; declare it in the client capabilities to use this"
		}
		return &rpcError{Code: codeMissingCapability, Message: "Missing required client capability", Data: data}
	case wire.KindUnavailable:
		data["provider"], data["retryable"] = provider, retryable
		return &rpcError{Code: codeInternal, Message: f.Message, Data: data}
	}
	data["provider"], data["retryable"] = provider, false
	return &rpcError{Code: codeInternal, Message: f.Message, Data: data}
}

// envelopeKeys are the members the host owns in every result envelope.
var envelopeKeys = map[string]bool{"tool": true, "readOnly": true, "source": true, "tier": true, "repoPath": true, "data": true, "error": true}

// appendFields adds a provider's extra envelope members to payload, in
// name order so the text a model reads is stable.
func appendFields(payload []byte, fields map[string]json.RawMessage) ([]byte, error) {
	if len(fields) == 0 {
		return payload, nil
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		if envelopeKeys[k] {
			return nil, fmt.Errorf("the provider set envelope member %q, which the host owns", k)
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	buf := bytes.NewBuffer(bytes.TrimSuffix(payload, []byte("}")))
	for _, k := range keys {
		name, _ := rpc.Marshal(k)
		buf.WriteByte(',')
		buf.Write(name)
		buf.WriteByte(':')
		// Compact, so content[0].text stays one compact JSON value.
		if err := json.Compact(buf, fields[k]); err != nil {
			return nil, fmt.Errorf("envelope member %q: %w", k, err)
		}
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}
