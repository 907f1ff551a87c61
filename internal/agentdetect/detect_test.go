package agentdetect

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// summary renders a report's agents compactly for table comparisons.
func summary(r Report) []string {
	var out []string
	for _, f := range r.Agents {
		s := f.Agent + " " + f.State + " " + f.Confidence + " [" + strings.Join(f.Sources, ",") + "]"
		if f.PID != nil {
			s += fmt.Sprintf(" pid=%d", *f.PID)
		}
		if len(f.Files) > 0 {
			s += " files=" + strings.Join(f.Files, ",")
		}
		if f.Branch != nil {
			s += " branch=" + *f.Branch
		}
		if f.LastTool != nil {
			s += " tool=" + *f.LastTool
		}
		out = append(out, s)
	}
	return out
}

func TestDetectMerge(t *testing.T) {
	repo := newRepo(t, "repo")
	now := time.Now()
	q := Query{Repo: repo, Now: now}
	start := now.Add(-time.Hour)
	tests := []struct {
		name    string
		sources []Source
		want    []string
	}{
		{
			"process, registry and transcript of one session merge",
			[]Source{
				staticSource{name: "process", findings: []Finding{{Agent: "claude-code", State: StateOpen, Sources: []string{SourceProcess}, PID: intp(10), Confidence: ConfidenceCwd, StartTime: start}}},
				staticSource{name: "claude-sessions", findings: []Finding{{Agent: "claude-code", State: StateOpen, Sources: []string{SourceSession}, PID: intp(10), SessionID: "s1", Confidence: ConfidenceRegistry, LastActivityMs: msp(now.Add(-10 * time.Minute)), StartTime: start}}},
				staticSource{name: "claude-transcripts", findings: []Finding{{Agent: "claude-code", State: StateRecent, Sources: []string{SourceSession}, SessionID: "s1", Confidence: ConfidenceCwd, LastActivityMs: msp(now.Add(-time.Minute)), Branch: strp("feat"), LastTool: strp("Edit"), Files: []string{"a.go", repo + "/b.go", "../escape", "/etc/passwd"}}}},
			},
			[]string{"claude-code working registry [process,session] pid=10 files=a.go,b.go branch=feat tool=Edit"},
		},
		{
			"same pid with another start time is a reused pid",
			[]Source{
				staticSource{name: "a", findings: []Finding{{Agent: "codex", State: StateOpen, Sources: []string{SourceProcess}, PID: intp(20), Confidence: ConfidenceCwd, StartTime: start}}},
				staticSource{name: "b", findings: []Finding{{Agent: "codex", State: StateOpen, Sources: []string{SourceSession}, PID: intp(20), Confidence: ConfidenceRegistry, StartTime: start.Add(time.Minute)}}},
			},
			[]string{"codex open registry [session] pid=20", "codex open cwd [process] pid=20"},
		},
		{
			"two processes of one agent stay two; a pid-less finding joins one",
			[]Source{
				staticSource{name: "p", findings: []Finding{
					{Agent: "codex", State: StateOpen, PID: intp(31), Confidence: ConfidenceCwd},
					{Agent: "codex", State: StateOpen, PID: intp(32), Confidence: ConfidenceCwd},
				}},
				staticSource{name: "session", findings: []Finding{{Agent: "codex", State: StateRecent, Confidence: ConfidenceCwd, LastActivityMs: msp(now.Add(-5 * time.Minute))}}},
			},
			[]string{"codex open cwd [p,session] pid=31", "codex open cwd [p] pid=32"},
		},
		{
			"different sessions without pids stay apart",
			[]Source{staticSource{name: "session", findings: []Finding{
				{Agent: "gemini-cli", State: StateRecent, SessionID: "a", Confidence: ConfidenceCwd, LastActivityMs: msp(now.Add(-3 * time.Minute))},
				{Agent: "gemini-cli", State: StateRecent, SessionID: "b", Confidence: ConfidenceCwd, LastActivityMs: msp(now.Add(-4 * time.Minute))},
			}}},
			[]string{"gemini-cli recent cwd [session]", "gemini-cli recent cwd [session]"},
		},
		{
			"a helper pid joins its agent's process by ancestry",
			[]Source{
				staticSource{name: "process", findings: []Finding{{Agent: "codex", State: StateOpen, Sources: []string{SourceProcess}, PID: intp(40), Confidence: ConfidenceCwd}}},
				staticSource{name: "mcp", findings: []Finding{{Agent: "codex", State: StateOpen, Sources: []string{SourceMCP}, PID: intp(41), Ancestry: []int{40, 1}, Confidence: ConfidenceRegistry, LastActivityMs: msp(now.Add(-10 * time.Minute)), LastTool: strp("repo.status")}}},
			},
			[]string{"codex open registry [mcp,process] pid=40 tool=repo.status"},
		},
		{
			"two helpers of one agent join it",
			[]Source{
				staticSource{name: "mcp", findings: []Finding{
					{Agent: "codex", State: StateOpen, Sources: []string{SourceMCP}, PID: intp(43), Ancestry: []int{40, 1}, Confidence: ConfidenceRegistry},
					{Agent: "codex", State: StateOpen, Sources: []string{SourceMCP}, PID: intp(42), Ancestry: []int{40, 1}, Confidence: ConfidenceRegistry},
					{Agent: "codex", State: StateOpen, Sources: []string{SourceMCP}, PID: intp(44), Ancestry: []int{39, 1}, Confidence: ConfidenceRegistry},
				}},
				staticSource{name: "process", findings: []Finding{{Agent: "codex", State: StateOpen, Sources: []string{SourceProcess}, PID: intp(40), Confidence: ConfidenceCwd}}},
			},
			[]string{"codex open registry [mcp,process] pid=40", "codex open registry [mcp] pid=44"},
		},
		{
			"roster check-ins stay separate unless labelled with a found agent",
			[]Source{
				staticSource{name: "process", findings: []Finding{{Agent: "codex", State: StateOpen, Sources: []string{SourceProcess}, PID: intp(50), Confidence: ConfidenceCwd}}},
				staticSource{name: "roster", findings: []Finding{
					{Agent: "codex", State: StateOpen, Sources: []string{SourceRoster}, Confidence: ConfidenceDeclared, RosterWorkerID: "AAAAAA", Files: []string{"x.go"}, LastActivityMs: msp(now.Add(-20 * time.Minute))},
					{Agent: RosterAgent, State: StateOpen, Sources: []string{SourceRoster}, Confidence: ConfidenceDeclared, RosterWorkerID: "BBBBBB", Files: []string{"y.go"}, LastActivityMs: msp(now.Add(-20 * time.Minute))},
					{Agent: RosterAgent, State: StateOpen, Sources: []string{SourceRoster}, Confidence: ConfidenceDeclared, RosterWorkerID: "CCCCCC", LastActivityMs: msp(now.Add(-30 * time.Minute))},
				}},
			},
			[]string{"codex open cwd [process,roster] pid=50 files=x.go", "shift-worker open declared [roster] files=y.go", "shift-worker open declared [roster]"},
		},
		{
			"stale and agentless findings are dropped; fresh activity is working",
			[]Source{staticSource{name: "s", findings: []Finding{
				{Agent: "aider", State: StateRecent, Confidence: ConfidenceCwd, LastActivityMs: msp(now.Add(-16 * time.Minute))},
				{Agent: "opencode", State: StateRecent, Confidence: ConfidenceCwd},
				{Agent: "", State: StateWorking, Confidence: ConfidenceCwd},
				{Agent: "cline", State: StateRecent, Confidence: ConfidenceCwd, LastActivityMs: msp(now.Add(-time.Minute))},
			}}},
			[]string{"cline working cwd [s]"},
		},
		{
			"ranking: state, then confidence, then newest",
			[]Source{staticSource{name: "s", findings: []Finding{
				{Agent: "a1", State: StateRecent, Confidence: ConfidenceRegistry, LastActivityMs: msp(now.Add(-5 * time.Minute))},
				{Agent: "a2", State: StateOpen, Confidence: ConfidenceCwd, PID: intp(2)},
				{Agent: "a3", State: StateOpen, Confidence: ConfidenceArgv, PID: intp(3)},
				{Agent: "a4", State: StateRecent, Confidence: ConfidenceRegistry, LastActivityMs: msp(now.Add(-4 * time.Minute))},
				{Agent: "a5", State: StateOpen, Confidence: ConfidenceCwd, PID: intp(5), LastActivityMs: msp(now.Add(-time.Minute))},
			}}},
			[]string{"a5 working cwd [s] pid=5", "a3 open argv [s] pid=3", "a2 open cwd [s] pid=2", "a4 recent registry [s]", "a1 recent registry [s]"},
		},
	}
	for _, tt := range tests {
		r := Detect(context.Background(), q, tt.sources)
		if got := summary(r); !slices.Equal(got, tt.want) {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
		// Which source answers first must not change the merge.
		rev := slices.Clone(tt.sources)
		slices.Reverse(rev)
		if got := summary(Detect(context.Background(), q, rev)); !slices.Equal(got, tt.want) {
			t.Errorf("%s, sources reversed:\n got %q\nwant %q", tt.name, got, tt.want)
		}
		if r.AgentCount != len(tt.want) || r.Truncated || len(r.Failed) != 0 {
			t.Errorf("%s: count %d truncated %v failed %v", tt.name, r.AgentCount, r.Truncated, r.Failed)
		}
	}
}

func TestDetectCaps(t *testing.T) {
	repo := newRepo(t, "repo")
	q := Query{Repo: repo, Now: time.Now()}
	var many []Finding
	for i := range 40 {
		many = append(many, Finding{Agent: "codex", State: StateOpen, PID: intp(100 + i), Confidence: ConfidenceCwd})
	}
	var files []string
	for i := range 12 {
		files = append(files, fmt.Sprintf("f%d.go", i))
	}
	many[0].Files = files
	r := Detect(context.Background(), q, []Source{staticSource{name: "s", findings: many}})
	if len(r.Agents) != MaxAgents || r.AgentCount != 40 || !r.Truncated {
		t.Fatalf("%d agents, count %d, truncated %v; want %d, 40, true", len(r.Agents), r.AgentCount, r.Truncated, MaxAgents)
	}
	if got := r.Agents[0].Files; !slices.Equal(got, files[:MaxFilesPerAgent]) {
		t.Fatalf("files %v, want the first %d", got, MaxFilesPerAgent)
	}
	r = Detect(context.Background(), q, []Source{staticSource{name: "s", findings: many[:MaxAgents]}})
	if len(r.Agents) != MaxAgents || r.Truncated {
		t.Fatalf("exactly %d agents reported truncated", MaxAgents)
	}
	r = Detect(context.Background(), q, nil)
	if r.Agents == nil || len(r.Agents) != 0 || r.AgentCount != 0 {
		t.Fatalf("empty detection: %+v", r)
	}
}

func TestDetectFailingSources(t *testing.T) {
	repo := newRepo(t, "repo")
	q := Query{Repo: repo, Now: time.Now()}
	block := make(chan struct{})
	t.Cleanup(func() { close(block) })
	good := Finding{Agent: "codex", State: StateOpen, PID: intp(7), Confidence: ConfidenceCwd}
	partial := Finding{Agent: "aider", State: StateOpen, PID: intp(8), Confidence: ConfidenceCwd}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	r := Detect(ctx, q, []Source{
		staticSource{name: "good", findings: []Finding{good}},
		staticSource{name: "partial", findings: []Finding{partial}, err: errors.New("one store unreadable")},
		staticSource{name: "panics", panics: true},
		staticSource{name: "hangs", block: block},
	})
	if got, want := summary(r), []string{"aider open cwd [partial] pid=8", "codex open cwd [good] pid=7"}; !slices.Equal(got, want) {
		t.Errorf("agents %q, want %q", got, want)
	}
	if want := []string{"hangs", "panics", "partial"}; !slices.Equal(r.Failed, want) {
		t.Errorf("failed %v, want %v", r.Failed, want)
	}
}

func TestDefaultSources(t *testing.T) {
	roster := func(context.Context, string) ([]RosterEntry, error) { return nil, nil }
	extra := staticSource{name: "extra"}
	tests := []struct {
		opts Options
		want []string
	}{
		{Options{}, []string{SourceProcess, SourceIDE, SourceMCP}},
		{Options{Roster: roster, Extra: []Source{extra}}, []string{SourceProcess, SourceIDE, SourceMCP, SourceRoster, "extra"}},
	}
	for _, tt := range tests {
		var got []string
		for _, s := range DefaultSources(tt.opts) {
			got = append(got, s.Name())
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("DefaultSources = %v, want %v", got, tt.want)
		}
	}
}

func TestRosterSource(t *testing.T) {
	repo := newRepo(t, "repo")
	wt := newRepo(t, "wt")
	now := time.Now()
	q := Query{Repo: repo, Worktrees: []string{repo, wt}, Now: now}
	asked := []string{}
	fn := func(_ context.Context, root string) ([]RosterEntry, error) {
		asked = append(asked, root)
		if root == wt {
			return []RosterEntry{
				{WorkerID: "abc123", Gist: "codex: parser", Files: []string{"p.go"}, CheckedInAt: now.Add(-time.Hour), UpdatedAt: now.Add(-time.Minute)},
				{WorkerID: "ZZZ999", Gist: "docs", Files: []string{wt + "/README.md", "/etc/passwd", "../up", "./dir/"}, CheckedInAt: now.Add(-time.Hour), UpdatedAt: now.Add(-time.Hour)},
			}, nil
		}
		return []RosterEntry{
			{WorkerID: "ABC123", Gist: "codex: parser", CheckedInAt: now.Add(-time.Hour), UpdatedAt: now.Add(-time.Minute)},
			{WorkerID: "QQQ111", Gist: "[Claude] whole repo", Files: []string{repo}, CheckedInAt: now.Add(-time.Hour)},
			{WorkerID: "CUR000", Gist: "cursor movement fix", CheckedInAt: now.Add(-time.Hour)},
		}, nil
	}
	fs, err := RosterSource(fn).Scan(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(asked, []string{repo, wt}) {
		t.Errorf("asked for %v, want the repository and its worktree", asked)
	}
	var got []string
	for _, f := range fs {
		got = append(got, fmt.Sprintf("%s %s %s %s %s [%s]", f.RosterWorkerID, f.Agent, f.State, f.Confidence, strings.Join(f.Sources, ","), strings.Join(f.Files, ",")))
	}
	want := []string{
		"ABC123 codex working declared roster []",
		"QQQ111 claude-code open declared roster [.]",
		"CUR000 shift-worker open declared roster []",
		"ZZZ999 shift-worker open declared roster [README.md,dir]",
	}
	if !slices.Equal(got, want) {
		t.Errorf("findings\n %q\nwant\n %q", got, want)
	}
	failing := func(context.Context, string) ([]RosterEntry, error) { return nil, errors.New("roster busy") }
	if _, err := RosterSource(failing).Scan(context.Background(), q); err == nil || !strings.Contains(err.Error(), "roster busy") {
		t.Errorf("a failing roster: %v", err)
	}
}
