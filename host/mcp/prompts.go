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

// Prompts are spec data (spec/prompts/*.yaml): the host lists them without
// starting a provider, validates prompts/get arguments against the spec,
// confines path arguments like tool arguments, and renders host-rendered
// prompts itself; the owning provider renders the others and answers
// completion/complete for the arguments the spec marks completable.

func (s *Server) promptsList(g generation, p params) (json.RawMessage, error) {
	if err := checkCursor(p); err != nil {
		return nil, err
	}
	titles := g.structured() // title arrived with 2025-06-18
	list := make([]map[string]any, 0, len(s.opts.Catalog.Prompts))
	for _, pr := range s.opts.Catalog.Prompts {
		d := map[string]any{"name": pr.Name, "description": pr.Description}
		if titles && pr.Title != "" {
			d["title"] = pr.Title
		}
		args := make([]map[string]any, 0, len(pr.Arguments))
		for _, a := range pr.Arguments {
			ad := map[string]any{"name": a.Name, "description": a.Description, "required": a.Required}
			if titles && a.Title != "" {
				ad["title"] = a.Title
			}
			args = append(args, ad)
		}
		d["arguments"] = args
		list = append(list, d)
	}
	return rpc.Marshal(map[string]any{"prompts": list})
}

// unknownPrompt names the prompts that exist, so a model can retry.
func (s *Server) unknownPrompt(name string) *rpcError {
	names := make([]string, 0, len(s.opts.Catalog.Prompts))
	for _, pr := range s.opts.Catalog.Prompts {
		names = append(names, pr.Name)
	}
	return errorf(codeInvalidParams, map[string]any{"prompt": name, "prompts": names,
		"details": "no prompt of this name is served; call prompts/list"}, "Unknown prompt '%s'", name)
}

// stringArguments decodes a {name: string} object; key names the member
// for error messages.
func stringArguments(raw json.RawMessage, key string) (map[string]string, error) {
	args := map[string]string{}
	if len(raw) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return args, nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return nil, refuseParams(key + " must be an object mapping argument names to strings")
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		var v string
		if json.Unmarshal(m[k], &v) != nil {
			return nil, refuseParams(fmt.Sprintf("%s.%s must be a string (prompt arguments are strings)", key, k))
		}
		args[k] = v
	}
	return args, nil
}

// confinePromptArgs canonicalises and confines the path arguments of a
// prompt exactly as tools/call does for marked tool arguments.
func (s *Server) confinePromptArgs(pr *catalog.Prompt, args map[string]string) error {
	marks := pr.PathMarks()
	if len(marks) == 0 {
		return nil
	}
	anyArgs := make(map[string]any, len(args))
	for k, v := range args {
		anyArgs[k] = v
	}
	if _, err := s.opts.Roots.CanonicalizeArguments(anyArgs, marks); err != nil {
		var re *repopath.Error
		if errors.As(err, &re) {
			return &rpcError{Code: re.Code, Message: re.Message, Data: re.Data}
		}
		return err
	}
	for k, v := range anyArgs {
		if sv, ok := v.(string); ok {
			args[k] = sv
		}
	}
	return nil
}

