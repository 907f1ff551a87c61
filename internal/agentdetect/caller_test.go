package agentdetect

import (
	"strings"
	"testing"
)

func TestCallerAgent(t *testing.T) {
	tests := []struct{ name, want string }{
		{"codex-mcp-client", "codex"},
		{"gemini", "gemini-cli"},
		{"gemini-cli-mcp-client", "gemini-cli"},
		{"Visual Studio Code", "vscode"},
		{"kilocode", "kilo"},
		{"claude-code", "claude-code"},
		{"Claude Code", "claude-code"},
		{"claude-ai", "claude-ai"},
		{"cursor-vscode", "cursor"},
		{"opencode", "opencode"},
		{"Windsurf", "windsurf"},
		{"Roo Code", "roo"},
		{"", "mcp-client"},
		{"   \t", "mcp-client"},
		{"\x00\x01", "mcp-client"},
		{"Zed Editor 0.1", "zed-editor-0.1"},
		{"codexical", "codexical"},
		{strings.Repeat("x", 100), strings.Repeat("x", 64)},
		{"a/b\\c<script>", "a-b-c-script"},
	}
	for _, tt := range tests {
		if got := CallerAgent(tt.name); got != tt.want {
			t.Errorf("CallerAgent(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestLikelyCaller(t *testing.T) {
	ancestors := []int{100, 50, 1}
	tests := []struct {
		name   string
		f      Finding
		caller string
		same   bool
		likely bool
	}{
		{"same agent, ancestor pid", Finding{Agent: "codex", PID: intp(100)}, "codex", true, true},
		{"same agent, no pid", Finding{Agent: "codex"}, "codex", true, true},
		{"same agent, unrelated pid", Finding{Agent: "codex", PID: intp(7)}, "codex", true, false},
		{"other agent, ancestor pid", Finding{Agent: "aider", PID: intp(100)}, "codex", false, false},
		{"unknown caller", Finding{Agent: "codex"}, "", false, false},
	}
	for _, tt := range tests {
		if got := SameAgentAsCaller(tt.f, tt.caller); got != tt.same {
			t.Errorf("%s: SameAgentAsCaller = %v", tt.name, got)
		}
		if got := LikelyCaller(tt.f, tt.caller, ancestors); got != tt.likely {
			t.Errorf("%s: LikelyCaller = %v", tt.name, got)
		}
	}
}
