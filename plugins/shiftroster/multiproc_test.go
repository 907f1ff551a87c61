//go:build unix

package shiftroster

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fluxgit/fluxgit/internal/roster"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// Helper processes: the test binary re-runs itself with helperVar set to a
// mode, so several real OS processes share one state directory exactly as
// separate fluxgit processes would.
const helperVar = "SHIFTROSTER_TEST_HELPER"

// resultPrefix marks the helper's report line on stdout.
const resultPrefix = "RESULT "

// helperEnv is the environment of a helper process: the parent's, minus
// any SHIFT_* setting, plus extra.
func helperEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SHIFT_") && !strings.HasPrefix(kv, helperVar+"=") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

func helperCommand(bin, mode string, env ...string) *exec.Cmd {
	cmd := exec.Command(bin, "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = helperEnv(append([]string{helperVar + "=" + mode}, env...)...)
	return cmd
}

// TestHelperProcess is not a test: it is the body of the helper processes.
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(helperVar)
	if mode == "" {
		t.Skip("helper process body; runs only when re-executed by another test")
	}
	cfg := Config{StateDir: os.Getenv(roster.EnvStateDir), DatabaseURL: os.Getenv(roster.EnvDatabaseURL), DefaultWorkspace: "helper-default", Logger: slog.New(slog.DiscardHandler)}
	if mode == "contend" {
		// Contention proves serialization (no lost update, no duplicate
		// id), not speed: under -race on a loaded 2-core machine eight
		// writers can queue past the 3 s default, which the "hold" helper
		// tests on its own. A long budget keeps this test about one thing.
		cfg.Store.Budget = time.Minute
	}
	p := NewWithConfig(cfg)
	defer p.Close()
	var report any
	switch mode {
	case "contend":
		report = helperContend(p)
	case "hold":
		helperHold(p)
	case "bench":
		report = helperBench(p)
	case "call":
		res, err := p.CallTool(context.Background(), &sdk.Call{Tool: os.Getenv("HELPER_TOOL"), Arguments: json.RawMessage(os.Getenv("HELPER_ARGS"))})
		if err != nil {
			report = map[string]string{"goError": err.Error()}
		} else {
			report = res
		}
	default:
		t.Fatalf("unknown helper mode %q", mode)
	}
	b, _ := json.Marshal(report)
	fmt.Printf("\n%s%s\n", resultPrefix, b)
}

// helperResult finds the report line in a helper's stdout.
func helperResult(t *testing.T, out string, v any) {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(l, resultPrefix); ok {
			if err := json.Unmarshal([]byte(rest), v); err != nil {
				t.Fatalf("helper report %q: %v", rest, err)
			}
			return
		}
	}
	t.Fatalf("helper printed no report:\n%s", out)
}

func rawCall(p *Provider, tool string, args map[string]any) (*sdk.Result, error) {
	raw, _ := json.Marshal(args)
	return p.CallTool(context.Background(), &sdk.Call{Tool: tool, Arguments: raw})
}

type contendReport struct {
	Created []string `json:"created"`
	Kept    []string `json:"kept"`
	Removed []string `json:"removed"`
	Errors  []string `json:"errors"`
	MaxMs   float64  `json:"maxMs"`
}

