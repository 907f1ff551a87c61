package agentdetect

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// wantFinding is what a store case expects of one finding; empty fields
// expect null (or no files).
type wantFinding struct {
	agent, session string
	pid            int
	branch, tool   string
	files          []string
	conf, state    string
	source         string
}

// storeCase is one store written from its documented format.
type storeCase struct {
	name  string
	src   Source
	build func(f *storeFixture)
	want  []wantFinding
}

// storeCases are shared by the per-source test and the privacy and
// read-only tests, which run every source over each of them.
func storeCases(t *testing.T) []storeCase {
	return []storeCase{
		{
			name: "claude registry of a live pid merges its transcript, cwd reached through a link",
			src:  claudeStore{},
			build: func(f *storeFixture) {
				link := filepath.Join(f.tmp, "link-to-repo")
				if err := os.Symlink(f.repo, link); err != nil {
					f.t.Fatal(err)
				}
				cwd := filepath.Join(link, "sub")
				f.write(filepath.Join(f.claudeRoot(), "sessions", "1.json"), f.js(map[string]any{
					"pid": os.Getpid(), "sessionId": "s-live", "cwd": cwd, "status": "busy", "version": "2.1.0",
					"kind": "interactive", "entrypoint": "cli", "startedAt": f.ms(0), "updatedAt": f.ms(time.Minute)}))
				f.claudeTranscript(cwd, "s-live", "feat/x")
			},
			want: []wantFinding{{agent: "claude-code", session: "s-live", pid: os.Getpid(), branch: "feat/x", tool: "Write",
				files: []string{"sub/a.go"}, conf: ConfidenceRegistry, state: StateWorking, source: SourceSession}},
		},
		{
			name: "claude registry naming a live pid that started after the session (a reused pid)",
			src:  claudeStore{},
			build: func(f *storeFixture) {
				f.write(filepath.Join(f.claudeRoot(), "sessions", "2.json"), f.js(map[string]any{
					"pid": os.Getpid(), "sessionId": "s-reused", "cwd": f.repo, "status": "busy",
					"startedAt": f.ms(24 * time.Hour), "updatedAt": f.ms(5 * time.Minute)}))
			},
			want: reusedPIDWant(),
		},
		{
			name: "claude transcript and history without a live registry entry; stale dead pid and other projects ignored",
			src:  claudeStore{},
			build: func(f *storeFixture) {
				f.env["CLAUDE_CONFIG_DIR"] = filepath.Join(f.tmp, "claude-config")
				root := f.env["CLAUDE_CONFIG_DIR"]
				f.write(filepath.Join(root, "sessions", "999999999.json"), f.js(map[string]any{
					"pid": 999999999, "sessionId": "s-dead", "cwd": f.repo, "status": "idle", "updatedAt": f.ms(time.Hour)}))
				f.write(filepath.Join(root, "sessions", "bad.json"), `{"pid": `)
				p := filepath.Join(root, "projects", claudeEncode(f.wt), "s-wt.jsonl")
				f.jsonl(p,
					"{not json",
					map[string]any{"type": "assistant", "sessionId": "s-wt", "cwd": f.wt, "gitBranch": "wt-branch", "timestamp": f.iso(10 * time.Minute),
						"message": map[string]any{"content": []any{map[string]any{"type": "tool_use", "name": "Read", "input": map[string]any{"file_path": "lib/b.go"}}}}},
					`{"type":"assistant","sessionId":"s-wt","message":{"content":[{"type":"tool_use","name":"Trunc`)
				// The encoded name of repo-other starts with repo's.
				other := filepath.Join(root, "projects", claudeEncode(f.outside), "s-other.jsonl")
				f.jsonl(other, map[string]any{"type": "user", "sessionId": "s-other", "cwd": f.outside, "timestamp": f.iso(time.Minute)})
				f.jsonl(filepath.Join(root, "history.jsonl"),
					map[string]any{"display": storePrompt, "timestamp": f.ms(time.Hour), "project": f.repo, "sessionId": "s-old"},
					map[string]any{"display": storePrompt, "timestamp": f.ms(30 * time.Second), "project": f.repo, "sessionId": "s-hist"},
					map[string]any{"display": storePrompt, "timestamp": f.ms(30 * time.Second), "project": f.outside, "sessionId": "s-hist-other"})
			},
			want: []wantFinding{
				{agent: "claude-code", session: "s-wt", branch: "wt-branch", tool: "Read", files: []string{"lib/b.go"}, conf: ConfidenceCwd, state: StateRecent, source: SourceSession},
				{agent: "claude-code", session: "s-hist", conf: ConfidenceCwd, state: StateWorking, source: SourceSession},
			},
		},
		{
			name: "codex rollout, threads of the newest state db in both timestamp units",
			src:  codexStore{},
			build: func(f *storeFixture) {
				root := filepath.Join(f.tmp, "codex-home")
				f.env["CODEX_HOME"] = root
				f.env["CODEX_SQLITE_HOME"] = filepath.Join(f.tmp, "codex-db")
				f.codexRollout(root, "0199a0b0-0000-7000-8000-000000000001", f.repo, "main")
				f.codexRollout(root, "0199a0b0-0000-7000-8000-000000000002", f.outside, "main")
				f.sqlite(filepath.Join(f.env["CODEX_SQLITE_HOME"], "state_5.sqlite"), codexThreadsSchema(),
					codexThread("t-ms", "", f.wt, "wt-branch", f.ms(time.Minute), 0),
					codexThread("t-sec", "", filepath.Join(f.repo, "sub"), "sec", f.now.Add(-3*time.Minute).Unix(), 0),
					codexThread("t-archived", "", f.repo, "x", f.ms(time.Minute), 1),
					codexThread("t-stale", "", f.repo, "x", f.ms(time.Hour), 0))
				f.sqlite(filepath.Join(f.env["CODEX_SQLITE_HOME"], "state_3.sqlite"), codexThreadsSchema(),
					codexThread("t-old-db", "", f.repo, "x", f.ms(time.Minute), 0))
			},
			want: []wantFinding{
				{agent: "codex", session: "0199a0b0-0000-7000-8000-000000000001", branch: "main", tool: "apply_patch",
					files: []string{"new.txt", "src/x.go"}, conf: ConfidenceCwd, state: StateWorking, source: SourceSession},
				{agent: "codex", session: "t-ms", branch: "wt-branch", conf: ConfidenceCwd, state: StateWorking, source: SourceSession},
				{agent: "codex", session: "t-sec", branch: "sec", conf: ConfidenceCwd, state: StateRecent, source: SourceSession},
			},
		},
		{
			name: "gemini chats found through projects.json and .project_root",
			src:  geminiStore{},
			build: func(f *storeFixture) {
				f.env["GEMINI_CLI_HOME"] = filepath.Join(f.tmp, "gem")
				root := filepath.Join(f.env["GEMINI_CLI_HOME"], ".gemini")
				f.write(filepath.Join(root, "projects.json"), f.js(map[string]any{"projects": map[string]string{f.repo: "repo", f.outside: "repo-other"}}))
				msg := func(ago time.Duration, tool, path string) map[string]any {
					return map[string]any{"id": tool, "timestamp": f.iso(ago), "type": "gemini", "content": storePrompt,
						"toolCalls": []any{map[string]any{"id": "c", "name": tool, "args": map[string]any{"file_path": path, "content": storePrompt}, "status": "success", "timestamp": f.iso(ago)}}}
				}
				f.jsonl(filepath.Join(root, "tmp", "repo", "chats", "session-2026-11-30T10-00-g1aaaaaa.jsonl"),
					map[string]any{"sessionId": "g1", "projectHash": "h", "startTime": f.iso(10 * time.Minute), "lastUpdated": f.iso(10 * time.Minute), "kind": "main"},
					map[string]any{"id": "u1", "timestamp": f.iso(9 * time.Minute), "type": "user", "content": storePrompt},
					msg(8*time.Minute, "write_file", filepath.Join(f.repo, "g.txt")),
					msg(7*time.Minute, "replace", filepath.Join(f.outside, "nope.txt")),
					map[string]any{"$set": map[string]any{"lastUpdated": f.iso(7 * time.Minute)}},
					"{truncated")
				f.write(filepath.Join(root, "tmp", "wtslug", ".project_root"), f.wt+"\n")
				f.jsonl(filepath.Join(root, "tmp", "wtslug", "chats", "session-2026-11-30T10-01-g2bbbbbb.jsonl"),
					map[string]any{"sessionId": "g2", "kind": "main"})
				f.jsonl(filepath.Join(root, "tmp", "repo-other", "chats", "session-2026-11-30T10-02-g3cccccc.jsonl"),
					map[string]any{"sessionId": "g3", "kind": "main"})
			},
			want: []wantFinding{
				{agent: "gemini-cli", session: "g1", tool: "replace", files: []string{"g.txt"}, conf: ConfidenceCwd, state: StateWorking, source: SourceSession},
				{agent: "gemini-cli", session: "g2", conf: ConfidenceCwd, state: StateWorking, source: SourceSession},
			},
		},
		{
			name: "opencode database (WAL) and legacy storage",
			src:  opencodeStore{},
			build: func(f *storeFixture) {
				f.env["XDG_DATA_HOME"] = filepath.Join(f.home, "xdg")
				root := filepath.Join(f.env["XDG_DATA_HOME"], "opencode")
				stmts := append(opencodeSchema(),
					f.opencodeSession("ses_1", f.repo, f.ms(time.Minute), false),
					f.opencodeSession("ses_out", f.outside, f.ms(time.Minute), false),
					f.opencodeSession("ses_arch", f.repo, f.ms(time.Minute), true),
					f.opencodeSession("ses_stale", f.repo, f.ms(time.Hour), false),
					f.opencodePart("prt_1", "ses_1", map[string]any{"type": "text", "text": storePrompt}),
					`INSERT INTO part (id, message_id, session_id, data) VALUES ('prt_0', 'msg_1', 'ses_1', '{not json')`,
					f.opencodePart("prt_1b", "ses_1", map[string]any{"type": "tool", "tool": []int{1}, "state": map[string]any{"input": map[string]any{"filePath": 7}}}),
					f.opencodePart("prt_2", "ses_1", map[string]any{"type": "tool", "tool": "edit", "callID": "c",
						"state": map[string]any{"status": "completed", "input": map[string]any{"filePath": filepath.Join(f.repo, "o.go"), "newString": storePrompt},
							"output": storePrompt, "time": map[string]any{"start": f.ms(3 * time.Minute), "end": f.ms(3 * time.Minute)}}}),
					f.opencodePart("prt_3", "ses_1", map[string]any{"type": "patch", "hash": "h", "files": []string{filepath.Join(f.repo, "p.go"), "/elsewhere/q.go"}}),
					f.opencodePart("prt_4", "ses_1", map[string]any{"type": "tool", "tool": "bash",
						"state": map[string]any{"status": "completed", "input": map[string]any{"command": storePrompt}, "time": map[string]any{"start": f.ms(2 * time.Minute)}}}),
				)
				f.sqlite(filepath.Join(root, "opencode.db"), stmts...)
				f.holdOpen(filepath.Join(root, "opencode.db"))
				f.write(filepath.Join(root, "storage", "session", "proj", "ses_legacy.json"), f.js(map[string]any{
					"id": "ses_legacy", "directory": f.wt, "title": storePrompt, "time": map[string]any{"created": f.ms(5 * time.Minute), "updated": f.ms(5 * time.Minute)}}))
				f.write(filepath.Join(root, "storage", "session", "proj", "ses_broken.json"), `{"id":`)
			},
			want: []wantFinding{
				{agent: "opencode", session: "ses_1", tool: "bash", files: []string{"p.go", "o.go"}, conf: ConfidenceCwd, state: StateWorking, source: SourceSession},
				{agent: "opencode", session: "ses_legacy", conf: ConfidenceCwd, state: StateRecent, source: SourceSession},
			},
		},
		{
			name: "cursor CLI chats by md5 bucket and by store.db workspacePath, editor composer headers",
			src:  cursorStore{},
			build: func(f *storeFixture) {
				f.cursorCLIChat(f.repo, "c-direct", f.repo, f.ms(time.Minute))
				f.cursorCLIChat(filepath.Join(f.repo, "sub"), "c-sub", filepath.Join(f.repo, "sub"), f.ms(5*time.Minute))
				f.cursorCLIChat(f.outside, "c-out", f.outside, f.ms(time.Minute))
				f.cursorCLIChat(f.repo, "c-stale", f.repo, f.ms(time.Hour))
				g := f.vscodeGlobal("Cursor")
				f.sqlite(filepath.Join(g, "state.vscdb"), cursorHeadersSchema(),
					`CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)`,
					f.cursorHeader("ch-folder", f.ms(time.Minute), 0, map[string]any{"name": storePrompt,
						"workspaceIdentifier": map[string]any{"uri": map[string]any{"fsPath": f.repo}}}),
					f.cursorHeader("ch-tracked", f.ms(4*time.Minute), 0, map[string]any{"name": storePrompt,
						"workspaceIdentifier": map[string]any{"uri": map[string]any{"fsPath": "/somewhere/else"}},
						"trackedGitRepos":     []any{map[string]any{"repoPath": f.wt}}}),
					`INSERT INTO composerHeaders (composerId, lastUpdatedAt, value) VALUES ('ch-bad', `+itoa64(f.ms(time.Minute))+`, 'nope')`,
					f.cursorHeader("ch-out", f.ms(time.Minute), 0, map[string]any{"workspaceIdentifier": map[string]any{"uri": map[string]any{"fsPath": f.outside}}}),
					f.cursorHeader("ch-arch", f.ms(time.Minute), 1, map[string]any{"workspaceIdentifier": map[string]any{"uri": map[string]any{"fsPath": f.repo}}}))
			},
			want: []wantFinding{
				{agent: "cursor", session: "c-direct", conf: ConfidenceCwd, state: StateWorking, source: SourceSession},
				{agent: "cursor", session: "c-sub", conf: ConfidenceCwd, state: StateRecent, source: SourceSession},
				{agent: "cursor", session: "ch-folder", conf: ConfidenceCwd, state: StateWorking, source: SourceSession},
				{agent: "cursor", session: "ch-tracked", conf: ConfidenceCwd, state: StateRecent, source: SourceSession},
			},
		},
		{
			name: "copilot CLI events, current and legacy layout",
			src:  copilotStore{},
			build: func(f *storeFixture) {
				state := filepath.Join(f.home, ".copilot", "session-state")
				f.jsonl(filepath.Join(state, "cp-1", "events.jsonl"),
					map[string]any{"id": "e1", "timestamp": f.iso(9 * time.Minute), "type": "session.start", "data": map[string]any{
						"sessionId": "cp-1", "copilotVersion": "0.0.400", "context": map[string]any{"cwd": f.repo, "gitRoot": f.repo, "branch": "cop"}}},
					map[string]any{"id": "e2", "timestamp": f.iso(8 * time.Minute), "type": "user.message", "data": map[string]any{"content": storePrompt}},
					map[string]any{"id": "e3", "timestamp": f.iso(90 * time.Second), "type": "tool.execution_start", "data": map[string]any{
						"toolName": "edit", "arguments": map[string]any{"path": "cp.go", "new_str": storePrompt}}},
					"{\"id\":\"e4\",\"type\":\"assistant.message\",\"data\":{\"content\":\"line\u2028sep\"}}")
				f.jsonl(filepath.Join(state, "cp-legacy.jsonl"),
					map[string]any{"id": "e1", "timestamp": f.iso(time.Minute), "type": "session.start", "data": map[string]any{
						"sessionId": "cp-legacy", "context": map[string]any{"cwd": f.wt, "branch": "legacy"}}},
					map[string]any{"id": "e2", "timestamp": f.iso(30 * time.Second), "type": "session.shutdown", "data": map[string]any{}})
				f.jsonl(filepath.Join(state, "cp-out", "events.jsonl"),
					map[string]any{"id": "e1", "timestamp": f.iso(time.Minute), "type": "session.start", "data": map[string]any{"context": map[string]any{"cwd": f.outside}}})
			},
			want: []wantFinding{
				{agent: "copilot-cli", session: "cp-1", branch: "cop", tool: "edit", files: []string{"cp.go"}, conf: ConfidenceCwd, state: StateWorking, source: SourceSession},
				{agent: "copilot-cli", session: "cp-legacy", branch: "legacy", conf: ConfidenceCwd, state: StateRecent, source: SourceSession},
			},
		},
		{
			name: "cline and roo extension tasks, cline CLI sessions",
			src:  clineStore{},
			build: func(f *storeFixture) {
				cline := filepath.Join(f.vscodeGlobal("Code"), "saoudrizwan.claude-dev")
				f.write(filepath.Join(cline, "tasks", "1700000000001", "task_metadata.json"), f.js(map[string]any{"files_in_context": []any{
					map[string]any{"path": "cl.go", "record_state": "active", "record_source": "cline_edited", "cline_edit_date": f.ms(2 * time.Minute)},
					map[string]any{"path": "read.go", "record_state": "active", "record_source": "read_tool", "cline_read_date": f.ms(4 * time.Minute)},
					map[string]any{"path": "old.go", "record_state": "stale", "record_source": "read_tool", "cline_read_date": f.ms(9 * time.Minute)},
				}}))
				f.write(filepath.Join(cline, "tasks", "1700000000001", "ui_messages.json"), f.js([]any{map[string]any{"say": "text", "text": storePrompt}}))
				f.write(filepath.Join(cline, "tasks", "1700000000002", "task_metadata.json"), `{}`)
				f.write(filepath.Join(cline, "state", "taskHistory.json"), f.js([]any{
					map[string]any{"id": "1700000000001", "ts": f.ms(time.Minute), "task": storePrompt, "cwdOnTaskInitialization": f.repo},
					map[string]any{"id": "1700000000002", "ts": f.ms(time.Minute), "task": storePrompt, "cwdOnTaskInitialization": f.outside},
				}))
				roo := filepath.Join(f.vscodeGlobal("Cursor"), "rooveterinaryinc.roo-cline")
				f.write(filepath.Join(roo, "tasks", "roo-1", "task_metadata.json"), f.js(map[string]any{"files_in_context": []any{
					map[string]any{"path": filepath.Join(f.wt, "r.go"), "record_state": "active", "cline_edit_date": f.ms(time.Minute)}}}))
				f.sqlite(filepath.Join(f.vscodeGlobal("Cursor"), "state.vscdb"),
					`CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)`,
					`INSERT INTO ItemTable VALUES ('RooVeterinaryInc.roo-cline', `+sqlQuote(f.js(map[string]any{"taskHistory": []any{
						map[string]any{"id": "roo-1", "ts": f.ms(time.Minute), "task": storePrompt, "workspace": f.wt}}}))+`)`)
				f.env["CLINE_DIR"] = filepath.Join(f.tmp, "cline-dir")
				f.write(filepath.Join(f.env["CLINE_DIR"], "data", "sessions", "cli-1", "cli-1.json"), f.js(map[string]any{"cwd": filepath.Join(f.repo, "sub"), "workspace_root": f.repo, "prompt": storePrompt}))
				f.write(filepath.Join(f.env["CLINE_DIR"], "data", "sessions", "cli-2", "cli-2.json"), f.js(map[string]any{"cwd": f.outside}))
			},
			want: []wantFinding{
				{agent: "cline", session: "1700000000001", files: []string{"cl.go", "read.go"}, conf: ConfidenceCwd, state: StateWorking, source: SourceSession},
				{agent: "roo", session: "roo-1", files: []string{"r.go"}, conf: ConfidenceCwd, state: StateWorking, source: SourceSession},
				{agent: "cline", session: "cli-1", conf: ConfidenceCwd, state: StateWorking, source: SourceSession},
			},
		},
		{
			name: "aider history at a work tree's top level, stale one ignored",
			src:  aiderStore{},
			build: func(f *storeFixture) {
				f.write(filepath.Join(f.repo, ".aider.chat.history.md"), "# aider chat started at 2026-11-30 10:00:00\n\n#### "+storePrompt+"\n")
				p := filepath.Join(f.wt, ".aider.chat.history.md")
				f.write(p, "#### "+storePrompt+"\n")
				f.age(p, time.Hour)
			},
			want: []wantFinding{{agent: "aider", session: "", conf: ConfidenceCwd, state: StateWorking, source: SourceRepoTrace}},
		},
	}
}

