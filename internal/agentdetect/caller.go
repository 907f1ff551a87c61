package agentdetect

import (
	"slices"
	"strings"
	"unicode"
)

// FallbackClientAgent is the detector id of an MCP client that gave no
// name.
const FallbackClientAgent = "mcp-client"

// maxClientAgentLen bounds the sanitized id of an unknown client.
const maxClientAgentLen = 64

// clientTokens maps the leading token of an MCP client name (lower case)
// to a detector id, so a presence record written for "codex-mcp-client"
// merges with the codex process.
var clientTokens = map[string]string{
	"claude":   "claude-code",
	"codex":    "codex",
	"gemini":   "gemini-cli",
	"opencode": "opencode",
	"cursor":   "cursor",
	"copilot":  "copilot-cli",
	"github":   "copilot-cli",
	"cline":    "cline",
	"roo":      "roo",
	"aider":    "aider",
	"windsurf": "windsurf",
	"kilocode": "kilo",
	"kilo":     "kilo",
	"visual":   "vscode", // "Visual Studio Code"
	"vscode":   "vscode",
}

// CallerAgent maps an MCP client name to the detector id findings use: by
// its leading token ("codex-mcp-client" → codex, "gemini" → gemini-cli,
// "Visual Studio Code" → vscode, "kilocode" → kilo, "claude-code" →
// claude-code). Claude Desktop ("claude-ai") is not Claude Code and keeps
// its own name. An unknown name keeps its sanitized self (lower case,
// [a-z0-9._-], at most 64 characters); an empty one is "mcp-client".
func CallerAgent(clientName string) string {
	s := sanitizeClientName(clientName)
	if s == "" {
		return FallbackClientAgent
	}
	if s == "claude-ai" || strings.HasPrefix(s, "claude-ai-") {
		return s
	}
	tok := s
	if i := strings.IndexAny(s, "-_."); i > 0 {
		tok = s[:i]
	}
	if id, ok := clientTokens[tok]; ok {
		return id
	}
	return s
}

// knownAgent reports whether id is a detector id CallerAgent maps to
// rather than a sanitized stranger.
func knownAgent(id string) bool {
	for _, v := range clientTokens {
		if v == id {
			return true
		}
	}
	return false
}

// sanitizeClientName lower-cases a client name and turns every run of
// characters outside [a-z0-9._] into one '-', so it is safe to report
// and to compare.
func sanitizeClientName(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(strings.TrimSpace(name)) {
		switch {
		case r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.' || r == '_'):
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= maxClientAgentLen {
			break
		}
	}
	return strings.Trim(b.String(), "-")
}

// SameAgentAsCaller reports whether a finding is of the caller's own
// agent kind (agents.presence sameAgentAsCaller).
func SameAgentAsCaller(f Finding, callerAgent string) bool {
	return callerAgent != "" && f.Agent == callerAgent
}

// LikelyCaller reports whether a finding is probably the caller itself
// (agents.presence likelyCaller): the same agent, and either no pid or a pid among
// this process's ancestors (Ancestors(os.Getpid())). The otherAgents hint
// omits such findings.
func LikelyCaller(f Finding, callerAgent string, ancestors []int) bool {
	if !SameAgentAsCaller(f, callerAgent) {
		return false
	}
	return f.PID == nil || slices.Contains(ancestors, *f.PID)
}
