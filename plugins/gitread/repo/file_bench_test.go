package repo

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// benchCall runs one tool call on p and decodes its data into out.
func benchCall(b *testing.B, p *Provider, tool string, args map[string]any, out any) {
	b.Helper()
	raw, _ := json.Marshal(args)
	res, err := p.CallTool(context.Background(), &sdk.Call{Tool: tool, Arguments: raw})
	if err != nil || res.Error != nil {
		b.Fatalf("%s: %v %+v", tool, err, res)
	}
	if err := json.Unmarshal(res.Data, out); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkFileBlame5000Lines blames a 5,000-line file whose lines were
// written by 50 commits (each rewrote every 50th line), whole and a
// 100-line range.
func BenchmarkFileBlame5000Lines(b *testing.B) {
	dir, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	run := func(args ...string) {
		cmd := execGit(dir, args...)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	run("init", "-q", "-b", "main")
	lines := make([]string, 5000)
	for i := range lines {
		lines[i] = fmt.Sprintf("line %d of the generated file, first version", i+1)
	}
	for c := 0; c < 50; c++ {
		if c > 0 {
			for i := c; i < len(lines); i += 50 {
				lines[i] = fmt.Sprintf("line %d rewritten by commit %d", i+1, c)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "big.go"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			b.Fatal(err)
		}
		run("add", "big.go")
		run("commit", "-q", "-m", fmt.Sprintf("commit %d", c))
	}
	p := New()
	for _, tc := range []struct {
		name string
		args map[string]any
	}{
		{"whole", map[string]any{"maxLines": 5000}},
		{"range100", map[string]any{"startLine": 2000, "endLine": 2099}},
		{"whole-copies", map[string]any{"maxLines": 5000, "detectCopies": true}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			tc.args["repoPath"], tc.args["path"] = dir, "big.go"
			var d fileBlameData
			for b.Loop() {
				benchCall(b, p, "file.blame", tc.args, &d)
			}
			b.ReportMetric(float64(d.EndLine-d.StartLine+1), "lines")
			b.ReportMetric(float64(len(d.Hunks)), "hunks")
			b.ReportMetric(float64(len(d.Commits)), "commits")
		})
	}
}

// BenchmarkFileRead100MBBlob reads a 100 MB committed file (and the same
// file in the work tree) with a 4 KiB budget: git is stopped at the
// budget, so time and memory do not grow with the blob.
func BenchmarkFileRead100MBBlob(b *testing.B) {
	dir, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	run := func(args ...string) {
		cmd := execGit(dir, args...)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	run("init", "-q", "-b", "main")
	f, err := os.Create(filepath.Join(dir, "huge.csv"))
	if err != nil {
		b.Fatal(err)
	}
	const size = 100 << 20
	var sb strings.Builder
	for i := 0; sb.Len() < 1<<20; i++ {
		fmt.Fprintf(&sb, "%08d,%x,some payload text for row %d\n", i, i*7919, i)
	}
	chunk := sb.String()
	for written := 0; written < size; written += len(chunk) {
		if _, err := f.WriteString(chunk[:min(len(chunk), size-written)]); err != nil {
			b.Fatal(err)
		}
	}
	f.Close()
	run("add", "huge.csv")
	run("commit", "-q", "-m", "huge")
	p := New()
	for _, tc := range []struct {
		name string
		args map[string]any
	}{
		{"rev-4KiB", map[string]any{"maxBytes": 4096}},
		{"rev-lines-4KiB", map[string]any{"startLine": 1000, "endLine": 1100, "maxBytes": 4096}},
		{"worktree-4KiB", map[string]any{"maxBytes": 4096, "worktree": true}},
		{"worktree-offset90MB-4KiB", map[string]any{"offset": 90 << 20, "length": 4096, "worktree": true}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			tc.args["repoPath"], tc.args["path"] = dir, "huge.csv"
			b.ReportAllocs()
			var d fileReadData
			for b.Loop() {
				benchCall(b, p, "file.read", tc.args, &d)
			}
			if d.Size != size || d.Bytes > 4096 || !d.Truncated && tc.args["length"] == nil {
				b.Fatalf("size %d bytes %d truncated %v", d.Size, d.Bytes, d.Truncated)
			}
			b.ReportMetric(float64(d.Size)/(1<<20), "blobMB")
			b.ReportMetric(float64(d.Bytes), "returnedB")
		})
	}
}
