// Package proposals is the handshake provider: the agent-facing half of
// write proposals. An agent proposes a Git write with one of the
// operation.preview.* tools, a person approves or rejects it in FluxGit
// (the gateway), and the agent follows the proposal with operation.status
// or withdraws it with operation.cancel. fluxgit never runs a Git write
// itself: every tool here only speaks the gateway's HTTP protocol on a
// loopback address (internal/fluxbridge).
//
// A preview makes at most two requests, a POST that submits the proposal
// and one GET of its status, and never polls: the stdio session must not
// block on a person's decision, so a proposal still waiting is reported as
// a live result that points the agent at operation.status.
package proposals

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/fluxgit/fluxgit/internal/fluxbridge"
	"github.com/fluxgit/fluxgit/internal/operation"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// Source is the Result.Source of every answer that came from FluxGit.
const Source = "fluxgit-app"

// Tier is the tier of every tool of this provider; it is repeated in the
// 10003 payload so an agent sees which capability is missing.
const Tier = "fluxgit-write-handshake"

// Tool error codes a handshake result may carry.
const (
	// CodeNotConnected: no gateway address, the gateway is unreachable, or
	// it answered with a failure that is not a JSON refusal.
	CodeNotConnected = 10003
	// CodeProposalEnded: the proposal ended rejected, failed, expired or
	// cancelled.
	CodeProposalEnded = 10004
	// CodeUnknownPreview: the gateway has no proposal with that previewId.
	CodeUnknownPreview = 10005
	// CodeRefused: the gateway refused the proposal or the cancel.
	CodeRefused = 10006
	// CodeUnsafePreviewID: the gateway answered with a previewId fluxgit
	// will not follow.
	CodeUnsafePreviewID = 10007
)

// Tool names served besides the previews.
const (
	ToolStatus = "operation.status"
	ToolCancel = "operation.cancel"
)

// previewPrefix starts every preview tool name; the rest is the operation
// type, which is also the POST path suffix.
const previewPrefix = "operation.preview."

// Operations are the operation types a preview can propose, in the order
// the tools are listed.
// (internal/operation owns the list).
var Operations = operation.Names()

// OtherAgentsFunc returns the informational otherAgents hint for a
// proposal on repoPath touching proposalPaths (repository-relative, '/'
// separated; nil when the operation names no paths fluxgit can know), or
// nil for no hint. It must not block for long: it runs after the gateway
// answered and before the agent gets the result.
type OtherAgentsFunc func(ctx context.Context, repoPath string, proposalPaths []string) json.RawMessage

// callerKey carries the calling MCP client's name to an OtherAgentsFunc.
type callerKey struct{}

// CallerName is the MCP client name of the call an OtherAgentsFunc runs
// for ("" when the client gave none), so the hint can leave the caller's
// own agent out.
func CallerName(ctx context.Context) string {
	s, _ := ctx.Value(callerKey{}).(string)
	return s
}

// Provider serves the handshake tools. The zero value is ready to use; the
// fields are seams for the host build and for tests.
type Provider struct {
	// Timeout bounds each gateway request; zero means
	// fluxbridge.RequestTimeout.
	Timeout time.Duration
	// Address resolves the gateway at call time; nil means
	// fluxbridge.FromEnv, so a changed environment takes effect on the next
	// call.
	Address func() (fluxbridge.Address, bool)
	// ServerPID is the fluxgit server process named as the proposer
	// (operation.ProposerHeader); zero means the parent process (built-in
	// providers run as children of the host, the process the shift roster
	// records as its workers' agent).
	ServerPID int
	// OtherAgents, when set, adds the otherAgents hint to every preview
	// result (Fields["otherAgents"]). It never changes the outcome.
	OtherAgents OtherAgentsFunc

	// now and newID are replaced by tests that assert exact bodies.
	now   func() time.Time
	newID func() string
}

// New returns a Provider that reads the gateway address from the
// environment at each call.
func New() *Provider { return &Provider{} }

var (
	_ sdk.Provider       = (*Provider)(nil)
	_ sdk.Describer      = (*Provider)(nil)
	_ sdk.ResourceReader = (*Provider)(nil)
)

// Tools lists the tool names this provider serves, sorted.
func Tools() []string {
	names := []string{ToolStatus, ToolCancel}
	for _, op := range Operations {
		names = append(names, previewPrefix+op)
	}
	sort.Strings(names)
	return names
}

// Describe lists the served tools, so the host refuses to start against a
// spec that gives this provider a tool it does not serve.
func (p *Provider) Describe() sdk.Description {
	return sdk.Description{Tools: Tools(), Resources: Resources()}
}

// CallTool serves one tool. Gateway outcomes, failures included, are tool
// results; arguments inconsistent with the tool's input schema are an
// sdk.InvalidArgument refusal, returned before any request is made.
func (p *Provider) CallTool(ctx context.Context, call *sdk.Call) (*sdk.Result, error) {
	if call == nil {
		return nil, errors.New("handshake: nil call")
	}
	switch call.Tool {
	case ToolStatus:
		return p.status(ctx, call)
	case ToolCancel:
		return p.cancel(ctx, call)
	}
	if op, ok := strings.CutPrefix(call.Tool, previewPrefix); ok && isOperation(op) {
		return p.preview(ctx, call, op)
	}
	return nil, sdk.InvalidArgument("unknown tool " + call.Tool + "; the handshake provider serves " + strings.Join(Tools(), ", "))
}

func isOperation(op string) bool { return operation.Known(op) }

func (p *Provider) timeout() time.Duration {
	if p.Timeout > 0 {
		return p.Timeout
	}
	return fluxbridge.RequestTimeout
}

func (p *Provider) address() (fluxbridge.Address, bool) {
	if p.Address != nil {
		return p.Address()
	}
	return fluxbridge.FromEnv()
}

func (p *Provider) serverPID() int {
	if p.ServerPID > 0 {
		return p.ServerPID
	}
	return os.Getppid()
}

func (p *Provider) clock() time.Time {
	if p.now != nil {
		return p.now()
	}
	return time.Now()
}

func (p *Provider) id() string {
	if p.newID != nil {
		return p.newID()
	}
	return newUUID()
}
