package agentdetect

import (
	"context"
	"crypto/md5"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// storePrompt is text a user typed; it is written into every store and
// must never come out of a source.
const storePrompt = "PROMPT-SECRET-do-not-leak-7f3a"

// storeFixture is a temporary machine: a home directory, a repository
// with a second worktree, and a directory beside them whose name shares
// the repository's prefix.
type storeFixture struct {
	t                            testing.TB
	tmp, home, repo, wt, outside string
	env                          map[string]string
	now                          time.Time
}

func newStoreFixture(t testing.TB) *storeFixture {
	t.Helper()
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &storeFixture{
		t: t, tmp: tmp,
		home:    filepath.Join(tmp, "home"),
		repo:    filepath.Join(tmp, "repo"),
		wt:      filepath.Join(tmp, "repo-wt"),
		outside: filepath.Join(tmp, "repo-other"),
		env:     map[string]string{},
		now:     time.Now(),
	}
	for _, d := range []string{f.home, f.repo, filepath.Join(f.repo, "sub"), f.wt, f.outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func (f *storeFixture) q() Query {
	return Query{
		Repo:      f.repo,
		Worktrees: []string{f.repo, f.wt},
		Home:      f.home,
		Env:       func(k string) string { return f.env[k] },
		Now:       f.now,
		SelfPID:   os.Getpid(),
	}
}

func (f *storeFixture) write(path, data string) {
	f.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// jsonl writes one line per value; strings are written as they are (for
// malformed and truncated lines).
func (f *storeFixture) jsonl(path string, lines ...any) {
	f.t.Helper()
	var b strings.Builder
	for _, l := range lines {
		if s, ok := l.(string); ok {
			b.WriteString(s)
		} else {
			js, err := json.Marshal(l)
			if err != nil {
				f.t.Fatal(err)
			}
			b.Write(js)
		}
		b.WriteByte('\n')
	}
	f.write(path, b.String())
}

func (f *storeFixture) js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		f.t.Fatal(err)
	}
	return string(b)
}

// sqlite creates a database (rollback journal unless a statement says
// otherwise) and runs stmts.
func (f *storeFixture) sqlite(path string, stmts ...string) {
	f.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		f.t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		f.t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			f.t.Fatalf("%s: %v", s, err)
		}
	}
}

// holdOpen keeps a read-write connection on a WAL database for the rest
// of the test, as the running agent would (its -wal and -shm exist).
func (f *storeFixture) holdOpen(path string) {
	f.t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		f.t.Fatal(err)
	}
	conn, err := db.Conn(context.Background())
	if err != nil {
		f.t.Fatal(err)
	}
	var n int
	if err := conn.QueryRowContext(context.Background(), "SELECT count(*) FROM sqlite_master").Scan(&n); err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { conn.Close(); db.Close() })
}

func (f *storeFixture) ms(ago time.Duration) int64 { return f.now.Add(-ago).UnixMilli() }
func (f *storeFixture) iso(ago time.Duration) string {
	return f.now.Add(-ago).UTC().Format(time.RFC3339Nano)
}

// age sets a file's modification time.
func (f *storeFixture) age(path string, ago time.Duration) {
	f.t.Helper()
	at := f.now.Add(-ago)
	if err := os.Chtimes(path, at, at); err != nil {
		f.t.Fatal(err)
	}
}

func sqlQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func md5hex(s string) string { sum := md5.Sum([]byte(s)); return hex.EncodeToString(sum[:]) }

// --- per-store fixtures, written from the documented formats ---

func (f *storeFixture) claudeRoot() string { return filepath.Join(f.home, ".claude") }

