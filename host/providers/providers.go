// Package providers starts, keeps warm, restarts and stops the go-plugin
// provider processes the host dispatches to.
package providers

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fluxgit/fluxgit/internal/telemetry"
	"github.com/fluxgit/fluxgit/internal/wire"
)

// Spec says how to start one provider.
type Spec struct {
	// Name is what spec files name in their `provider` field.
	Name string
	// Command is the executable; Args follow it.
	Command string
	Args    []string
	// Env is added to the inherited environment.
	Env []string
	// Builtin marks providers served by this binary (`fluxgit provider NAME`).
	Builtin bool
	// Expect, when set, is checked against the provider's Describe at each
	// launch; a provider missing something it names is refused.
	Expect *Expectation
}

// Manager owns the provider processes. Each starts on first use and stays
// warm; a dead one is replaced on the next call.
type Manager struct {
	log   hclog.Logger
	specs map[string]Spec

	mu    sync.Mutex
	procs map[string]*proc
	start map[string]*sync.Mutex // one start at a time per provider
	done  bool
	// refused holds launches refused by the Describe check: the binary
	// and the spec do not change under a running host, so every later
	// call fails the same way without starting the process again.
	refused map[string]error

	nextCall atomic.Uint64 // call ids, unique per host process

	created  time.Time // sockets older than this may be stale
	sockOnce sync.Once
	sockDir  string
}

type proc struct {
	plugin *plugin.Client
	rpc    *wire.Client
	desc   *wire.Description
}

// New builds a manager; nothing starts yet.
func New(specs []Spec, log hclog.Logger) *Manager {
	m := &Manager{log: log, specs: map[string]Spec{}, procs: map[string]*proc{}, start: map[string]*sync.Mutex{}, refused: map[string]error{}, created: time.Now()}
	for _, s := range specs {
		m.specs[s.Name] = s
		m.start[s.Name] = &sync.Mutex{}
	}
	return m
}

// Names lists the configured providers, sorted.
func (m *Manager) Names() []string {
	names := make([]string, 0, len(m.specs))
	for n := range m.specs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Spec returns a provider's start specification.
func (m *Manager) Spec(name string) (Spec, bool) {
	s, ok := m.specs[name]
	return s, ok
}

// ErrClosed is returned after Shutdown.
var ErrClosed = errors.New("provider manager is shut down")

// client returns a live client for name, starting the process if needed.
func (m *Manager) client(name string) (*proc, error) {
	spec, ok := m.specs[name]
	if !ok {
		return nil, fmt.Errorf("unknown provider %q", name)
	}
	startMu := m.start[name]
	startMu.Lock()
	defer startMu.Unlock()

	m.mu.Lock()
	if m.done {
		m.mu.Unlock()
		return nil, ErrClosed
	}
	p := m.procs[name]
	refused := m.refused[name]
	m.mu.Unlock()
	if refused != nil {
		return nil, refused
	}
	if p != nil && !p.plugin.Exited() {
		return p, nil
	}
	if p != nil {
		m.log.Warn("provider exited; restarting", "provider", name)
		p.plugin.Kill()
		// A provider that died by a signal left its socket behind.
		if dir := m.socketDir(); dir != "" {
			removeStaleSockets(dir, time.Now())
		}
	}
	p, err := m.launch(spec)
	var mismatch *MismatchError
	if errors.As(err, &mismatch) {
		m.mu.Lock()
		m.refused[name] = err
		m.mu.Unlock()
	}
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.done {
		p.plugin.Kill()
		return nil, ErrClosed
	}
	m.procs[name] = p
	return p, nil
}

// socketDir prepares the private socket directory once, on the first
// start, so a host that never starts a provider touches nothing. When it is
// refused, providers fall back to go-plugin's default (the temp directory)
// and the reason is logged.
func (m *Manager) socketDir() string {
	m.sockOnce.Do(func() {
		dir, err := prepareSocketDir(m.created)
		if err != nil {
			m.log.Warn("provider sockets go to the temp directory instead of a private one", "err", err)
			return
		}
		m.sockDir = dir
	})
	return m.sockDir
}

func (m *Manager) launch(spec Spec) (*proc, error) {
	cmd := exec.Command(spec.Command, spec.Args...)
	cmd.Env = append(os.Environ(), spec.Env...)
	tieToHost(cmd)
	if dir := m.socketDir(); dir != "" {
		cmd.Env = append(cmd.Env, plugin.EnvUnixSocketDir+"="+dir)
	}
	pc := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  wire.Handshake,
		Plugins:          wire.PluginSet(nil),
		Cmd:              cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		AutoMTLS:         true,
		Managed:          true,
		SkipHostEnv:      true, // cmd.Env already carries it
		StartTimeout:     20 * time.Second,
		Logger:           pluginLogger{m.log.Named(spec.Name)},
	})
	rpcClient, err := pc.Client()
	if err != nil {
		pc.Kill()
		return nil, fmt.Errorf("start provider %s: %w", spec.Name, err)
	}
	if err := afterStart(cmd); err != nil {
		// The provider still ends with the host through its own watcher.
		m.log.Warn("provider not tied to the host by the OS", "provider", spec.Name, "err", err)
	}
	raw, err := rpcClient.Dispense(wire.PluginName)
	if err != nil {
		pc.Kill()
		return nil, fmt.Errorf("dispense provider %s: %w", spec.Name, err)
	}
	c, ok := raw.(*wire.Client)
	if !ok {
		pc.Kill()
		return nil, fmt.Errorf("provider %s: unexpected client type %T", spec.Name, raw)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	desc, err := c.Describe(ctx)
	if err != nil {
		pc.Kill()
		return nil, fmt.Errorf("provider %s: %w", spec.Name, err)
	}
	extras, err := spec.Expect.check(spec.Name, desc)
	if err != nil {
		pc.Kill()
		m.log.Error("provider refused: it does not serve what the spec gives it", "provider", spec.Name, "err", err)
		return nil, err
	}
	if len(extras) > 0 {
		m.log.Warn("provider serves items no spec file describes; they stay unreachable", "provider", spec.Name, "extras", extras)
	}
	return &proc{plugin: pc, rpc: c, desc: desc}, nil
}

