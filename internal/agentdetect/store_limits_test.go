package agentdetect

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// countReads installs tailReadHook for the test and returns the bytes
// read per file.
func countReads(t *testing.T) func(path string) int {
	var mu sync.Mutex
	reads := map[string]int{}
	tailReadHook = func(path string, n int) {
		mu.Lock()
		reads[path] += n
		mu.Unlock()
	}
	t.Cleanup(func() { tailReadHook = nil })
	return func(path string) int {
		mu.Lock()
		defer mu.Unlock()
		return reads[path]
	}
}

// writeHuge makes a 200 MB file: head at offset 0, a hole, and tail
// ending the file. The hole keeps the test's disk use small; a reader
// that reads the whole file still pays for 200 MB.
func writeHuge(t *testing.T, path string, head, tail []byte) {
	t.Helper()
	const size = 200 << 20
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	fh, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if _, err := fh.WriteAt(head, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := fh.WriteAt(tail, size-int64(len(tail))); err != nil {
		t.Fatal(err)
	}
}

// manyLines repeats line until the result exceeds the tail window.
func manyLines(line func(i int) any) []byte {
	var b []byte
	for i := 0; len(b) < tailReadMax+64<<10; i++ {
		js, _ := json.Marshal(line(i))
		b = append(append(b, js...), '\n')
	}
	return b
}

func TestStoreHugeFilesReadOnlyTheirEnds(t *testing.T) {
	cases := []struct {
		name   string
		src    Source
		build  func(f *storeFixture) string
		budget int
		want   wantFinding
	}{
		{
			name: "claude transcript",
			src:  claudeStore{},
			build: func(f *storeFixture) string {
				p := filepath.Join(f.claudeRoot(), "projects", claudeEncode(f.repo), "huge.jsonl")
				tail := manyLines(func(i int) any {
					return map[string]any{"type": "assistant", "sessionId": "huge", "cwd": f.repo, "gitBranch": "big", "timestamp": f.iso(time.Minute),
						"message": map[string]any{"content": []any{
							map[string]any{"type": "text", "text": storePrompt},
							map[string]any{"type": "tool_use", "name": "Grep", "input": map[string]any{"pattern": storePrompt, "file_path": filepath.Join(f.repo, "h.go")}}}}}
				})
				writeHuge(t, p, nil, tail)
				return p
			},
			budget: tailReadMax,
			want:   wantFinding{agent: "claude-code", session: "huge", branch: "big", tool: "Grep", files: []string{"h.go"}, conf: ConfidenceCwd, state: StateWorking, source: SourceSession},
		},
		{
			name: "codex rollout whose session_meta is 200 MB behind the tail",
			src:  codexStore{},
			build: func(f *storeFixture) string {
				root := filepath.Join(f.home, ".codex")
				id := "0199a0b0-0000-7000-8000-00000000abcd"
				p := filepath.Join(root, "sessions", filepath.FromSlash(f.now.Format("2006/01/02")), "rollout-2026-11-30T10-00-00-"+id+".jsonl")
				head, _ := json.Marshal(map[string]any{"timestamp": f.iso(time.Hour), "type": "session_meta",
					"payload": map[string]any{"id": id, "cwd": f.repo, "git": map[string]any{"branch": "from-head"}}})
				tail := manyLines(func(i int) any {
					return map[string]any{"timestamp": f.iso(time.Minute), "type": "response_item",
						"payload": map[string]any{"type": "function_call", "name": "exec_command", "arguments": `{"cmd":"` + storePrompt + `"}`}}
				})
				writeHuge(t, p, append(head, '\n'), tail)
				return p
			},
			budget: tailReadMax + headReadMax,
			want:   wantFinding{agent: "codex", session: "0199a0b0-0000-7000-8000-00000000abcd", branch: "from-head", tool: "exec_command", conf: ConfidenceCwd, state: StateWorking, source: SourceSession},
		},
		{
			name: "copilot events whose session.start is 200 MB behind the tail",
			src:  copilotStore{},
			build: func(f *storeFixture) string {
				p := filepath.Join(f.home, ".copilot", "session-state", "big", "events.jsonl")
				head, _ := json.Marshal(map[string]any{"timestamp": f.iso(time.Hour), "type": "session.start",
					"data": map[string]any{"sessionId": "big", "context": map[string]any{"cwd": f.repo, "branch": "cop-big"}}})
				tail := manyLines(func(i int) any {
					return map[string]any{"timestamp": f.iso(time.Minute), "type": "tool.execution_start", "data": map[string]any{"toolName": "view", "arguments": map[string]any{"path": "v.go"}}}
				})
				writeHuge(t, p, append(head, '\n'), tail)
				return p
			},
			budget: tailReadMax + headReadMax,
			want:   wantFinding{agent: "copilot-cli", session: "big", branch: "cop-big", tool: "view", files: []string{"v.go"}, conf: ConfidenceCwd, state: StateWorking, source: SourceSession},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newStoreFixture(t)
			p := tc.build(f)
			if fi, err := os.Stat(p); err != nil || fi.Size() != 200<<20 {
				t.Fatalf("fixture is not 200 MB: %v %v", fi, err)
			}
			read := countReads(t)
			got, err := runStore(t, tc.src, f.q())
			if err != nil {
				t.Fatal(err)
			}
			checkFindings(t, got, []wantFinding{tc.want})
			if n := read(p); n == 0 || n > tc.budget {
				t.Errorf("read %d bytes of a 200 MB file, want at most %d", n, tc.budget)
			}
		})
	}
}

