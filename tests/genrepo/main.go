// Command genrepo builds a large synthetic git repository for benchmarks:
// FILES files in nested directories and COMMITS commits touching a few
// files each, written through `git fast-import` so it takes seconds, not
// the minutes thousands of `git commit` runs would.
//
//	go run ./tests/genrepo -dir /tmp/big -files 20000 -commits 5000
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
)

func main() {
	dir := flag.String("dir", "", "repository to create (must not exist)")
	files := flag.Int("files", 20000, "number of files")
	commits := flag.Int("commits", 5000, "number of commits")
	dirty := flag.Int("dirty", 50, "work-tree files to modify after checkout, so status has work to report")
	flag.Parse()
	if *dir == "" {
		log.Fatal("genrepo: -dir is required")
	}
	if err := generate(*dir, *files, *commits, *dirty); err != nil {
		log.Fatalf("genrepo: %v", err)
	}
}

func path(i int) string {
	return fmt.Sprintf("pkg%02d/mod%03d/file%05d.txt", i%50, (i/50)%40, i)
}

func run(dir string, stdin io.Reader, args ...string) error {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Stdin = stdin
	cmd.Stderr = os.Stderr
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("git %v: %w", args, err)
	}
	return nil
}

func generate(dir string, nFiles, nCommits, nDirty int) error {
	if _, err := os.Stat(dir); err == nil {
		return fmt.Errorf("%s already exists", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := run(dir, nil, "init", "-q", "-b", "main"); err != nil {
		return err
	}
	pr, pw := io.Pipe()
	errc := make(chan error, 1)
	go func() {
		err := run(dir, pr, "fast-import", "--quiet")
		// Unblock the writer if fast-import died early.
		pr.CloseWithError(fmt.Errorf("fast-import ended: %v", err))
		errc <- err
	}()
	w := bufio.NewWriterSize(pw, 1<<20)
	when := int64(1_700_000_000)
	for c := 0; c < nCommits; c++ {
		msg := fmt.Sprintf("feat(pkg%02d): change %d", c%50, c)
		fmt.Fprintf(w, "commit refs/heads/main\ncommitter Bench <bench@example.com> %d +0000\ndata %d\n%s\n", when+int64(c)*60, len(msg), msg)
		if c == 0 {
			for i := 0; i < nFiles; i++ {
				body := fmt.Sprintf("file %d\nline two\n", i)
				fmt.Fprintf(w, "M 100644 inline %s\ndata %d\n%s\n", path(i), len(body), body)
			}
		} else {
			for k := 0; k < 3; k++ {
				i := (c*7919 + k*104729) % nFiles
				body := fmt.Sprintf("file %d\nrevision %d\n", i, c)
				fmt.Fprintf(w, "M 100644 inline %s\ndata %d\n%s\n", path(i), len(body), body)
			}
		}
		w.WriteString("\n")
	}
	ferr := w.Flush()
	pw.Close()
	if err := <-errc; err != nil {
		return err
	}
	if ferr != nil {
		return ferr
	}
	if err := run(dir, nil, "checkout", "-q", "-f", "main"); err != nil {
		return err
	}
	for i := 0; i < nDirty && i < nFiles; i++ {
		p := filepath.Join(dir, path(i*13%nFiles))
		if err := os.WriteFile(p, []byte("dirty\n"), 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, "untracked.txt"), []byte("new\n"), 0o644)
}
