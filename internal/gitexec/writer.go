package gitexec

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultWriteTimeout bounds one write invocation when Writer.Timeout is
// zero. Writes (a merge in a large repository, a push over the network, a
// commit whose hooks run a test suite) take longer than reads.
const DefaultWriteTimeout = 5 * time.Minute

// Writer runs git commands that change a repository on behalf of a person
// who approved them (the approval gateway). It differs from Runner on
// purpose: a write must behave like the user's own git, so the user's
// global and system configuration stay in force (identity, signing,
// credential helpers, filters such as Git LFS). What it keeps from Runner
// is everything that stops git from being steered or from blocking:
//
//   - the executable is resolved from trusted locations (ResolveExecutable);
//   - GIT_*, GCM_*, DYLD_* and the loader, pager and askpass variables are
//     removed from the environment, so nothing inherited points git at
//     another repository, object store or configuration;
//   - no prompt can block: GIT_TERMINAL_PROMPT=0, stdin is /dev/null, git
//     runs in its own session without a controlling terminal, and the
//     editors are the no-op ":";
//   - one timeout, output caps, and a kill of the whole process group after
//     every run;
//   - protocol.ext.allow=never: a remote URL can never run a command;
//   - hooks are off (core.hooksPath=/dev/null) unless Hooks is set, which
//     the callers do only for a commit the person asked for (commit and a
//     submodule pointer record), where the user's hooks are part of
//     "commit as I would";
//   - no background maintenance or gc is started, since the process group
//     is killed when the command returns;
//   - a program named by the repository's own configuration is never run
//     (writepins.go): credential helpers, core.sshCommand, core.askPass
//     and the signing programs come from the person's system and global
//     configuration only; a filter or merge driver only the repository
//     defines refuses the command (ErrRepoProgram); diffs never run an
//     external diff or textconv program.
type Writer struct {
	// Hooks lets the repository's hooks run (the user's commit pipeline).
	Hooks bool
	// Timeout bounds each invocation; zero means DefaultWriteTimeout.
	Timeout time.Duration
	// Observe, when set, is called with the repository and the caller's
	// arguments of every call before git starts (tests).
	Observe func(repo string, args []string)
	// IndexFile, when set, is the index git reads and writes instead of
	// the repository's own (GIT_INDEX_FILE): the gateway builds the tree a
	// commit will record in a private index, so binding a proposal never
	// touches the person's index.
	IndexFile string
	// Env is appended to the write environment (after everything else,
	// so it wins): variables for the user's hooks, such as the worker ids
	// the gateway tells its commit's pre-commit guard about.
	Env []string
}

// diffFlags follow the diff-family subcommands: an external diff program
// or a textconv filter is a program the repository's configuration and
// attributes select.
var diffFlags = map[string]bool{"diff": true, "diff-tree": true, "diff-index": true, "diff-files": true, "log": true, "show": true}

// writeFlags precede -C on every write. core.fsmonitor may name a program;
// the pager and colour settings keep output parseable.
var writeFlags = []string{
	"--no-pager",
	"--literal-pathspecs",
	"-c", "core.fsmonitor=false",
	"-c", "core.pager=",
	"-c", "color.ui=false",
	"-c", "protocol.ext.allow=never",
	"-c", "gc.auto=0",
	"-c", "maintenance.auto=false",
	"-c", "advice.detachedHead=false",
	// A command that recursed into a submodule would run git there with
	// the submodule's own configuration, which the pin scan of this
	// repository never read; submodules are changed only by the
	// submodulePointer operation, which runs git in the submodule itself.
	"-c", "submodule.recurse=false",
}

// writeFixedEnv is appended to the write environment. Unlike fixedEnv it
// does not hide the global or system configuration.
var writeFixedEnv = []string{
	"GIT_TERMINAL_PROMPT=0",
	"GIT_PAGER=",
	"GIT_EDITOR=:",
	"GIT_SEQUENCE_EDITOR=:",
	"GIT_LITERAL_PATHSPECS=1",
	"LC_ALL=C",
	"LANG=C",
	"NO_COLOR=1",
}

