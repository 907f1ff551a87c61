package sdk

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/fluxgit/fluxgit/internal/wire"
)

// Level is a log severity, one of the eight RFC 5424 names MCP uses.
type Level string

// The levels, least severe first.
const (
	LevelDebug     Level = "debug"
	LevelInfo      Level = "info"
	LevelNotice    Level = "notice"
	LevelWarning   Level = "warning"
	LevelError     Level = "error"
	LevelCritical  Level = "critical"
	LevelAlert     Level = "alert"
	LevelEmergency Level = "emergency"
)

var levelRank = map[Level]int{
	LevelDebug: 0, LevelInfo: 1, LevelNotice: 2, LevelWarning: 3,
	LevelError: 4, LevelCritical: 5, LevelAlert: 6, LevelEmergency: 7,
}

// Severity orders the levels: 0 for debug up to 7 for emergency, -1 for
// a name that is not a level.
func (l Level) Severity() int {
	if r, ok := levelRank[l]; ok {
		return r
	}
	return -1
}

// AtLeast reports whether l is a level and at least as severe as min (also
// a level).
func (l Level) AtLeast(min Level) bool {
	s, m := l.Severity(), min.Severity()
	return s >= 0 && m >= 0 && s >= m
}

// events is a call's link to the host while it runs.
type events struct {
	stream *wire.Stream
	mu     sync.Mutex
	last   float64
	sent   bool
}

// Progress reports how far the call has got: done out of total (total <= 0
// when unknown), with an optional message. It does nothing unless the
// client asked for progress (Meta.Progress). MCP wants progress to grow
// with each report, so a report that does not exceed the previous one is
// dropped. It is safe to call from several goroutines.
func (c *Call) Progress(done, total float64, message string) {
	if c == nil || c.events == nil || !c.Meta.Progress {
		return
	}
	e := c.events
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.sent && done <= e.last {
		return
	}
	p := &wire.Progress{Progress: done, Message: message}
	if total > 0 {
		p.Total = &total
	}
	// An event that cannot be sent means the call is over or the host is
	// gone; the call's own result (or ctx) reports that.
	if e.stream.Emit(wire.Event{Progress: p}) == nil {
		e.last, e.sent = done, true
	}
}

// Log sends a log message to the client: data is any JSON-marshalable
// value (a string, a map), logger an optional name for its source. It is
// dropped when the client did not ask for logs (Meta.LogLevel empty), when
// level is below Meta.LogLevel, or when level is not one of the Level
// constants. It is safe to call from several goroutines.
//
// These messages go to the client, typically a model; use Logger for the
// operator's log.
func (c *Call) Log(level Level, logger string, data any) {
	if c == nil || c.events == nil || c.Meta.LogLevel == "" || !level.AtLeast(c.Meta.LogLevel) {
		return
	}
	b, err := wire.Marshal(data)
	if err != nil {
		b, _ = wire.Marshal(fmt.Sprint(data))
	}
	_ = c.events.stream.Emit(wire.Event{Log: &wire.Log{Level: string(level), Logger: logger, Data: b}})
}

// Role is the speaker of a message.
type Role string

// The roles.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Content is one MCP content block: text, an image or audio clip (Data,
// base64, with MimeType), an embedded resource (Resource) or a link to a
// resource (URI, Name and the optional MimeType, Title, Description,
// Size). Build one with TextContent, ImageContent, AudioContent,
// ResourceContent or ResourceLinkContent. A provider adds them to a tool
// result (Result.Content) or uses one as a prompt message
// (PromptMessage.Content); a client's sampling answer is one too.
type Content struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	Data     string `json:"data,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
	// Resource is the content of an embedded resource ("resource").
	Resource *Resource `json:"resource,omitempty"`
	// URI, Name, Title, Description and Size describe a "resource_link":
	// a resource the client may read (resources/read) instead of getting
	// its bytes inline.
	URI         string `json:"uri,omitempty"`
	Name        string `json:"name,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Size        int64  `json:"size,omitempty"`
}

// TextContent is a text content block.
func TextContent(text string) Content { return Content{Type: "text", Text: text} }

// ImageContent is an image content block: data is the raw image (the SDK
// base64-encodes it), mimeType an image/* type such as image/png.
func ImageContent(data []byte, mimeType string) Content {
	return Content{Type: "image", Data: base64.StdEncoding.EncodeToString(data), MimeType: mimeType}
}

// AudioContent is an audio content block: data is the raw clip, mimeType
// an audio/* type such as audio/wav. Clients on MCP versions before
// 2025-03-26 have no audio blocks; the host sends them a text note
// instead.
func AudioContent(data []byte, mimeType string) Content {
	return Content{Type: "audio", Data: base64.StdEncoding.EncodeToString(data), MimeType: mimeType}
}

