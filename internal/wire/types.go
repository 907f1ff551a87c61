// Package wire is the private protocol between the fluxgit host and its
// provider processes: the JSON messages, the generic gRPC service that
// carries them and the host's client for it. Provider authors never see
// it; plugins/sdk adapts it to the public API, and the host (host/...)
// speaks it through Client. Both sides are built from this one package,
// so the two ends of the wire cannot drift apart.
package wire

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Protocol is bumped whenever a message shape changes incompatibly. The
// go-plugin handshake version guards the transport; this guards the JSON.
const Protocol = 2

// Call is one tool invocation.
type Call struct {
	// ID identifies the call to the provider's event stream and to Answer;
	// the host assigns it, unique per provider process.
	ID        uint64          `json:"id"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Meta      Meta            `json:"meta"`
}

// Meta describes the caller and what the client can take.
type Meta struct {
	ClientName    string   `json:"clientName,omitempty"`
	ClientVersion string   `json:"clientVersion,omitempty"`
	AllowedRoots  []string `json:"allowedRoots,omitempty"`
	RequestID     string   `json:"requestId,omitempty"`
	// Progress is true when the client asked for progress on this request
	// (it sent a progress token).
	Progress bool `json:"progress,omitempty"`
	// LogLevel is the lowest RFC 5424 level the client wants as log
	// messages for this request; empty means none.
	LogLevel string `json:"logLevel,omitempty"`
	// Client lists the client capabilities the request may use.
	Client ClientCaps `json:"client,omitempty"`
	// Tasks is true when the client declared the Tasks extension for this
	// request, so the provider may answer a call with a Task.
	Tasks bool `json:"tasks,omitempty"`
	// TraceParent and TraceState are the W3C trace context of the host's
	// span for this call (empty when tracing is off), so the provider's
	// spans join the host's trace.
	TraceParent string `json:"traceparent,omitempty"`
	TraceState  string `json:"tracestate,omitempty"`
}

// ClientCaps are the client features a provider may ask for through the
// host.
type ClientCaps struct {
	Sampling    bool `json:"sampling,omitempty"`
	Elicitation bool `json:"elicitation,omitempty"`
	Roots       bool `json:"roots,omitempty"`
}

// Result is a tool's outcome. Exactly one of Data or Error is set.
type Result struct {
	Source string          `json:"source,omitempty"`
	Data   json.RawMessage `json:"data,omitempty"`
	Error  *ToolError      `json:"error,omitempty"`
	Text   string          `json:"text,omitempty"`
	// Fields are extra top-level envelope members (previewId, status, …).
	Fields map[string]json.RawMessage `json:"fields,omitempty"`
	// Content are extra MCP content blocks (images, audio, embedded
	// resources, resource links, text) the host appends to the result's
	// content after its own text. Providers built before it existed leave
	// it out, and their results render as before; the field is optional,
	// so it does not change Protocol.
	Content []Content `json:"content,omitempty"`
	// Task is a provider-kept task the call created (only when Meta.Tasks
	// was set); the host hands it to the client instead of a result.
	// Optional like Content, so it does not change Protocol.
	Task *Task `json:"task,omitempty"`
}

// Task is a task a provider keeps (durably) itself and answers for
// through GetTask and CancelTask. Status is one of the Tasks extension's
// states: working, input_required, completed, failed, cancelled.
type Task struct {
	ID             string     `json:"id"`
	Status         string     `json:"status"`
	StatusMessage  string     `json:"statusMessage,omitempty"`
	Result         *Result    `json:"result,omitempty"`
	Error          *ToolError `json:"error,omitempty"`
	PollIntervalMs int        `json:"pollIntervalMs,omitempty"`
	TTLMs          int64      `json:"ttlMs,omitempty"`
	Tool           string     `json:"tool,omitempty"`
	CreatedAt      time.Time  `json:"createdAt,omitzero"`
	UpdatedAt      time.Time  `json:"updatedAt,omitzero"`
}

// TaskRequest names a provider-kept task for GetTask or CancelTask.
type TaskRequest struct {
	ID   string `json:"id"`
	Meta Meta   `json:"meta"`
}

// ToolError is a domain error inside a tool result (isError:true).
type ToolError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Failure kinds: a provider never names a JSON-RPC code, it names one of
// these and the host maps it for the generation it is answering.
const (
	// KindInvalidArgument: arguments that passed the schema are still
	// unacceptable (-32602, or an isError result where the generation
	// wants argument errors as tool errors).
	KindInvalidArgument = "invalid_argument"
	// KindOutsideRoots: a path derived by the provider lies outside the
	// allowed roots (-32011).
	KindOutsideRoots = "outside_roots"
	// KindNotFound: the named resource, prompt or completion target does
	// not exist (-32002 legacy, -32602 modern).
	KindNotFound = "not_found"
	// KindClientCapability: the provider needs a client capability the
	// client did not declare (-32021 with requiredCapabilities).
	KindClientCapability = "client_capability"
	// KindUnavailable: a dependency is down; retrying may help (-32603
	// with retryable:true).
	KindUnavailable = "unavailable"
	// KindInternal: anything else (-32603).
	KindInternal = "internal"
)

// Failure is a provider-side refusal or error of a kind the host maps.
type Failure struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
	// Details is the text a model reads to correct the call.
	Details string         `json:"details,omitempty"`
	Data    map[string]any `json:"data,omitempty"`
}

func (f *Failure) Error() string {
	if f.Details == "" {
		return f.Kind + ": " + f.Message
	}
	return f.Kind + ": " + f.Message + ": " + f.Details
}

// Resource is the content of one resource read.
type Resource struct {
	URI      string `json:"uri"`
	MimeType string `json:"mimeType,omitempty"`
	Text     string `json:"text,omitempty"`
	Blob     []byte `json:"blob,omitempty"`
}

// ResourceChange reports a changed resource; Ready marks a registered watch.
type ResourceChange struct {
	URI   string `json:"uri,omitempty"`
	Ready bool   `json:"ready,omitempty"`
}

// Event is something a provider emits during a call, before its result.
// Exactly one field is set.
type Event struct {
	Progress *Progress      `json:"progress,omitempty"`
	Log      *Log           `json:"log,omitempty"`
	Request  *ClientRequest `json:"request,omitempty"`
}

// Progress is one progress report on a call.
type Progress struct {
	Progress float64  `json:"progress"`
	Total    *float64 `json:"total,omitempty"`
	Message  string   `json:"message,omitempty"`
}

// Log is one log message for the client (RFC 5424 level names).
type Log struct {
	Level  string          `json:"level"`
	Logger string          `json:"logger,omitempty"`
	Data   json.RawMessage `json:"data"`
}

// Client request methods a provider may ask the host to put to the client.
const (
	MethodSampling    = "sampling/createMessage"
	MethodElicitation = "elicitation/create"
	MethodListRoots   = "roots/list"
)

// ClientRequest asks the client something on the provider's behalf; the
// host answers it with Answer.
type ClientRequest struct {
	// ID is unique within the call.
	ID     uint64          `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	// Key is the provider's name for the question: the key of the
	// 2026-07-28 inputRequests and inputResponses maps. Empty lets the
	// host choose one.
	Key string `json:"key,omitempty"`
	// More says another request of the same batch follows at once: the
	// host puts them to a 2026-07-28 client in one input_required round.
	More bool `json:"more,omitempty"`
}