// writeEnv is the parent environment without the removed variables, plus
// writeFixedEnv, the configuration overrides (GIT_CONFIG_COUNT: values may
// hold any character, and they outrank every configuration file) and the
// index file.
func writeEnv(parent []string, overrides [][2]string, indexFile string) []string {
	out := make([]string, 0, len(parent)+len(writeFixedEnv)+2*len(overrides)+2)
	for _, kv := range parent {
		key, _, _ := strings.Cut(kv, "=")
		if removedEnv[key] || hasAnyPrefix(key, removedEnvPrefixes) {
			continue
		}
		out = append(out, kv)
	}
	out = append(out, writeFixedEnv...)
	if len(overrides) > 0 {
		out = append(out, "GIT_CONFIG_COUNT="+strconv.Itoa(len(overrides)))
		for i, o := range overrides {
			n := strconv.Itoa(i)
			out = append(out, "GIT_CONFIG_KEY_"+n+"="+o[0], "GIT_CONFIG_VALUE_"+n+"="+o[1])
		}
	}
	if indexFile != "" {
		out = append(out, "GIT_INDEX_FILE="+indexFile)
	}
	return out
}

// writeArgs builds the argv after the executable.
func (w *Writer) writeArgs(repo string, args []string) []string {
	out := make([]string, 0, len(writeFlags)+len(args)+4)
	out = append(out, writeFlags...)
	if !w.Hooks {
		out = append(out, "-c", "core.hooksPath=/dev/null")
	}
	out = append(out, "-C", repo, args[0])
	if diffFlags[args[0]] {
		out = append(out, "--no-ext-diff", "--no-textconv")
	}
	return append(out, args[1:]...)
}

// Run executes `git <args>` in repo and returns stdout (at most MaxStdout
// bytes; more is an error). A non-zero exit is an *Error with ErrExit, the
// exit code and git's stderr as Details.
func (w *Writer) Run(ctx context.Context, repo string, args ...string) ([]byte, error) {
	command := Command(repo, args...)
	fail := func(cause error, details string) error {
		return &Error{Command: command, Details: details, ExitCode: -1, Err: cause}
	}
	if len(args) == 0 {
		return nil, fail(ErrUsage, "no git subcommand given")
	}
	if !filepath.IsAbs(repo) {
		return nil, fail(ErrUsage, "repository path must be absolute")
	}
	for _, a := range args {
		if strings.IndexByte(a, 0) >= 0 {
			return nil, fail(ErrUsage, "argument contains a NUL byte")
		}
	}
	if w.Observe != nil {
		w.Observe(repo, append([]string(nil), args...))
	}
	exe, err := ResolveExecutable(repo)
	if err != nil {
		return nil, fail(ErrExecutable, err.Error())
	}
	timeout := w.Timeout
	if timeout <= 0 {
		timeout = DefaultWriteTimeout
	}
	var pins [][2]string
	if !pinFreeSubcommands[args[0]] {
		if pins, err = w.pins(ctx, exe, repo); err != nil {
			if errors.Is(err, ErrRepoProgram) {
				return nil, &Error{Command: command, Details: err.Error(), ExitCode: -1, Err: ErrRepoProgram}
			}
			return nil, err
		}
	}
	if w.IndexFile != "" && !filepath.IsAbs(w.IndexFile) {
		return nil, fail(ErrUsage, "the index file must be an absolute path")
	}
	stdout := &limitBuffer{keep: MaxStdout, limit: MaxStdout, what: "stdout"}
	if err := w.start(ctx, exe, command, w.writeArgs(repo, args), timeout, stdout, pins, w.IndexFile); err != nil {
		return nil, err
	}
	return stdout.buf.Bytes(), nil
}

// start launches one write process and waits for it, with the same
// process-tree handling as Runner.start.
func (w *Writer) start(parent context.Context, exe string, command, argv []string, timeout time.Duration, stdout *limitBuffer, overrides [][2]string, indexFile string) error {
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()

	cmd := exec.CommandContext(ctx, exe, argv...)
	cmd.Env = append(writeEnv(os.Environ(), overrides, indexFile), w.Env...)
	cmd.Stdin = nil // /dev/null
	cmd.WaitDelay = PipeGrace
	newSession(cmd)

	var once sync.Once
	kill := func() {
		once.Do(func() {
			if cmd.Process != nil {
				killGroup(cmd.Process.Pid)
			}
		})
	}
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
	waitErr := cmd.Wait()
	unlock()
	// Whatever git left behind (a credential helper, a hook's child) dies
	// with the call.
	killGroup(cmd.Process.Pid)

	return runOutcome{
		command: command, state: cmd.ProcessState, parent: parent, ctx: ctx, timeout: timeout,
		waitErr: waitErr, stdout: stdout, stderr: stderr, stdoutDetails: true,
	}.err()
}