// ResourceContent embeds a resource's content (Text, or Blob for binary
// data; MimeType is required) in a tool result or prompt message.
func ResourceContent(r Resource) Content { return Content{Type: "resource", Resource: &r} }

// ResourceLinkContent points at a resource by URI, with a name for it,
// rather than embedding it; set MimeType, Title, Description or Size on
// the result as wanted. Clients on MCP versions before 2025-06-18 have no
// resource links; the host sends them a text note naming the URI instead.
func ResourceLinkContent(uri, name string) Content {
	return Content{Type: "resource_link", URI: uri, Name: name}
}

// toWire converts a content block for the host.
func (c Content) toWire() wire.Content {
	w := wire.Content{Type: c.Type, Text: c.Text, Data: c.Data, MimeType: c.MimeType,
		URI: c.URI, Name: c.Name, Title: c.Title, Description: c.Description, Size: c.Size}
	if c.Resource != nil {
		r := wire.Resource(*c.Resource)
		w.Resource = &r
	}
	return w
}

// SamplingMessage is one message of a sampling conversation.
type SamplingMessage struct {
	Role    Role    `json:"role"`
	Content Content `json:"content"`
}

// ModelPreferences are hints for the client's choice of model; it may
// ignore them. Priorities run from 0 to 1.
type ModelPreferences struct {
	Hints                []ModelHint `json:"hints,omitempty"`
	CostPriority         *float64    `json:"costPriority,omitempty"`
	SpeedPriority        *float64    `json:"speedPriority,omitempty"`
	IntelligencePriority *float64    `json:"intelligencePriority,omitempty"`
}

// ModelHint names a model or model family, such as "claude-3-5-sonnet".
type ModelHint struct {
	Name string `json:"name,omitempty"`
}

// SamplingRequest asks the client's model for a message (MCP
// sampling/createMessage). The client, usually with its user, decides
// whether and how to answer.
type SamplingRequest struct {
	// Key names the question for a 2026-07-28 client (the key of its
	// inputRequests and inputResponses); empty lets the host choose one.
	// A client may answer a named question up front, in the call itself.
	Key              string            `json:"-"`
	Messages         []SamplingMessage `json:"messages"`
	SystemPrompt     string            `json:"systemPrompt,omitempty"`
	MaxTokens        int               `json:"maxTokens"`
	ModelPreferences *ModelPreferences `json:"modelPreferences,omitempty"`
	Temperature      *float64          `json:"temperature,omitempty"`
	StopSequences    []string          `json:"stopSequences,omitempty"`
}

// SamplingResult is the client's answer to a SamplingRequest.
type SamplingResult struct {
	Role    Role    `json:"role"`
	Content Content `json:"content"`
	// Model names the model that answered.
	Model string `json:"model"`
	// StopReason is "endTurn", "stopSequence", "maxTokens" or another
	// client-defined reason.
	StopReason string `json:"stopReason,omitempty"`
}