// Answer is the host's reply to a ClientRequest: the client's result, or
// a failure (the client refused, lacked the capability, timed out).
type Answer struct {
	CallID    uint64          `json:"callId"`
	RequestID uint64          `json:"requestId"`
	Result    json.RawMessage `json:"result,omitempty"`
	Failure   *Failure        `json:"failure,omitempty"`
}

// Description is what a provider says it serves. The host checks it
// against the spec when the provider starts.
type Description struct {
	Protocol int `json:"protocol"`
	// Declared is false for a provider that does not list its tools,
	// resources and prompts (it implements no Describer); the host then
	// checks only its capabilities.
	Declared  bool     `json:"declared,omitempty"`
	Tools     []string `json:"tools,omitempty"`
	Resources []string `json:"resources,omitempty"` // URIs and URI templates
	Prompts   []string `json:"prompts,omitempty"`
	// Capabilities are the optional interfaces the provider implements.
	Capabilities Capabilities `json:"capabilities"`
}

// Capabilities are the optional provider features.
type Capabilities struct {
	Resources  bool `json:"resources,omitempty"`
	Watch      bool `json:"watch,omitempty"`
	Prompts    bool `json:"prompts,omitempty"`
	Completion bool `json:"completion,omitempty"`
	// Tasks: the provider keeps durable tasks (implements TaskHandler).
	Tasks bool `json:"tasks,omitempty"`
}

