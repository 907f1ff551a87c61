package gitexec

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// testEnv gives git commands run by the tests themselves (not through the
// runner) a deterministic identity and no user or system config.
func testEnv() []string {
	return append(os.Environ(),
		"GIT_AUTHOR_NAME=Test Author", "GIT_AUTHOR_EMAIL=author@example.com",
		"GIT_COMMITTER_NAME=Test Committer", "GIT_COMMITTER_EMAIL=committer@example.com",
		"GIT_AUTHOR_DATE=1700000000 +0000", "GIT_COMMITTER_DATE=1700000000 +0000",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
	)
}

// gitT runs the real git CLI for test setup.
func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = testEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// newRepo creates a repository with one commit of file "a.txt".
func newRepo(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	gitT(t, dir, "init", "-q", "-b", "main")
	writeFile(t, filepath.Join(dir, "a.txt"), "one\n")
	gitT(t, dir, "add", "a.txt")
	gitT(t, dir, "commit", "-q", "-m", "first")
	return dir
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCommandAndHardenedArgs(t *testing.T) {
	tests := []struct {
		args     []string
		injected []string
	}{
		{[]string{"status", "--porcelain=v2"}, []string{"--ignore-submodules=dirty"}},
		{[]string{"diff", "HEAD"}, []string{"--no-ext-diff", "--no-textconv", "--ignore-submodules=dirty", "--submodule=short"}},
		{[]string{"diff-index", "HEAD"}, []string{"--no-ext-diff", "--no-textconv", "--ignore-submodules=dirty", "--submodule=short"}},
		{[]string{"diff-files"}, []string{"--no-ext-diff", "--no-textconv", "--ignore-submodules=dirty", "--submodule=short"}},
		{[]string{"diff-tree", "-r", "HEAD"}, []string{"--no-ext-diff", "--no-textconv", "--submodule=short"}},
		{[]string{"log", "-p"}, []string{"--no-ext-diff", "--no-textconv", "--submodule=short"}},
		{[]string{"show", "-s"}, []string{"--no-ext-diff", "--no-textconv", "--submodule=short"}},
		{[]string{"blame", "f"}, []string{"--no-textconv"}},
		{[]string{"rev-parse", "--git-dir"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.args[0], func(t *testing.T) {
			if got, want := Command("/r", tt.args...), append([]string{"git", "-C", "/r"}, tt.args...); !reflect.DeepEqual(got, want) {
				t.Fatalf("Command = %q, want %q", got, want)
			}
			got := hardenedArgs("/r", tt.args)
			want := slices.Concat(globalFlags, []string{"-C", "/r", tt.args[0]}, tt.injected, tt.args[1:])
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("hardenedArgs = %q, want %q", got, want)
			}
			for _, f := range []string{"--no-optional-locks", "core.fsmonitor=false", "diff.external=", "core.pager=", "core.hooksPath=/dev/null", "protocol.allow=never"} {
				if !slices.Contains(got, f) {
					t.Errorf("missing hardening %q", f)
				}
			}
		})
	}
}

func TestBuildEnv(t *testing.T) {
	parent := []string{
		"HOME=/home/u", "PATH=/usr/bin", "GIT_DIR=/elsewhere/.git", "GIT_EXEC_PATH=/evil",
		"GIT_CONFIG_PARAMETERS='core.pager'='evil'", "GCM_INTERACTIVE=always", "DYLD_INSERT_LIBRARIES=x",
		"SSH_ASKPASS=/evil", "SSH_ASKPASS_REQUIRE=force", "PAGER=less", "LESS=-R", "LV=-c",
		"LD_PRELOAD=/evil.so", "LD_LIBRARY_PATH=/evil", "LC_ALL=fr_FR.UTF-8", "LANG=fr_FR.UTF-8",
		"NO_COLOR=", "MYGIT_DIR=kept",
	}
	env := buildEnv(parent, [][2]string{{"filter.a=b.clean", ""}})
	got := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if _, dup := got[k]; dup {
			t.Errorf("duplicate key %s", k)
		}
		got[k] = v
	}
	tests := []struct {
		key     string
		want    string
		present bool
	}{
		{"HOME", "/home/u", true},
		{"PATH", "/usr/bin", true},
		{"MYGIT_DIR", "kept", true},
		{"GIT_DIR", "", false},
		{"GIT_EXEC_PATH", "", false},
		{"GIT_CONFIG_PARAMETERS", "", false},
		{"GCM_INTERACTIVE", "", false},
		{"DYLD_INSERT_LIBRARIES", "", false},
		{"SSH_ASKPASS", "", false},
		{"SSH_ASKPASS_REQUIRE", "", false},
		{"PAGER", "", false},
		{"LESS", "", false},
		{"LV", "", false},
		{"LD_PRELOAD", "", false},
		{"LD_LIBRARY_PATH", "", false},
		{"GIT_OPTIONAL_LOCKS", "0", true},
		{"GIT_TERMINAL_PROMPT", "0", true},
		{"GIT_CONFIG_NOSYSTEM", "1", true},
		{"GIT_CONFIG_GLOBAL", "/dev/null", true},
		{"GIT_ATTR_NOSYSTEM", "1", true},
		{"GIT_LITERAL_PATHSPECS", "1", true},
		{"GIT_PAGER", "", true},
		{"LC_ALL", "C", true},
		{"LANG", "C", true},
		{"NO_COLOR", "1", true},
		{"GIT_CONFIG_COUNT", "1", true},
		{"GIT_CONFIG_KEY_0", "filter.a=b.clean", true},
		{"GIT_CONFIG_VALUE_0", "", true},
	}
	for _, tt := range tests {
		v, ok := got[tt.key]
		if ok != tt.present || v != tt.want {
			t.Errorf("%s = %q (present %v), want %q (present %v)", tt.key, v, ok, tt.want, tt.present)
		}
	}
}

