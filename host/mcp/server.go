// Package mcp is the host's protocol layer: it speaks both MCP generations
// over a JSON-RPC connection, validates every tool call against the spec,
// and dispatches to providers. Nothing below this package knows MCP.
package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/sourcegraph/jsonrpc2"

	"github.com/fluxgit/fluxgit/host/catalog"
	"github.com/fluxgit/fluxgit/host/repopath"
	"github.com/fluxgit/fluxgit/host/rpc"
	"github.com/fluxgit/fluxgit/internal/wire"
)

// Instructions is the orientation sent to agents in initialize and
// server/discover; see Server.instructions for the parts added only when
// what they describe is served.
const Instructions = "fluxgit serves Git repositories to coding agents. Start with repo.brief (or repo.status) " +
	"to orient yourself in a repository. Read tools never modify the repository, its index, refs or config."

// writeInstructions is added when write proposals are served.
const writeInstructions = " Write tools (operation.preview.*) only create a proposal that a person approves (in the FluxGit app " +
	"or fluxgit's gateway): keep the returned previewId and follow it with operation.status until it reaches a terminal status."

// Dispatcher runs provider work; *providers.Manager is the production
// implementation. Provider failures of a known kind come back as
// *wire.Failure; an optional capability a provider lacks as
// wire.ErrNotImplemented.
type Dispatcher interface {
	CallTool(ctx context.Context, provider string, call *wire.Call, retry bool, events wire.EventFunc) (*wire.Result, error)
	ReadResource(ctx context.Context, provider, uri string, meta wire.Meta) (*wire.Resource, error)
	WatchResources(ctx context.Context, provider string, fn func(wire.ResourceChange)) error
	GetPrompt(ctx context.Context, provider string, req *wire.PromptRequest) (*wire.PromptResult, error)
	Complete(ctx context.Context, provider string, req *wire.CompleteRequest) (*wire.Completion, error)
}

// IDResolver relates the ids jsonrpc2 sees to the ids the client sent: the
// stream substitutes ids jsonrpc2 cannot represent (negative integers, say).
// A stream that implements it is used for its own connection.
type IDResolver interface {
	// HandlerID maps a client id (params.requestId of a cancellation) to
	// the id the handler received.
	HandlerID(clientID json.RawMessage) (jsonrpc2.ID, bool)
	// Forget releases a substitution for a request that gets no reply.
	Forget(id jsonrpc2.ID)
	// OriginalID is the exact id the client sent for a request.
	OriginalID(id jsonrpc2.ID) json.RawMessage
}

// Options configures a Server.
type Options struct {
	Catalog   *catalog.Catalog
	Providers Dispatcher
	Roots     repopath.Policy
	Name      string
	Version   string
	Log       hclog.Logger
	// Recorder receives every tools/call (optional): the audit ledger.
	Recorder Recorder
	// Presence keeps this process's presence record (optional; see
	// Presence). Close closes it.
	Presence Presence
	// ReferenceShape sends the reference's full result shapes
	// (FLUXGIT_MCP_RESULT_SHAPE=reference, package resultshape): the
	// envelope keeps tier, repoPath and a local-git source, and tools/list
	// serves and results are checked against each tool's
	// referenceOutputSchema where it has one. The zero value is the lean
	// shape, the default.
	ReferenceShape bool
}

// Server is what every connection shares: the catalog, the providers, the
// path policy, the recorder, rendered lists and the provider resource
// watches. Everything that belongs to one connection lives in its Session,
// so one Server can serve any number of connections over any transport.
type Server struct {
	opts Options
	log  hclog.Logger

	lists sync.Map // listVariant -> json.RawMessage

	// ctx bounds the server's own goroutines (resource watches).
	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	sessions map[*Session]struct{}
	watches  map[string]*watch // provider name

	parkedCalls parkedTable // modern calls waiting for client input
	// stateKey signs the requestState of prompts that ask for input
	// (promptinput.go); it lives as long as the process.
	stateKey []byte

	paramMu      sync.Mutex
	paramHeaders map[string][]ParamHeader // by tool, computed on first use
	tasks        taskTable                // tasks (tasks.go)
	kept         keptFollows              // pollers of followed provider-kept tasks (follow.go)
}