func (s *Server) promptsGet(ctx context.Context, rq *request, p params) (json.RawMessage, error) {
	var name string
	if raw, ok := p["name"]; !ok || json.Unmarshal(raw, &name) != nil || name == "" {
		return nil, refuseParams("params.name must be the name of a prompt from prompts/list")
	}
	pr, ok := s.opts.Catalog.Prompt(name)
	if !ok {
		return nil, s.unknownPrompt(name)
	}
	args, err := stringArguments(p["arguments"], "arguments")
	if err != nil {
		return nil, err
	}
	if err := pr.ValidateArguments(args); err != nil {
		details := validationDetails(err)
		return nil, &rpcError{Code: codeInvalidParams, Message: msgInvalidParams + ": " + details, Data: map[string]any{"details": details}}
	}
	if err := s.confinePromptArgs(pr, args); err != nil {
		return nil, err
	}
	var (
		description = pr.Description
		messages    []map[string]any
	)
	if pr.HostRendered() {
		msgs, err := pr.Render(args)
		if err != nil {
			return nil, fmt.Errorf("render prompt %s: %w", name, err)
		}
		for _, m := range msgs {
			messages = append(messages, map[string]any{"role": m.Role, "content": map[string]any{"type": "text", "text": m.Text}})
		}
	} else {
		res, input, err := s.promptWithInput(ctx, rq, pr.Provider, &wire.PromptRequest{Name: name, Arguments: args, Meta: rq.meta(s.opts.Roots.Roots)}, p)
		if err != nil {
			var re *rpcError
			if errors.As(err, &re) {
				return nil, re
			}
			return nil, s.providerError(ctx, err, rq.gen, pr.Provider)
		}
		if input != nil {
			return input, nil
		}
		if res.Description != "" {
			description = res.Description
		}
		total := 0
		for i, m := range res.Messages {
			if m.Role != catalog.RoleUser && m.Role != catalog.RoleAssistant {
				return nil, s.brokenProvider(pr.Provider, fmt.Sprintf("prompt %s: message %d has role %q; roles are user and assistant", name, i, m.Role))
			}
			var block wire.Content
			if json.Unmarshal(m.Content, &block) != nil || block.Type == "" {
				return nil, s.brokenProvider(pr.Provider, fmt.Sprintf("prompt %s: message %d content is not an MCP content block", name, i))
			}
			var content any = json.RawMessage(m.Content)
			switch block.Type {
			case wire.ContentText, wire.ContentResource:
				// As providers have always sent them; passed on unchanged.
				total += len(block.Text)
				if block.Resource != nil {
					total += len(block.Resource.Text) + len(block.Resource.Blob)
				}
			default:
				n, err := wire.CheckContent(fmt.Sprintf("prompt %s message %d content", name, i), []wire.Content{block})
				if err != nil {
					return nil, s.brokenProvider(pr.Provider, err.Error())
				}
				total += n
				content = contentBlock(rq.gen, block)
			}
			if total > wire.MaxContentBytes {
				return nil, s.brokenProvider(pr.Provider, fmt.Sprintf("prompt %s carries more than %d bytes of content at message %d", name, wire.MaxContentBytes, i))
			}
			messages = append(messages, map[string]any{"role": m.Role, "content": content})
		}
	}
	if messages == nil {
		messages = []map[string]any{}
	}
	return rpc.Marshal(map[string]any{"description": description, "messages": messages})
}

// brokenProvider reports a provider answer that breaks the contract.
func (s *Server) brokenProvider(provider, details string) *rpcError {
	s.log.Error("provider broke its contract", "provider", provider, "details", details)
	return errorf(codeInternal, map[string]any{"provider": provider, "details": details, "retryable": false}, "Provider %s returned an invalid answer", provider)
}

// providerError maps an error from a provider call that is not a tool.
func (s *Server) providerError(ctx context.Context, err error, g generation, provider string) error {
	var f *wire.Failure
	switch {
	case errors.As(err, &f):
		return s.failure(f, g, provider, true)
	case ctx.Err() != nil:
		return errorf(codeRequestCancelled, nil, "Request cancelled")
	case errors.Is(err, wire.ErrNotImplemented):
		return s.brokenProvider(provider, "the provider does not implement what the spec says it serves")
	}
	s.log.Error("provider call failed", "provider", provider, "err", err)
	return errorf(codeInternal, map[string]any{"provider": provider, "details": err.Error(), "retryable": true}, "Provider %s failed", provider)
}