// TestParentEnvironmentIgnored sets variables that would redirect git in
// the test process itself and checks the runner's git does not see them.
func TestParentEnvironmentIgnored(t *testing.T) {
	repo := newRepo(t)
	other := newRepo(t)
	gitT(t, other, "commit", "-q", "--allow-empty", "-m", "other")
	marker := filepath.Join(t.TempDir(), "marker")
	script := markerScript(t, marker)

	t.Setenv("GIT_DIR", filepath.Join(other, ".git"))
	t.Setenv("GIT_WORK_TREE", other)
	t.Setenv("GIT_EXTERNAL_DIFF", script)
	t.Setenv("GIT_PAGER", script)
	t.Setenv("PAGER", script)
	t.Setenv("GIT_CONFIG_PARAMETERS", "'core.pager'='"+script+"'")

	want := strings.TrimSpace(gitTNoEnv(t, repo, "rev-parse", "HEAD"))
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"toplevel", []string{"rev-parse", "--show-toplevel"}, repo},
		{"head", []string{"rev-parse", "HEAD"}, want},
		{"log", []string{"log", "-1", "--format=%s"}, "first"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Run(context.Background(), repo, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(string(out)); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
	writeFile(t, filepath.Join(repo, "a.txt"), "two\n")
	if _, err := Run(context.Background(), repo, "diff"); err != nil {
		t.Fatal(err)
	}
	assertNoMarker(t, marker)
}

// gitTNoEnv runs git for setup with GIT_DIR and friends stripped, for use
// after a test has poisoned its own environment.
func gitTNoEnv(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = buildEnv(os.Environ(), nil)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// markerScript writes an executable that records each run in marker and
// passes stdin through, so it works as pager, filter, textconv or diff.
func markerScript(t *testing.T, marker string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "evil.sh")
	body := "#!/bin/sh\necho \"$0 $*\" >> '" + marker + "'\ncat\n"
	if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func assertNoMarker(t *testing.T, marker string) {
	t.Helper()
	if b, err := os.ReadFile(marker); err == nil {
		t.Fatalf("repository-configured program ran:\n%s", b)
	}
}

// TestRepoConfigNeverRunsPrograms configures every program-valued setting
// a repository can carry and runs the everyday read commands.
func TestRepoConfigNeverRunsPrograms(t *testing.T) {
	repo := newRepo(t)
	marker := filepath.Join(t.TempDir(), "marker")
	script := markerScript(t, marker)

	writeFile(t, filepath.Join(repo, "b.txt"), "bbb\n")
	writeFile(t, filepath.Join(repo, "c.txt"), "ccc\n")
	gitT(t, repo, "add", ".")
	gitT(t, repo, "commit", "-q", "-m", "second")

	// Configure after committing so setup itself never runs the script.
	for _, kv := range [][2]string{
		{"core.pager", script},
		{"core.fsmonitor", script},
		{"diff.external", script},
		{"diff.evil.command", script},
		{"diff.evil.textconv", script},
		{"filter.evil.clean", script},
		{"filter.evil.smudge", script},
		{"filter.evil.required", "true"},
		{"filter.x=y.clean", script},
		{"filter.x=y.process", script},
		{"merge.evil.driver", script},
		{"pager.status", script},
		{"pager.diff", script},
		{"pager.log", script},
		{"log.showSignature", "true"},
		{"gpg.program", script},
	} {
		gitT(t, repo, "config", kv[0], kv[1])
	}
	writeFile(t, filepath.Join(repo, ".gitattributes"), "*.txt diff=evil filter=evil merge=evil\nc.txt filter=x=y\n")
	// Same size, new mtime: git must hash the content, which is where a
	// clean filter would run.
	time.Sleep(10 * time.Millisecond)
	writeFile(t, filepath.Join(repo, "b.txt"), "BBB\n")
	writeFile(t, filepath.Join(repo, "c.txt"), "CCC\n")
	future := time.Now().Add(2 * time.Second)
	for _, f := range []string{"a.txt", "b.txt", "c.txt"} {
		if err := os.Chtimes(filepath.Join(repo, f), future, future); err != nil {
			t.Fatal(err)
		}
	}

	tests := [][]string{
		{"status"},
		{"status", "--porcelain=v2", "-z"},
		{"diff"},
		{"diff", "HEAD~1", "HEAD"},
		{"log", "-p"},
		{"log", "--format=%H %G?"},
		{"show", "HEAD"},
		{"blame", "b.txt"},
	}
	for _, args := range tests {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			out, err := Run(context.Background(), repo, args...)
			if err != nil {
				t.Fatalf("%v", err)
			}
			if args[0] == "diff" && len(args) == 1 && !bytes.Contains(out, []byte("+BBB")) {
				t.Fatalf("diff output lacks the change:\n%s", out)
			}
			assertNoMarker(t, marker)
		})
	}
}

