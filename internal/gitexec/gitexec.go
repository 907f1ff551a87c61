// Package gitexec is the single place where fluxgit starts the git CLI.
//
// Every provider that reads a repository goes through a Runner so that one
// set of rules applies everywhere: a git executable resolved from trusted
// locations, an environment stripped of anything that could redirect git
// (GIT_DIR, GIT_EXEC_PATH, LD_PRELOAD, ...), configuration overrides that stop
// repository config from starting programs (fsmonitor, pager, external diff,
// textconv, filter and merge drivers), no optional locks so read-only calls
// never rewrite the index, a null stdin, a timeout, hard output caps, a
// process-group kill so nothing git spawned outlives the call, a
// parent-death tie so git does not outlive a killed provider either, and a
// bound on how many git processes run at once.
//
// Repositories are treated as untrusted input: a repository handed to an
// agent may come from anywhere, and its .git/config is the classic place to
// hide a command that git would otherwise run on a plain `git status`.
package gitexec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Limits applied by a Runner. They mirror the contract's limits table and
// are exported so providers can describe them in errors and docs.
const (
	// DefaultTimeout bounds one git invocation when Runner.Timeout is zero.
	DefaultTimeout = 30 * time.Second
	// MaxStdout is the complete-mode stdout cap. Exceeding it is an error:
	// a caller must never mistake a prefix for the whole answer.
	MaxStdout = 4 << 20
	// MaxStream caps the total stdout a streaming call reads. Beyond it
	// git is killed, so a pathological diff cannot pin a CPU for minutes.
	MaxStream = 64 << 20
	// StderrCapture is how much stderr is kept for error details.
	StderrCapture = 64 << 10
	// MaxStderr is the most stderr a call may produce before it is killed;
	// git writing megabytes of warnings means something is wrong.
	MaxStderr = 1 << 20
	// PipeGrace is how long Wait lets a descendant that inherited git's
	// pipes keep them open after git itself has exited (the reference's
	// 2 s): then the pipes are closed, the process group is killed and
	// the call answers. Without it a wrapper or hook whose background child
	// keeps stdout open would hold the call, and the server, indefinitely.
	PipeGrace = 2 * time.Second
)

// pipeGrace is the grace the runners apply; PipeGrace except in tests,
// which shorten it so a held pipe does not cost them seconds.
var pipeGrace = PipeGrace

// Sentinel causes carried by Error.Err, for errors.Is.
var (
	// ErrTimeout means the call ran past its deadline and was killed.
	ErrTimeout = errors.New("git command timed out")
	// ErrCanceled means the caller's context ended first.
	ErrCanceled = errors.New("git command canceled")
	// ErrOutputLimit means stdout or stderr went over its cap.
	ErrOutputLimit = errors.New("git output limit exceeded")
	// ErrExecutable means no trustworthy git executable could be used.
	ErrExecutable = errors.New("git executable unavailable")
	// ErrExit means git ran and exited with a non-zero status (or its
	// output could not be consumed).
	ErrExit = errors.New("git exited with an error")
	// ErrUsage means the call itself was malformed (relative repository,
	// NUL byte in an argument) and git was not started.
	ErrUsage = errors.New("invalid git invocation")
)

// Error describes a failed git call in the shape the 10010 tool error
// needs: the command as a user would type it and human-readable details.
type Error struct {
	// Command is ["git", "-C", repo, args...] without the hardening flags,
	// which are the same on every call and would only bury the real args.
	Command []string
	// Details is git's stderr (trimmed) or the reason the runner stopped
	// git: timeout, output cap, unusable executable.
	Details string
	// ExitCode is git's exit status, or -1 when git did not exit on its own
	// (killed, never started).
	ExitCode int
	// Err is one of the sentinel causes above, possibly wrapping more.
	Err error
}

// Error renders the user-visible command and the details on one line.
func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s", strings.Join(e.Command, " "), e.Details)
}

// Unwrap exposes the cause so callers can use errors.Is(err, ErrTimeout).
func (e *Error) Unwrap() error { return e.Err }

// Command returns the argv of a call as users see it:
// ["git", "-C", repo, args...].
func Command(repo string, args ...string) []string {
	out := make([]string, 0, len(args)+3)
	out = append(out, "git", "-C", repo)
	return append(out, args...)
}

