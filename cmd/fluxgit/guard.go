package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fluxgit/fluxgit/internal/gitexec"
	"github.com/fluxgit/fluxgit/internal/roster"
)

// envGuardOverride, set to 1, lets a commit through the guard (the
// person's override; `git commit --no-verify` skips the hook too).
const envGuardOverride = roster.EnvGuardOverride

// envWorkerID names the committing agent's own worker (or workers, comma
// separated): their leases never block its commits.
const envWorkerID = roster.EnvWorkerID

// guardMarker identifies a pre-commit hook written by `fluxgit guard
// install`, so installing again changes nothing.
const guardMarker = "# fluxgit guard: refuses commits touching files another agent holds exclusively"

// chainedHook is where an existing pre-commit hook is moved; the guard's
// hook runs it first, with the same arguments and input.
const chainedHook = "pre-commit.pre-fluxgit"

func newGuardCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "guard",
		Short: "Refuse commits that touch files another agent holds exclusively (shift roster leases)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return &exitError{code: exitUsage, err: errors.New("guard needs a command: install or check (fluxgit guard --help)")}
		},
	}
	cmd.AddCommand(newGuardInstallCmd(), newGuardCheckCmd())
	return cmd
}

func newGuardCheckCmd() *cobra.Command {
	var (
		force bool
		rng   string
	)
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Exit 1 when the staged files (or --range's) include a file another live worker holds exclusively",
		Long: "check reads the shift roster (SQLite, or PostgreSQL with SHIFT_DATABASE_URL) read-only and refuses\n" +
			"when a file the commit touches is held by an unexpired exclusive lease of another, non-stale worker in\n" +
			"the repository's workspace. The committer's own worker (SHIFT_WORKER_ID; several ids comma-separated) never blocks. Override with\n" +
			"--force or " + envGuardOverride + "=1 (or git commit --no-verify).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return guardCheck(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), rng, force || os.Getenv(envGuardOverride) == "1")
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "let the commit through whatever the roster says (also "+envGuardOverride+"=1)")
	cmd.Flags().StringVar(&rng, "range", "", "check the files changed in a revision range (for CI, e.g. origin/main...HEAD) instead of the staged ones")
	return cmd
}

// workTreeRoot is the real path of the work tree enclosing the current
// directory.
func workTreeRoot(ctx context.Context) (string, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	out, err := gitexec.Run(ctx, cwd, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", fmt.Errorf("not inside a git work tree: %w", err)
	}
	root := strings.TrimRight(string(out), "\r\n")
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	return root, nil
}

func nulList(b []byte) []string {
	var out []string
	for _, f := range strings.Split(string(b), "\x00") {
		if f != "" {
			out = append(out, f)
		}
	}
	return out
}

// touchedFiles are the files the commit touches: the staged ones, or those
// a range changes. Inside a hook of `git commit -a`, `git commit PATH` or
// the gateway's commit, git commits a temporary index (GIT_INDEX_FILE),
// which the hardened git runner does not read (it drops GIT_* variables):
// an absolute GIT_INDEX_FILE is read explicitly, exactly; otherwise the
// work tree's changes count too: a superset, never a miss.
func touchedFiles(ctx context.Context, root, rng string) ([]string, error) {
	if rng != "" {
		out, err := gitexec.Run(ctx, root, "diff", "--name-only", "-z", "--no-renames", rng, "--")
		if err != nil {
			return nil, fmt.Errorf("files of %s: %w", rng, err)
		}
		return nulList(out), nil
	}
	if idx := os.Getenv("GIT_INDEX_FILE"); filepath.IsAbs(idx) {
		w := &gitexec.Writer{IndexFile: idx}
		if out, err := w.Run(ctx, root, "diff", "--cached", "--name-only", "-z", "--no-renames", "--"); err == nil {
			return nulList(out), nil
		}
	}
	out, err := gitexec.Run(ctx, root, "diff", "--cached", "--name-only", "-z", "--no-renames", "--")
	if err != nil {
		return nil, fmt.Errorf("staged files: %w", err)
	}
	files := nulList(out)
	if idx := os.Getenv("GIT_INDEX_FILE"); idx != "" && filepath.Base(idx) != "index" {
		if out, err := gitexec.Run(ctx, root, "diff", "--name-only", "-z", "--no-renames", "HEAD", "--"); err == nil {
			files = append(files, nulList(out)...)
		}
	}
	return files, nil
}

