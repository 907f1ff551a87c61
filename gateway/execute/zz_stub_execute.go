// TEMPORARY: replaced by helper A's implementation at merge.

package execute

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Options configure an Executor.
type Options struct {
	RunDir string
	Now    func() time.Time
}

// Executor runs operations one at a time (stub: branch only).
type Executor struct {
	o  Options
	mu sync.Mutex
}

// BindError is a binding failure the agent can fix.
type BindError struct{ Msg string }

func (e *BindError) Error() string { return e.Msg }

// UndoResult describes an undone restore point.
type UndoResult struct{ RepoPath, RepoID, Before, After, Branch string }

// New returns an Executor.
func New(o Options) *Executor { return &Executor{o: o} }

func git(ctx context.Context, dir string, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...).Output()
	return strings.TrimSpace(string(out)), err
}

// Bind resolves the body's repository and refs.
func (e *Executor) Bind(ctx context.Context, op string, body json.RawMessage) (Binding, error) {
	var b struct {
		RepoPath   string `json:"repoPath"`
		StartPoint string `json:"startPoint"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		return Binding{}, err
	}
	top, err := git(ctx, b.RepoPath, "rev-parse", "--show-toplevel")
	if err != nil {
		return Binding{}, &BindError{Msg: "repoPath " + b.RepoPath + " is not a git work tree"}
	}
	top, _ = filepath.EvalSymlinks(top)
	head, _ := git(ctx, top, "rev-parse", "--verify", "-q", "HEAD")
	br, _ := git(ctx, top, "symbolic-ref", "-q", "HEAD")
	bd := Binding{RepoPath: top, GitDir: filepath.Join(top, ".git"), Head: head, Branch: br, Refs: map[string]string{}}
	if b.StartPoint != "" {
		oid, err := git(ctx, top, "rev-parse", "--verify", "--end-of-options", b.StartPoint+"^{commit}")
		if err != nil {
			return Binding{}, &BindError{Msg: "startPoint " + b.StartPoint + " does not name a commit"}
		}
		bd.Refs[b.StartPoint] = oid
	}
	return bd, nil
}

// Review describes a proposal for the card.
func (e *Executor) Review(ctx context.Context, op string, body json.RawMessage, b Binding) (Review, error) {
	r := Review{Summary: op + " in " + b.RepoPath}
	var m struct {
		Mode      string `json:"mode"`
		TargetRef string `json:"targetRef"`
	}
	_ = json.Unmarshal(body, &m)
	if op == "reset" && m.Mode == "hard" {
		r.Requires.TypeBranch = strings.TrimPrefix(b.Branch, "refs/heads/")
	}
	return r, nil
}

// Revalidate re-resolves a binding.
func (e *Executor) Revalidate(ctx context.Context, b Binding) error {
	top, err := git(ctx, b.RepoPath, "rev-parse", "--show-toplevel")
	if err != nil {
		return fmt.Errorf("repository %s no longer resolves", b.RepoPath)
	}
	if top, _ = filepath.EvalSymlinks(top); top != b.RepoPath {
		return fmt.Errorf("repository %s now resolves to %s", b.RepoPath, top)
	}
	if head, _ := git(ctx, top, "rev-parse", "--verify", "-q", "HEAD"); head != b.Head {
		return fmt.Errorf("HEAD of %s moved from %s to %s", b.RepoPath, b.Head, head)
	}
	return nil
}

// CheckConfirmations checks what the person confirmed.
func CheckConfirmations(r Review, c Confirmations) error {
	if r.Requires.TypeBranch != "" && c.TypedBranch != r.Requires.TypeBranch {
		return errors.New("type the branch name " + r.Requires.TypeBranch + " to confirm the hard reset")
	}
	if r.Requires.ForcePush && !c.ForcePush {
		return errors.New("acknowledge the force push")
	}
	for _, s := range r.Requires.DestructiveSteps {
		if !slices.Contains(c.Steps, s) {
			return fmt.Errorf("tick destructive step %d", s)
		}
	}
	return nil
}

// Execute runs an approved job.
func (e *Executor) Execute(ctx context.Context, j Job) Outcome {
	e.mu.Lock()
	defer e.mu.Unlock()
	fail := func(msg string) Outcome {
		b, _ := json.Marshal(map[string]any{"status": "failed", "message": msg})
		return Outcome{Status: "failed", Result: b}
	}
	if err := e.Revalidate(ctx, j.Binding); err != nil {
		return fail(err.Error())
	}
	if j.OperationType != "branch" {
		return fail("stub executor runs branch only")
	}
	var b struct {
		Name       string `json:"name"`
		StartPoint string `json:"startPoint"`
	}
	_ = json.Unmarshal(j.Body, &b)
	args := []string{"branch", "--end-of-options", b.Name}
	if b.StartPoint != "" {
		args = append(args, j.Binding.Refs[b.StartPoint])
	}
	if out, err := git(ctx, j.Binding.RepoPath, args...); err != nil {
		return fail("git branch failed: " + out)
	}
	res, _ := json.Marshal(map[string]any{"status": "completed", "message": "created branch " + b.Name, "branch": b.Name, "checkedOut": false})
	return Outcome{Status: "completed", Result: res}
}

// Undo undoes the latest restore point (stub: never possible).
func (e *Executor) Undo(ctx context.Context, repoPath string) (UndoResult, error) {
	return UndoResult{}, errors.New("no restore point of " + repoPath + " can be undone")
}

// RestorePoint is the latest restore point of repoPath; ok is false when it has none.
func (e *Executor) RestorePoint(ctx context.Context, repoPath string) (st RestoreState, ok bool, err error) {
	return RestoreState{}, false, nil
}
