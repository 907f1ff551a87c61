package agentdetect

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fluxgit/fluxgit/internal/rundir"
)

// writeRecord writes a presence record document as the host does
// and sets its modification time.
func writeRecord(t *testing.T, dir, name string, doc any, mtime time.Time) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	var b []byte
	switch d := doc.(type) {
	case string:
		b = []byte(d)
	default:
		var err error
		if b, err = json.Marshal(doc); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	return p
}

type recRepo struct {
	RepoPath   string `json:"repoPath"`
	LastCallMs int64  `json:"lastCallMs"`
	LastTool   string `json:"lastTool"`
}

func record(pid int, client any, repos ...recRepo) map[string]any {
	return map[string]any{"schemaVersion": 1, "pid": pid, "client": client, "repos": repos}
}

func client(name string) map[string]any { return map[string]any{"name": name, "version": "1.2.3"} }

func TestPresenceSource(t *testing.T) {
	repo := newRepo(t, "repo")
	wt := newRepo(t, "wt")
	other := newRepo(t, "other")
	now := time.Now()
	run := t.TempDir()
	dir := rundir.PresenceDir(run)
	self := 999001
	q := Query{Repo: repo, Worktrees: []string{repo, wt}, RunDir: run, SelfPID: self, Now: now}
	ms := func(d time.Duration) int64 { return now.Add(d).UnixMilli() }

	type want struct {
		agent, state, tool, client string
	}
	tests := []struct {
		name  string
		file  string
		doc   any
		mtime time.Time
		want  *want
	}{
		{"fresh codex call is working", "1001.json", record(1001, client("codex-mcp-client"), recRepo{repo, ms(-30 * time.Second), "repo.status"}), now, &want{"codex", StateWorking, "repo.status", "codex-mcp-client"}},
		{"older call of a dead server is recent", "1002.json", record(1002, client("gemini"), recRepo{repo, ms(-5 * time.Minute), "diff.text"}), now, &want{"gemini-cli", StateRecent, "diff.text", "gemini"}},
		{"worktree repo matches", "1003.json", record(1003, client("Visual Studio Code"), recRepo{wt, ms(-time.Minute), "repo.brief"}), now, &want{"vscode", StateWorking, "repo.brief", "Visual Studio Code"}},
		{"newest matching repo wins", "1004.json", record(1004, client("kilocode"), recRepo{other, ms(-time.Second), "x"}, recRepo{repo, ms(-10 * time.Minute), "old.tool"}), now, &want{"kilo", StateRecent, "old.tool", "kilocode"}},
		{"missing client name", "1005.json", record(1005, map[string]any{"name": nil, "version": nil}, recRepo{repo, ms(-time.Minute), "t"}), now, &want{"mcp-client", StateWorking, "t", ""}},
		{"unknown client keeps a sanitized name", "1006.json", record(1006, client("  My Agent\x07 v2 "), recRepo{repo, ms(-time.Minute), "t"}), now, &want{"my-agent-v2", StateWorking, "t", "My Agent v2"}},
		{"slight future within 60 s", "1007.json", record(1007, client("claude-code"), recRepo{repo, ms(30 * time.Second), "t"}), now, &want{"claude-code", StateWorking, "t", "claude-code"}},
		{"future beyond 60 s", "1101.json", record(1101, client("codex"), recRepo{repo, ms(5 * time.Minute), "t"}), now, nil},
		{"call older than 15 minutes", "1102.json", record(1102, client("codex"), recRepo{repo, ms(-16 * time.Minute), "t"}), now, nil},
		{"file not modified within 15 minutes", "1103.json", record(1103, client("codex"), recRepo{repo, ms(-time.Minute), "t"}), now.Add(-20 * time.Minute), nil},
		{"wrong schemaVersion", "1104.json", map[string]any{"schemaVersion": 2, "pid": 1104, "repos": []recRepo{{repo, ms(-time.Minute), "t"}}}, now, nil},
		{"another repository", "1105.json", record(1105, client("codex"), recRepo{other, ms(-time.Minute), "t"}), now, nil},
		{"own pid by file name", fmt.Sprintf("%d.json", self), record(1106, client("codex"), recRepo{repo, ms(-time.Minute), "t"}), now, nil},
		{"own pid in the document", "1107.json", record(self, client("codex"), recRepo{repo, ms(-time.Minute), "t"}), now, nil},
		{"malformed", "1108.json", `{"schemaVersion":1,"pid":1108,"repos":[`, now, nil},
		{"oversize", "1109.json", `{"schemaVersion":1,"pid":1109,"client":{"name":"codex"},"repos":[{"repoPath":"` + repo + `","lastCallMs":` + fmt.Sprint(ms(-time.Minute)) + `,"lastTool":"t"}]}` + strings.Repeat(" ", 65<<10), now, nil},
		{"temporary file", ".1110.abc.tmp", record(1110, client("codex"), recRepo{repo, ms(-time.Minute), "t"}), now, nil},
		{"tool name with arguments dropped", "1008.json", record(1008, client("opencode"), recRepo{repo, ms(-time.Minute), "rm -rf /"}), now, &want{"opencode", StateWorking, "", "opencode"}},
		// A live server (this test process) keeps its pid; every other
		// record here names a pid with no process behind it.
		{"live server keeps its pid", "live.json", record(os.Getpid(), client("cursor"), recRepo{repo, ms(-5 * time.Minute), "t"}), now, &want{"cursor", StateOpen, "t", "cursor"}},
	}
	for _, tt := range tests {
		writeRecord(t, dir, tt.file, tt.doc, tt.mtime)
	}
	// A symlink to a valid record elsewhere is not followed.
	target := writeRecord(t, t.TempDir(), "x.json", record(1111, client("codex"), recRepo{repo, ms(-time.Minute), "t"}), now)
	if err := os.Symlink(target, filepath.Join(dir, "1111.json")); err != nil && runtime.GOOS != "windows" {
		t.Fatal(err)
	}

	fs, err := PresenceSource{}.Scan(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	_, canTellAlive := ProcessStartTime(os.Getpid())
	// Findings are matched to records by client name (unique among the
	// records that must be found): a dead server's record has no pid.
	byClient := map[string]Finding{}
	for _, f := range fs {
		name := ""
		if f.MCPClient != nil {
			name = f.MCPClient.Name
		}
		if _, dup := byClient[name]; dup {
			t.Errorf("two findings for client %q: %+v", name, fs)
		}
		byClient[name] = f
		if name == "codex" { // every record that must be skipped names client codex
			t.Errorf("a record that must be skipped was read: %+v", f)
		}
	}
	wanted := 0
	for _, tt := range tests {
		if tt.want == nil {
			continue
		}
		wanted++
		f, found := byClient[tt.want.client]
		if !found {
			t.Errorf("%s: not found", tt.name)
			continue
		}
		// A record whose server is gone must not report that pid.
		live := tt.file == "live.json"
		if live && !canTellAlive {
			continue // this OS cannot tell a live pid from a dead one
		}
		if live != (f.PID != nil) || live && *f.PID != os.Getpid() {
			t.Errorf("%s: pid %v, want the pid only for a live server", tt.name, f.PID)
		}
		tool := ""
		if f.LastTool != nil {
			tool = *f.LastTool
		}
		name := ""
		if f.MCPClient != nil {
			name = f.MCPClient.Name
		}
		if f.Agent != tt.want.agent || f.State != tt.want.state || tool != tt.want.tool || name != tt.want.client ||
			f.Confidence != ConfidenceRegistry || strings.Join(f.Sources, ",") != SourceMCP || f.LastActivityMs == nil {
			t.Errorf("%s: got agent %s state %s tool %q client %q (%+v), want %+v", tt.name, f.Agent, f.State, tool, name, f, *tt.want)
		}
	}
	if len(fs) != wanted {
		t.Errorf("%d findings, want %d: %+v", len(fs), wanted, fs)
	}
}

func TestPresenceSourceLimits(t *testing.T) {
	repo := newRepo(t, "repo")
	now := time.Now()
	run := t.TempDir()
	q := Query{Repo: repo, RunDir: run, Now: now}
	for i := range 300 {
		writeRecord(t, rundir.PresenceDir(run), fmt.Sprintf("%d.json", 5000+i),
			record(5000+i, client(fmt.Sprintf("stranger%03d", i)), recRepo{repo, now.Add(-time.Minute).UnixMilli(), "t"}), now)
	}
	fs, err := PresenceSource{}.Scan(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != maxPresenceFiles {
		t.Fatalf("%d findings, want the %d-file cap", len(fs), maxPresenceFiles)
	}
	names := map[string]bool{}
	fallback := 0
	for _, f := range fs {
		if f.Agent == FallbackClientAgent {
			fallback++
		} else {
			names[f.Agent] = true
		}
	}
	if len(names) != maxUnknownClients || fallback != maxPresenceFiles-maxUnknownClients {
		t.Fatalf("%d distinct unknown names and %d fallbacks, want %d and %d", len(names), fallback, maxUnknownClients, maxPresenceFiles-maxUnknownClients)
	}
}

func TestPresenceSourceDirectories(t *testing.T) {
	repo := newRepo(t, "repo")
	now := time.Now()
	tests := []struct {
		name    string
		setup   func(t *testing.T) Query
		wantErr bool
		want    int
	}{
		{"no run dir", func(t *testing.T) Query { return Query{Repo: repo, Now: now} }, false, 0},
		{"missing presence directory", func(t *testing.T) Query { return Query{Repo: repo, RunDir: t.TempDir(), Now: now} }, false, 0},
		{"presence directory is a symlink", func(t *testing.T) Query {
			real := t.TempDir()
			writeRecord(t, real, "77.json", record(77, client("codex"), recRepo{repo, now.UnixMilli(), "t"}), now)
			run := t.TempDir()
			if err := os.MkdirAll(filepath.Join(run, "presence"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(real, rundir.PresenceDir(run)); err != nil {
				t.Skip(err)
			}
			return Query{Repo: repo, RunDir: run, Now: now}
		}, true, 0},
		{"FluxGit presence directory", func(t *testing.T) Query {
			d := t.TempDir()
			writeRecord(t, d, "78.json", record(78, client("codex"), recRepo{repo, now.UnixMilli(), "t"}), now)
			return Query{Repo: repo, FluxGitPresenceDirs: []string{d}, Now: now}
		}, false, 1},
	}
	for _, tt := range tests {
		fs, err := PresenceSource{}.Scan(context.Background(), tt.setup(t))
		if (err != nil) != tt.wantErr || len(fs) != tt.want {
			t.Errorf("%s: %d findings, err %v; want %d, error %v", tt.name, len(fs), err, tt.want, tt.wantErr)
		}
	}
}