func TestStoreSources(t *testing.T) {
	for _, tc := range storeCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			f := newStoreFixture(t)
			tc.build(f)
			got, err := runStore(t, tc.src, f.q())
			if err != nil {
				t.Fatalf("Scan: %v", err)
			}
			checkFindings(t, got, tc.want)
		})
	}
}

func checkFindings(t *testing.T, got []Finding, want []wantFinding) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d findings %v, want %d", len(got), sessionIDs(got), len(want))
	}
	for _, w := range want {
		i := slices.IndexFunc(got, func(f Finding) bool { return f.Agent == w.agent && f.SessionID == w.session })
		if i < 0 {
			t.Errorf("no finding for %s/%s in %v", w.agent, w.session, sessionIDs(got))
			continue
		}
		g := got[i]
		name := w.agent + "/" + w.session
		if (g.PID == nil) != (w.pid == 0) || g.PID != nil && *g.PID != w.pid {
			t.Errorf("%s: pid %v, want %d", name, g.PID, w.pid)
		}
		if str(g.Branch) != w.branch {
			t.Errorf("%s: branch %q, want %q", name, str(g.Branch), w.branch)
		}
		if str(g.LastTool) != w.tool {
			t.Errorf("%s: lastTool %q, want %q", name, str(g.LastTool), w.tool)
		}
		if !slices.Equal(g.Files, w.files) && !(len(g.Files) == 0 && len(w.files) == 0) {
			t.Errorf("%s: files %q, want %q", name, g.Files, w.files)
		}
		if g.Files == nil {
			t.Errorf("%s: files is nil, want a list", name)
		}
		if g.Confidence != w.conf || g.State != w.state {
			t.Errorf("%s: confidence %s state %s, want %s %s", name, g.Confidence, g.State, w.conf, w.state)
		}
		if !slices.Equal(g.Sources, []string{w.source}) {
			t.Errorf("%s: sources %v, want [%s]", name, g.Sources, w.source)
		}
		if g.LastActivityMs == nil {
			t.Errorf("%s: no lastActivityMs", name)
		}
		if g.Agent != w.agent || strings.TrimSpace(g.Agent) == "" {
			t.Errorf("%s: agent %q", name, g.Agent)
		}
	}
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// reusedPIDWant: where the process start time is known, the registry's
// pid is recognised as reused; elsewhere only existence is checked.
func reusedPIDWant() []wantFinding {
	w := wantFinding{agent: "claude-code", session: "s-reused", conf: ConfidenceCwd, state: StateRecent, source: SourceSession}
	if storeProcStart(os.Getpid()).IsZero() {
		w.pid, w.conf, w.state = os.Getpid(), ConfidenceRegistry, StateWorking
	}
	return []wantFinding{w}
}