// Runner starts git. The zero value is ready to use; Default is shared.
type Runner struct {
	// Timeout bounds each invocation's running time (time spent queued
	// for a free slot does not count); zero means DefaultTimeout.
	Timeout time.Duration
	// MaxProcs bounds the git processes this runner has running at once;
	// further calls wait in line. Zero means DefaultMaxProcs(). It is read
	// once, on the first call.
	MaxProcs int

	// Observe, when set, is called with the repository and the caller's
	// arguments (without the hardening flags) of every call, before git
	// starts. Tests use it to check how call sites pass caller values.
	Observe func(repo string, args []string)

	// drivers caches driver scans per repository (drivercache.go).
	drivers driverCache

	slotsOnce sync.Once
	slots     chan struct{}
	running   atomic.Int64
}

// DefaultMaxProcs is 4 git processes per available CPU (GOMAXPROCS), at
// least 8. Git calls are short and mostly wait on the file system, so a
// few per core keep the CPUs busy; hundreds at once on a small machine
// only starve each other (a starved call can miss PipeGrace and fail).
func DefaultMaxProcs() int {
	return max(4*runtime.GOMAXPROCS(0), 8)
}

// procHook, when set (tests only), is called with the number of git
// processes this runner has started and not yet reaped, right after each
// start and each exit.
var procHook func(r *Runner, running int64)

