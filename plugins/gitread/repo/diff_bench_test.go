package repo

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// BenchmarkDiffTextBudget: diff.text asked for 4 KiB of diffs of about 1,
// 10 and 50 MB. With exactTotals:false git is stopped at the budget, so
// the time should stay flat as the diff grows; the exact-totals default
// reads every byte git writes and grows with it, shown beside it for
// comparison. readMB is what the provider read from git, diffMB the size of
// the whole diff.
func BenchmarkDiffTextBudget(b *testing.B) {
	referenceShape(b) // the reference shape; the lean one: lean_shapes_test.go
	for _, mb := range []int{1, 10, 50} {
		repo := diffBenchRepo(b, mb<<20)
		full := diffBenchSize(b, repo)
		for _, exact := range []bool{false, true} {
			b.Run(fmt.Sprintf("diff=%dMB/exactTotals=%v", mb, exact), func(b *testing.B) {
				args := map[string]any{"repoPath": repo, "base": "HEAD~1", "head": "HEAD", "maxBytes": 4096, "exactTotals": exact}
				// One provider for the run, as a server keeps it.
				p := New()
				var d diffData
				for b.Loop() {
					benchDiff(b, p, args, &d)
				}
				if !d.Truncated || len(d.Diff) == 0 || len(d.Diff) > 4096 {
					b.Fatalf("truncated=%v len=%d", d.Truncated, len(d.Diff))
				}
				b.ReportMetric(float64(full)/(1<<20), "diffMB")
				b.ReportMetric(float64(d.TotalBytes)/(1<<20), "readMB")
			})
		}
	}
}

// diffBenchRepo builds, with one git fast-import, a repository of two
// commits where the second rewrites every line of the first, so the diff
// between them is about size bytes: 100 KiB files of 64-byte lines, each
// line shown once removed and once added.
func diffBenchRepo(b *testing.B, size int) string {
	b.Helper()
	dir := b.TempDir()
	benchGit(b, dir, "init", "-q", "-b", "main")
	const fileSize, lineLen = 100 << 10, 64
	files := max(size/2/fileSize, 1)
	cmd := exec.Command("git", "-C", dir, "fast-import", "--quiet")
	cmd.Env = gitEnv()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(in, 1<<20)
	content := func(gen, file int) string {
		var sb strings.Builder
		for i := 0; sb.Len() < fileSize; i++ {
			line := fmt.Sprintf("generation %d file %05d line %06d ", gen, file, i)
			sb.WriteString(line + strings.Repeat("x", lineLen-len(line)-1) + "\n")
		}
		return sb.String()
	}
	for gen := 0; gen < 2; gen++ {
		fmt.Fprintf(w, "commit refs/heads/main\ncommitter Bench <bench@example.com> %d +0000\ndata 3\ngen\n", authorTime+gen)
		for f := 0; f < files; f++ {
			c := content(gen, f)
			fmt.Fprintf(w, "M 100644 inline src/f%05d.txt\ndata %d\n%s\n", f, len(c), c)
		}
		w.WriteString("\n")
	}
	werr := w.Flush()
	in.Close()
	if err := cmd.Wait(); err != nil || werr != nil {
		b.Fatalf("fast-import: %v %v\n%s", err, werr, stderr.String())
	}
	return dir
}

// diffBenchSize is the size of the whole diff, measured once by git.
func diffBenchSize(b *testing.B, repo string) int64 {
	b.Helper()
	cmd := exec.Command("git", "-C", repo, "diff", "HEAD~1", "HEAD")
	cmd.Env = gitEnv()
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	n, err := io.Copy(io.Discard, out)
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		b.Fatal(err)
	}
	return n
}

// benchGit runs git for benchmark setup.
func benchGit(b *testing.B, dir string, args ...string) {
	b.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = gitEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git %q: %v\n%s", args, err, out)
	}
}

// benchDiff calls diff.text on p and decodes its data.
func benchDiff(b *testing.B, p *Provider, args map[string]any, d *diffData) {
	b.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		b.Fatal(err)
	}
	res, err := p.CallTool(context.Background(), &sdk.Call{Tool: "diff.text", Arguments: raw})
	if err != nil || res.Error != nil {
		b.Fatalf("diff.text: %v %+v", err, res)
	}
	if err := json.Unmarshal(res.Data, d); err != nil {
		b.Fatal(err)
	}
}