// helperContend waits for "go" on stdin, then runs HELPER_CYCLES rounds of
// check-in, patch and (two rounds in three) check-out, checking every
// snapshot it gets back.
func helperContend(p *Provider) contendReport {
	var rep contendReport
	idx, _ := strconv.Atoi(os.Getenv("HELPER_INDEX"))
	cycles, _ := strconv.Atoi(os.Getenv("HELPER_CYCLES"))
	ws := os.Getenv("HELPER_WS")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	fail := func(format string, a ...any) { rep.Errors = append(rep.Errors, fmt.Sprintf(format, a...)) }
	timed := func(tool string, args map[string]any, v any) bool {
		start := time.Now()
		res, err := rawCall(p, tool, args)
		if ms := float64(time.Since(start).Microseconds()) / 1000; ms > rep.MaxMs {
			rep.MaxMs = ms
		}
		switch {
		case err != nil:
			fail("%s: %v", tool, err)
			return false
		case res.Error != nil:
			fail("%s: tool error %d %s %s", tool, res.Error.Code, res.Error.Message, res.Error.Data)
			return false
		}
		if err := json.Unmarshal(res.Data, v); err != nil {
			fail("%s: %v", tool, err)
			return false
		}
		return true
	}
	has := func(rows []roster.Row, id string) bool {
		return slices.ContainsFunc(rows, func(r roster.Row) bool { return r.WorkerID == id })
	}
	for i := range cycles {
		var in CheckInData
		if !timed(ToolCheckIn, map[string]any{"gist": fmt.Sprintf("p%d-c%d", idx, i), "files": []string{fmt.Sprintf("f%d.go", idx)}, "workspace": ws}, &in) {
			continue
		}
		rep.Created = append(rep.Created, in.WorkerID)
		if in.Change != roster.Created || !has(in.ActiveWorkers, in.WorkerID) {
			fail("new session %s missing from its own snapshot (%s)", in.WorkerID, in.Change)
		}
		var up CheckInData
		if timed(ToolCheckIn, map[string]any{"gist": fmt.Sprintf("p%d-c%d-updated", idx, i), "workspace": ws, "workerId": in.WorkerID}, &up) {
			if up.Change != roster.Updated || up.CheckedInAt != in.CheckedInAt || !slices.Equal(up.Files, in.Files) {
				fail("patch of %s: %+v", in.WorkerID, up)
			}
		}
		if i%3 == 0 {
			rep.Kept = append(rep.Kept, in.WorkerID)
			continue
		}
		var out CheckOutData
		if timed(ToolCheckOut, map[string]any{"workerId": in.WorkerID, "workspace": ws}, &out) {
			if !out.Removed || has(out.ActiveWorkers, in.WorkerID) {
				fail("check-out of %s: removed=%v", in.WorkerID, out.Removed)
			}
			rep.Removed = append(rep.Removed, in.WorkerID)
		}
	}
	return rep
}

// TestConcurrentProcesses runs 8 processes checking in, patching and
// checking out against one new roster (a state directory, or a PostgreSQL
// database) at once: nothing is lost
// or duplicated, ids are unique, and no SQLITE_BUSY surfaces within the
// 3 s budget (opening included: all 8 create and migrate the same file).
func TestConcurrentProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns 8 processes")
	}
	eachBackend(t, func(t *testing.T, base Config) {
		const procs, cycles = 8, 12
		dir := filepath.Join(base.StateDir, "state")
		env := []string{roster.EnvStateDir + "=" + dir}
		if base.DatabaseURL != "" {
			env = append(env, roster.EnvDatabaseURL+"="+base.DatabaseURL)
		}
		ws := "shared workspace"
		type child struct {
			cmd    *exec.Cmd
			stdin  io.WriteCloser
			stdout bytes.Buffer
			stderr bytes.Buffer
		}
		children := make([]*child, procs)
		for i := range children {
			c := &child{cmd: helperCommand(os.Args[0], "contend", append(env, "HELPER_WS="+ws,
				"HELPER_INDEX="+strconv.Itoa(i), "HELPER_CYCLES="+strconv.Itoa(cycles))...)}
			c.cmd.Stdout, c.cmd.Stderr = &c.stdout, &c.stderr
			var err error
			if c.stdin, err = c.cmd.StdinPipe(); err != nil {
				t.Fatal(err)
			}
			if err := c.cmd.Start(); err != nil {
				t.Fatal(err)
			}
			children[i] = c
		}
		for _, c := range children {
			_, _ = io.WriteString(c.stdin, "go\n")
			_ = c.stdin.Close()
		}
		created := map[string]int{}
		kept := map[string]bool{}
		var maxMs float64
		for i, c := range children {
			if err := c.cmd.Wait(); err != nil {
				t.Fatalf("helper %d: %v\nstdout:\n%s\nstderr:\n%s", i, err, c.stdout.String(), c.stderr.String())
			}
			var rep contendReport
			helperResult(t, c.stdout.String(), &rep)
			for _, e := range rep.Errors {
				t.Errorf("helper %d: %s", i, e)
			}
			if len(rep.Created) != cycles {
				t.Errorf("helper %d created %d sessions, want %d", i, len(rep.Created), cycles)
			}
			for _, id := range rep.Created {
				created[id]++
			}
			for _, id := range rep.Kept {
				kept[id] = true
			}
			maxMs = max(maxMs, rep.MaxMs)
		}
		for id, n := range created {
			if n > 1 {
				t.Errorf("worker id %s handed out %d times", id, n)
			}
		}
		if len(created) != procs*cycles {
			t.Errorf("%d distinct sessions created, want %d", len(created), procs*cycles)
		}
		s := storeFor(t, Config{StateDir: dir, DatabaseURL: base.DatabaseURL})
		rows, err := s.List(context.Background(), ws)
		if err != nil {
			t.Fatal(err)
		}
		var got, want []string
		for _, r := range rows {
			got = append(got, r.WorkerID)
			if !strings.HasSuffix(r.Gist, "-updated") {
				t.Errorf("kept session %s lost its patch: %q", r.WorkerID, r.Gist)
			}
		}
		for id := range kept {
			want = append(want, id)
		}
		sort.Strings(got)
		sort.Strings(want)
		if !slices.Equal(got, want) {
			t.Errorf("final roster %v\nwant exactly the kept sessions %v", got, want)
		}
		t.Logf("%d processes x %d cycles: slowest call %.1f ms", procs, cycles, maxMs)
	})
}