// acquire waits for a free process slot. The wait ends early when ctx
// does; a call that never got a slot never started git.
func (r *Runner) acquire(ctx context.Context) error {
	r.slotsOnce.Do(func() {
		n := r.MaxProcs
		if n <= 0 {
			n = DefaultMaxProcs()
		}
		r.slots = make(chan struct{}, n)
	})
	select {
	case r.slots <- struct{}{}:
		return nil
	default:
	}
	select {
	case r.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (r *Runner) release() { <-r.slots }

// Default is the runner the package-level helpers use.
var Default = &Runner{}

// Run runs git in complete mode with the Default runner.
func Run(ctx context.Context, repo string, args ...string) ([]byte, error) {
	return Default.Run(ctx, repo, args...)
}

// Capture runs git in bounded-capture mode with the Default runner.
func Capture(ctx context.Context, repo string, limit int, args ...string) (*Captured, error) {
	return Default.Capture(ctx, repo, limit, args...)
}

// Stream runs git with stdout sent to sink, with the Default runner.
func Stream(ctx context.Context, repo string, sink io.Writer, args ...string) (int64, error) {
	return Default.Stream(ctx, repo, sink, args...)
}

// Run executes `git <args>` in repo and returns all of stdout. Output over
// MaxStdout is an error rather than a silently shortened result. A non-zero
// exit is an *Error with ErrExit and the exit code. args[0] must be the git
// subcommand.
func (r *Runner) Run(ctx context.Context, repo string, args ...string) ([]byte, error) {
	out := &limitBuffer{keep: MaxStdout, limit: MaxStdout, what: "stdout"}
	if err := r.exec(ctx, repo, args, out); err != nil {
		return nil, err
	}
	return out.buf.Bytes(), nil
}

// Captured is the result of a bounded capture.
type Captured struct {
	// Output holds the first bytes of stdout, at most the requested limit.
	Output []byte
	// TotalBytes is the size of the whole stdout stream, or with Cut the
	// number of bytes read before git was stopped (a lower bound).
	TotalBytes int64
	// TotalLines counts lines in the whole stream; a final line without a
	// trailing newline counts too. With Cut it counts only the lines read
	// (a lower bound).
	TotalLines int64
	// Cut reports that CapturePrefix stopped git at its budget: there was
	// more output than Output holds, and the totals are lower bounds.
	Cut bool
}

// Truncated reports whether Output is shorter than the whole stream.
func (c *Captured) Truncated() bool { return c.Cut || int64(len(c.Output)) < c.TotalBytes }

// Capture executes `git <args>` keeping at most limit bytes of stdout while
// reading the rest to the end to count bytes and lines exactly. The stream
// as a whole is capped at MaxStream; beyond that the call fails, because
// totals that are not exact would be a lie.
func (r *Runner) Capture(ctx context.Context, repo string, limit int, args ...string) (*Captured, error) {
	if limit < 0 {
		limit = 0
	}
	out := &limitBuffer{keep: int64(limit), limit: MaxStream, what: "stdout stream", countLines: true}
	if err := r.exec(ctx, repo, args, out); err != nil {
		return nil, err
	}
	lines := out.lines
	if out.total > 0 && out.last != '\n' {
		lines++
	}
	return &Captured{Output: out.buf.Bytes(), TotalBytes: out.total, TotalLines: lines}, nil
}

// Budget bounds a CapturePrefix call.
type Budget struct {
	// Bytes is how many leading bytes of stdout to keep. Reading stops
	// as soon as one byte more has arrived.
	Bytes int
	// Lines, when positive, also stops reading once the stream is known
	// to hold more than Lines lines (a byte after the Lines-th newline).
	Lines int64
}

// CapturePrefix executes `git <args>` keeping at most b.Bytes bytes of
// stdout, and stops reading as soon as the output is known to exceed the
// budget: git's process group is killed at that moment, so the cost of a
// call is bounded by its budget instead of by the size of everything git
// would have written (a 50 MB diff asked for 4 KiB stops after about
// 4 KiB plus one pipe buffer). Captured.Cut then reports the cut, and the
// totals count only what was read. A stream that ends within the budget
// is returned whole with exact totals, as Capture would.
func (r *Runner) CapturePrefix(ctx context.Context, repo string, b Budget, args ...string) (*Captured, error) {
	keep := int64(max(b.Bytes, 0))
	out := &limitBuffer{keep: keep, limit: MaxStream, what: "stdout stream", countLines: true, stopBytes: keep, stopLines: max(b.Lines, 0), prefix: true}
	if err := r.exec(ctx, repo, args, out); err != nil {
		return nil, err
	}
	lines := out.lines
	if out.total > 0 && out.last != '\n' {
		lines++
	}
	return &Captured{Output: out.buf.Bytes(), TotalBytes: out.total, TotalLines: lines, Cut: out.stopped}, nil
}

// ErrStop ends a Stream or StreamTuned call early without an error when
// its sink returns it (or an error wrapping it): the sink has read all it
// needs, git's process group is killed, and the call returns the bytes
// read so far and a nil error. A git that exited with an error of its own
// before the kill is still reported.
var ErrStop = errors.New("enough git output read")

// Stream executes `git <args>` and writes stdout to sink as it arrives, for
// callers that parse large outputs incrementally (status of a tree with many
// untracked files, long ref lists). It returns the number of bytes read. The
// stream is capped at MaxStream. If sink returns an error, git is killed
// and that error is returned (wrapped in *Error), except ErrStop, which
// ends the call early as a success.
func (r *Runner) Stream(ctx context.Context, repo string, sink io.Writer, args ...string) (int64, error) {
	out := &limitBuffer{limit: MaxStream, what: "stdout stream", sink: sink}
	err := r.exec(ctx, repo, args, out)
	return out.total, err
}

// Tuning holds performance-only settings for one call. None of them
// weakens the hardening: they only change how git spends CPU.
type Tuning struct {
	// SerialIndexStat turns off core.preloadIndex, so the stat pass over
	// the index runs on one thread. Useful when the caller runs other git
	// processes alongside (repo.brief): on a small machine twenty preload
	// threads only compete with them.
	SerialIndexStat bool
}

// args returns the -c flags for t (placed before -C, like globalFlags).
func (t Tuning) args() []string {
	if t.SerialIndexStat {
		return []string{"-c", "core.preloadIndex=false"}
	}
	return nil
}

// tunedArgs is hardenedArgs with t's flags after the global ones, so the
// hardening flags and the argument layout are unchanged.
func tunedArgs(repo string, t Tuning, args []string) []string {
	argv := hardenedArgs(repo, args)
	extra := t.args()
	if len(extra) == 0 {
		return argv
	}
	out := make([]string, 0, len(argv)+len(extra))
	out = append(out, argv[:len(globalFlags)]...)
	out = append(out, extra...)
	return append(out, argv[len(globalFlags):]...)
}

// StreamTuned is Stream with performance settings for this call.
func (r *Runner) StreamTuned(ctx context.Context, repo string, t Tuning, sink io.Writer, args ...string) (int64, error) {
	out := &limitBuffer{limit: MaxStream, what: "stdout stream", sink: sink}
	err := r.execTuned(ctx, repo, t, args, out)
	return out.total, err
}

// exec is the one code path that starts git.
func (r *Runner) exec(ctx context.Context, repo string, args []string, stdout *limitBuffer) error {
	return r.execTuned(ctx, repo, Tuning{}, args, stdout)
}

func (r *Runner) execTuned(ctx context.Context, repo string, t Tuning, args []string, stdout *limitBuffer) error {
	command := Command(repo, args...)
	fail := func(cause error, code int, details string) error {
		return &Error{Command: command, Details: details, ExitCode: code, Err: cause}
	}
	if len(args) == 0 {
		return fail(ErrUsage, -1, "no git subcommand given")
	}
	if !filepath.IsAbs(repo) {
		return fail(ErrUsage, -1, "repository path must be absolute")
	}
	for _, a := range args {
		if strings.IndexByte(a, 0) >= 0 {
			return fail(ErrUsage, -1, "argument contains a NUL byte")
		}
	}
	if r.Observe != nil {
		r.Observe(repo, append([]string(nil), args...))
	}
	exe, err := ResolveExecutable(repo)
	if err != nil {
		return fail(ErrExecutable, -1, err.Error())
	}
	overrides, err := r.driverOverrides(ctx, exe, repo, args[0])
	if err != nil {
		return err
	}
	return r.start(ctx, exe, command, tunedArgs(repo, t, args), overrides, stdout)
}

// start launches one hardened git process and waits for it. command is only
// used for error reporting.
func (r *Runner) start(parent context.Context, exe string, command, argv []string, overrides [][2]string, stdout *limitBuffer) (err error) {
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if err := r.acquire(parent); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return &Error{Command: command, Details: "the caller's deadline passed while the call waited for a free git slot (at most " + strconv.Itoa(cap(r.slots)) + " git processes run at once); git was not started", ExitCode: -1, Err: ErrTimeout}
		}
		return &Error{Command: command, Details: "git command canceled by the caller while it waited for a free git slot; git was not started", ExitCode: -1, Err: ErrCanceled}
	}
	defer r.release()
	// The timeout starts once the slot is ours: it bounds git's running
	// time, not the time spent in line.
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()

	cmd := exec.CommandContext(ctx, exe, argv...)
	cmd.Env = sanitizedEnv(overrides)
	cmd.Stdin = nil // /dev/null: git must never wait for a prompt
	cmd.WaitDelay = pipeGrace
	setProcessGroup(cmd)
	defer pinCheck(applyPin(parent, cmd), command, &err) // pin.go

	var once sync.Once
	kill := func() {
		once.Do(func() {
			if cmd.Process != nil {
				killGroup(cmd.Process.Pid)
			}
		})
	}
	// Cancel runs when ctx ends: kill the whole group, not just git, so a
	// helper git started cannot keep running or keep the pipes open.
	cmd.Cancel = func() error { kill(); return nil }

	stderr := &limitBuffer{keep: StderrCapture, limit: MaxStderr, what: "stderr"}
	stdout.onLimit, stderr.onLimit = kill, kill
	cmd.Stdout, cmd.Stderr = stdout, stderr

	unlock := tieToParent(cmd)
	if err := cmd.Start(); err != nil {
		unlock()
		return &Error{Command: command, Details: "cannot start git: " + err.Error(), ExitCode: -1, Err: ErrExecutable}
	}
	afterStart(cmd)
	if procHook != nil {
		procHook(r, r.running.Add(1))
	}
	waitErr := cmd.Wait()
	if procHook != nil {
		procHook(r, r.running.Add(-1))
	}
	unlock()
	// Kill after every run, even a clean one: a daemon git forked (for
	// instance an fsmonitor that slipped through) must not survive us.
	if cmd.Process != nil {
		killGroup(cmd.Process.Pid)
	}

	if stdout.stopped && !stderr.overflow && (waitErr == nil || killedBySignal(cmd.ProcessState)) {
		// We ended git on purpose at its budget; its death by our signal
		// is the expected end of the call, not a failure.
		return nil
	}
	return runOutcome{
		command: command, state: cmd.ProcessState, parent: parent, ctx: ctx, timeout: timeout,
		waitErr: waitErr, stdout: stdout, stderr: stderr,
		overflowNote: " and no partial result was returned as complete",
	}.err()
}