func TestOutputCaps(t *testing.T) {
	repo := newRepo(t)
	big := strings.Repeat("0123456789abcde\n", (MaxStdout/16)+1) // 4 MiB + 16 bytes
	writeFile(t, filepath.Join(repo, "big.txt"), big)
	gitT(t, repo, "add", "big.txt")
	gitT(t, repo, "commit", "-q", "-m", "big")
	blob := "HEAD:big.txt"

	t.Run("complete mode refuses a prefix", func(t *testing.T) {
		out, err := Run(context.Background(), repo, "cat-file", "blob", blob)
		if !errors.Is(err, ErrOutputLimit) || out != nil {
			t.Fatalf("got %d bytes, err %v; want ErrOutputLimit and no output", len(out), err)
		}
		var ge *Error
		if !errors.As(err, &ge) || !strings.Contains(ge.Details, "no partial result") {
			t.Fatalf("error details: %v", err)
		}
		if want := Command(repo, "cat-file", "blob", blob); !reflect.DeepEqual(ge.Command, want) {
			t.Fatalf("Command = %q, want %q", ge.Command, want)
		}
	})

	tests := []struct {
		name      string
		object    string
		limit     int
		wantBytes int64
		wantLines int64
		wantOut   string
	}{
		{"capture counts the whole stream", blob, 20, int64(len(big)), int64(strings.Count(big, "\n")), big[:20]},
		{"capture without a trailing newline", "HEAD:a.txt", 2, 4, 1, "on"},
		{"capture larger than output", "HEAD:a.txt", 100, 4, 1, "one\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Capture(context.Background(), repo, tt.limit, "cat-file", "blob", tt.object)
			if err != nil {
				t.Fatal(err)
			}
			if c.TotalBytes != tt.wantBytes || c.TotalLines != tt.wantLines || string(c.Output) != tt.wantOut {
				t.Fatalf("got bytes=%d lines=%d out=%q", c.TotalBytes, c.TotalLines, c.Output)
			}
			if c.Truncated() != (tt.wantBytes > int64(len(tt.wantOut))) {
				t.Fatalf("Truncated() = %v", c.Truncated())
			}
		})
	}

	t.Run("partial last line counts", func(t *testing.T) {
		writeFile(t, filepath.Join(repo, "nonl.txt"), "x\ny")
		gitT(t, repo, "add", "nonl.txt")
		gitT(t, repo, "commit", "-q", "-m", "nonl")
		c, err := Capture(context.Background(), repo, 1, "cat-file", "blob", "HEAD:nonl.txt")
		if err != nil || c.TotalLines != 2 || c.TotalBytes != 3 {
			t.Fatalf("got %+v, %v", c, err)
		}
	})
}

