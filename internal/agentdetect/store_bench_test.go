package agentdetect

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkStoreSources scans 200 session files spread over the stores
// (25 per store kind, half of them in another project) with every store
// source, one after another, as one agents.presence call would.
func BenchmarkStoreSources(b *testing.B) {
	f := newStoreFixture(b)
	codexRoot := filepath.Join(f.home, ".codex")
	gem := filepath.Join(f.home, ".gemini")
	f.write(filepath.Join(gem, "projects.json"), f.js(map[string]any{"projects": map[string]string{f.repo: "repo", f.outside: "repo-other"}}))
	oc := append(opencodeSchema(), "SELECT 1")
	for i := range 25 {
		cwd := f.repo
		if i%2 == 1 {
			cwd = f.outside
		}
		id := fmt.Sprintf("%02d", i)
		f.claudeTranscript(cwd, "claude-"+id, "main")
		f.codexRollout(codexRoot, fmt.Sprintf("0199a0b0-0000-7000-8000-0000000000%02d", i), cwd, "main")
		slug := filepath.Base(cwd)
		f.jsonl(filepath.Join(gem, "tmp", slug, "chats", "session-2026-11-30T10-00-"+id+"aaaaaa.jsonl"),
			map[string]any{"sessionId": "g" + id},
			map[string]any{"id": "m", "timestamp": f.iso(time.Minute), "type": "gemini", "toolCalls": []any{map[string]any{"name": "read_file", "args": map[string]any{"file_path": filepath.Join(cwd, "x")}}}})
		f.jsonl(filepath.Join(f.home, ".copilot", "session-state", "cp"+id, "events.jsonl"),
			map[string]any{"timestamp": f.iso(time.Minute), "type": "session.start", "data": map[string]any{"context": map[string]any{"cwd": cwd, "branch": "b"}}},
			map[string]any{"timestamp": f.iso(time.Minute), "type": "tool.execution_start", "data": map[string]any{"toolName": "view"}})
		f.cursorCLIChat(cwd, "cursor-"+id, cwd, f.ms(time.Minute))
		f.write(filepath.Join(f.home, ".cline", "data", "sessions", "cl"+id, "cl"+id+".json"), f.js(map[string]any{"cwd": cwd}))
		f.write(filepath.Join(f.home, ".local", "share", "opencode", "storage", "session", "p", "ses_l"+id+".json"),
			f.js(map[string]any{"id": "ses_l" + id, "directory": cwd, "time": map[string]any{"updated": f.ms(time.Minute)}}))
		oc = append(oc, f.opencodeSession("ses_"+id, cwd, f.ms(time.Minute), false))
	}
	db := filepath.Join(f.home, ".local", "share", "opencode", "opencode.db")
	f.sqlite(db, oc...)
	f.holdOpen(db)
	q := f.q()
	srcs := StoreSources()
	b.ResetTimer()
	for b.Loop() {
		n := 0
		for _, src := range srcs {
			got, err := src.Scan(context.Background(), q)
			if err != nil {
				b.Fatalf("%s: %v", src.Name(), err)
			}
			n += len(got)
		}
		if n < 8*12 {
			b.Fatalf("%d findings, want at least %d", n, 8*12)
		}
	}
}
