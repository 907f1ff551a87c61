package agentdetect

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestReadTailLines(t *testing.T) {
	long := strings.Repeat("x", 100)
	cases := []struct {
		name    string
		content string
		max     int64
		want    []string
	}{
		{"whole small file", "a\nb\n", 1024, []string{"a", "b"}},
		{"last line without newline is kept", "a\nb", 1024, []string{"a", "b"}},
		{"empty lines skipped", "\n\na\n\n", 1024, []string{"a"}},
		{"empty file", "", 1024, nil},
		{"partial first line dropped", long + "\nkeep1\nkeep2\n", 14, []string{"keep1", "keep2"}},
		{"window starting on a line boundary keeps that line", "aaaa\nbbbb\ncccc\n", 11, []string{"bbbb", "cccc"}},
		{"window starting inside a line drops it", "aaaa\nbbbb\ncccc\n", 10, []string{"cccc"}},
		{"window inside one long line yields nothing", long, 10, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "f.jsonl")
			if err := os.WriteFile(p, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			lines, fi, err := readTailLines(p, tc.max)
			if err != nil || fi == nil {
				t.Fatalf("readTailLines: %v", err)
			}
			var got []string
			for _, l := range lines {
				got = append(got, string(l))
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("lines %q, want %q", got, tc.want)
			}
		})
	}
}

func TestStoreFilesRefuseNonRegular(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target.jsonl")
	if err := os.WriteFile(target, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := mkfifo(fifo); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, p := range []string{link, fifo, dir, filepath.Join(dir, "missing")} {
		t.Run(filepath.Base(p), func(t *testing.T) {
			// A FIFO would block an open without O_NONBLOCK; the Lstat
			// check refuses it first.
			if _, _, err := readTailLines(p, 0); err == nil {
				t.Fatal("readTailLines accepted a non-regular file")
			}
			if _, err := readHeadLine(p, 0); err == nil {
				t.Fatal("readHeadLine accepted a non-regular file")
			}
			if _, _, err := readStoreSmall(p, 1<<10); err == nil {
				t.Fatal("readStoreSmall accepted a non-regular file")
			}
		})
	}
}

func TestReadHeadLine(t *testing.T) {
	cases := []struct {
		name, content string
		max           int64
		want          string
		wantErr       bool
	}{
		{"first of several", "head\nrest\n", 64, "head", false},
		{"single line without newline", "only", 64, "only", false},
		{"first line longer than the window", strings.Repeat("y", 80) + "\n", 64, "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "f")
			if err := os.WriteFile(p, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := readHeadLine(p, tc.max)
			if (err != nil) != tc.wantErr || string(got) != tc.want {
				t.Fatalf("readHeadLine = %q, %v; want %q (error %v)", got, err, tc.want, tc.wantErr)
			}
		})
	}
}
