package sdk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/fluxgit/fluxgit/internal/telemetry"
	"github.com/fluxgit/fluxgit/internal/wire"
)

// Serve runs the provider until the host goes away. It never returns
// normally. Providers must never write to stdout: the host's handshake
// with the provider lives there.
//
// With OTEL_ENABLED the provider exports its spans itself (OTLP, configured
// by the same OTEL_* variables the host passes down); a provider that
// cannot set up its exporter serves untraced rather than not at all.
func Serve(p Provider) {
	if _, err := telemetry.Setup(context.Background(), "fluxgit-provider", true); err != nil {
		fmt.Fprintln(os.Stderr, "tracing off:", err)
	}
	wire.Serve(&handler{p: p})
}

// Logger returns the logger a provider should use for its operator: JSON
// lines on stderr, which the host re-emits on its own log under the
// provider's name with their level. Messages for the client (the model)
// go through Call.Log instead.
func Logger(name string) *slog.Logger { return newLogger(os.Stderr, name) }

// hclogTime is the timestamp layout the host's log reader parses.
const hclogTime = "2006-01-02T15:04:05.000000Z07:00"

func newLogger(w io.Writer, name string) *slog.Logger {
	h := slog.NewJSONHandler(w, &slog.HandlerOptions{
		Level: slog.LevelInfo,
		// The host reads provider stderr as hclog JSON: the level, message
		// and time keys must be spelt its way or the lines lose their level.
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) > 0 {
				return a
			}
			switch a.Key {
			case slog.LevelKey:
				return slog.String("@level", strings.ToLower(a.Value.String()))
			case slog.MessageKey:
				return slog.String("@message", a.Value.String())
			case slog.TimeKey:
				return slog.String("@timestamp", a.Value.Time().Format(hclogTime))
			}
			return a
		},
	})
	return slog.New(h).With("@module", name)
}

// handler adapts a Provider to the host wire.
type handler struct{ p Provider }

func (h *handler) Describe(context.Context) (*wire.Description, error) {
	d := &wire.Description{Protocol: wire.Protocol}
	if ds, ok := h.p.(Describer); ok {
		own := ds.Describe()
		d.Declared, d.Tools, d.Resources, d.Prompts = true, own.Tools, own.Resources, own.Prompts
	}
	_, d.Capabilities.Resources = h.p.(ResourceReader)
	_, d.Capabilities.Watch = h.p.(ResourceWatcher)
	_, d.Capabilities.Prompts = h.p.(PromptProvider)
	_, d.Capabilities.Completion = h.p.(Completer)
	_, d.Capabilities.Tasks = h.p.(TaskKeeper)
	return d, nil
}

func (h *handler) Call(ctx context.Context, c *wire.Call, s *wire.Stream) (*wire.Result, error) {
	ctx, span := telemetry.Start(telemetry.Extract(ctx, c.Meta.TraceParent, c.Meta.TraceState), "tool "+c.Tool,
		trace.SpanKindServer, attribute.String("fluxgit.tool", c.Tool))
	res, err := h.call(ctx, c, s)
	telemetry.End(span, err)
	return res, err
}

func (h *handler) call(ctx context.Context, c *wire.Call, s *wire.Stream) (*wire.Result, error) {
	call := &Call{Tool: c.Tool, Arguments: c.Arguments, Meta: fromWireMeta(c.Meta), events: &events{stream: s}}
	res, err := h.p.CallTool(ctx, call)
	if err != nil {
		return nil, toWire(err)
	}
	if res == nil {
		return nil, nil
	}
	if err := res.Validate(); err != nil {
		return nil, fmt.Errorf("provider result for %s is invalid: %w", c.Tool, err)
	}
	out := resultToWire(res)
	if res.Task != nil {
		if !c.Meta.Tasks {
			// The client cannot follow a task: drop it rather than hand the
			// host something it must not send.
			out.Task = nil
		} else if err := res.Task.validate(); err != nil {
			return nil, fmt.Errorf("provider task for %s is invalid: %w", c.Tool, err)
		} else if out.Task.Tool == "" {
			out.Task.Tool = c.Tool
		}
	}
	return out, nil
}

func resultToWire(res *Result) *wire.Result {
	out := &wire.Result{Source: res.Source, Data: res.Data, Text: res.Text, Fields: res.Fields, Content: contentToWire(res.Content)}
	if res.Error != nil {
		out.Error = toolErrorToWire(res.Error)
	}
	if res.Task != nil {
		out.Task = taskToWire(res.Task)
	}
	return out
}