// Start starts a provider (if it is not running) and checks it answers
// and serves what its spec expects (a *MismatchError otherwise).
func (m *Manager) Start(name string) error {
	_, err := m.client(name)
	return err
}

// Description returns what a provider says it serves, starting it if
// needed.
func (m *Manager) Description(name string) (*wire.Description, error) {
	p, err := m.client(name)
	if err != nil {
		return nil, err
	}
	return p.desc, nil
}

// transient reports whether err means the provider process went away, so a
// fresh process may succeed.
func transient(err error) bool {
	switch status.Code(err) {
	case codes.Unavailable, codes.Canceled:
		return true
	}
	return false
}

// CallTool dispatches a call. It assigns call.ID. events receives the call's events in order before CallTool returns; its
// answer func replies to a ClientRequest event on the process that runs
// the call (CallID is filled in) and may be called from any goroutine
// while the call is in flight. With events nil, call.Meta is cleared of
// progress, logging and client capabilities, since nothing could take them.
//
// When retry is true (idempotent tools) and the provider died under the
// call before any event was delivered, the call is replayed once on a
// fresh process, so a crash costs one slow answer instead of an error.
// Once the client has seen an event (a progress report, a question) the
// call is not replayed: the client would see it start over.
func (m *Manager) CallTool(ctx context.Context, name string, call *wire.Call, retry bool, events wire.EventFunc) (*wire.Result, error) {
	// One span per provider call; its context travels in the wire meta so
	// the provider's own span is its child in the same trace.
	ctx, span := telemetry.Start(ctx, "provider "+name+" "+call.Tool, trace.SpanKindClient,
		attribute.String("fluxgit.provider", name), attribute.String("fluxgit.tool", call.Tool))
	call.Meta.TraceParent, call.Meta.TraceState = telemetry.Inject(ctx)
	res, err := m.callTool(ctx, name, call, retry, events)
	telemetry.End(span, err)
	return res, err
}

func (m *Manager) callTool(ctx context.Context, name string, call *wire.Call, retry bool, events wire.EventFunc) (*wire.Result, error) {
	call.ID = m.nextCall.Add(1)
	if events == nil {
		// Nobody would see events or answer a question: the provider is
		// told the client takes none, so it cannot wait forever.
		call.Meta.Progress, call.Meta.LogLevel, call.Meta.Client = false, "", wire.ClientCaps{}
	}
	delivered := false
	for attempt := 0; ; attempt++ {
		p, err := m.client(name)
		if err != nil {
			return nil, err
		}
		var onEvent func(wire.Event)
		if events != nil {
			answer := func(ctx context.Context, a *wire.Answer) error {
				a.CallID = call.ID
				return p.rpc.Answer(ctx, a)
			}
			onEvent = func(ev wire.Event) {
				delivered = true
				events(ev, answer)
			}
		}
		res, err := p.rpc.Call(ctx, call, onEvent)
		if err == nil || ctx.Err() != nil || !transient(err) {
			return res, err
		}
		m.dropIfDead(name, p)
		if !retry || delivered || attempt > 0 {
			return nil, err
		}
	}
}

// ReadResource reads a resource from a provider, restarting it once if it
// died. An unknown URI is a *wire.Failure of kind not_found; a provider
// without resources answers wire.ErrNotImplemented.
func (m *Manager) ReadResource(ctx context.Context, name, uri string, meta wire.Meta) (*wire.Resource, error) {
	ctx, span := telemetry.Start(ctx, "provider "+name+" resources/read", trace.SpanKindClient,
		attribute.String("fluxgit.provider", name))
	meta.TraceParent, meta.TraceState = telemetry.Inject(ctx)
	res, err := once(ctx, m, name, func(c *wire.Client) (*wire.Resource, error) { return c.ReadResource(ctx, uri, meta) })
	telemetry.End(span, err)
	return res, err
}

