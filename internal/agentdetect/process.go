package agentdetect

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// MaxAncestors bounds Ancestors, and so the likelyCaller check.
const MaxAncestors = 8

// pidReuseSlack absorbs the coarse clock a process start time is derived
// from (whole-second boot time plus clock ticks).
const pidReuseSlack = 2 * time.Second

// agentMarkers classify a process by the basename of its executable or
// script (argv[0], or argv[1] behind an interpreter) and by the package
// path an npm- or pip-installed agent runs from.
var agentMarkers = []struct {
	agent    string
	names    []string
	packages []string
}{
	{"claude-code", []string{"claude"}, []string{"@anthropic-ai/claude-code"}},
	{"codex", []string{"codex"}, []string{"@openai/codex"}},
	{"gemini-cli", []string{"gemini"}, []string{"@google/gemini-cli"}},
	{"opencode", []string{"opencode"}, []string{"opencode-ai/"}},
	{"aider", []string{"aider"}, []string{"aider/main.py"}},
	{"copilot-cli", []string{"copilot"}, []string{"@github/copilot"}},
	{"cursor", []string{"cursor-agent"}, nil},
	{"cline", []string{"cline"}, []string{"@cline/cli"}},
}

// interpreters run an agent's script: the agent is then named by argv[1]
// (or by the process title the script set, visible in comm).
var interpreters = map[string]bool{
	"node": true, "nodejs": true, "bun": true, "deno": true,
	"python": true, "python3": true,
}

// classifyArgs returns the agent a command line belongs to, or "". Only
// argv[0], and argv[1] behind an interpreter, are looked at.
func classifyArgs(argv []string) string {
	if len(argv) == 0 {
		return ""
	}
	cands := []string{argv[0]}
	// argv[1] names the agent only behind an interpreter: "vim claude"
	// is an editor, "node .../claude-code/cli.js" is the agent.
	if len(argv) > 1 && isInterpreter(argv[0]) && !strings.HasPrefix(argv[1], "-") {
		cands = append(cands, argv[1])
	}
	for _, c := range cands {
		if a := classifyName(baseName(c)); a != "" {
			return a
		}
		for _, m := range agentMarkers {
			for _, pkg := range m.packages {
				if strings.Contains(filepath.ToSlash(c), pkg) {
					return m.agent
				}
			}
		}
	}
	return ""
}

// classifyName maps an executable basename (argv[0], exe, comm) to an
// agent, tolerating a Windows ".exe" and a versioned Python ("python3.12").
func classifyName(name string) string {
	name = strings.TrimSuffix(strings.ToLower(name), ".exe")
	for _, m := range agentMarkers {
		for _, n := range m.names {
			if name == n {
				return m.agent
			}
		}
	}
	return ""
}

func baseName(p string) string {
	p = strings.ReplaceAll(p, `\`, "/")
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		p = p[i+1:]
	}
	return p
}

func isInterpreter(argv0 string) bool {
	b := strings.ToLower(baseName(argv0))
	if interpreters[b] {
		return true
	}
	return strings.HasPrefix(b, "python")
}

// sessionIDPattern accepts what agents use as session ids (UUIDs and
// similar): nothing that could be a prompt or a secret of another shape.
var sessionIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{7,127}$`)

// argvSession returns the session id a command line resumes ("--resume
// <id>", "-r <id>", "--session-id <id>", "--session <id>", "resume <id>"
// for codex), or "". This is the only value taken from the arguments; the
// command line itself is never kept, since it can carry tokens.
func argvSession(argv []string) string {
	for i := 1; i < len(argv) && i < 64; i++ {
		a := argv[i]
		var v string
		switch {
		case a == "--resume" || a == "-r" || a == "--session-id" || a == "--session" || a == "resume":
			if i+1 < len(argv) {
				v = argv[i+1]
			}
		case strings.HasPrefix(a, "--resume="), strings.HasPrefix(a, "--session-id="), strings.HasPrefix(a, "--session="):
			v = a[strings.IndexByte(a, '=')+1:]
		}
		if v != "" && sessionIDPattern.MatchString(v) {
			return v
		}
	}
	return ""
}

// argvNamesRepo reports whether an argument is a directory option naming
// the repository ("--cd /repo", "-C /repo", "--cwd=/repo"...): the
// arguments tie the process to the repository even when its cwd is
// elsewhere or unreadable.
func argvNamesRepo(argv []string, q Query) bool {
	for i := 1; i < len(argv) && i < 64; i++ {
		a := argv[i]
		var v string
		switch {
		case a == "--cd" || a == "-C" || a == "--cwd" || a == "--workspace" || a == "--dir" || a == "--directory":
			if i+1 < len(argv) {
				v = argv[i+1]
			}
		case strings.HasPrefix(a, "--cd="), strings.HasPrefix(a, "--cwd="), strings.HasPrefix(a, "--workspace="), strings.HasPrefix(a, "--dir="), strings.HasPrefix(a, "--directory="):
			v = a[strings.IndexByte(a, '=')+1:]
		}
		if v != "" && filepath.IsAbs(v) && InRepo(v, q) {
			return true
		}
	}
	return false
}

// procInfo is what one pass over the process table keeps of a candidate:
// never its command line or environment.
type procInfo struct {
	pid     int
	agent   string
	start   time.Time
	session string
	argvTie bool
	cwd     string
}

// ProcessSource finds agent processes whose working directory is inside
// the repository or one of its worktrees (Linux /proc; other systems
// report nothing and leave detection to the other sources).
type ProcessSource struct{}

// Name implements Source.
func (ProcessSource) Name() string { return SourceProcess }

// Scan implements Source. It walks the process table once, classifies by
// command line first (cheap), and only for agent candidates reads the
// start time and resolves the working directory.
func (ProcessSource) Scan(ctx context.Context, q Query) ([]Finding, error) {
	procs, err := scanProcesses(ctx, q)
	if err != nil {
		return nil, err
	}
	var out []Finding
	for _, p := range procs {
		conf := ConfidenceCwd
		if p.session != "" || p.argvTie {
			conf = ConfidenceArgv
		}
		pid := p.pid
		out = append(out, Finding{
			Agent:      p.agent,
			State:      StateOpen,
			Sources:    []string{SourceProcess},
			PID:        &pid,
			Confidence: conf,
			SessionID:  p.session,
			StartTime:  p.start,
		})
	}
	return out, nil
}

// AliveSince reports whether pid is a live process that already existed
// at t (its start time is not after t, within the clock's slack). A record
// written at t by a pid that now belongs to a younger process is stale:
// the pid was reused. On systems without a process table it returns
// false.
func AliveSince(pid int, t time.Time) bool {
	start, ok := ProcessStartTime(pid)
	if !ok {
		return false
	}
	return !start.After(t.Add(pidReuseSlack))
}