func toolErrorToWire(e *ToolError) *wire.ToolError {
	if e == nil {
		return nil
	}
	return &wire.ToolError{Code: e.Code, Message: e.Message, Data: e.Data}
}

func taskToWire(t *Task) *wire.Task {
	out := &wire.Task{
		ID: t.ID, Status: string(t.Status), StatusMessage: t.StatusMessage,
		Error: toolErrorToWire(t.Error), PollIntervalMs: t.PollIntervalMs, TTLMs: t.TTLMs,
		Tool: t.Tool, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt,
	}
	if t.Result != nil {
		r := *t.Result
		r.Task = nil // a task's result never nests another task
		out.Result = resultToWire(&r)
	}
	return out
}

func (h *handler) GetTask(ctx context.Context, req *wire.TaskRequest) (*wire.Task, error) {
	return h.task(ctx, req, false)
}

func (h *handler) CancelTask(ctx context.Context, req *wire.TaskRequest) (*wire.Task, error) {
	return h.task(ctx, req, true)
}

func (h *handler) task(ctx context.Context, req *wire.TaskRequest, cancel bool) (*wire.Task, error) {
	k, ok := h.p.(TaskKeeper)
	if !ok {
		return nil, wire.ErrNotImplemented
	}
	var (
		t   *Task
		err error
	)
	if cancel {
		t, err = k.CancelTask(ctx, req.ID, fromWireMeta(req.Meta))
	} else {
		t, err = k.GetTask(ctx, req.ID, fromWireMeta(req.Meta))
	}
	if errors.Is(err, ErrTaskNotFound) {
		return nil, &wire.Failure{Kind: wire.KindNotFound, Message: "Task not found", Details: "no task " + req.ID}
	}
	if err != nil {
		return nil, toWire(err)
	}
	if t == nil {
		return nil, &wire.Failure{Kind: wire.KindNotFound, Message: "Task not found", Details: "no task " + req.ID}
	}
	if err := t.validate(); err != nil {
		return nil, fmt.Errorf("provider task %s is invalid: %w", req.ID, err)
	}
	return taskToWire(t), nil
}

func (h *handler) ReadResource(ctx context.Context, uri string, meta wire.Meta) (*wire.Resource, error) {
	r, ok := h.p.(ResourceReader)
	if !ok {
		return nil, wire.ErrNotImplemented
	}
	res, err := r.ReadResource(ctx, uri, fromWireMeta(meta))
	if errors.Is(err, ErrResourceNotFound) {
		return nil, &wire.Failure{Kind: wire.KindNotFound, Message: "Resource not found", Details: "no resource " + uri}
	}
	if err != nil {
		return nil, toWire(err)
	}
	if res == nil {
		return nil, nil
	}
	w := wire.Resource(*res)
	return &w, nil
}

func (h *handler) WatchResources(ctx context.Context, ch chan<- wire.ResourceChange) error {
	w, ok := h.p.(ResourceWatcher)
	if !ok {
		return wire.ErrNotImplemented
	}
	// Buffered like the wire side: Broadcaster drops changes for a watcher
	// that is not draining, so this hop must not make it look slow.
	own := make(chan ResourceChange, 64)
	errc := make(chan error, 1)
	go func() { errc <- w.WatchResources(ctx, own) }()
	for {
		select {
		case c := <-own:
			select {
			case ch <- wire.ResourceChange(c):
			case <-ctx.Done():
			}
		case err := <-errc:
			return toWire(err)
		}
	}
}

func (h *handler) GetPrompt(ctx context.Context, req *wire.PromptRequest) (*wire.PromptResult, error) {
	pp, ok := h.p.(PromptProvider)
	if !ok {
		return nil, wire.ErrNotImplemented
	}
	res, err := pp.GetPrompt(ctx, &PromptRequest{Name: req.Name, Arguments: req.Arguments, Meta: fromWireMeta(req.Meta), Inputs: req.Inputs})
	if err != nil {
		return nil, toWire(err)
	}
	if res == nil {
		return nil, nil
	}
	if len(res.Ask) > 0 {
		return promptQuestions(req.Name, fromWireMeta(req.Meta), res.Ask)
	}
	out := &wire.PromptResult{Description: res.Description, Messages: make([]wire.PromptMessage, 0, len(res.Messages))}
	total := 0
	for i, m := range res.Messages {
		var content any = TextContent(m.Text)
		switch {
		case m.Content.Type != "":
			if m.Text != "" || m.Resource != nil {
				return nil, fmt.Errorf("prompt %s message %d sets Content and also Text or Resource; set one", req.Name, i)
			}
			w := m.Content.toWire()
			n, err := wire.CheckContent(fmt.Sprintf("prompt %s message %d content", req.Name, i), []wire.Content{w})
			if err != nil {
				return nil, fmt.Errorf("provider prompt is invalid: %w", err)
			}
			if total += n; total > wire.MaxContentBytes {
				return nil, fmt.Errorf("provider prompt %s carries more than %d bytes of content at message %d", req.Name, wire.MaxContentBytes, i)
			}
			content = w
		case m.Resource != nil:
			content = map[string]any{"type": "resource", "resource": m.Resource}
		}
		b, err := wire.Marshal(content)
		if err != nil {
			return nil, err
		}
		out.Messages = append(out.Messages, wire.PromptMessage{Role: string(m.Role), Content: b})
	}
	return out, nil
}