// UnmarshalJSON also accepts the list of content blocks newer clients may
// send, keeping the first text block (or the first block).
func (r *SamplingResult) UnmarshalJSON(b []byte) error {
	var raw struct {
		Role       Role            `json:"role"`
		Content    json.RawMessage `json:"content"`
		Model      string          `json:"model"`
		StopReason string          `json:"stopReason"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*r = SamplingResult{Role: raw.Role, Model: raw.Model, StopReason: raw.StopReason}
	switch {
	case len(raw.Content) == 0:
		return nil
	case raw.Content[0] != '[':
		return json.Unmarshal(raw.Content, &r.Content)
	}
	var blocks []Content
	if err := json.Unmarshal(raw.Content, &blocks); err != nil {
		return err
	}
	for _, c := range blocks {
		if c.Type == "text" {
			r.Content = c
			return nil
		}
	}
	if len(blocks) > 0 {
		r.Content = blocks[0]
	}
	return nil
}

// ElicitRequest asks the client's user for input (MCP elicitation/create,
// form mode).
type ElicitRequest struct {
	// Key names the question, as SamplingRequest.Key does.
	Key string `json:"-"`
	// Message tells the user what is being asked and why.
	Message string `json:"message"`
	// RequestedSchema is a flat JSON Schema object of primitive properties
	// describing the answer.
	RequestedSchema json.RawMessage `json:"requestedSchema"`
}

// ElicitAction is how the user responded.
type ElicitAction string

// The elicitation actions.
const (
	ElicitAccept  ElicitAction = "accept"
	ElicitDecline ElicitAction = "decline"
	ElicitCancel  ElicitAction = "cancel"
)

// ElicitResult is the user's answer; Content is set when Action is accept.
type ElicitResult struct {
	Action  ElicitAction   `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

// RootsRequest asks the client for its roots (MCP roots/list): the
// directories or files the person has shared with it.
type RootsRequest struct {
	// Key names the question, as SamplingRequest.Key does.
	Key string `json:"-"`
}

// Root is one root the client shares: a file:// URI and an optional name.
type Root struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
}

// RootsResult is the client's answer to a RootsRequest.
type RootsResult struct {
	Roots []Root `json:"roots"`
}

// Question is one question for Call.Ask: set exactly one field.
type Question struct {
	Elicit *ElicitRequest
	Sample *SamplingRequest
	Roots  *RootsRequest
}

// Answer is the client's answer to the Question at the same index: the
// field matching the question is set.
type Answer struct {
	Elicit *ElicitResult
	Sample *SamplingResult
	Roots  *RootsResult
}

// Sample asks the client's model for a message. It needs the client's
// sampling capability (Meta.Client.Sampling): without it the result is an
// *Error of KindClientCapability, which a provider may return as is. It
// blocks until the client answers, the host gives up, or ctx ends.
func (c *Call) Sample(ctx context.Context, req *SamplingRequest) (*SamplingResult, error) {
	a, err := c.Ask(ctx, Question{Sample: req})
	if err != nil {
		return nil, err
	}
	return a[0].Sample, nil
}

// Elicit asks the client's user for input. It needs the client's
// elicitation capability (Meta.Client.Elicitation): without it the result
// is an *Error of KindClientCapability, which a provider may return as
// is. It blocks until the user answers, the host gives up, or ctx ends.
func (c *Call) Elicit(ctx context.Context, req *ElicitRequest) (*ElicitResult, error) {
	a, err := c.Ask(ctx, Question{Elicit: req})
	if err != nil {
		return nil, err
	}
	return a[0].Elicit, nil
}

// ListRoots asks the client for its roots. It needs the client's roots
// capability (Meta.Client.Roots), like Sample needs sampling.
func (c *Call) ListRoots(ctx context.Context, req *RootsRequest) (*RootsResult, error) {
	a, err := c.Ask(ctx, Question{Roots: req})
	if err != nil {
		return nil, err
	}
	return a[0].Roots, nil
}

// Ask puts several questions to the client at once and waits for every
// answer: a 2026-07-28 client gets them together in one input_required
// round instead of one round each. Each question needs its client
// capability; the first one missing fails the whole Ask before anything
// is sent, with an *Error of KindClientCapability.
func (c *Call) Ask(ctx context.Context, qs ...Question) ([]Answer, error) {
	if len(qs) == 0 {
		return nil, nil
	}
	wqs := make([]wire.Question, len(qs))
	for i, q := range qs {
		var (
			method, key, capName string
			has                  bool
			params               any
		)
		switch {
		case q.Elicit != nil && q.Sample == nil && q.Roots == nil:
			method, key, params, capName = wire.MethodElicitation, q.Elicit.Key, q.Elicit, "elicitation"
			has = c != nil && c.Meta.Client.Elicitation
		case q.Sample != nil && q.Elicit == nil && q.Roots == nil:
			method, key, params, capName = wire.MethodSampling, q.Sample.Key, q.Sample, "sampling"
			has = c != nil && c.Meta.Client.Sampling
		case q.Roots != nil && q.Elicit == nil && q.Sample == nil:
			method, key, params, capName = wire.MethodListRoots, q.Roots.Key, struct{}{}, "roots"
			has = c != nil && c.Meta.Client.Roots
		default:
			return nil, fmt.Errorf("sdk: question %d must set exactly one of Elicit, Sample and Roots", i)
		}
		if c == nil || c.events == nil || !has {
			return nil, MissingCapability(capName)
		}
		b, err := wire.Marshal(params)
		if err != nil {
			return nil, fmt.Errorf("sdk: encode %s: %w", method, err)
		}
		wqs[i] = wire.Question{Method: method, Params: b, Key: key}
	}
	res, err := c.events.stream.Ask(ctx, wqs)
	if err != nil {
		var f *wire.Failure
		if errors.As(err, &f) {
			return nil, &Error{Kind: ErrorKind(f.Kind), Message: f.Message, Details: f.Details, Data: f.Data}
		}
		return nil, fmt.Errorf("sdk: ask the client: %w", err)
	}
	out := make([]Answer, len(qs))
	for i, q := range qs {
		var (
			target any
			method = wqs[i].Method
		)
		switch {
		case q.Elicit != nil:
			out[i].Elicit = &ElicitResult{}
			target = out[i].Elicit
		case q.Sample != nil:
			out[i].Sample = &SamplingResult{}
			target = out[i].Sample
		default:
			out[i].Roots = &RootsResult{}
			target = out[i].Roots
		}
		if err := json.Unmarshal(res[i], target); err != nil {
			return nil, fmt.Errorf("sdk: decode the client's %s answer: %w", method, err)
		}
	}
	return out, nil
}