// TestStoreSQLiteLockHelper is not a test: run by the locked-database
// test as a separate process, it holds an exclusive lock on the database
// named by AGENTDETECT_LOCK_DB until its stdin closes.
func TestStoreSQLiteLockHelper(t *testing.T) {
	path := os.Getenv("AGENTDETECT_LOCK_DB")
	if path == "" {
		t.Skip("helper process only")
	}
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "BEGIN EXCLUSIVE"); err != nil {
		t.Fatal(err)
	}
	fmt.Println("locked")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	_, _ = conn.ExecContext(context.Background(), "ROLLBACK")
}

// lockDB holds an exclusive lock on path in another process until the
// test ends; it returns a func reporting whether that process still runs.
func lockDB(t *testing.T, path string) func() bool {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestStoreSQLiteLockHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), "AGENTDETECT_LOCK_DB="+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { stdin.Close(); <-done })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "locked" {
		t.Fatalf("lock helper said %q: %v", line, err)
	}
	return func() bool {
		select {
		case <-done:
			return false
		default:
			return true
		}
	}
}

func TestStoreLockedSQLite(t *testing.T) {
	cases := []struct {
		name      string
		src       Source
		build     func(f *storeFixture) string // returns the database to lock
		wantFound []wantFinding                // nil: the source fails
	}{
		{
			name: "codex state database only",
			src:  codexStore{},
			build: func(f *storeFixture) string {
				p := filepath.Join(f.home, ".codex", "state_5.sqlite")
				f.sqlite(p, codexThreadsSchema(), codexThread("t1", "", f.repo, "b", f.ms(time.Minute), 0))
				return p
			},
		},
		{
			name: "codex state database locked, its rollouts still answer",
			src:  codexStore{},
			build: func(f *storeFixture) string {
				root := filepath.Join(f.home, ".codex")
				f.codexRollout(root, "0199a0b0-0000-7000-8000-000000000009", f.repo, "main")
				p := filepath.Join(root, "state_5.sqlite")
				f.sqlite(p, codexThreadsSchema(), codexThread("t1", "", f.repo, "b", f.ms(time.Minute), 0))
				return p
			},
			wantFound: []wantFinding{{agent: "codex", session: "0199a0b0-0000-7000-8000-000000000009", branch: "main", tool: "apply_patch",
				files: []string{"new.txt", "src/x.go"}, conf: ConfidenceCwd, state: StateWorking, source: SourceSession}},
		},
		{
			name: "opencode database",
			src:  opencodeStore{},
			build: func(f *storeFixture) string {
				p := filepath.Join(f.home, ".local", "share", "opencode", "opencode.db")
				f.sqlite(p, append(opencodeSchema()[1:], f.opencodeSession("ses_1", f.repo, f.ms(time.Minute), false))...)
				return p
			},
		},
		{
			name: "cursor editor state",
			src:  cursorStore{},
			build: func(f *storeFixture) string {
				p := filepath.Join(f.vscodeGlobal("Cursor"), "state.vscdb")
				f.sqlite(p, cursorHeadersSchema(), f.cursorHeader("ch", f.ms(time.Minute), 0,
					map[string]any{"workspaceIdentifier": map[string]any{"uri": map[string]any{"fsPath": f.repo}}}))
				return p
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newStoreFixture(t)
			db := tc.build(f)
			alive := lockDB(t, db)
			got, err := runStore(t, tc.src, f.q())
			// The scan returned while the other process still holds the
			// lock: it did not wait for it.
			if !alive() {
				t.Fatal("the lock holder exited before the scan returned; the test proves nothing")
			}
			if tc.wantFound == nil {
				if err == nil || !strings.Contains(err.Error(), "locked") {
					t.Fatalf("Scan = %v, %v; want the source to fail with a locked database", sessionIDs(got), err)
				}
				if len(got) != 0 {
					t.Fatalf("findings from a locked database: %v", sessionIDs(got))
				}
				return
			}
			if err != nil {
				t.Fatalf("Scan: %v (a source that answered in part has not failed)", err)
			}
			checkFindings(t, got, tc.wantFound)
		})
	}
}