func (f *storeFixture) claudeTranscript(cwd, id, branch string, extra ...any) string {
	p := filepath.Join(f.claudeRoot(), "projects", claudeEncode(cwd), id+".jsonl")
	lines := []any{
		map[string]any{"type": "user", "sessionId": id, "cwd": cwd, "gitBranch": branch, "timestamp": f.iso(5 * time.Minute),
			"message": map[string]any{"role": "user", "content": storePrompt}},
		map[string]any{"type": "assistant", "sessionId": id, "cwd": cwd, "gitBranch": branch, "timestamp": f.iso(4 * time.Minute),
			"message": map[string]any{"role": "assistant", "content": []any{
				map[string]any{"type": "text", "text": storePrompt},
				map[string]any{"type": "tool_use", "id": "t1", "name": "Edit", "input": map[string]any{"file_path": filepath.Join(cwd, "a.go"), "old_string": storePrompt}},
			}}},
		map[string]any{"type": "user", "sessionId": id, "cwd": cwd, "timestamp": f.iso(3 * time.Minute),
			"message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "t1", "content": storePrompt}}}},
		map[string]any{"type": "assistant", "sessionId": id, "cwd": cwd, "gitBranch": branch, "timestamp": f.iso(1 * time.Minute),
			"message": map[string]any{"role": "assistant", "content": []any{
				map[string]any{"type": "tool_use", "id": "t2", "name": "Bash", "input": map[string]any{"command": "echo " + storePrompt}},
				map[string]any{"type": "tool_use", "id": "t3", "name": "Write", "input": map[string]any{"file_path": "/etc/outside-the-repo"}},
			}}},
	}
	f.jsonl(p, append(lines, extra...)...)
	return p
}

func (f *storeFixture) codexRollout(root, id, cwd, branch string, extra ...any) string {
	day := f.now.Format("2006/01/02")
	p := filepath.Join(root, "sessions", filepath.FromSlash(day), "rollout-"+f.now.Format("2006-01-02T15-04-05")+"-"+id+".jsonl")
	patch := "*** Begin Patch\n*** Update File: src/x.go\n@@\n-" + storePrompt + "\n+y\n*** Add File: " + filepath.Join(cwd, "new.txt") + "\n+" + storePrompt + "\n*** End Patch\n"
	lines := []any{
		map[string]any{"timestamp": f.iso(6 * time.Minute), "type": "session_meta", "payload": map[string]any{
			"id": id, "timestamp": f.iso(6 * time.Minute), "cwd": cwd, "originator": "codex_cli_rs", "cli_version": "0.60.0",
			"instructions": storePrompt, "git": map[string]any{"commit_hash": "abc", "branch": branch, "repository_url": "x"}}},
		map[string]any{"timestamp": f.iso(5 * time.Minute), "type": "turn_context", "payload": map[string]any{"cwd": cwd, "model": "m"}},
		map[string]any{"timestamp": f.iso(5 * time.Minute), "type": "response_item", "payload": map[string]any{"type": "message", "role": "user",
			"content": []any{map[string]any{"type": "input_text", "text": storePrompt}}}},
		map[string]any{"timestamp": f.iso(4 * time.Minute), "type": "response_item", "payload": map[string]any{"type": "function_call", "name": "shell",
			"arguments": f.js(map[string]any{"command": []string{"bash", "-lc", "grep " + storePrompt}}), "call_id": "c1"}},
		map[string]any{"timestamp": f.iso(2 * time.Minute), "type": "response_item", "payload": map[string]any{"type": "custom_tool_call", "name": "apply_patch",
			"input": patch, "call_id": "c2"}},
		map[string]any{"timestamp": f.iso(2 * time.Minute), "type": "event_msg", "payload": map[string]any{"type": "token_count"}},
	}
	f.jsonl(p, append(lines, extra...)...)
	return p
}

func codexThreadsSchema() string {
	return `CREATE TABLE threads (id TEXT PRIMARY KEY, rollout_path TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
		source TEXT NOT NULL, model_provider TEXT NOT NULL, cwd TEXT NOT NULL, title TEXT NOT NULL, sandbox_policy TEXT NOT NULL,
		approval_mode TEXT NOT NULL, tokens_used INTEGER NOT NULL DEFAULT 0, archived INTEGER NOT NULL DEFAULT 0, archived_at INTEGER,
		git_sha TEXT, git_branch TEXT, git_origin_url TEXT)`
}

func codexThread(id, rollout, cwd, branch string, updated int64, archived int) string {
	return `INSERT INTO threads (id, rollout_path, created_at, updated_at, source, model_provider, cwd, title, sandbox_policy, approval_mode, archived, git_branch)
		VALUES (` + strings.Join([]string{sqlQuote(id), sqlQuote(rollout), "0", itoa64(updated), "'cli'", "'openai'", sqlQuote(cwd), sqlQuote(storePrompt), "'x'", "'x'", itoa64(int64(archived)), sqlQuote(branch)}, ", ") + `)`
}

func itoa64(v int64) string { return strconv.FormatInt(v, 10) }

func opencodeSchema() []string {
	return []string{
		`PRAGMA journal_mode=WAL`,
		`CREATE TABLE project (id TEXT PRIMARY KEY, worktree TEXT NOT NULL, vcs TEXT, name TEXT)`,
		`CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, parent_id TEXT, slug TEXT, directory TEXT NOT NULL, title TEXT NOT NULL,
			version TEXT, summary_files INTEGER, summary_diffs TEXT, agent TEXT, model TEXT, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, time_archived INTEGER)`,
		`CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER, time_updated INTEGER, data TEXT NOT NULL)`,
		`CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL, time_created INTEGER, time_updated INTEGER, data TEXT NOT NULL)`,
	}
}

func (f *storeFixture) opencodeSession(id, dir string, updated int64, archived bool) string {
	arch := "NULL"
	if archived {
		arch = itoa64(updated)
	}
	return `INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated, time_archived) VALUES (` +
		strings.Join([]string{sqlQuote(id), "'p1'", "'s'", sqlQuote(dir), sqlQuote(storePrompt), "'1.2.0'", itoa64(updated), itoa64(updated), arch}, ", ") + `)`
}

func (f *storeFixture) opencodePart(id, session string, data any) string {
	return `INSERT INTO part (id, message_id, session_id, data) VALUES (` + strings.Join([]string{sqlQuote(id), "'msg_1'", sqlQuote(session), sqlQuote(f.js(data))}, ", ") + `)`
}

func cursorHeadersSchema() string {
	return `CREATE TABLE composerHeaders (composerId TEXT PRIMARY KEY, workspaceId TEXT, createdAt INTEGER, lastUpdatedAt INTEGER,
		isArchived INTEGER DEFAULT 0, isSubagent INTEGER DEFAULT 0, recency INTEGER, value TEXT)`
}

func (f *storeFixture) cursorHeader(id string, updated int64, archived int, value any) string {
	return `INSERT INTO composerHeaders (composerId, workspaceId, createdAt, lastUpdatedAt, isArchived, value) VALUES (` +
		strings.Join([]string{sqlQuote(id), "'w'", itoa64(updated), itoa64(updated), itoa64(int64(archived)), sqlQuote(f.js(value))}, ", ") + `)`
}

// cursorCLIChat writes ~/.cursor/chats/<md5(bucketPath)>/<id>/ with
// meta.json and a store.db naming workspacePath.
func (f *storeFixture) cursorCLIChat(bucketPath, id, workspace string, updated int64) {
	dir := filepath.Join(f.home, ".cursor", "chats", md5hex(bucketPath), id)
	f.write(filepath.Join(dir, "meta.json"), f.js(map[string]any{"title": storePrompt, "createdAtMs": updated, "updatedAtMs": updated}))
	meta := hex.EncodeToString([]byte(f.js(map[string]any{"agentId": id, "name": storePrompt, "createdAt": updated, "workspacePath": workspace})))
	f.sqlite(filepath.Join(dir, "store.db"),
		`CREATE TABLE blobs (id TEXT PRIMARY KEY, data BLOB)`,
		`CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)`,
		`INSERT INTO meta VALUES ('0', `+sqlQuote(meta)+`)`,
		`INSERT INTO blobs VALUES ('b', `+sqlQuote(storePrompt)+`)`)
	f.age(filepath.Join(dir, "store.db"), f.now.Sub(time.UnixMilli(updated)))
	f.age(filepath.Join(dir, "meta.json"), f.now.Sub(time.UnixMilli(updated)))
}

func (f *storeFixture) vscodeGlobal(editor string) string {
	return filepath.Join(newStoreScan(f.q()).configDirs()[0], editor, "User", "globalStorage")
}

// runStore scans with a generous budget.
func runStore(t *testing.T, src Source, q Query) ([]Finding, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return src.Scan(ctx, q)
}

func sessionIDs(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Agent+"/"+f.SessionID)
	}
	slices.Sort(out)
	return out
}