func TestStreamSinkError(t *testing.T) {
	repo := newRepo(t)
	boom := errors.New("sink full")
	_, err := Stream(context.Background(), repo, failingWriter{boom}, "cat-file", "blob", "HEAD:a.txt")
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want wrapping %v", err, boom)
	}
}

type failingWriter struct{ err error }

func (f failingWriter) Write([]byte) (int, error) { return 0, f.err }

func TestExitErrorShape(t *testing.T) {
	repo := newRepo(t)
	_, err := Run(context.Background(), repo, "rev-parse", "--verify", "no-such-ref")
	var ge *Error
	if !errors.As(err, &ge) || !errors.Is(err, ErrExit) {
		t.Fatalf("err = %v", err)
	}
	if ge.ExitCode != 128 || !strings.Contains(ge.Details, "fatal") {
		t.Fatalf("ExitCode=%d Details=%q", ge.ExitCode, ge.Details)
	}
	if want := []string{"git", "-C", repo, "rev-parse", "--verify", "no-such-ref"}; !reflect.DeepEqual(ge.Command, want) {
		t.Fatalf("Command = %q", ge.Command)
	}

	tests := []struct {
		name string
		repo string
		args []string
	}{
		{"relative repo", "rel/repo", []string{"status"}},
		{"nul byte", repo, []string{"log", "a\x00b"}},
		{"no subcommand", repo, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Run(context.Background(), tt.repo, tt.args...); !errors.Is(err, ErrUsage) {
				t.Fatalf("err = %v, want ErrUsage", err)
			}
		})
	}
}