func TestStoreSymlinkedStoreDirectories(t *testing.T) {
	cases := []struct {
		name  string
		src   Source
		build func(f *storeFixture)
		want  []wantFinding
	}{
		{
			name: "claude root linked out of the home",
			src:  claudeStore{},
			build: func(f *storeFixture) {
				elsewhere := filepath.Join(f.tmp, "elsewhere", "claude")
				f.jsonl(filepath.Join(elsewhere, "projects", claudeEncode(f.repo), "s1.jsonl"),
					map[string]any{"type": "user", "sessionId": "s1", "cwd": f.repo, "timestamp": f.iso(time.Minute)})
				f.link(elsewhere, f.claudeRoot())
			},
		},
		{
			name: "claude projects directory linked out of the home",
			src:  claudeStore{},
			build: func(f *storeFixture) {
				elsewhere := filepath.Join(f.tmp, "elsewhere", "projects")
				f.jsonl(filepath.Join(elsewhere, claudeEncode(f.repo), "s1.jsonl"),
					map[string]any{"type": "user", "sessionId": "s1", "cwd": f.repo, "timestamp": f.iso(time.Minute)})
				if err := os.MkdirAll(f.claudeRoot(), 0o755); err != nil {
					t.Fatal(err)
				}
				f.link(elsewhere, filepath.Join(f.claudeRoot(), "projects"))
			},
		},
		{
			name: "codex transcript file linked out of the store",
			src:  codexStore{},
			build: func(f *storeFixture) {
				real := f.codexRollout(filepath.Join(f.tmp, "elsewhere", "codex"), "0199a0b0-0000-7000-8000-000000000001", f.repo, "main")
				linked := filepath.Join(f.home, ".codex", "sessions", filepath.FromSlash(f.now.Format("2006/01/02")), filepath.Base(real))
				if err := os.MkdirAll(filepath.Dir(linked), 0o755); err != nil {
					t.Fatal(err)
				}
				f.link(real, linked)
			},
		},
		{
			name: "copilot root linked to a directory inside the home is followed",
			src:  copilotStore{},
			build: func(f *storeFixture) {
				dots := filepath.Join(f.home, "dotfiles", "copilot")
				f.jsonl(filepath.Join(dots, "session-state", "cp", "events.jsonl"),
					map[string]any{"timestamp": f.iso(time.Minute), "type": "session.start", "data": map[string]any{"context": map[string]any{"cwd": f.repo, "branch": "b"}}})
				f.link(dots, filepath.Join(f.home, ".copilot"))
			},
			want: []wantFinding{{agent: "copilot-cli", session: "cp", branch: "b", conf: ConfidenceCwd, state: StateWorking, source: SourceSession}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newStoreFixture(t)
			tc.build(f)
			got, err := runStore(t, tc.src, f.q())
			if err != nil {
				t.Fatal(err)
			}
			checkFindings(t, got, tc.want)
		})
	}
}