// PromptRequest asks the owning provider to render a prompt. Arguments
// are validated against the spec first.
type PromptRequest struct {
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments"`
	Meta      Meta              `json:"meta"`
	// Inputs are the client's answers to the InputRequests of earlier
	// renderings of this prompt, by key (optional: a provider that never
	// asks never sees any).
	Inputs map[string]json.RawMessage `json:"inputs,omitempty"`
}

// PromptResult is a rendered prompt, or, when InputRequests is not
// empty, the questions the prompt needs answered before it renders: the
// host puts them to the client and asks the provider again with the
// answers in PromptRequest.Inputs.
type PromptResult struct {
	Description   string                  `json:"description,omitempty"`
	Messages      []PromptMessage         `json:"messages"`
	InputRequests map[string]InputRequest `json:"inputRequests,omitempty"`
}

// InputRequest is one question a prompt puts to the client: a
// client request method (MethodElicitation, MethodSampling,
// MethodListRoots) and its params.
type InputRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// PromptMessage is one message of a rendered prompt; Content is an MCP
// content block (text, image, audio, an embedded resource or a resource
// link), which the host checks with CheckContent and adapts to the
// client's protocol version.
type PromptMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// CompleteRequest asks for completions of one argument of a prompt or a
// resource template.
type CompleteRequest struct {
	// Prompt or Template names what is being completed (exactly one).
	Prompt   string `json:"prompt,omitempty"`
	Template string `json:"template,omitempty"`
	Argument string `json:"argument"`
	Value    string `json:"value"`
	// Context holds the arguments already chosen.
	Context map[string]string `json:"context,omitempty"`
	Meta    Meta              `json:"meta"`
}

// Completion is a list of candidate values, at most MaxCompletions.
type Completion struct {
	Values  []string `json:"values"`
	Total   int      `json:"total,omitempty"`
	HasMore bool     `json:"hasMore,omitempty"`
}

// MaxCompletions is the MCP limit on values in one completion result.
const MaxCompletions = 100

// EventFunc receives a call's events in order. answer replies to a
// ClientRequest event; it may be called from any goroutine, later.
type EventFunc func(ev Event, answer func(ctx context.Context, a *Answer) error)

// TaskHandler is the optional provider side of provider-kept tasks. A
// Handler that also implements it answers GetTask and CancelTask; one
// that does not answers them with ErrNotImplemented. A *Failure of
// KindNotFound means the provider does not keep that id.
type TaskHandler interface {
	GetTask(ctx context.Context, req *TaskRequest) (*Task, error)
	CancelTask(ctx context.Context, req *TaskRequest) (*Task, error)
}

// ErrNotImplemented is returned for an optional capability the provider
// does not have (a resource watch, prompts, completion).
var ErrNotImplemented = errors.New("not implemented by this provider")
