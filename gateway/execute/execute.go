package execute

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fluxgit/fluxgit/internal/gitexec"
	"github.com/fluxgit/fluxgit/internal/operation"
	"github.com/fluxgit/fluxgit/internal/roster"
)

// Options configures an Executor.
type Options struct {
	// RunDir is the FluxGit run directory: restore records go to
	// <RunDir>/rebase/<repoId>.json and the repository registry to
	// <RunDir>/repos/<repoId>.path, where plugins/gitread's flux.* and
	// safety.* tools read them.
	RunDir string
	// Now is the clock of restore records; nil means time.Now.
	Now func() time.Time
	// Roster reads the shift roster's active check-ins naming a work tree
	// for a commit's guard; nil means roster.ActiveForWorkTreeFromEnv (the
	// roster the gateway's own environment selects: SHIFT_DATABASE_URL, or
	// roster.sqlite in SHIFT_STATE_DIR).
	Roster func(ctx context.Context, root string) ([]roster.WorkspaceRow, error)
	// GuardOverride lets every commit through the guard (the person
	// started the gateway with FLUXGIT_GUARD_OVERRIDE=1); a refusal is
	// then reported in the result instead.
	GuardOverride bool
}

// Executor binds, reviews and executes proposals. One execution (or undo)
// runs at a time: the server relies on that for ordering, and two
// mutations of one repository must never interleave.
type Executor struct {
	runDir string
	now    func() time.Time
	roster func(ctx context.Context, root string) ([]roster.WorkspaceRow, error)
	// guardOverride: Options.GuardOverride.
	guardOverride bool
	mu            sync.Mutex
	git           *gitexec.Writer // hooks off: every command but the two commits
	hooked        *gitexec.Writer // the user's hooks and signing: commit, submodule record
}

// New returns an Executor for o.
func New(o Options) *Executor {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	rs := o.Roster
	if rs == nil {
		rs = roster.ActiveForWorkTreeFromEnv
	}
	return &Executor{runDir: o.RunDir, now: now, roster: rs, guardOverride: o.GuardOverride, git: &gitexec.Writer{}, hooked: &gitexec.Writer{Hooks: true}}
}

// BindError is a proposal the gateway refuses at the boundary (422
// {error}); Msg is written for the agent: what is wrong and how to fix it.
type BindError struct{ Msg string }

// Error returns the message for the agent.
func (e *BindError) Error() string { return e.Msg }

func bindErr(format string, a ...any) error { return &BindError{Msg: fmt.Sprintf(format, a...)} }

// parse decodes a body into its typed body (internal/operation, the
// contract both ends share); a malformed one is a BindError. Decoding is
// lenient about absent keys: the gateway checked the body against the
// contract before binding it.
func parse(op string, body json.RawMessage) (operation.Body, error) {
	r, err := operation.Decode(op, body)
	if err != nil {
		return nil, bindErr("the %s body is not valid: %v", op, err)
	}
	return r, nil
}

// Ops are the twelve operation types Execute runs (internal/operation).
var Ops = operation.Names()

func knownOp(op string) bool { return operation.Known(op) }

// listed reports whether paths is a non-empty path list.
func listed(paths *[]string) []string {
	if paths == nil {
		return nil
	}
	return *paths
}

// git helpers. Every command goes through the write runner; reads too, so
// they see the repository as the user's own git does (global excludes,
// safe.directory).

func (e *Executor) run(ctx context.Context, repo string, args ...string) (string, error) {
	out, err := e.git.Run(ctx, repo, args...)
	return strings.TrimSpace(string(out)), err
}

// exitCode returns git's exit code for err, or -1.
func exitCode(err error) int {
	var ge *gitexec.Error
	if errors.As(err, &ge) && errors.Is(err, gitexec.ErrExit) {
		return ge.ExitCode
	}
	return -1
}

// details is git's own explanation of a failed call.
func details(err error) string {
	var ge *gitexec.Error
	if errors.As(err, &ge) {
		return ge.Details
	}
	return err.Error()
}