// helperHold performs HELPER_OP and, inside its transaction, just before
// the commit, announces HOLDING and sleeps until it is killed.
func helperHold(p *Provider) {
	p.cfg.Store.TxHook = func(op, stage string) {
		if stage == "commit" {
			fmt.Println("HOLDING")
			_ = os.Stdout.Sync()
			time.Sleep(time.Hour)
		}
	}
	ws, id := os.Getenv("HELPER_WS"), os.Getenv("HELPER_WORKER")
	switch os.Getenv("HELPER_OP") {
	case "new":
		_, _ = rawCall(p, ToolCheckIn, map[string]any{"gist": "never committed", "workspace": ws})
	case "update":
		_, _ = rawCall(p, ToolCheckIn, map[string]any{"gist": "never committed", "files": []string{}, "workspace": ws, "workerId": id})
	case "checkout":
		_, _ = rawCall(p, ToolCheckOut, map[string]any{"workerId": id, "workspace": ws})
	}
}

// TestKillMidWrite kills (SIGKILL) a process inside its write transaction,
// after its mutation and before its commit, for each kind of write: the
// roster stays consistent, keeps exactly the committed state, and the lock
// is free for the next writer.
func TestKillMidWrite(t *testing.T) {
	dir := realTempDir(t)
	s := openStore(t, dir, roster.Options{})
	ctx := context.Background()
	var seeded []roster.Row
	for i := range 3 {
		res, err := s.CheckIn(ctx, roster.CheckInInput{Workspace: "w", Gist: fmt.Sprintf("committed %d", i), Files: []string{"a"}, HasFiles: true})
		if err != nil {
			t.Fatal(err)
		}
		seeded = res.Workers
	}
	for _, op := range []string{"new", "update", "checkout"} {
		t.Run(op, func(t *testing.T) {
			cmd := helperCommand(os.Args[0], "hold", roster.EnvStateDir+"="+dir, "HELPER_WS=w", "HELPER_OP="+op, "HELPER_WORKER="+seeded[0].WorkerID)
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			holding := make(chan bool, 1)
			go func() {
				sc := bufio.NewScanner(stdout)
				for sc.Scan() {
					if sc.Text() == "HOLDING" {
						holding <- true
						break
					}
				}
				close(holding)
				_, _ = io.Copy(io.Discard, stdout)
			}()
			select {
			case ok := <-holding:
				if !ok {
					_ = cmd.Wait()
					t.Fatalf("helper ended without holding a transaction:\n%s", stderr.String())
				}
			case <-time.After(30 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatalf("helper never reached its commit:\n%s", stderr.String())
			}
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()

			rows, err := s.List(ctx, "w")
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(rows, seeded, func(a, b roster.Row) bool {
				return a.WorkerID == b.WorkerID && a.Gist == b.Gist && slices.Equal(a.Files, b.Files) && a.UpdatedAt == b.UpdatedAt
			}) {
				t.Fatalf("roster after kill -9:\n%+v\nwant the committed state:\n%+v", rows, seeded)
			}
			fresh, err := roster.Open(ctx, dir, roster.Options{}) // migrates nothing, passes quick_check
			if err != nil {
				t.Fatalf("reopen after kill -9: %v", err)
			}
			_ = fresh.Close()
			start := time.Now()
			res, err := s.CheckIn(ctx, roster.CheckInInput{Workspace: "probe", Gist: "after the kill"})
			if err != nil {
				t.Fatalf("write after kill -9: %v", err)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("the dead process's lock lingered: next write took %s", d)
			}
			if _, err := s.CheckOut(ctx, "probe", res.Session.WorkerID); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestReadOnlyStateDir: a state directory the process cannot write is a
// store_readonly tool error naming the directory, whether the roster
// already exists there or the directory cannot even be created. As root
// (who may write anywhere) the check runs in a helper process as nobody.
func TestReadOnlyStateDir(t *testing.T) {
	base, err := os.MkdirTemp("", "shiftroster-ro-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = filepath.Walk(base, func(p string, _ os.FileInfo, _ error) error { return os.Chmod(p, 0o755) })
		_ = os.RemoveAll(base)
	})
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	existing := filepath.Join(base, "existing")
	s, err := roster.Open(context.Background(), existing, roster.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CheckIn(context.Background(), roster.CheckInInput{Workspace: "w", Gist: "kept"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	roParent := filepath.Join(base, "ro-parent")
	if err := os.Mkdir(roParent, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(existing)
	for _, e := range entries {
		if err := os.Chmod(filepath.Join(existing, e.Name()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{existing, roParent} {
		if err := os.Chmod(d, 0o555); err != nil {
			t.Fatal(err)
		}
	}
	if os.Geteuid() == 0 {
		// The call runs as nobody, who must own the roster for it to be
		// trusted at all (another owner is state_dir_unsafe); it still
		// cannot write there.
		chownAll(t, existing, 65534)
		defer chownAll(t, existing, 0)
	}

	run := runInProcess
	if os.Geteuid() == 0 {
		run = runAsNobody(t, base)
	}
	for _, tc := range []struct{ name, dir, blame string }{
		{"existing roster", existing, existing},
		{"directory cannot be created", filepath.Join(roParent, "state"), filepath.Join(roParent, "state")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := run(t, tc.dir, ToolCheckIn, `{"gist":"g","workspace":"w"}`)
			checkPayload(t, ToolCheckIn, res)
			if res.Error == nil || res.Error.Code != CodeStoreReadOnly {
				t.Fatalf("want tool error %d, got %+v", CodeStoreReadOnly, res)
			}
			var d StoreErrorData
			if err := json.Unmarshal(res.Error.Data, &d); err != nil {
				t.Fatal(err)
			}
			if d.Reason != roster.ReasonReadOnly || !strings.Contains(res.Error.Message, tc.blame) || !strings.Contains(d.Recovery.Hint, roster.EnvStateDir) {
				t.Fatalf("error %+v data %+v", res.Error, d)
			}
		})
	}
	// Nothing was lost or changed.
	if os.Geteuid() == 0 {
		chownAll(t, existing, 0)
	}
	for _, d := range []string{existing} {
		_ = os.Chmod(d, 0o755)
	}
	again := openStore(t, existing, roster.Options{})
	if rows, err := again.List(context.Background(), "w"); err != nil || len(rows) != 1 || rows[0].Gist != "kept" {
		t.Fatalf("roster after the read-only attempts: %+v %v", rows, err)
	}
}

func chownAll(t *testing.T, dir string, uid int) {
	t.Helper()
	if err := filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, uid)
	}); err != nil {
		t.Fatal(err)
	}
}

type runner func(t *testing.T, stateDir, tool, args string) *sdk.Result

func runInProcess(t *testing.T, stateDir, tool, args string) *sdk.Result {
	t.Helper()
	p := testProvider(t, stateDir, defaultWS)
	res, err := p.CallTool(context.Background(), &sdk.Call{Tool: tool, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// runAsNobody copies the test binary where nobody can run it and returns a
// runner that makes the call in a helper process with uid/gid 65534.
func runAsNobody(t *testing.T, base string) runner {
	t.Helper()
	bin := filepath.Join(base, "helper.test")
	src, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, src, 0o755); err != nil {
		t.Fatal(err)
	}
	return func(t *testing.T, stateDir, tool, args string) *sdk.Result {
		t.Helper()
		cmd := helperCommand(bin, "call", roster.EnvStateDir+"="+stateDir, "HELPER_TOOL="+tool, "HELPER_ARGS="+args, "HOME="+base)
		cmd.Dir = base
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			if errors.Is(err, syscall.EPERM) {
				t.Skipf("cannot drop privileges to run as nobody: %v", err)
			}
			t.Fatalf("helper as nobody: %v\n%s\n%s", err, stdout.String(), stderr.String())
		}
		var res sdk.Result
		helperResult(t, stdout.String(), &res)
		return &res
	}
}