// runOutcome is how one git process ended, for the read and write runners
// alike; err turns it into nil or the *Error the caller reports.
type runOutcome struct {
	command        []string
	state          *os.ProcessState
	parent, ctx    context.Context
	timeout        time.Duration
	waitErr        error
	stdout, stderr *limitBuffer
	// overflowNote ends the message of a stdout overflow.
	overflowNote string
	// stdoutDetails: when git failed with nothing on stderr, its stdout is
	// the explanation (merge and rebase report conflicts there).
	stdoutDetails bool
}

func (o runOutcome) err() error {
	code := -1
	if o.state != nil {
		code = o.state.ExitCode()
	}
	fail := func(cause error, details string) error {
		return &Error{Command: o.command, Details: details, ExitCode: code, Err: cause}
	}
	switch {
	case o.stdout.sinkErr != nil:
		return fail(fmt.Errorf("%w: %w", ErrExit, o.stdout.sinkErr), "reading git output failed: "+o.stdout.sinkErr.Error())
	case o.stdout.overflow:
		return fail(ErrOutputLimit, fmt.Sprintf("git %s exceeded %d bytes; the command was stopped%s", o.stdout.what, o.stdout.limit, o.overflowNote))
	case o.stderr.overflow:
		return fail(ErrOutputLimit, fmt.Sprintf("git stderr exceeded %d bytes; the command was stopped", o.stderr.limit))
	case o.parent.Err() != nil && !errors.Is(o.parent.Err(), context.DeadlineExceeded):
		return fail(ErrCanceled, "git command canceled by the caller")
	case o.ctx.Err() != nil:
		return fail(ErrTimeout, "git command did not finish in time (limit "+o.timeout.String()+") and was killed")
	case errors.Is(o.waitErr, exec.ErrWaitDelay):
		return fail(ErrExit, heldPipeDetails())
	case o.waitErr != nil:
		var ee *exec.ExitError
		if !errors.As(o.waitErr, &ee) {
			return fail(ErrExit, "waiting for git failed: "+o.waitErr.Error())
		}
		details := strings.TrimSpace(o.stderr.buf.String())
		if out := strings.TrimSpace(o.stdout.buf.String()); o.stdoutDetails && details == "" && out != "" {
			details = out
		}
		if details == "" {
			details = "git exited with status " + strconv.Itoa(code)
		}
		return fail(ErrExit, details)
	}
	return nil
}

