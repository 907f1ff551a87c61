// Package sdk is the public surface a provider author imports. A provider is a
// separate executable that serves tools (and optionally resources) to the
// fluxgit host over go-plugin. Providers see validated JSON arguments and call
// metadata only: the host owns every protocol detail (JSON-RPC, MCP
// generations, schema validation, result envelopes).
//
// A minimal provider:
//
//	type echo struct{ sdk.Unimplemented }
//
//	func (echo) CallTool(ctx context.Context, c *sdk.Call) (*sdk.Result, error) {
//		return sdk.OK("example", map[string]any{"echo": string(c.Arguments)})
//	}
//
//	func main() { sdk.Serve(echo{}) }
package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// Call is one tool invocation as the provider sees it.
type Call struct {
	// Tool is the spec name of the tool, for example "repo.status".
	Tool string `json:"tool"`
	// Arguments is the JSON object the host has already validated against
	// the tool's inputSchema. Repository paths in it are canonical.
	Arguments json.RawMessage `json:"arguments"`
	// Meta carries who is calling; never protocol details.
	Meta Meta `json:"meta"`
}

// Meta describes the caller of a tool or resource read.
type Meta struct {
	// ClientName and ClientVersion come from the MCP client's self-description.
	ClientName    string `json:"clientName,omitempty"`
	ClientVersion string `json:"clientVersion,omitempty"`
	// AllowedRoots are the canonical repository roots the host confines
	// calls to (FLUXGIT_MCP_ALLOWED_ROOTS); empty means unconfined. Providers
	// use them to keep derived paths (gitdir files, worktrees) inside.
	AllowedRoots []string `json:"allowedRoots,omitempty"`
	// RequestID is an opaque correlation id for logs.
	RequestID string `json:"requestId,omitempty"`
}

// Result is what a tool returns. Exactly one of Data or Error is set.
type Result struct {
	// Source names where the data came from ("local-git", "fluxgit-gateway").
	Source string `json:"source,omitempty"`
	// Data is the tool's success payload, a JSON object.
	Data json.RawMessage `json:"data,omitempty"`
	// Error is a tool-level failure the agent should read (isError:true).
	Error *ToolError `json:"error,omitempty"`
	// Text is an optional human-oriented rendering (for example Markdown)
	// the host may show next to the structured payload. For a tool whose
	// spec says result: plain it is the only text content the client gets
	// (Data, or Error, then goes out as structuredContent unwrapped), so it
	// should carry everything a model needs, errors included.
	Text string `json:"text,omitempty"`
}

// ToolError is a domain error reported inside a tool result, such as
// 10010 "Local git fallback failed".
type ToolError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *ToolError) Error() string { return fmt.Sprintf("tool error %d: %s", e.Code, e.Message) }

// OK builds a success result from any JSON-marshalable data value.
func OK(source string, data any) (*Result, error) {
	b, err := marshal(data)
	if err != nil {
		return nil, fmt.Errorf("sdk: marshal tool data: %w", err)
	}
	return &Result{Source: source, Data: b}, nil
}

// Fail builds a tool-error result. data may be nil.
func Fail(source string, code int, message string, data any) *Result {
	te := &ToolError{Code: code, Message: message}
	if data != nil {
		if b, err := marshal(data); err == nil {
			te.Data = b
		}
	}
	return &Result{Source: source, Error: te}
}

// ArgumentError is returned by a provider when arguments that passed the
// schema are still unacceptable (a path with "..", say). The host answers
// it as JSON-RPC -32602 with Details as data.details.
type ArgumentError struct {
	Message string `json:"message"`
	Details string `json:"details"`
}

func (e *ArgumentError) Error() string { return e.Message + ": " + e.Details }

// RefusedError is returned by a provider that refuses a call on policy
// grounds the host could not see before dispatch, such as a repository
// whose git directory lies outside the allowed roots. The host answers it
// as a JSON-RPC error with Code (for example -32011), Message and Data.
type RefusedError struct {
	Code    int64          `json:"code"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data,omitempty"`
}

func (e *RefusedError) Error() string { return fmt.Sprintf("refused (%d): %s", e.Code, e.Message) }

// Resource is the content of one resource read.
type Resource struct {
	URI      string `json:"uri"`
	MimeType string `json:"mimeType,omitempty"`
	Text     string `json:"text,omitempty"`
	Blob     []byte `json:"blob,omitempty"`
}

// ResourceChange tells the host that a resource's content changed, so it
// can notify subscribers of both MCP generations.
type ResourceChange struct {
	URI string `json:"uri,omitempty"`
	// Ready marks the first event of a watch: the provider has registered
	// the watcher, so every later change will be delivered. It carries no
	// URI. Broadcaster sends it; hand-written watchers should too.
	Ready bool `json:"ready,omitempty"`
}

// ErrResourceNotFound is returned by ReadResource for an unknown URI.
var ErrResourceNotFound = errors.New("resource not found")

// ErrNotImplemented is what Unimplemented returns.
var ErrNotImplemented = errors.New("not implemented by this provider")

// Provider is implemented by every provider. Embed Unimplemented to get
// defaults for the parts a provider does not serve.
type Provider interface {
	// CallTool runs one tool. A returned Go error is an internal failure
	// (JSON-RPC -32603); domain failures belong in Result.Error.
	CallTool(ctx context.Context, call *Call) (*Result, error)
	// ReadResource returns the content of a resource this provider owns.
	ReadResource(ctx context.Context, uri string, meta Meta) (*Resource, error)
	// WatchResources sends a change for every committed modification until
	// ctx ends. Providers without resources return ErrNotImplemented.
	WatchResources(ctx context.Context, changes chan<- ResourceChange) error
}

// Unimplemented gives a Provider defaults for resources.
type Unimplemented struct{}

// ReadResource reports that the provider owns no resources.
func (Unimplemented) ReadResource(context.Context, string, Meta) (*Resource, error) {
	return nil, ErrResourceNotFound
}

// WatchResources reports that the provider emits no change events.
func (Unimplemented) WatchResources(context.Context, chan<- ResourceChange) error {
	return ErrNotImplemented
}

// marshal encodes v without HTML escaping: tool data is read by models, and
// encoding/json's default spells every '<' of a diff as \u003c.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}