func (f *storeFixture) link(target, name string) {
	f.t.Helper()
	if err := os.Symlink(target, name); err != nil {
		f.t.Fatal(err)
	}
}

// snapshot records every entry below dir: a source must change nothing.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		size := fi.Size()
		if fi.IsDir() {
			size = 0
		}
		out[p] = fmt.Sprintf("%v %d %d", fi.Mode(), size, fi.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestStoresLeakNoPromptAndWriteNothing(t *testing.T) {
	for _, tc := range storeCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			f := newStoreFixture(t)
			tc.build(f)
			before := snapshot(t, f.tmp)
			var all []Finding
			for _, src := range StoreSources() {
				got, err := runStore(t, src, f.q())
				if err != nil {
					t.Errorf("%s: %v", src.Name(), err)
				}
				all = append(all, got...)
			}
			if len(all) < len(tc.want) {
				t.Fatalf("%d findings, want at least %d", len(all), len(tc.want))
			}
			js, err := json.Marshal(all)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(js), storePrompt) {
				t.Fatalf("prompt text in findings: %s", js)
			}
			after := snapshot(t, f.tmp)
			for p, v := range after {
				if before[p] != v {
					t.Errorf("scan changed %s: %q → %q", p, before[p], v)
				}
			}
			for p := range before {
				if _, ok := after[p]; !ok {
					t.Errorf("scan removed %s", p)
				}
			}
		})
	}
}

func TestStoresHonourCancelledContext(t *testing.T) {
	for _, tc := range storeCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			f := newStoreFixture(t)
			tc.build(f)
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			got, err := tc.src.Scan(ctx, f.q())
			// A cancelled scan may keep what it read before it noticed,
			// but never reports more than a full one.
			if len(got) > len(tc.want) {
				t.Fatalf("cancelled scan found %v, more than %d", sessionIDs(got), len(tc.want))
			}
			if len(got) == 0 && err == nil && len(tc.want) > 0 && tc.src.Name() != "store:aider" {
				// Sources that read files before checking ctx may still
				// answer; one that found nothing must say why.
				t.Logf("%s: no findings and no error under a cancelled context", tc.src.Name())
			}
		})
	}
}

func TestStoreWALDatabaseNobodyHasOpen(t *testing.T) {
	f := newStoreFixture(t)
	db := filepath.Join(f.home, ".local", "share", "opencode", "opencode.db")
	f.sqlite(db, append(opencodeSchema(), f.opencodeSession("ses_1", f.repo, f.ms(time.Minute), false))...)
	if _, err := os.Lstat(db + "-shm"); err == nil {
		t.Fatal("fixture: the closed WAL database still has its -shm file")
	}
	before := snapshot(t, f.tmp)
	got, err := runStore(t, opencodeStore{}, f.q())
	if !errors.Is(err, errSQLiteNotOpen) || len(got) != 0 {
		t.Fatalf("Scan = %v, %v; want no findings and errSQLiteNotOpen", sessionIDs(got), err)
	}
	if after := snapshot(t, f.tmp); !maps.Equal(before, after) {
		t.Fatalf("scan changed the store: %d entries before, %d after", len(before), len(after))
	}
	// Once the agent has it open, the same database answers.
	f.holdOpen(db)
	got, err = runStore(t, opencodeStore{}, f.q())
	if err != nil || len(got) != 1 {
		t.Fatalf("Scan with the agent running = %v, %v; want ses_1", sessionIDs(got), err)
	}
}