// processGone reports whether pid no longer runs (absent or a zombie).
func processGone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && len(s) > i+2 {
		return s[i+2] == 'Z' || s[i+2] == 'X'
	}
	return false
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for !processGone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still running", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func readPid(t *testing.T, p string) int {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		b, err := os.ReadFile(p)
		if err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
				return pid
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid in %s", p)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestProcessGroupKilled uses shell aliases from the repository config to
// make git start long-lived children (aliases only run when invoked by
// name, which providers never do).
func TestProcessGroupKilled(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	repo := newRepo(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	gitT(t, repo, "config", "alias.hang", "!sleep 30 & echo $! > '"+pidFile+"'; wait")
	gitT(t, repo, "config", "alias.orphan", "!sleep 30 >/dev/null 2>&1 & echo $! > '"+pidFile+"'")

	t.Run("timeout kills the group", func(t *testing.T) {
		os.Remove(pidFile)
		r := &Runner{Timeout: 300 * time.Millisecond}
		start := time.Now()
		_, err := r.Run(context.Background(), repo, "hang")
		if !errors.Is(err, ErrTimeout) {
			t.Fatalf("err = %v, want ErrTimeout", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("took %v", d)
		}
		waitGone(t, readPid(t, pidFile))
	})

	t.Run("cancellation kills the group", func(t *testing.T) {
		os.Remove(pidFile)
		ctx, cancel := context.WithCancel(context.Background())
		go func() { readPid(t, pidFile); cancel() }()
		_, err := Run(ctx, repo, "hang")
		if !errors.Is(err, ErrCanceled) {
			t.Fatalf("err = %v, want ErrCanceled", err)
		}
		waitGone(t, readPid(t, pidFile))
	})

	t.Run("group killed after a clean run", func(t *testing.T) {
		os.Remove(pidFile)
		if _, err := Run(context.Background(), repo, "orphan"); err != nil {
			t.Fatal(err)
		}
		waitGone(t, readPid(t, pidFile))
	})
}

func TestFindCandidates(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	mk := func(rel string, mode os.FileMode) string {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := mk("pinned/git", 0o755)
	noexec := mk("noexec/git", 0o644)
	pathGood := mk("safe/git", 0o755)
	shared := mk("shared/git", 0o755)
	if err := os.Chmod(filepath.Dir(shared), 0o777); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link-git")
	if err := os.Symlink(good, link); err != nil {
		t.Fatal(err)
	}
	cwdGit := mk("cwd/git", 0o755)

	tests := []struct {
		name    string
		env     map[string]string
		cwd     string
		want    string // first candidate; "" with wantErr
		wantErr string
		absent  []string
	}{
		{name: "pinned", env: map[string]string{EnvGitPath: good}, want: good},
		{name: "pinned through symlink is canonical", env: map[string]string{EnvGitPath: link}, want: good},
		{name: "pinned empty", env: map[string]string{EnvGitPath: ""}, wantErr: "set but empty"},
		{name: "pinned relative", env: map[string]string{EnvGitPath: "bin/git"}, wantErr: "not an absolute path"},
		{name: "pinned missing", env: map[string]string{EnvGitPath: filepath.Join(dir, "nope")}, wantErr: "not usable"},
		{name: "pinned directory", env: map[string]string{EnvGitPath: dir}, wantErr: "not a regular file"},
		{name: "pinned not executable", env: map[string]string{EnvGitPath: noexec}, wantErr: "not executable"},
		{name: "pinned inside cwd", env: map[string]string{EnvGitPath: cwdGit}, cwd: filepath.Dir(cwdGit), wantErr: "inside the current directory"},
		{
			name:   "PATH skips relative and shared-writable dirs",
			env:    map[string]string{"PATH": strings.Join([]string{"relbin", filepath.Dir(shared), filepath.Dir(noexec), filepath.Dir(pathGood)}, string(os.PathListSeparator))},
			absent: []string{shared, noexec},
		},
		{
			name:   "PATH entry inside cwd skipped",
			env:    map[string]string{"PATH": filepath.Dir(cwdGit)},
			cwd:    filepath.Dir(cwdGit),
			absent: []string{cwdGit},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lookup := func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok }
			cwd := tt.cwd
			if cwd == "" {
				cwd = "/"
			}
			got, err := findCandidates(lookup, cwd)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if tt.want != "" && (err != nil || len(got) == 0 || got[0] != tt.want) {
				t.Fatalf("got %q, %v; want first %q", got, err, tt.want)
			}
			for _, a := range tt.absent {
				if slices.Contains(got, a) {
					t.Fatalf("candidate %q should have been rejected: %q", a, got)
				}
			}
		})
	}

	t.Run("PATH candidate is used after trusted locations", func(t *testing.T) {
		lookup := func(k string) (string, bool) {
			if k == "PATH" {
				return filepath.Dir(pathGood), true
			}
			return "", false
		}
		got, err := findCandidates(lookup, "/")
		if err != nil || !slices.Contains(got, pathGood) {
			t.Fatalf("got %q, %v", got, err)
		}
		if i := slices.Index(got, pathGood); i != len(got)-1 {
			t.Fatalf("PATH candidate not last: %q", got)
		}
	})
}

func TestPickCandidate(t *testing.T) {
	tests := []struct {
		name    string
		cands   []string
		repo    string
		want    string
		wantErr bool
	}{
		{"first outside", []string{"/usr/bin/git", "/repo/bin/git"}, "/repo", "/usr/bin/git", false},
		{"skip inside repo", []string{"/repo/bin/git", "/usr/bin/git"}, "/repo", "/usr/bin/git", false},
		{"prefix is not containment", []string{"/repo2/git"}, "/repo", "/repo2/git", false},
		{"all inside", []string{"/repo/git"}, "/repo", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := pickCandidate(tt.cands, tt.repo)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Fatalf("got %q, %v", got, err)
			}
		})
	}

	// A subdirectory (or the .git directory) of a work tree is the same
	// repository: a git elsewhere in that work tree is inside it too.
	top, _ := filepath.EvalSymlinks(t.TempDir())
	for _, d := range []string{".git", "sub/deeper", "tools"} {
		if err := os.MkdirAll(filepath.Join(top, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	inRepo := filepath.Join(top, "tools", "git")
	for _, tt := range []struct {
		name, repo string
	}{
		{"work tree top", top},
		{"subdirectory", filepath.Join(top, "sub", "deeper")},
		{"git directory", filepath.Join(top, ".git")},
	} {
		t.Run("inside work tree from "+tt.name, func(t *testing.T) {
			got, err := pickCandidate([]string{inRepo, "/usr/bin/git"}, tt.repo)
			if err != nil || got != "/usr/bin/git" {
				t.Fatalf("got %q, %v; want the git outside the work tree", got, err)
			}
			if got, err := pickCandidate([]string{inRepo}, tt.repo); err == nil {
				t.Fatalf("git inside the work tree accepted: %q", got)
			}
		})
	}
	t.Run("an enclosing repository further up is another repository", func(t *testing.T) {
		// A dotfiles repository at the top, a project repository below
		// it: a git in the dotfiles work tree may read the project.
		outer, _ := filepath.EvalSymlinks(t.TempDir())
		for _, d := range []string{".git", "bin", "src/proj/.git", "src/proj/sub"} {
			if err := os.MkdirAll(filepath.Join(outer, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		c := filepath.Join(outer, "bin", "git")
		if got, err := pickCandidate([]string{c}, filepath.Join(outer, "src", "proj", "sub")); err != nil || got != c {
			t.Fatalf("got %q, %v", got, err)
		}
		if _, err := pickCandidate([]string{c}, filepath.Join(outer, "bin")); err == nil {
			t.Fatal("a git inside the outer work tree was accepted for that work tree")
		}
	})
	t.Run("a sibling directory without .git is not the repository", func(t *testing.T) {
		plain := filepath.Join(filepath.Dir(top), filepath.Base(top)+"-plain")
		if err := os.MkdirAll(filepath.Join(plain, "a"), 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(plain) })
		c := filepath.Join(plain, "bin", "git")
		if got, err := pickCandidate([]string{c}, filepath.Join(plain, "a")); err != nil || got != c {
			t.Fatalf("got %q, %v", got, err)
		}
	})
}

func TestOverridesFor(t *testing.T) {
	got := overridesFor([]string{
		"filter.lfs.clean", "filter.lfs.required", "filter.a=b.c.process", "diff.csharp.xfuncname",
		"diff.evil.textconv", "diff.evil.command", "merge.m.driver", "merge.m.name", "diff.external", "",
	})
	want := [][2]string{
		{"filter.lfs.clean", ""}, {"filter.lfs.required", "false"},
		{"filter.a=b.c.process", ""}, {"filter.a=b.c.required", "false"},
		{"diff.evil.textconv", ""}, {"diff.evil.command", ""},
		{"merge.m.driver", ""},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

// TestReadsDoNotRewriteIndex makes the index stat-dirty (a file rewritten
// with identical content) so commands that like to refresh it would write.
func TestReadsDoNotRewriteIndex(t *testing.T) {
	repo := newRepo(t)
	index := filepath.Join(repo, ".git", "index")
	future := time.Now().Add(5 * time.Second)
	writeFile(t, filepath.Join(repo, "a.txt"), "one\n")
	if err := os.Chtimes(filepath.Join(repo, "a.txt"), future, future); err != nil {
		t.Fatal(err)
	}
	fingerprint := func() string {
		fi, err := os.Stat(index)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(index)
		return fi.ModTime().String() + string(b)
	}
	before := fingerprint()
	for _, args := range [][]string{
		{"status"},
		{"status", "--porcelain=v2", "-z", "--untracked-files=all"},
		{"diff"},
		{"diff", "HEAD"},
		{"diff", "--stat"},
		{"log", "-p", "-1"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			out, err := Run(context.Background(), repo, args...)
			if err != nil {
				t.Fatal(err)
			}
			if args[0] == "diff" && len(out) != 0 {
				t.Fatalf("stat-only change reported as a diff: %q", out)
			}
			if fingerprint() != before {
				t.Fatal("index rewritten")
			}
			if _, err := os.Stat(index + ".lock"); err == nil {
				t.Fatal("index.lock left behind")
			}
		})
	}
}