// GetPrompt renders a prompt the provider owns, restarting it once if it
// died. wire.ErrNotImplemented when the provider serves no prompts.
func (m *Manager) GetPrompt(ctx context.Context, name string, req *wire.PromptRequest) (*wire.PromptResult, error) {
	ctx, span := telemetry.Start(ctx, "provider "+name+" prompts/get", trace.SpanKindClient,
		attribute.String("fluxgit.provider", name), attribute.String("fluxgit.prompt", req.Name))
	req.Meta.TraceParent, req.Meta.TraceState = telemetry.Inject(ctx)
	res, err := once(ctx, m, name, func(c *wire.Client) (*wire.PromptResult, error) { return c.GetPrompt(ctx, req) })
	telemetry.End(span, err)
	return res, err
}

// Complete asks the provider for argument completions, restarting it once
// if it died. wire.ErrNotImplemented when the provider has no Completer.
func (m *Manager) Complete(ctx context.Context, name string, req *wire.CompleteRequest) (*wire.Completion, error) {
	ctx, span := telemetry.Start(ctx, "provider "+name+" completion/complete", trace.SpanKindClient,
		attribute.String("fluxgit.provider", name))
	req.Meta.TraceParent, req.Meta.TraceState = telemetry.Inject(ctx)
	res, err := once(ctx, m, name, func(c *wire.Client) (*wire.Completion, error) { return c.Complete(ctx, req) })
	telemetry.End(span, err)
	return res, err
}

// once runs an idempotent request, replaying it once on a fresh process
// when the provider died under it.
func once[T any](ctx context.Context, m *Manager, name string, fn func(*wire.Client) (*T, error)) (*T, error) {
	for attempt := 0; ; attempt++ {
		p, err := m.client(name)
		if err != nil {
			return nil, err
		}
		res, err := fn(p.rpc)
		if err == nil || ctx.Err() != nil || !transient(err) || attempt > 0 {
			return res, err
		}
		m.dropIfDead(name, p)
	}
}

// dropIfDead forgets p after a transport failure so the next call starts a
// new process. The old one is killed in case it is wedged rather than dead.
func (m *Manager) dropIfDead(name string, p *proc) {
	m.mu.Lock()
	if m.procs[name] == p {
		delete(m.procs, name)
	}
	m.mu.Unlock()
	p.plugin.Kill()
	if dir := m.socketDir(); dir != "" {
		removeStaleSockets(dir, time.Now())
	}
}

// Running reports whether a provider process is currently up.
func (m *Manager) Running(name string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.procs[name]
	return p != nil && !p.plugin.Exited()
}

// Pid returns the provider's process id, or 0 when it is not running.
func (m *Manager) Pid(name string) int {
	m.mu.Lock()
	p := m.procs[name]
	m.mu.Unlock()
	if p == nil {
		return 0
	}
	if rc := p.plugin.ReattachConfig(); rc != nil {
		return rc.Pid
	}
	return 0
}

// Shutdown stops every provider and refuses new starts.
func (m *Manager) Shutdown() {
	m.mu.Lock()
	m.done = true
	procs := m.procs
	m.procs = map[string]*proc{}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Add(1)
		go func(p *proc) { defer wg.Done(); p.plugin.Kill() }(p)
	}
	wg.Wait()
}

// WatchResources streams a provider's resource changes into fn until ctx
// ends or the stream breaks (the provider died, say); callers loop to
// re-establish it. It returns wire.ErrNotImplemented for providers without
// change events.
func (m *Manager) WatchResources(ctx context.Context, name string, fn func(wire.ResourceChange)) error {
	p, err := m.client(name)
	if err != nil {
		return err
	}
	err = p.rpc.WatchResources(ctx, fn)
	if err != nil && ctx.Err() == nil && transient(err) {
		m.dropIfDead(name, p)
	}
	return err
}

// GetTask asks a provider for a task it keeps (sdk.TaskKeeper). A
// *wire.Failure of kind not_found when it does not keep the id;
// wire.ErrNotImplemented when it keeps no tasks.
func (m *Manager) GetTask(ctx context.Context, name string, req *wire.TaskRequest) (*wire.Task, error) {
	return once(ctx, m, name, func(c *wire.Client) (*wire.Task, error) { return c.GetTask(ctx, req) })
}

// CancelTask asks a provider to cancel a task it keeps. It is not
// replayed on a fresh process: a cancel that reached the provider may have
// taken effect.
func (m *Manager) CancelTask(ctx context.Context, name string, req *wire.TaskRequest) (*wire.Task, error) {
	p, err := m.client(name)
	if err != nil {
		return nil, err
	}
	return p.rpc.CancelTask(ctx, req)
}

// TaskKeepers lists the providers that keep durable tasks (their
// Describe declared the capability), sorted; providers that cannot be
// started are left out.
func (m *Manager) TaskKeepers() []string {
	var out []string
	for _, n := range m.Names() {
		if d, err := m.Description(n); err == nil && d.Capabilities.Tasks {
			out = append(out, n)
		}
	}
	return out
}
