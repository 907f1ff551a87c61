// Package sdk is the public surface a provider author imports. A provider
// is a separate executable that serves tools (and optionally resources,
// prompts and completions) to the fluxgit host. Providers see validated
// JSON arguments and call metadata only: the host owns every protocol
// detail (JSON-RPC, MCP generations, schema validation, result envelopes,
// error codes).
//
// A provider implements Provider, plus any of the optional interfaces
// ResourceReader, ResourceWatcher, PromptProvider, Completer, TaskKeeper
// and Describer; the host finds out which at start, so a new optional
// capability never breaks an existing provider. During a call it may
// report progress (Call.Progress), log to the client (Call.Log) and ask
// the client for a model completion or for user input (Call.Sample,
// Call.Elicit). Next to its structured data a tool result may carry
// images, audio, embedded resources and resource links for the client
// (Result.Content, built with ImageContent and its siblings), and a
// prompt message may be an image too (PromptMessage.Content).
//
// A minimal provider:
//
//	type echo struct{}
//
//	func (echo) CallTool(ctx context.Context, c *sdk.Call) (*sdk.Result, error) {
//		c.Progress(1, 2, "echoing")
//		c.Log(sdk.LevelInfo, "echo", map[string]any{"bytes": len(c.Arguments)})
//		return sdk.OK("example", map[string]any{"echo": string(c.Arguments)})
//	}
//
//	func (echo) Describe() sdk.Description {
//		return sdk.Description{Tools: []string{"echo.say"}}
//	}
//
//	func main() { sdk.Serve(echo{}) }
package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/fluxgit/fluxgit/internal/wire"
)

// Call is one tool invocation as the provider sees it. Its methods
// (Progress, Log, Sample, Elicit) reach the client through the host while
// the call runs; on a Call built by hand, as in a unit test, they do
// nothing (Progress, Log) or report the client capability as missing
// (Sample, Elicit).
type Call struct {
	// Tool is the spec name of the tool, for example "repo.status".
	Tool string `json:"tool"`
	// Arguments is the JSON object the host has already validated against
	// the tool's inputSchema. Repository paths in it are canonical.
	Arguments json.RawMessage `json:"arguments"`
	// Meta carries who is calling and what the client can take; never
	// protocol details.
	Meta Meta `json:"meta"`

	events *events
}

// Meta describes the caller of a tool, resource read, prompt or completion.
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
	// Progress is true when the client asked for progress on this call;
	// Call.Progress is a no-op otherwise.
	Progress bool `json:"progress,omitempty"`
	// LogLevel is the lowest level the client wants to receive; empty means
	// it wants no log messages (Call.Log then drops everything).
	LogLevel Level `json:"logLevel,omitempty"`
	// Client lists the client features a call may ask for.
	Client ClientCapabilities `json:"client,omitempty"`
	// Tasks is true when the client declared the Tasks extension
	// (2026-07-28 io.modelcontextprotocol/tasks, or 2025-11-25
	// experimental tasks) for this call, so CallTool may answer with a
	// provider-kept task (Result.Task).
	Tasks bool `json:"tasks,omitempty"`
}

// ClientCapabilities are the client features a provider may use through
// the host. Call.Sample needs Sampling, Call.Elicit needs Elicitation.
type ClientCapabilities struct {
	Sampling    bool `json:"sampling,omitempty"`
	Elicitation bool `json:"elicitation,omitempty"`
	// Roots: Call.ListRoots needs it.
	Roots bool `json:"roots,omitempty"`
}

// Result is what a tool returns. Exactly one of Data or Error is set.
type Result struct {
	// Source names where the data came from ("local-git", "fluxgit-gateway").
	// The host sends it as the envelope's source, except "local-git" in the
	// lean result shape (the default; see FLUXGIT_MCP_RESULT_SHAPE), where
	// an absent source means local git.
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
	// Fields are extra top-level members of the result envelope, next to
	// tool, readOnly, source, tier, repoPath, data and error (which they
	// may not name): a write proposal's previewId, status and nextAction,
	// say. The tool's outputSchema must allow them.
	Fields map[string]json.RawMessage `json:"fields,omitempty"`
	// Content are extra MCP content blocks for the client: images, audio,
	// embedded resources, resource links or more text (see Content and
	// its constructors). The host sends them after its own text rendering
	// (the envelope, then Text), in this order; structuredContent and the
	// outputSchema check are unaffected. Together they may carry at most
	// MaxContentBytes; Validate says what is wrong with them. A client on
	// an MCP version that lacks a block's type (audio before 2025-03-26,
	// resource_link before 2025-06-18) gets a text note in its place.
	Content []Content `json:"content,omitempty"`
	// Task is set by CallTool when the call created a provider-kept task
	// (only when Call.Meta.Tasks is true; the host ignores it otherwise).
	// The client then receives the task instead of the result and follows
	// it with tasks/get, which the host routes to the provider's
	// TaskKeeper. Data, Error and the rest may stay empty.
	Task *Task `json:"task,omitempty"`
}

