// Package agentdetect finds the other coding agents working in a
// repository, from local, read-only signals: processes, each agent's own
// session store, editors with the repository open, fluxgit and FluxGit
// presence records, and the shift roster's declared check-ins. It is a
// library shared by the agents-presence provider (agents.presence) and the
// handshake provider (the otherAgents hint on proposals); neither calls
// the other.
//
// Every source fails soft: a store it cannot read, a process it may not
// inspect, a file that is malformed, truncated, huge or locked costs that
// source's findings, never the call. Only metadata is returned (agent,
// pid, branch, last tool name, repo-relative file paths, timestamps):
// never prompt or output text, never tokens, never another process's
// environment.
package agentdetect

import (
	"context"
	"time"
)

// Source kinds, as agents.presence reports them in Finding.Sources.
const (
	SourceProcess   = "process"
	SourceSession   = "session"
	SourceRepoTrace = "repo-trace"
	SourceIDE       = "ide"
	SourceMCP       = "mcp"
	SourceRoster    = "roster"
)

// States of a finding.
const (
	StateWorking = "working" // activity within the last 2 minutes, or a live busy process
	StateOpen    = "open"    // a live process or session without recent activity
	StateRecent  = "recent"  // no live process; activity within the freshness window
)

// Confidence of how a finding was tied to the repository, strongest first.
const (
	ConfidenceRegistry = "registry" // the agent's own live registry names the repository
	ConfidenceArgv     = "argv"     // the process's arguments name the session or repository
	ConfidenceCwd      = "cwd"      // a process or session whose working directory is inside
	ConfidenceDeclared = "declared" // a shift roster check-in (intent, not a guess)
)

// Limits of a report.
const (
	MaxAgents        = 32
	MaxFilesPerAgent = 8
	// Freshness is how old the last activity of a finding without a live
	// process may be.
	Freshness = 15 * time.Minute
	// WorkingWindow: activity this recent makes a finding "working".
	WorkingWindow = 2 * time.Minute
)

// Query is what every source is asked.
type Query struct {
	// Repo is the canonical work tree top level; Worktrees are the
	// canonical top levels of every worktree sharing its git common
	// directory (Repo included). A location is "in the repository" when
	// it is inside any of them.
	Repo      string
	Worktrees []string
	// Home is the user's home directory; stores are found below it (and
	// through the agents' own variables, read from Env).
	Home string
	// Env reads this process's environment (never another's).
	Env func(string) string
	// RunDir is fluxgit's run directory (presence records live in
	// <RunDir>/presence/mcp); FluxGitPresenceDirs are further directories
	// of FluxGit presence records.
	RunDir              string
	FluxGitPresenceDirs []string
	// SelfPID is this process; its own presence record is skipped.
	SelfPID int
	// Now is the clock every freshness rule uses.
	Now time.Time

	// canon holds the resolved roots, computed once per detection so
	// that each path check resolves only the path itself.
	canon []string
}

// MCPClient names the MCP client a presence record was written for.
type MCPClient struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// Finding is one agent seen by one or more sources. Pointer fields are
// null in JSON when unknown.
type Finding struct {
	// Agent is the detector id: claude-code, codex, gemini-cli, opencode,
	// cursor, copilot-cli, cline, roo, aider, windsurf, vscode, kilo, or a
	// sanitized MCP client name, or "mcp-client".
	Agent string `json:"agent"`
	// State is working, open or recent.
	State string `json:"state"`
	// Sources lists the kinds that saw it, sorted.
	Sources []string `json:"sources"`
	// PID of the agent's process, when one was matched.
	PID *int `json:"pid"`
	// LastActivityMs is the newest activity timestamp (Unix ms).
	LastActivityMs *int64 `json:"lastActivityMs"`
	// Branch the agent works on, when a store records it.
	Branch *string `json:"branch"`
	// LastTool is the name of the agent's last tool call (never its
	// arguments).
	LastTool *string `json:"lastTool"`
	// Files are repo-relative paths the agent touched or declared, newest
	// first, at most MaxFilesPerAgent.
	Files []string `json:"files"`
	// MCPClient is set for findings from presence records.
	MCPClient *MCPClient `json:"mcpClient"`
	// Confidence says how the finding was tied to the repository.
	Confidence string `json:"confidence"`
	// Leases are a roster check-in's file leases in one short line
	// (LeaseLine), absent when it holds none.
	Leases string `json:"leases,omitempty"`
	// SessionID groups findings of one agent session across sources (not
	// reported; used for merging).
	SessionID string `json:"-"`
	// StartTime guards against pid reuse when merging (not reported).
	StartTime time.Time `json:"-"`
	// Ancestry holds the ancestor pids (nearest first, at most 8) of a
	// finding whose PID is a helper of the agent rather than the agent
	// itself (a fluxgit sidecar from a presence record), so it merges with
	// the agent's own process finding (not reported).
	Ancestry []int `json:"-"`
	// RosterWorkerID is the shift roster worker id of a declared finding;
	// two check-ins are never merged into one agent (not reported).
	RosterWorkerID string `json:"-"`
}

// Source is one independent signal. Scan returns what it found; an error
// marks the source as failed (the report says which) without affecting
// the others. Scan must honour ctx (the report's time budget).
type Source interface {
	Name() string
	Scan(ctx context.Context, q Query) ([]Finding, error)
}