// resolve returns the commit rev names, or "" when it names none.
func (e *Executor) resolve(ctx context.Context, repo, rev string) (string, error) {
	out, err := e.run(ctx, repo, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if exitCode(err) == 1 {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", rev, err)
	}
	return out, nil
}

// headState returns HEAD's commit ("" unborn) and branch ("" detached).
func (e *Executor) headState(ctx context.Context, repo string) (head, branch string, err error) {
	// One git process for both in the common case (a process costs
	// milliseconds, and binding, review and every operation ask): the
	// commit, then the full name of what HEAD points to, "HEAD" when
	// detached. An unborn or odd HEAD makes it fail; the two separate
	// calls below then answer exactly.
	if out, err := e.run(ctx, repo, "rev-parse", "HEAD^{commit}", "--symbolic-full-name", "HEAD"); err == nil {
		if lines := strings.Split(out, "\n"); len(lines) == 2 && isOid(lines[0]) {
			switch {
			case lines[1] == "HEAD":
				return lines[0], "", nil
			case strings.HasPrefix(lines[1], "refs/heads/"):
				return lines[0], lines[1], nil
			}
		}
	}
	if head, err = e.resolve(ctx, repo, "HEAD"); err != nil {
		return "", "", err
	}
	branch, err = e.run(ctx, repo, "symbolic-ref", "-q", "HEAD")
	if exitCode(err) == 1 {
		return head, "", nil
	}
	if err != nil {
		return "", "", fmt.Errorf("read HEAD: %w", err)
	}
	return head, branch, nil
}

// isAncestor reports whether a is an ancestor of (or equal to) b.
func (e *Executor) isAncestor(ctx context.Context, repo, a, b string) (bool, error) {
	_, err := e.run(ctx, repo, "merge-base", "--is-ancestor", a, b)
	if exitCode(err) == 1 {
		return false, nil
	}
	return err == nil, err
}

// localBranch maps a branch name as an agent writes it ("main" or
// "refs/heads/main") to its full ref; ok is false for anything that is
// not a valid local branch name.
func localBranch(name string) (string, bool) {
	short := strings.TrimPrefix(name, "refs/heads/")
	if short == "" || short == "HEAD" || strings.HasPrefix(short, "-") || strings.HasPrefix(short, "refs/") ||
		strings.ContainsAny(short, " ~^:?*[\\\x00\x7f") || strings.Contains(short, "..") || strings.Contains(short, "@{") ||
		strings.HasSuffix(short, ".lock") || strings.HasSuffix(short, "/") || strings.HasSuffix(short, ".") || strings.Contains(short, "//") {
		return "", false
	}
	for _, c := range short {
		if c < 0x20 {
			return "", false
		}
	}
	return "refs/heads/" + short, true
}

func shortBranch(ref string) string { return strings.TrimPrefix(ref, "refs/heads/") }

// cleanTracked reports whether the work tree and index match HEAD (untracked
// files aside) and no merge, rebase or cherry-pick is in progress: merge,
// rebase and checkout need that so an abort restores exactly what was there.
func (e *Executor) cleanTracked(ctx context.Context, repo string) (bool, string, error) {
	out, err := e.run(ctx, repo, "status", "--porcelain=v1", "--untracked-files=no", "--ignore-submodules=none")
	if err != nil {
		return false, "", fmt.Errorf("status: %w", err)
	}
	if out != "" {
		return false, "the work tree has uncommitted changes to tracked files", nil
	}
	// The state files live in the work tree's own git directory; looking
	// for them costs a stat each instead of a git process each.
	gitDir, err := e.run(ctx, repo, "rev-parse", "--path-format=absolute", "--git-dir")
	if err != nil {
		return false, "", fmt.Errorf("git dir: %w", err)
	}
	for _, h := range []string{"MERGE_HEAD", "REBASE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD"} {
		if _, err := os.Lstat(filepath.Join(gitDir, h)); err == nil {
			return false, "a merge, rebase, cherry-pick or revert is in progress (" + h + " exists)", nil
		}
	}
	for _, d := range []string{"rebase-merge", "rebase-apply"} {
		if _, err := os.Stat(filepath.Join(gitDir, d)); err == nil {
			return false, "a rebase is in progress", nil
		}
	}
	return true, "", nil
}

// conflicted lists the unmerged paths of repo.
func (e *Executor) conflicted(ctx context.Context, repo string) []string {
	out, err := e.run(ctx, repo, "diff", "--name-only", "--diff-filter=U", "-z")
	if err != nil || out == "" {
		return nil
	}
	return strings.Split(strings.TrimRight(out, "\x00"), "\x00")
}

// result is a completion result under construction: status, message,
// restorePoint where one was taken, and the operation's own fields, in the
// shape operation.status returns to the agent (spec/tools/operation.*.yaml).
type result map[string]any

func failed(format string, a ...any) result {
	return result{"status": "failed", "message": fmt.Sprintf(format, a...)}
}

func (r result) ok() bool { return r["status"] == "completed" }

// Execute runs Revalidate and then the approved operation. It never
// panics and never returns without a result: every failure is an Outcome
// with Status "failed" and a message saying what happened and whether the
// repository changed.
//
// What each operation does (restore point: a record written before the
// mutation and completed after it, see Undo):
//
//   - merge: targetRef must be a local branch. If it is not checked out it
//     is checked out first, and only when the work tree is clean (merge
//     always needs a clean work tree, so an abort restores it exactly). On
//     a conflict or any failure the merge is aborted and the original
//     branch checked out again: the repository is as it was. On success
//     the target stays checked out. strategy "squash" commits the combined
//     change as one ordinary commit. Restore point on the target branch.
//   - rebase: non-interactive, no autostash, no autosquash, no update-refs;
//     aborted on a conflict. A named currentRef ends up checked out.
//   - discard: the paths' changes (untracked files included) move into a
//     safety stash entry (`git stash push -u -- paths`).
//   - reset: soft, mixed or hard; before a hard reset uncommitted changes
//     are kept in a safety stash entry.
//   - patch: `git apply --check` first; applyToIndex uses --index.
//   - plan: up to ten steps under one restore point; stops at the first
//     failure, later steps "skipped".
//   - worktree: `git worktree add`, creating the branch at HEAD if needed.
//   - commit: paths or stageAll, never --amend; the user's hooks and signing
//     run; a failed commit puts the index back. Refused, before anything
//     changes, when a committed file is held exclusively by another
//     agent's shift-roster lease (guard.go; the proposer's own workers and
//     the person's override pass).
//   - push: only a remote the repository names (never ext:: or fd::),
//     optional --set-upstream, --force-with-lease bound to the
//     remote-tracking commit recorded at proposal time. No restore point.
//   - branch: created at startPoint without tracking, optionally checked
//     out. No restore point.
//   - branchDelete: per-branch verdicts; `git branch -D` only for branches
//     that pass them; deleted tips reported as tipOid/restoreOid.
//   - submodulePointer: record commits only the gitlink (hooks and signing
//     apply), return checks out the recorded commit detached.
//
// Hooks never run except for commit and submodulePointer record.
func (e *Executor) Execute(ctx context.Context, j Job) (out Outcome) {
	e.mu.Lock()
	defer e.mu.Unlock()
	defer func() {
		if p := recover(); p != nil {
			out = outcome(failed("internal error while executing %s: %v; check the repository state before retrying", j.OperationType, p))
		}
	}()
	if !knownOp(j.OperationType) {
		return outcome(failed("unknown operation type %q; expected one of %s", j.OperationType, strings.Join(Ops, ", ")))
	}
	if err := e.Revalidate(ctx, j.Binding); err != nil {
		return outcome(failed("not executed, the repository changed since the proposal: %v", err))
	}
	req, err := parse(j.OperationType, j.Body)
	if err != nil {
		return outcome(failed("not executed: %v", err))
	}
	if err := e.checkWorkTree(ctx, j.Binding, req); err != nil {
		return outcome(failed("%v", err))
	}
	run, ok := runners[j.OperationType]
	if !ok {
		return outcome(failed("not executed: this gateway has no executor for %s; update fluxgit", j.OperationType))
	}
	x := &execution{e: e, job: j, repo: j.Binding.RepoPath}
	return outcome(run(x, ctx, req))
}

// runner executes one operation's typed body.
type runner func(x *execution, ctx context.Context, body operation.Body) result

// runners are the executor functions, one per operation of operation.All
// (TestEveryOperationHasAnExecutor): adding an operation is adding its
// function here. The five a plan may hold run as one step outside a plan.
var runners = map[string]runner{
	"merge":            runStep,
	"rebase":           runStep,
	"discard":          runStep,
	"reset":            runStep,
	"patch":            runStep,
	"plan":             typed((*execution).plan),
	"worktree":         typed((*execution).worktree),
	"commit":           typed((*execution).commit),
	"push":             typed((*execution).push),
	"branch":           typed((*execution).branch),
	"branchDelete":     typed((*execution).branchDelete),
	"submodulePointer": typed((*execution).submodulePointer),
}

// typed adapts an executor function of one typed body to a runner; parse
// made the body with operation.New, so the assertion holds.
func typed[B operation.Body](f func(*execution, context.Context, B) result) runner {
	return func(x *execution, ctx context.Context, body operation.Body) result { return f(x, ctx, body.(B)) }
}

// runStep runs a merge, rebase, discard, reset or patch body as the
// equivalent plan step, with its own restore point.
func runStep(x *execution, ctx context.Context, body operation.Body) result {
	return x.step(ctx, x.job.OperationType, operation.AsStep(body), false)
}

func outcome(r result) Outcome {
	if r["status"] != "completed" {
		r["status"] = "failed"
	}
	if _, ok := r["message"]; !ok {
		r["message"] = ""
	}
	b, err := json.Marshal(r)
	if err != nil {
		b, _ = json.Marshal(failed("cannot encode the result: %v", err))
		return Outcome{Status: "failed", Result: b}
	}
	return Outcome{Status: r["status"].(string), Result: b}
}

// execution is one Execute call.
type execution struct {
	e    *Executor
	job  Job
	repo string
}

// isOid reports whether s is a full lowercase object id (SHA-1 or SHA-256).
func isOid(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