// MaxContentBytes bounds the content blocks of one tool result, and of
// one rendered prompt: 8 MiB of decoded image and audio data, embedded
// resource text and blobs, and text items together. Larger media belongs
// in a resource the client reads on demand (a ResourceLinkContent).
const MaxContentBytes = wire.MaxContentBytes

// Validate checks the result's content blocks: known types, base64 data
// that decodes, an image/* or audio/* mimeType on media, uri and mimeType
// on embedded resources, uri and name on resource links, and the
// MaxContentBytes bound. The SDK runs it on every result a provider
// returns and fails the call with its error; providers may call it in
// their own tests.
func (r *Result) Validate() error {
	if r == nil || len(r.Content) == 0 {
		return nil
	}
	_, err := wire.CheckContent("result content", contentToWire(r.Content))
	return err
}

func contentToWire(items []Content) []wire.Content {
	if len(items) == 0 {
		return nil
	}
	out := make([]wire.Content, len(items))
	for i, c := range items {
		out[i] = c.toWire()
	}
	return out
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
	b, err := wire.Marshal(data)
	if err != nil {
		return nil, fmt.Errorf("sdk: marshal tool data: %w", err)
	}
	return &Result{Source: source, Data: b}, nil
}

// Fail builds a tool-error result. data may be nil.
func Fail(source string, code int, message string, data any) *Result {
	te := &ToolError{Code: code, Message: message}
	if data != nil {
		if b, err := wire.Marshal(data); err == nil {
			te.Data = b
		}
	}
	return &Result{Source: source, Error: te}
}

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

// ErrNotImplemented is returned by an optional method the provider does
// not really serve (Unimplemented.WatchResources, say).
var ErrNotImplemented = errors.New("not implemented by this provider")

// Provider is implemented by every provider. Everything else a provider
// can do is an optional interface next to it.
type Provider interface {
	// CallTool runs one tool. Domain failures belong in Result.Error; an
	// *Error (or *ArgumentError) is a refusal of a kind the host maps; any
	// other error is an internal failure.
	CallTool(ctx context.Context, call *Call) (*Result, error)
}

// ResourceReader is implemented by a provider that owns resources.
type ResourceReader interface {
	// ReadResource returns the content of a resource; ErrResourceNotFound
	// for a URI it does not know.
	ReadResource(ctx context.Context, uri string, meta Meta) (*Resource, error)
}

// ResourceWatcher is implemented by a provider whose resources change, so
// the host can notify subscribers. Embed or hold a Broadcaster.
type ResourceWatcher interface {
	// WatchResources sends ResourceChange{Ready: true} once registered,
	// then a change for every committed modification, until ctx ends.
	WatchResources(ctx context.Context, changes chan<- ResourceChange) error
}

// PromptProvider is implemented by a provider that renders prompts. The
// host has validated the arguments against the prompt's spec.
type PromptProvider interface {
	GetPrompt(ctx context.Context, req *PromptRequest) (*PromptResult, error)
}

// Completer is implemented by a provider that completes prompt or
// resource-template arguments.
type Completer interface {
	Complete(ctx context.Context, req *CompleteRequest) (*Completion, error)
}

// Describer is implemented by a provider that lists what it serves. The
// host compares the list with the spec at start and refuses a provider
// that lacks something the spec gives it, instead of failing on the first
// call.
type Describer interface {
	Describe() Description
}

// Description lists the tools, resources (URIs and URI templates, spelt as
// in the spec) and prompts a provider serves.
type Description struct {
	Tools     []string
	Resources []string
	Prompts   []string
}

// Unimplemented gives a provider defaults for resources.
//
// Deprecated: no longer needed; Provider has only CallTool, and resources
// are the optional ResourceReader and ResourceWatcher. Kept so providers
// written against the earlier SDK still build.
type Unimplemented struct{}

// ReadResource reports that the provider owns no resources.
func (Unimplemented) ReadResource(context.Context, string, Meta) (*Resource, error) {
	return nil, ErrResourceNotFound
}

// WatchResources reports that the provider emits no change events.
func (Unimplemented) WatchResources(context.Context, chan<- ResourceChange) error {
	return ErrNotImplemented
}
