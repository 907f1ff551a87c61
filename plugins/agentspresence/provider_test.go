package agentspresence

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fluxgit/fluxgit/internal/agentdetect"
	"github.com/fluxgit/fluxgit/internal/rundir"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// fixed is a source returning the same findings every time.
type fixed []agentdetect.Finding

func (fixed) Name() string { return "fixed" }
func (f fixed) Scan(context.Context, agentdetect.Query) ([]agentdetect.Finding, error) {
	return append([]agentdetect.Finding(nil), f...), nil
}

func gitRepo(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "init"}} {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

func pid(n int) *int { return &n }

func call(t *testing.T, p *Provider, repo, client string) *sdk.Result {
	t.Helper()
	args, _ := json.Marshal(map[string]string{"repoPath": repo})
	res, err := p.CallTool(context.Background(), &sdk.Call{Tool: Tool, Arguments: args, Meta: sdk.Meta{ClientName: client}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestPresenceCall(t *testing.T) {
	repo := gitRepo(t)
	sub := filepath.Join(repo, "sub")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	anc := agentdetect.Ancestors(Host())
	if len(anc) == 0 {
		t.Skip("no process ancestry on this system")
	}
	findings := fixed{
		{Agent: "codex", State: agentdetect.StateWorking, Sources: []string{"process"}, PID: pid(999999), Files: []string{"a.go"}, Confidence: "argv"},
		{Agent: "claude-code", State: agentdetect.StateOpen, Sources: []string{"process"}, PID: pid(anc[0]), Confidence: "cwd"},
		{Agent: "gemini-cli", State: agentdetect.StateOpen, Sources: []string{"session"}, SessionID: "s1", Confidence: "registry"},
	}
	tests := []struct {
		name     string
		repo     string
		client   string
		disabled bool
		code     int
		likely   []bool // codex, claude-code, gemini-cli
		same     []bool
		agent    any
	}{
		{"claude code asks: its ancestor process is likely the caller", repo, "claude-code", false, 0, []bool{false, true, false}, []bool{false, true, false}, "claude-code"},
		{"codex asks from a subdirectory: a codex process that is no ancestor is not", sub, "codex-mcp-client", false, 0, []bool{false, false, false}, []bool{true, false, false}, "codex"},
		{"gemini asks: a finding without pid is likely the caller", repo, "gemini", false, 0, []bool{false, false, true}, []bool{false, false, true}, "gemini-cli"},
		{"anonymous", repo, "", false, 0, []bool{false, false, false}, []bool{false, false, false}, nil},
		{"not a repository", filepath.Dir(repo), "c", false, CodeGitFailed, nil, nil, nil},
		{"disabled", repo, "c", true, CodeDetectionDisabled, nil, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &Provider{Detector: Detector{Sources: []agentdetect.Source{findings}}, Disabled: func() bool { return tt.disabled }}
			res := call(t, p, tt.repo, tt.client)
			if tt.code != 0 {
				if res.Error == nil || res.Error.Code != tt.code || res.Source != Source {
					t.Fatalf("result %+v, want error %d", res, tt.code)
				}
				if tt.code == CodeDetectionDisabled && !strings.Contains(string(res.Error.Data), EnvDetectionDisabled) {
					t.Fatalf("10011 data %s does not name the variable", res.Error.Data)
				}
				return
			}
			var d Data
			if err := json.Unmarshal(res.Data, &d); err != nil {
				t.Fatal(err)
			}
			if d.RepoPath != repo || d.AgentCount != 3 || len(d.Agents) != 3 || d.Privacy == "" || d.Guidance == "" || !d.Caller.OwnMCPPresenceExcluded {
				t.Fatalf("data %+v", d)
			}
			if (d.Caller.Agent == nil) != (tt.agent == nil) || (d.Caller.Agent != nil && *d.Caller.Agent != tt.agent) {
				t.Fatalf("caller %+v, want agent %v", d.Caller, tt.agent)
			}
			byKey := map[string]Agent{}
			for _, a := range d.Agents {
				byKey[a.Agent] = a
				if a.Files == nil {
					t.Fatalf("agent %s has files null, want []", a.Agent)
				}
			}
			for i, k := range []string{"codex", "claude-code", "gemini-cli"} {
				a := byKey[k]
				if a.LikelyCaller != tt.likely[i] || a.SameAgentAsCaller != tt.same[i] {
					t.Errorf("%s: likelyCaller %v sameAgentAsCaller %v, want %v %v", k, a.LikelyCaller, a.SameAgentAsCaller, tt.likely[i], tt.same[i])
				}
			}
		})
	}
}

// Ancestors(Host()) lists the host's parents, never the host itself.
func TestHostAncestors(t *testing.T) {
	if slices.Contains(agentdetect.Ancestors(Host()), Host()) {
		t.Fatal("a process is its own ancestor")
	}
}

func TestLocateWorktrees(t *testing.T) {
	repo := gitRepo(t)
	wt := filepath.Join(filepath.Dir(repo), filepath.Base(repo)+"-wt")
	if out, err := exec.Command("git", "-C", repo, "worktree", "add", "-q", "-b", "side", wt).CombinedOutput(); err != nil {
		t.Fatalf("worktree add: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = os.RemoveAll(wt) })
	for _, from := range []string{repo, wt} {
		top, wts, err := Locate(context.Background(), from)
		if err != nil || top != from || len(wts) != 2 || wts[0] != from || !slices.Contains(wts, repo) || !slices.Contains(wts, wt) {
			t.Fatalf("Locate(%s) = %s, %v, %v", from, top, wts, err)
		}
	}
}

func TestOtherAgentsHint(t *testing.T) {
	repo := gitRepo(t)
	findings := fixed{
		{Agent: "codex", State: "working", Sources: []string{"process"}, PID: pid(999999), Files: []string{"src/a.go", "docs"}, Confidence: "argv"},
		{Agent: "shift-worker", State: "open", Sources: []string{"roster"}, Files: []string{"README.md"}, Confidence: "declared"},
		{Agent: "claude-code", State: "open", Sources: []string{"session"}, Files: []string{"src/a.go"}, Confidence: "registry"},
	}
	d := &Detector{Sources: []agentdetect.Source{findings}, Now: time.Now}
	tests := []struct {
		name        string
		client      string
		paths       []string
		disabled    bool
		agents      int
		overlapping int
		omitted     int
		codexPaths  []string // nil means null
	}{
		{"discard of a file codex touched", "claude-code", []string{"src/a.go"}, false, 2, 1, 1, []string{"src/a.go"}},
		{"a directory codex declared", "claude-code", []string{"docs/x.md", "other"}, false, 2, 1, 1, []string{"docs/x.md"}},
		{"the whole repository", "", []string{"."}, false, 3, 3, 0, []string{"src/a.go", "docs"}},
		{"paths unknown", "claude-code", nil, false, 2, 0, 1, nil},
		{"disabled", "claude-code", []string{"src/a.go"}, true, 0, 0, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := d.OtherAgents(context.Background(), tt.client, repo, tt.paths, tt.disabled)
			if tt.disabled {
				if raw != nil {
					t.Fatalf("hint %s while disabled", raw)
				}
				return
			}
			var h struct {
				Informational         bool `json:"informational"`
				AgentCount            int  `json:"agentCount"`
				OverlappingAgentCount int  `json:"overlappingAgentCount"`
				ProposalPathsKnown    bool `json:"proposalPathsKnown"`
				OmittedLikelyCaller   int  `json:"omittedLikelyCaller"`
				Agents                []struct {
					Agent            string          `json:"agent"`
					OverlappingPaths json.RawMessage `json:"overlappingPaths"`
				} `json:"agents"`
			}
			if err := json.Unmarshal(raw, &h); err != nil {
				t.Fatal(err)
			}
			if !h.Informational || h.AgentCount != tt.agents || len(h.Agents) != tt.agents || h.OverlappingAgentCount != tt.overlapping ||
				h.OmittedLikelyCaller != tt.omitted || h.ProposalPathsKnown != (tt.paths != nil) {
				t.Fatalf("hint %s", raw)
			}
			for _, a := range h.Agents {
				if a.Agent != "codex" {
					continue
				}
				want := "null"
				if tt.codexPaths != nil {
					b, _ := json.Marshal(tt.codexPaths)
					want = string(b)
				}
				if string(a.OverlappingPaths) != want {
					t.Fatalf("codex overlappingPaths %s, want %s", a.OverlappingPaths, want)
				}
			}
		})
	}
}

// TestCallerOwnDeadPresenceRecord reads real presence records (the
// format host/mcp writes) of the caller's own agent whose server is gone:
// agents.presence reports it with pid null and likelyCaller true (the
// reference's rule for a same-agent finding without a pid), and the
// proposal hint leaves it out and counts it in omittedLikelyCaller
// instead of reporting it as another agent. Before the fix the dead
// server's pid was reported, so likelyCaller was false and the hint
// counted the caller's own agent.
func TestCallerOwnDeadPresenceRecord(t *testing.T) {
	repo := gitRepo(t)
	run, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("FLUXGIT_RUN_DIR", run)
	dir := rundir.PresenceDir(run)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	write := func(pid int, name string) {
		b, _ := json.Marshal(map[string]any{"schemaVersion": 1, "pid": pid,
			"client": map[string]any{"name": name, "version": "1.0"},
			"repos":  []map[string]any{{"repoPath": repo, "lastCallMs": now.Add(-5 * time.Minute).UnixMilli(), "lastTool": "repo.status"}}})
		if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(pid)+".json"), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Pids far above any pid_max: no process has them.
	write(99999991, "claude-code")
	write(99999992, "codex-mcp-client")
	p := &Provider{Detector: Detector{Sources: []agentdetect.Source{agentdetect.PresenceSource{}}}, Disabled: func() bool { return false }}

	res := call(t, p, repo, "claude-code")
	if res.Error != nil {
		t.Fatalf("agents.presence: %+v", res.Error)
	}
	var d Data
	if err := json.Unmarshal(res.Data, &d); err != nil {
		t.Fatal(err)
	}
	byAgent := map[string]Agent{}
	for _, a := range d.Agents {
		byAgent[a.Agent] = a
	}
	own, other := byAgent["claude-code"], byAgent["codex"]
	if len(d.Agents) != 2 || own.Agent == "" || other.Agent == "" {
		t.Fatalf("agents %+v", d.Agents)
	}
	if own.PID != nil || other.PID != nil {
		t.Fatalf("a dead server's pid is reported: own %v, other %v", own.PID, other.PID)
	}
	if !own.SameAgentAsCaller || !own.LikelyCaller || other.SameAgentAsCaller || other.LikelyCaller {
		t.Fatalf("caller flags: own %+v, other %+v", own, other)
	}

	d2 := &Detector{Sources: []agentdetect.Source{agentdetect.PresenceSource{}}}
	var h Hint
	if err := json.Unmarshal(d2.OtherAgents(context.Background(), "claude-code", repo, []string{"a.txt"}, false), &h); err != nil {
		t.Fatal(err)
	}
	if h.AgentCount != 1 || len(h.Agents) != 1 || h.Agents[0].Agent.Agent != "codex" || h.OmittedLikelyCaller != 1 {
		t.Fatalf("hint counts the caller's own agent: %+v", h)
	}
}
