package gitexec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCapturePrefixBudgets: a stream that fits its budget comes back whole
// with exact totals and no cut; one byte or one line more and the capture
// reports the cut, keeps only the budgeted prefix, and counts what it read.
func TestCapturePrefixBudgets(t *testing.T) {
	repo := newRepo(t)
	var b strings.Builder
	for i := range 10 {
		fmt.Fprintf(&b, "line %03d\n", i) // 9 bytes each
	}
	ten := b.String()
	writeFile(t, filepath.Join(repo, "ten.txt"), ten)
	gitT(t, repo, "add", "ten.txt")
	gitT(t, repo, "commit", "-q", "-m", "ten")

	tests := []struct {
		name    string
		budget  Budget
		wantOut string
		wantCut bool
	}{
		{"budget larger than the stream", Budget{Bytes: 1000}, ten, false},
		{"budget exactly the stream", Budget{Bytes: len(ten)}, ten, false},
		{"one byte short", Budget{Bytes: len(ten) - 1}, ten[:len(ten)-1], true},
		{"small byte budget", Budget{Bytes: 5}, ten[:5], true},
		{"line budget equal to the lines", Budget{Bytes: 1000, Lines: 10}, ten, false},
		{"line budget one short", Budget{Bytes: 1000, Lines: 9}, ten, true},
		{"zero byte budget", Budget{Bytes: 0}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Default.CapturePrefix(context.Background(), repo, tt.budget, "cat-file", "blob", "HEAD:ten.txt")
			if err != nil {
				t.Fatal(err)
			}
			if string(c.Output) != tt.wantOut || c.Cut != tt.wantCut {
				t.Fatalf("out=%q cut=%v; want %q cut=%v", c.Output, c.Cut, tt.wantOut, tt.wantCut)
			}
			if !tt.wantCut && (c.TotalBytes != int64(len(ten)) || c.TotalLines != 10) {
				t.Fatalf("uncut totals bytes=%d lines=%d, want exact %d/10", c.TotalBytes, c.TotalLines, len(ten))
			}
			if c.TotalBytes < int64(len(c.Output)) || c.TotalBytes > int64(len(ten)) {
				t.Fatalf("TotalBytes %d outside [%d,%d]", c.TotalBytes, len(c.Output), len(ten))
			}
			if c.Truncated() != (tt.wantCut || len(tt.wantOut) < len(ten)) {
				t.Fatalf("Truncated() = %v", c.Truncated())
			}
		})
	}
}

// TestPrefixStopKillsGit: git that would write without end (a shell alias
// running `yes`, from the repository config; providers never run aliases)
// is killed once the budget is read. Without the stop the call would run
// into MaxStream and fail with ErrOutputLimit, so a nil error, a cut and a
// dead process show that reading stopped at the budget and git with it.
func TestPrefixStopKillsGit(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	repo := newRepo(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	gitT(t, repo, "config", "alias.spew", "!echo $$ > '"+pidFile+"'; exec yes")

	t.Run("CapturePrefix", func(t *testing.T) {
		os.Remove(pidFile)
		c, err := Default.CapturePrefix(context.Background(), repo, Budget{Bytes: 4096}, "spew")
		if err != nil {
			t.Fatalf("err = %v", err)
		}
		if !c.Cut || len(c.Output) != 4096 || string(c.Output[:4]) != "y\ny\n" {
			t.Fatalf("cut=%v len=%d", c.Cut, len(c.Output))
		}
		if c.TotalBytes >= MaxStream {
			t.Fatalf("read %d bytes; reading did not stop at the budget", c.TotalBytes)
		}
		waitGone(t, readPid(t, pidFile))
	})

	t.Run("Stream sink returns ErrStop", func(t *testing.T) {
		os.Remove(pidFile)
		sink := &stopAfter{n: 10000}
		n, err := Default.Stream(context.Background(), repo, sink, "spew")
		if err != nil {
			t.Fatalf("err = %v", err)
		}
		if n < 10000 || n >= MaxStream || sink.got < 10000 {
			t.Fatalf("read %d bytes, sink saw %d", n, sink.got)
		}
		waitGone(t, readPid(t, pidFile))
	})

	t.Run("a wrapped ErrStop stops too", func(t *testing.T) {
		os.Remove(pidFile)
		sink := &stopAfter{n: 1, wrap: true}
		if _, err := Default.Stream(context.Background(), repo, sink, "spew"); err != nil {
			t.Fatalf("err = %v", err)
		}
		waitGone(t, readPid(t, pidFile))
	})

	t.Run("other sink errors still fail", func(t *testing.T) {
		boom := errors.New("sink broke")
		_, err := Default.Stream(context.Background(), repo, failingWriter{boom}, "spew")
		if !errors.Is(err, boom) || errors.Is(err, ErrStop) {
			t.Fatalf("err = %v, want %v", err, boom)
		}
	})
}

// TestPrefixKeepsGitErrors: a git that fails before reaching the budget is
// reported as before; the budget never hides an error.
func TestPrefixKeepsGitErrors(t *testing.T) {
	repo := newRepo(t)
	_, err := Default.CapturePrefix(context.Background(), repo, Budget{Bytes: 10}, "cat-file", "blob", "HEAD:missing.txt")
	var ge *Error
	if !errors.As(err, &ge) || !errors.Is(err, ErrExit) || ge.ExitCode != 128 {
		t.Fatalf("err = %v, want exit 128", err)
	}
}

// stopAfter accepts writes until it has seen n bytes, then asks for a stop.
type stopAfter struct {
	n, got int
	wrap   bool
}

func (s *stopAfter) Write(p []byte) (int, error) {
	s.got += len(p)
	if s.got >= s.n {
		if s.wrap {
			return 0, fmt.Errorf("have enough: %w", ErrStop)
		}
		return 0, ErrStop
	}
	return len(p), nil
}