// New builds a Server. Close releases what it started.
func New(opts Options) *Server {
	log := opts.Log
	if log == nil {
		log = hclog.NewNullLogger()
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{opts: opts, log: log, ctx: ctx, cancel: cancel,
		sessions: map[*Session]struct{}{}, watches: map[string]*watch{},
		parkedCalls: parkedTable{calls: map[string]*parked{}}, stateKey: newStateKey(),
		paramHeaders: map[string][]ParamHeader{}, tasks: taskTable{tasks: map[string]*hostTask{}},
		kept: keptFollows{pollers: map[followKey]*keptPoller{}, every: keptPoll}}
}

// instructions describes only what this server serves: the write
// sentence appears only when some operation.preview.* tool is served.
func (s *Server) instructions() string {
	if s.opts.Catalog != nil {
		for _, t := range s.opts.Catalog.Tools {
			if strings.HasPrefix(t.Name, "operation.preview.") {
				return Instructions + writeInstructions
			}
		}
	}
	return Instructions
}

// Close stops the server's resource watches and closes the presence
// record (deleting it: the clean exit). Sessions still serving keep
// answering requests but receive no more change notifications, and their
// calls are no longer recorded as presence.
func (s *Server) Close() {
	s.cancel()
	if s.opts.Presence != nil {
		s.opts.Presence.Close()
	}
}

// Serve runs one connection to completion in a new Session; see
// Session.Serve. A stream that implements IDResolver resolves its own ids.
func (s *Server) Serve(ctx context.Context, stream jsonrpc2.ObjectStream) error {
	return s.NewSession().Serve(ctx, stream)
}

func (s *Server) addSession(sess *Session) {
	s.mu.Lock()
	s.sessions[sess] = struct{}{}
	s.mu.Unlock()
}

func (s *Server) removeSession(sess *Session) {
	s.mu.Lock()
	delete(s.sessions, sess)
	s.mu.Unlock()
	s.unfollowSession(sess)
}

// Shutdown limits. drainGrace is how long requests received before EOF may
// run on; shutdownGrace how long cancelled ones get to unwind, so a provider
// that ignores cancellation cannot hold the exit hostage.
const (
	drainGrace    = 10 * time.Second
	shutdownGrace = 5 * time.Second
)

type discardLogger struct{}

func (discardLogger) Printf(string, ...any) {}

func methodNotFound(m string) *rpcError {
	return errorf(codeMethodNotFound, map[string]any{"method": m}, "Method not found")
}

// params holds a request's params object, keys left raw.
type params map[string]json.RawMessage

func decodeParams(raw *json.RawMessage) (params, error) {
	if raw == nil || string(bytes.TrimSpace(*raw)) == "null" {
		return params{}, nil
	}
	var p params
	if err := json.Unmarshal(*raw, &p); err != nil || p == nil {
		return nil, invalidParams("params must be an object")
	}
	return p, nil
}

func parseClientInfo(raw json.RawMessage) (clientInfo, error) {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return clientInfo{}, errors.New("must be an object with name and version")
	}
	var ci clientInfo
	if json.Unmarshal(m["name"], &ci.Name) != nil || strings.TrimSpace(ci.Name) == "" {
		return clientInfo{}, errors.New("needs a non-blank string name")
	}
	if json.Unmarshal(m["version"], &ci.Version) != nil || strings.TrimSpace(ci.Version) == "" {
		return clientInfo{}, errors.New("needs a non-blank string version")
	}
	return ci, nil
}

// legacyClientInfo reads initialize's clientInfo leniently: a malformed
// clientInfo does not fail the handshake (old clients send odd shapes), and
// only a non-blank string name counts as an identity.
func legacyClientInfo(raw json.RawMessage) (clientInfo, bool) {
	var m map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil || m == nil {
		return clientInfo{}, false
	}
	var ci clientInfo
	if json.Unmarshal(m["name"], &ci.Name) != nil || strings.TrimSpace(ci.Name) == "" {
		return clientInfo{}, false
	}
	if json.Unmarshal(m["version"], &ci.Version) != nil {
		ci.Version = ""
	}
	return ci, true
}

func (s *Server) serverInfo(g generation) map[string]any {
	info := map[string]any{"name": s.opts.Name, "version": s.opts.Version}
	if g.modern || g.version >= V20250618 {
		info["title"] = "fluxgit"
	}
	if g.modern || g.version >= V20251125 {
		info["description"] = "Git for coding agents: cheap, safe reads; human-approved write proposals."
	}
	return info
}

// capabilities are the server capabilities for a generation: modern
// requests (server/discover) see the Tasks extension under extensions,
// 2025-11-25 sessions the experimental tasks capability, older ones
// neither.
func (s *Server) capabilities(g generation) map[string]any {
	caps := map[string]any{"tools": map[string]any{"listChanged": false},
		// Providers' log lines reach the client once it asks for them.
		"logging": map[string]any{}}
	if len(s.opts.Catalog.Resources)+len(s.opts.Catalog.Templates) > 0 {
		caps["resources"] = map[string]any{"listChanged": false, "subscribe": true}
	}
	if len(s.opts.Catalog.Prompts) > 0 {
		caps["prompts"] = map[string]any{"listChanged": false}
	}
	if s.completions() {
		caps["completions"] = map[string]any{}
	}
	switch {
	case g.modern:
		caps["extensions"] = map[string]any{extTasks: map[string]any{}}
	case g.version == V20251125:
		caps["tasks"] = map[string]any{"list": map[string]any{}, "cancel": map[string]any{},
			"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}
	}
	return caps
}

func (s *Server) discover(g generation) (json.RawMessage, error) {
	return rpc.Marshal(map[string]any{
		"supportedVersions": SupportedVersions,
		"capabilities":      s.uiCapabilities(s.capabilities(generation{modern: true, version: V20260728}), g),
		"instructions":      s.instructions(),
	})
}

// checkCursor accepts the single-page cursors: absent, null or "".
func checkCursor(p params) error {
	raw, ok := p["cursor"]
	if !ok || string(raw) == "null" {
		return nil
	}
	var c string
	if json.Unmarshal(raw, &c) != nil {
		return invalidParams("params.cursor must be a string")
	}
	if c != "" {
		return invalidParams("params.cursor is not valid: every list is a single complete page")
	}
	return nil
}
