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
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fluxgit/fluxgit/plugins/sdk"
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

	created  time.Time // sockets older than this may be stale
	sockOnce sync.Once
	sockDir  string
}

type proc struct {
	plugin *plugin.Client
	rpc    *sdk.Client
}

// New builds a manager; nothing starts yet.
func New(specs []Spec, log hclog.Logger) *Manager {
	m := &Manager{log: log, specs: map[string]Spec{}, procs: map[string]*proc{}, start: map[string]*sync.Mutex{}, created: time.Now()}
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
	m.mu.Unlock()
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
		HandshakeConfig:  sdk.Handshake,
		Plugins:          sdk.PluginSet(nil),
		Cmd:              cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		AutoMTLS:         true,
		Managed:          true,
		SkipHostEnv:      true, // cmd.Env already carries it
		StartTimeout:     20 * time.Second,
		Logger:           m.log.Named(spec.Name),
	})
	rpcClient, err := pc.Client()
	if err != nil {
		pc.Kill()
		return nil, fmt.Errorf("start provider %s: %w", spec.Name, err)
	}
	raw, err := rpcClient.Dispense(sdk.PluginName)
	if err != nil {
		pc.Kill()
		return nil, fmt.Errorf("dispense provider %s: %w", spec.Name, err)
	}
	c, ok := raw.(*sdk.Client)
	if !ok {
		pc.Kill()
		return nil, fmt.Errorf("provider %s: unexpected client type %T", spec.Name, raw)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Describe(ctx); err != nil {
		pc.Kill()
		return nil, fmt.Errorf("provider %s: %w", spec.Name, err)
	}
	return &proc{plugin: pc, rpc: c}, nil
}

// Start starts a provider (if it is not running) and checks it answers.
func (m *Manager) Start(name string) error {
	_, err := m.client(name)
	return err
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

// CallTool dispatches a call. When retry is true (idempotent tools) and the
// provider died under the call, the call is replayed once on a fresh
// process, so a crash costs one slow answer instead of an error.
func (m *Manager) CallTool(ctx context.Context, name string, call *sdk.Call, retry bool) (*sdk.Result, error) {
	for attempt := 0; ; attempt++ {
		p, err := m.client(name)
		if err != nil {
			return nil, err
		}
		res, err := p.rpc.CallTool(ctx, call)
		if err == nil || ctx.Err() != nil || !transient(err) {
			return res, err
		}
		m.dropIfDead(name, p)
		if !retry || attempt > 0 {
			return nil, err
		}
	}
}

// ReadResource reads a resource from a provider, restarting it once if it
// died.
func (m *Manager) ReadResource(ctx context.Context, name, uri string, meta sdk.Meta) (*sdk.Resource, error) {
	for attempt := 0; ; attempt++ {
		p, err := m.client(name)
		if err != nil {
			return nil, err
		}
		res, err := p.rpc.ReadResource(ctx, uri, meta)
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
// re-establish it. It returns sdk.ErrNotImplemented for providers without
// change events.
func (m *Manager) WatchResources(ctx context.Context, name string, fn func(sdk.ResourceChange)) error {
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