// completions reports whether any prompt or template argument is
// completable, which is when the completions capability is advertised.
func (s *Server) completions() bool {
	for _, pr := range s.opts.Catalog.Prompts {
		for _, a := range pr.Arguments {
			if a.Complete {
				return true
			}
		}
	}
	for _, r := range s.opts.Catalog.Templates {
		if len(r.Complete) > 0 {
			return true
		}
	}
	return false
}

var emptyCompletion = json.RawMessage(`{"completion":{"values":[],"hasMore":false}}`)

func (s *Server) complete(ctx context.Context, rq *request, p params) (json.RawMessage, error) {
	var req struct {
		Ref *struct {
			Type string `json:"type"`
			Name string `json:"name"`
			URI  string `json:"uri"`
		} `json:"ref"`
		Argument *struct {
			Name  *string `json:"name"`
			Value *string `json:"value"`
		} `json:"argument"`
		Context *struct {
			Arguments json.RawMessage `json:"arguments"`
		} `json:"context"`
	}
	raw, _ := json.Marshal(p)
	if json.Unmarshal(raw, &req) != nil || req.Ref == nil || req.Argument == nil || req.Argument.Name == nil || req.Argument.Value == nil {
		return nil, refuseParams(`completion/complete needs ref {type:"ref/prompt",name} or {type:"ref/resource",uri} and argument {name, value} (strings)`)
	}
	ctxArgs := map[string]string{}
	if req.Context != nil {
		var err error
		if ctxArgs, err = stringArguments(req.Context.Arguments, "context.arguments"); err != nil {
			return nil, err
		}
	}
	arg, value := *req.Argument.Name, *req.Argument.Value
	creq := &wire.CompleteRequest{Argument: arg, Value: value, Context: ctxArgs, Meta: rq.meta(s.opts.Roots.Roots)}
	var provider string
	switch req.Ref.Type {
	case "ref/prompt":
		pr, ok := s.opts.Catalog.Prompt(req.Ref.Name)
		if !ok {
			return nil, s.unknownPrompt(req.Ref.Name)
		}
		if _, ok := pr.Argument(arg); !ok {
			return nil, refuseParams(fmt.Sprintf("argument.name %q is not an argument of prompt %s; its arguments are %s", arg, pr.Name, argNames(pr)))
		}
		if !pr.Completable(arg) {
			return emptyCompletion, nil
		}
		// Context arguments reach the provider (a repository to list
		// branches of): confine them like the prompt's own arguments.
		if err := s.confinePromptArgs(pr, ctxArgs); err != nil {
			return nil, err
		}
		creq.Prompt, provider = pr.Name, pr.Provider
	case "ref/resource":
		var tmpl *catalog.Resource
		for _, r := range s.opts.Catalog.Templates {
			if r.URITemplate == req.Ref.URI {
				tmpl = r
			}
		}
		if tmpl == nil {
			return nil, refuseParams(fmt.Sprintf("ref.uri %q is not a resource template from resources/templates/list", req.Ref.URI))
		}
		if !tmpl.Completable(arg) {
			return emptyCompletion, nil
		}
		creq.Template, provider = tmpl.URITemplate, tmpl.Provider
	default:
		return nil, refuseParams(`ref.type must be "ref/prompt" or "ref/resource"`)
	}
	res, err := s.opts.Providers.Complete(ctx, provider, creq)
	if err != nil {
		return nil, s.providerError(ctx, err, rq.gen, provider)
	}
	values := res.Values
	hasMore := res.HasMore
	if values == nil {
		values = []string{}
	}
	if len(values) > wire.MaxCompletions {
		values, hasMore = values[:wire.MaxCompletions], true
	}
	c := map[string]any{"values": values, "hasMore": hasMore}
	if res.Total > 0 {
		c["total"] = max(res.Total, len(values))
	}
	return rpc.Marshal(map[string]any{"completion": c})
}

func argNames(pr *catalog.Prompt) string {
	names := make([]string, len(pr.Arguments))
	for i, a := range pr.Arguments {
		names[i] = a.Name
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