// heldPipeDetails explains ErrWaitDelay: git exited but something it (or a
// wrapper named by FLUXGIT_MCP_GIT_PATH) started kept its output open.
func heldPipeDetails() string {
	return "git exited but a process it started still held its output open after " + pipeGrace.String() +
		"; that process was killed and the output dropped. A git wrapper (" + EnvGitPath + ") or hook must not leave a background process holding stdout"
}

// limitBuffer is the io.Writer exec copies a pipe into. It keeps the first
// keep bytes, counts everything, and on passing limit records the overflow
// and kills git. It keeps accepting (and discarding) data after that so the
// copy goroutine drains the pipe until git's death closes it. In prefix
// mode it also stops (kills git, without an overflow) once more than
// stopBytes bytes or more than stopLines lines have arrived; a sink that
// returns ErrStop stops it the same way.
type limitBuffer struct {
	buf        bytes.Buffer
	keep       int64
	limit      int64 // 0: unlimited
	what       string
	countLines bool
	sink       io.Writer

	prefix    bool
	stopBytes int64
	stopLines int64 // 0: no line budget

	total    int64
	lines    int64
	last     byte
	overflow bool
	stopped  bool
	sinkErr  error
	onLimit  func()
}

// Write never fails: see the type comment.
func (b *limitBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if b.overflow || b.stopped || b.sinkErr != nil || n == 0 {
		return n, nil
	}
	if b.limit > 0 && b.total+int64(n) > b.limit {
		b.overflow = true
		b.total += int64(n)
		if b.onLimit != nil {
			b.onLimit()
		}
		return n, nil
	}
	b.total += int64(n)
	if b.countLines {
		b.lines += int64(bytes.Count(p, []byte{'\n'}))
		b.last = p[n-1]
	}
	if room := b.keep - int64(b.buf.Len()); room > 0 {
		b.buf.Write(p[:min(int64(n), room)])
	}
	if b.sink != nil {
		if _, err := b.sink.Write(p); err != nil {
			if errors.Is(err, ErrStop) {
				b.stopped = true
			} else {
				b.sinkErr = err
			}
			if b.onLimit != nil {
				b.onLimit()
			}
		}
	}
	if b.prefix && (b.total > b.stopBytes || b.stopLines > 0 && (b.lines > b.stopLines || b.lines == b.stopLines && b.last != '\n')) {
		b.stopped = true
		if b.onLimit != nil {
			b.onLimit()
		}
	}
	return n, nil
}
