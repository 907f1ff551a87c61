package agentdetect

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// helperEnv makes the test binary a stand-in agent process: the tests
// start it under agent-like names (argv[0] and argv[1] are whatever the
// test chooses) with its cwd inside a temporary repository.
const helperEnv = "AGENTDETECT_TEST_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "sleep":
		time.Sleep(10 * time.Minute)
		os.Exit(0)
	case "parent":
		// An agent that runs a child (as an agent runs its fluxgit
		// sidecar): print the child's pid, then wait.
		self, _ := os.Executable()
		c := exec.Command(self)
		c.Env = append(os.Environ(), helperEnv+"=sleep")
		if err := c.Start(); err != nil {
			os.Exit(2)
		}
		fmt.Println(c.Process.Pid)
		time.Sleep(10 * time.Minute)
		c.Process.Kill()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// startHelper starts the test binary as argv in dir, and kills it when
// the test ends.
func startHelper(t testing.TB, dir, mode string, argv ...string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := exec.Command(self)
	c.Args = argv
	c.Dir = dir
	c.Env = append(os.Environ(), helperEnv+"="+mode)
	if err := c.Start(); err != nil {
		t.Fatalf("start %v: %v", argv, err)
	}
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	return c
}

// newRepo makes a temporary git repository (git init when git is
// installed) and returns its canonical path.
func newRepo(t testing.TB, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if git, err := exec.LookPath("git"); err == nil {
		if out, err := exec.Command(git, "init", "-q", dir).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v: %s", err, out)
		}
	} else if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return real
}

// staticSource is a Source returning fixed findings, for the merge rules.
type staticSource struct {
	name     string
	findings []Finding
	err      error
	block    chan struct{} // ignore ctx and answer only when closed
	panics   bool
}

func (s staticSource) Name() string { return s.name }

func (s staticSource) Scan(ctx context.Context, _ Query) ([]Finding, error) {
	if s.panics {
		panic("boom")
	}
	if s.block != nil {
		<-s.block
	}
	return s.findings, s.err
}

func intp(i int) *int        { return &i }
func msp(t time.Time) *int64 { ms := t.UnixMilli(); return &ms }
func strp(s string) *string  { return &s }

func itoa(i int) string { return fmt.Sprint(i) }