func guardCheck(ctx context.Context, stdout, stderr io.Writer, rng string, override bool) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	root, err := workTreeRoot(ctx)
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	files, err := touchedFiles(ctx, root, rng)
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	rows, err := roster.ActiveForWorkTreeFromEnv(ctx, root)
	if err != nil {
		// The guard is a courtesy between agents: an unreadable roster
		// never stops a person's commit, but it is said.
		fmt.Fprintf(stderr, "fluxgit guard: the shift roster could not be read, commit not checked: %v\n", err)
		return nil
	}
	conflicts := roster.GuardConflicts(rows, root, os.Getenv(roster.EnvWorkspace), roster.WorkerIDs(os.Getenv(envWorkerID)), files)
	if len(conflicts) == 0 {
		return nil
	}
	var b strings.Builder
	verb := "refused"
	if override {
		verb = "allowed by override despite"
	}
	fmt.Fprintf(&b, "fluxgit guard: commit %s %d file(s) held exclusively by other agents:\n", verb, len(conflicts))
	for _, l := range roster.ConflictLines(conflicts) {
		fmt.Fprintf(&b, "  %s\n", l)
	}
	if override {
		fmt.Fprint(stderr, b.String())
		return nil
	}
	b.WriteString("Wait until that agent releases the file (shift_check_in with claims {}, or shift_check_out) or its lease expires, or ask it.\n")
	b.WriteString("If this commit is yours to make (you are that worker, set " + envWorkerID + "), or you decide to override: rerun with " + envGuardOverride + "=1 (e.g. " + envGuardOverride + "=1 git commit ...), `fluxgit guard check --force`, or git commit --no-verify.\n")
	fmt.Fprint(stderr, b.String())
	return &exitError{code: exitFindings}
}

func newGuardInstallCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "install",
		Short: "Write a pre-commit hook running `fluxgit guard check` (an existing hook is chained, never overwritten)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return guardInstall(cmd.Context(), cmd.OutOrStdout())
		},
	}
}

// shQuote quotes s for a POSIX shell.
func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func guardInstall(ctx context.Context, stdout io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	root, err := workTreeRoot(ctx)
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	exe, err := os.Executable()
	if err != nil {
		return &exitError{code: exitFindings, err: fmt.Errorf("cannot find the fluxgit executable: %w", err)}
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	line := shQuote(exe) + " guard check || exit $?"
	// A hooks directory managed by a tool (husky and the like) is left
	// alone: the person adds the line to the tool's own pre-commit.
	for _, scope := range []string{"--local", "--global"} {
		out, err := gitexec.Run(ctx, root, "config", scope, "--get", "core.hooksPath")
		if hp := strings.TrimSpace(string(out)); err == nil && hp != "" {
			fmt.Fprintf(stdout, "core.hooksPath is set (%s, %s): its hooks are managed by another tool, so fluxgit writes nothing.\nAdd this line to its pre-commit hook (for husky: .husky/pre-commit):\n\n  %s\n", hp, strings.TrimPrefix(scope, "--"), line)
			return nil
		}
	}
	out, err := gitexec.Run(ctx, root, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return &exitError{code: exitFindings, err: fmt.Errorf("find the git directory: %w", err)}
	}
	hooks := filepath.Join(strings.TrimRight(string(out), "\r\n"), "hooks")
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		return &exitError{code: exitFindings, err: err}
	}
	hook := filepath.Join(hooks, "pre-commit")
	old, err := os.ReadFile(hook)
	switch {
	case err == nil && strings.Contains(string(old), guardMarker):
		fmt.Fprintf(stdout, "fluxgit guard is already installed in %s\n", hook)
		return nil
	case err == nil:
		chained := filepath.Join(hooks, chainedHook)
		if _, err := os.Lstat(chained); err == nil {
			return &exitError{code: exitFindings, err: fmt.Errorf("%s exists and so does %s; merge them by hand, then run fluxgit guard install again (or add to your hook: %s)", hook, chained, line)}
		}
		if err := os.Rename(hook, chained); err != nil {
			return &exitError{code: exitFindings, err: fmt.Errorf("chain the existing hook: %w", err)}
		}
		fmt.Fprintf(stdout, "kept your pre-commit hook as %s; the guard runs it first\n", chained)
	case !errors.Is(err, fs.ErrNotExist):
		return &exitError{code: exitFindings, err: err}
	}
	script := "#!/bin/sh\n" + guardMarker + "\n" +
		"# Written by `fluxgit guard install`. Override once: " + envGuardOverride + "=1 git commit ...\n" +
		"hookdir=$(dirname \"$0\")\n" +
		"if [ -x \"$hookdir/" + chainedHook + "\" ]; then \"$hookdir/" + chainedHook + "\" \"$@\" || exit $?; fi\n" +
		line + "\n"
	if err := os.WriteFile(hook, []byte(script), 0o755); err != nil {
		return &exitError{code: exitFindings, err: err}
	}
	fmt.Fprintf(stdout, "installed the fluxgit guard as %s\n", hook)
	return nil
}