func (h *handler) Complete(ctx context.Context, req *wire.CompleteRequest) (*wire.Completion, error) {
	c, ok := h.p.(Completer)
	if !ok {
		return nil, wire.ErrNotImplemented
	}
	res, err := c.Complete(ctx, &CompleteRequest{
		Prompt: req.Prompt, Template: req.Template, Argument: req.Argument, Value: req.Value,
		Context: req.Context, Meta: fromWireMeta(req.Meta),
	})
	if err != nil {
		return nil, toWire(err)
	}
	if res == nil {
		return nil, nil
	}
	out := &wire.Completion{Values: res.Values, Total: res.Total, HasMore: res.HasMore}
	if out.Values == nil {
		out.Values = []string{}
	}
	if len(out.Values) > wire.MaxCompletions {
		if out.Total < len(out.Values) {
			out.Total = len(out.Values)
		}
		out.Values, out.HasMore = out.Values[:wire.MaxCompletions], true
	}
	return out, nil
}

// toWire turns a provider's refusal into the failure the host maps; a
// plain error stays an internal one.
func toWire(err error) error {
	var (
		e  *Error
		ae *ArgumentError
	)
	switch {
	case err == nil:
		return nil
	case errors.As(err, &e):
		kind := string(e.Kind)
		if kind == "" {
			kind = wire.KindInternal
		}
		return &wire.Failure{Kind: kind, Message: e.Message, Details: e.Details, Data: e.Data}
	case errors.As(err, &ae):
		return &wire.Failure{Kind: wire.KindInvalidArgument, Message: ae.Message, Details: ae.Details}
	case errors.Is(err, ErrNotImplemented):
		return wire.ErrNotImplemented
	}
	return err
}

func fromWireMeta(m wire.Meta) Meta {
	return Meta{
		ClientName: m.ClientName, ClientVersion: m.ClientVersion, AllowedRoots: m.AllowedRoots,
		RequestID: m.RequestID, Progress: m.Progress, LogLevel: Level(m.LogLevel),
		Client: ClientCapabilities{Sampling: m.Client.Sampling, Elicitation: m.Client.Elicitation, Roots: m.Client.Roots},
		Tasks:  m.Tasks,
	}
}

// promptQuestions turns a prompt's questions into the wire's input
// requests, each under its own key and within the client's capabilities.
func promptQuestions(name string, meta Meta, qs map[string]Question) (*wire.PromptResult, error) {
	out := &wire.PromptResult{Messages: []wire.PromptMessage{}, InputRequests: make(map[string]wire.InputRequest, len(qs))}
	for key, q := range qs {
		var (
			method  string
			params  any
			capName string
			has     bool
		)
		switch {
		case q.Elicit != nil && q.Sample == nil && q.Roots == nil:
			method, params, capName, has = wire.MethodElicitation, q.Elicit, "elicitation", meta.Client.Elicitation
		case q.Sample != nil && q.Elicit == nil && q.Roots == nil:
			method, params, capName, has = wire.MethodSampling, q.Sample, "sampling", meta.Client.Sampling
		case q.Roots != nil && q.Elicit == nil && q.Sample == nil:
			method, params, capName, has = wire.MethodListRoots, struct{}{}, "roots", meta.Client.Roots
		default:
			return nil, fmt.Errorf("prompt %s question %q must set exactly one of Elicit, Sample and Roots", name, key)
		}
		if !has {
			return nil, toWire(MissingCapability(capName))
		}
		b, err := wire.Marshal(params)
		if err != nil {
			return nil, fmt.Errorf("prompt %s: encode question %q: %w", name, key, err)
		}
		out.InputRequests[key] = wire.InputRequest{Method: method, Params: b}
	}
	return out, nil
}
