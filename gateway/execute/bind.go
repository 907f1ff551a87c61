package execute

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fluxgit/fluxgit/gateway/policy"
	"github.com/fluxgit/fluxgit/internal/gitexec"
	"github.com/fluxgit/fluxgit/internal/operation"
	"github.com/fluxgit/fluxgit/internal/pathwithin"
)

// resolveRepo maps a path to its canonical work-tree top and common git
// directory. Symbolic links are resolved first, so a link to a repository
// binds the repository it points at.
func (e *Executor) resolveRepo(ctx context.Context, field, p string) (top, gitDir string, err error) {
	if p == "" || !filepath.IsAbs(p) {
		return "", "", bindErr("%s %q must be an absolute path to a git work tree", field, p)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", "", bindErr("%s %s does not exist or cannot be resolved; give the absolute path of an existing git work tree", field, p)
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return "", "", bindErr("%s %s is not a directory; give the absolute path of a git work tree", field, p)
	}
	out, err := e.run(ctx, real, "rev-parse", "--path-format=absolute", "--show-toplevel", "--git-common-dir")
	lines := strings.Split(out, "\n")
	if err != nil || len(lines) != 2 || lines[0] == "" {
		return "", "", bindErr("%s %s is not a git work tree (a bare repository or no repository at all); give the top directory of a checked-out repository", field, p)
	}
	if top, err = filepath.EvalSymlinks(lines[0]); err != nil {
		return "", "", bindErr("%s %s: its work tree %s cannot be resolved", field, p, lines[0])
	}
	if gitDir, err = filepath.EvalSymlinks(lines[1]); err != nil {
		return "", "", bindErr("%s %s: its git directory cannot be resolved", field, p)
	}
	return top, gitDir, nil
}

// bindRepo resolves p and records HEAD.
func (e *Executor) bindRepo(ctx context.Context, field, p string) (Binding, error) {
	top, gitDir, err := e.resolveRepo(ctx, field, p)
	if err != nil {
		return Binding{}, err
	}
	head, branch, err := e.headState(ctx, top)
	if err != nil {
		return Binding{}, err
	}
	return Binding{RepoPath: top, GitDir: gitDir, Head: head, Branch: branch, RequestedPath: p, Refs: map[string]string{}}, nil
}

// Bind resolves body.repoPath (and the branchDelete targets, and the
// submodulePointer parent and submodule) to canonical repositories and
// records the commit of every ref the body names. A *BindError says what
// the agent must fix; other errors are the gateway's own trouble.
//
// Refs that must exist (merge source and target, rebase onto, reset
// target, branch start point) are refused here when they name no commit,
// so a person never reviews a proposal that cannot run.
func (e *Executor) Bind(ctx context.Context, op string, body json.RawMessage) (Binding, error) {
	if !knownOp(op) {
		return Binding{}, bindErr("unknown operation type %q; expected one of %s", op, strings.Join(Ops, ", "))
	}
	req, err := parse(op, body)
	if err != nil {
		return Binding{}, err
	}
	b, err := e.bindRepo(ctx, "repoPath", req.Head().RepoPath)
	if err != nil {
		return Binding{}, err
	}
	need := func(field, ref string) error {
		if strings.TrimSpace(ref) == "" {
			return bindErr("%s is required for %s", field, op)
		}
		oid, err := e.resolve(ctx, b.RepoPath, ref)
		if err != nil {
			return err
		}
		if oid == "" {
			return bindErr("%s %q does not name a commit in %s; give a branch, tag or commit id that exists there", field, ref, b.RepoPath)
		}
		b.Refs[ref] = oid
		return nil
	}
	optional := func(ref string) error {
		oid, err := e.resolve(ctx, b.RepoPath, ref)
		if err == nil {
			b.Refs[ref] = oid // "" records that it did not exist
		}
		return err
	}
	// bindStep binds one step body (operation.PlanStep.Body, or
	// operation.AsStep of a whole operation's body).
	bindStep := func(s any, at string) error {
		switch r := s.(type) {
		case *operation.MergeStep:
			if err := need(at+"sourceRef", r.SourceRef); err != nil {
				return err
			}
			full, ok := localBranch(r.TargetRef)
			if !ok && r.TargetRef == "HEAD" && b.Branch != "" {
				full, ok = b.Branch, true
			}
			if !ok {
				return bindErr("%stargetRef %q is not a local branch name; a merge goes into a local branch such as main", at, r.TargetRef)
			}
			if err := need(at+"targetRef", full); err != nil {
				return bindErr("%stargetRef %q is not a local branch of %s; a merge goes into an existing local branch", at, r.TargetRef, b.RepoPath)
			}
		case *operation.RebaseStep:
			if err := need(at+"ontoRef", r.OntoRef); err != nil {
				return err
			}
			if r.Interactive {
				return bindErr("%sinteractive rebase is not supported; set interactive to false", at)
			}
			if cur := r.CurrentRef; cur != "" && cur != "HEAD" {
				full, ok := localBranch(cur)
				if !ok {
					return bindErr("%scurrentRef %q is not a local branch name; give the branch to rebase, or HEAD", at, cur)
				}
				if err := need(at+"currentRef", full); err != nil {
					return bindErr("%scurrentRef %q is not a local branch of %s", at, cur, b.RepoPath)
				}
			}
		case *operation.ResetStep:
			if err := need(at+"targetRef", r.TargetRef); err != nil {
				return err
			}
			if m := r.Mode; m != "" && m != "soft" && m != "mixed" && m != "hard" {
				return bindErr("%smode %q is not soft, mixed or hard", at, m)
			}
		case *operation.DiscardStep:
			if len(r.Paths) == 0 {
				return bindErr("%spaths must list at least one path to discard", at)
			}
			if b.Head == "" {
				return bindErr("%s has no commit yet; there is nothing to discard changes against", b.RepoPath)
			}
		case *operation.PatchStep:
			if r.PatchContent == "" {
				return bindErr("%spatchContent is empty", at)
			}
		}
		return nil
	}
	switch req := req.(type) {
	case *operation.Merge, *operation.Rebase, *operation.Reset, *operation.Discard, *operation.Patch:
		err = bindStep(operation.AsStep(req), "")
		if err == nil {
			// What a discard or a hard reset throws away is bound like a
			// commit's tree (issue 25: the approval binds what was shown).
			switch r := req.(type) {
			case *operation.Discard:
				b.WorkTree, err = e.workTree(ctx, b, r.Paths)
			case *operation.Reset:
				if r.Mode == "hard" && b.Head != "" {
					// A hard reset is also the way out of a conflicted
					// merge, whose index has no tree: then nothing is
					// bound and the card says it cannot list the changes.
					if t, werr := e.workTree(ctx, b, nil); werr == nil {
						b.WorkTree = t
					}
				}
			}
		}
	case *operation.Plan:
		if len(req.Steps) == 0 || len(req.Steps) > operation.MaxPlanSteps {
			return Binding{}, bindErr("a plan has 1 to 10 steps, got %d", len(req.Steps))
		}
		for i := range req.Steps {
			s := &req.Steps[i]
			if s.Body == nil {
				return Binding{}, bindErr("steps[%d].operationType %q is not merge, rebase, discard, reset or patch", i, s.OperationType)
			}
			if err = bindStep(s.Body, fmt.Sprintf("steps[%d].", i)); err != nil {
				break
			}
		}
		if err == nil {
			// A first step that throws work away sees the work tree as
			// the card shows it, so it is bound like the operation alone;
			// later steps see what earlier ones left.
			if paths, ok := workTreeStep(req.Steps[0].Body); ok {
				if t, werr := e.workTree(ctx, b, paths); werr == nil {
					b.WorkTree = t
				} else if paths != nil {
					err = werr
				}
			}
		}
	case *operation.Worktree:
		full, ok := localBranch(req.Branch)
		if !ok {
			return Binding{}, bindErr("branch %q is not a valid local branch name", req.Branch)
		}
		if err = optional(full); err == nil {
			b.WorktreePath, err = worktreeDestination(b.RepoPath, full, req.Path)
		}
	case *operation.Commit:
		if strings.TrimSpace(req.Message) == "" {
			return Binding{}, bindErr("message must not be blank")
		}
		b.CommitTree, err = e.commitTree(ctx, b, req)
	case *operation.Push:
		err = e.bindPush(ctx, &b, req)
	case *operation.Branch:
		full, ok := localBranch(req.Name)
		if !ok {
			return Binding{}, bindErr("name %q is not a valid branch name", req.Name)
		}
		if oid, rerr := e.resolve(ctx, b.RepoPath, full); rerr != nil {
			return Binding{}, rerr
		} else if oid != "" {
			return Binding{}, bindErr("branch %s already exists in %s; choose another name", shortBranch(full), b.RepoPath)
		}
		b.Refs[full] = ""
		sp := req.StartPoint
		if sp == "" {
			sp = "HEAD"
		}
		err = need("startPoint", sp)
	case *operation.BranchDelete:
		err = e.bindTargets(ctx, &b, req)
	case *operation.SubmodulePointer:
		err = e.bindSubmodule(ctx, &b, req)
	}
	if errors.Is(err, gitexec.ErrRepoProgram) {
		return Binding{}, bindErr("%s", details(err))
	}
	if err != nil {
		return Binding{}, err
	}
	b.Moves = moves(op, req, b)
	return b, nil
}

// worktreeDestination is where a worktree for the branch full goes: path,
// or by default <parent>/<repo name>.worktrees/<branch, '/' as '-'>, made
// canonical (policy.Canonical: symbolic links resolved as far as the path
// exists). It must not exist yet.
func worktreeDestination(repo, full, path string) (string, error) {
	if path == "" {
		path = filepath.Join(filepath.Dir(repo), filepath.Base(repo)+".worktrees", strings.ReplaceAll(shortBranch(full), "/", "-"))
	} else if !filepath.IsAbs(path) {
		return "", bindErr("path %q must be absolute", path)
	}
	canon := policy.Canonical(path)
	for _, p := range []string{path, canon} {
		if _, err := os.Lstat(p); err == nil {
			return "", bindErr("path %s already exists; give a path where the new worktree can be created", p)
		}
	}
	return canon, nil
}

func (e *Executor) bindPush(ctx context.Context, b *Binding, req *operation.Push) error {
	remote := req.Remote
	if remote == "" {
		remote = "origin"
	}
	if err := e.checkRemote(ctx, b.RepoPath, remote); err != nil {
		return err
	}
	br := req.Branch
	if br == "" {
		if b.Branch == "" {
			return bindErr("HEAD is detached in %s; name the branch to push", b.RepoPath)
		}
		br = b.Branch
	}
	full, ok := localBranch(br)
	if !ok {
		return bindErr("branch %q is not a valid local branch name", br)
	}
	oid, err := e.resolve(ctx, b.RepoPath, full)
	if err != nil {
		return err
	}
	if oid == "" {
		return bindErr("branch %s does not exist in %s", shortBranch(full), b.RepoPath)
	}
	b.Refs[full] = oid
	tracking := "refs/remotes/" + remote + "/" + shortBranch(full)
	if b.Refs[tracking], err = e.resolve(ctx, b.RepoPath, tracking); err != nil {
		return err
	}
	return nil
}

// checkRemote refuses a remote the repository does not configure, and one
// whose URL uses a transport that runs commands (ext::, fd::).
func (e *Executor) checkRemote(ctx context.Context, repo, remote string) error {
	out, err := e.run(ctx, repo, "remote")
	if err != nil {
		return fmt.Errorf("list remotes: %w", err)
	}
	names := strings.Fields(out)
	found := false
	for _, n := range names {
		if n == remote {
			found = true
		}
	}
	if !found {
		return bindErr("remote %q is not configured in %s (configured: %s); push only goes to a remote the repository already names", remote, repo, strings.Join(names, ", "))
	}
	for _, args := range [][]string{{"remote", "get-url", "--all", remote}, {"remote", "get-url", "--push", "--all", remote}} {
		urls, err := e.run(ctx, repo, args...)
		if err != nil {
			return fmt.Errorf("read the URL of remote %s: %w", remote, err)
		}
		for _, u := range strings.Split(urls, "\n") {
			l := strings.ToLower(strings.TrimSpace(u))
			if strings.HasPrefix(l, "ext::") || strings.HasPrefix(l, "fd::") {
				return bindErr("remote %q uses a command transport (%s); fluxgit never pushes through ext:: or fd:: remotes", remote, strings.SplitN(l, "::", 2)[0]+"::")
			}
		}
	}
	return nil
}

func (e *Executor) bindTargets(ctx context.Context, b *Binding, req *operation.BranchDelete) error {
	if len(req.Targets) == 0 || len(req.Targets) > operation.MaxDeleteRepos {
		return bindErr("targets must list 1 to 20 repositories, got %d", len(req.Targets))
	}
	self := false
	for i, t := range req.Targets {
		tb, err := e.bindRepo(ctx, fmt.Sprintf("targets[%d].repoPath", i), t.RepoPath)
		if err != nil {
			return err
		}
		if tb.RepoPath == b.RepoPath {
			self = true
		}
		if len(t.Branches) == 0 || len(t.Branches) > 20 {
			return bindErr("targets[%d].branches must list 1 to 20 branch names", i)
		}
		for _, br := range t.Branches {
			full, ok := localBranch(br)
			if !ok || strings.HasPrefix(br, "refs/") {
				return bindErr("targets[%d]: %q is not a short local branch name", i, br)
			}
			if tb.Refs[full], err = e.resolve(ctx, tb.RepoPath, full); err != nil {
				return err
			}
		}
		b.Targets = append(b.Targets, tb)
	}
	if !self {
		return bindErr("repoPath %s must be one of the targets' repositories", b.RepoPath)
	}
	return nil
}

func (e *Executor) bindSubmodule(ctx context.Context, b *Binding, req *operation.SubmodulePointer) error {
	rel := func(field, p string) (string, error) {
		c := filepath.Clean(filepath.FromSlash(p))
		if filepath.IsAbs(p) || c == ".." || strings.HasPrefix(c, ".."+string(filepath.Separator)) {
			return "", bindErr("%s %q must be a relative path inside the repository", field, p)
		}
		return c, nil
	}
	pp, err := rel("parentPath", req.ParentPath)
	if err != nil {
		return err
	}
	rp, err := rel("relativePath", req.RelativePath)
	if err != nil {
		return err
	}
	if rp == "." {
		return bindErr("relativePath must name the submodule directory")
	}
	if req.Direction != "record" && req.Direction != "return" {
		return bindErr("direction %q is not record or return", req.Direction)
	}
	if req.Direction == "record" && strings.TrimSpace(req.Message) == "" {
		return bindErr("message is required to record a submodule pointer")
	}
	parent := filepath.Join(b.RepoPath, pp)
	ptop, _, err := e.resolveRepo(ctx, "parentPath", parent)
	if err != nil {
		return err
	}
	if real, _ := filepath.EvalSymlinks(parent); real != ptop || !pathwithin.Within(b.RepoPath, ptop) {
		return bindErr("parentPath %q is not the top of a repository inside %s (it resolves to %s)", req.ParentPath, b.RepoPath, ptop)
	}
	sub := filepath.Join(ptop, rp)
	stop, _, err := e.resolveRepo(ctx, "relativePath", sub)
	if err != nil {
		return bindErr("the submodule %s is not initialised (no checked-out repository there); run git submodule update --init first", sub)
	}
	if real, _ := filepath.EvalSymlinks(sub); real != stop || !pathwithin.Within(ptop, stop) || stop == ptop {
		return bindErr("relativePath %q is not a submodule of %s", req.RelativePath, ptop)
	}
	s := &SubmoduleBinding{ParentPath: ptop, Path: stop, RelativePath: filepath.ToSlash(rp)}
	if s.ParentHead, s.ParentBranch, err = e.headState(ctx, ptop); err != nil {
		return err
	}
	if s.Recorded, err = e.recordedGitlink(ctx, ptop, s.RelativePath); err != nil {
		return err
	}
	if s.CheckedOut, err = e.resolve(ctx, stop, "HEAD"); err != nil {
		return err
	}
	if s.CheckedOut == "" {
		return bindErr("the submodule %s has no checked-out commit", s.RelativePath)
	}
	if req.ExpectedRecordedOid != "" && req.ExpectedRecordedOid != s.Recorded {
		return bindErr("expectedRecordedOid %s does not match the recorded pointer %s of %s; read submodule.status again", req.ExpectedRecordedOid, s.Recorded, s.RelativePath)
	}
	if req.ExpectedCheckedOutOid != "" && req.ExpectedCheckedOutOid != s.CheckedOut {
		return bindErr("expectedCheckedOutOid %s does not match the checked-out commit %s of %s; read submodule.status again", req.ExpectedCheckedOutOid, s.CheckedOut, s.RelativePath)
	}
	if s.Recorded == s.CheckedOut {
		return bindErr("the submodule %s already has the recorded commit %s checked out; there is nothing to %s", s.RelativePath, s.Recorded, req.Direction)
	}
	b.Submodule = s
	return nil
}

// recordedGitlink returns the commit the parent's HEAD records for the
// submodule at rel.
func (e *Executor) recordedGitlink(ctx context.Context, parent, rel string) (string, error) {
	out, err := e.run(ctx, parent, "ls-tree", "-z", "HEAD", "--", rel)
	if err != nil {
		return "", bindErr("cannot read the recorded pointer of %s in %s: %s", rel, parent, details(err))
	}
	meta, _, _ := strings.Cut(strings.TrimRight(out, "\x00"), "\t")
	f := strings.Fields(meta)
	if len(f) != 3 || f[0] != "160000" {
		return "", bindErr("%s is not a submodule recorded in %s's HEAD", rel, parent)
	}
	return f[2], nil
}

// Revalidate re-resolves everything b recorded and returns an error
// naming the first thing that changed: the path no longer resolves or
// resolves to another repository, HEAD or the checked-out branch moved, a
// ref moved, appeared or disappeared, or (submodulePointer) the parent or
// submodule changed. branchDelete tips are not checked here: a moved tip
// is a per-branch "skipped" verdict, not a reason to refuse the rest.
func (e *Executor) Revalidate(ctx context.Context, b Binding) error {
	if err := e.revalidateRepo(ctx, b, true); err != nil {
		return err
	}
	for _, t := range b.Targets {
		if err := e.revalidateRepo(ctx, t, false); err != nil {
			return err
		}
	}
	if s := b.Submodule; s != nil {
		head, branch, err := e.headState(ctx, s.ParentPath)
		if err != nil {
			return err
		}
		if head != s.ParentHead || branch != s.ParentBranch {
			return fmt.Errorf("the parent repository %s moved (HEAD %s on %q, was %s on %q)", s.ParentPath, head, branch, s.ParentHead, s.ParentBranch)
		}
		top, _, err := e.resolveRepo(ctx, "submodule", s.Path)
		if err != nil || top != s.Path {
			return fmt.Errorf("the submodule %s no longer resolves to the repository bound at proposal time", s.RelativePath)
		}
		rec, err := e.recordedGitlink(ctx, s.ParentPath, s.RelativePath)
		if err != nil {
			return err
		}
		cur, err := e.resolve(ctx, s.Path, "HEAD")
		if err != nil {
			return err
		}
		if rec != s.Recorded || cur != s.CheckedOut {
			return fmt.Errorf("the submodule %s changed (recorded %s, checked out %s; at proposal time %s and %s)", s.RelativePath, rec, cur, s.Recorded, s.CheckedOut)
		}
	}
	return nil
}

func (e *Executor) revalidateRepo(ctx context.Context, b Binding, refs bool) error {
	req := b.RequestedPath
	if req == "" {
		req = b.RepoPath
	}
	top, gitDir, err := e.resolveRepo(ctx, "repoPath", req)
	if err != nil {
		return fmt.Errorf("%s no longer resolves to a repository: %v", req, err)
	}
	if top != b.RepoPath || gitDir != b.GitDir {
		return fmt.Errorf("%s now resolves to %s (git directory %s), not to %s bound at proposal time", req, top, gitDir, b.RepoPath)
	}
	if !refs {
		return nil
	}
	head, branch, err := e.headState(ctx, top)
	if err != nil {
		return err
	}
	if branch != b.Branch {
		return fmt.Errorf("the checked-out branch of %s changed from %s to %s", top, orDetached(b.Branch), orDetached(branch))
	}
	if head != b.Head {
		return fmt.Errorf("HEAD of %s moved from %s to %s", top, orNone(b.Head), orNone(head))
	}
	for ref, want := range b.Refs {
		got, err := e.resolve(ctx, top, ref)
		if err != nil {
			return err
		}
		if got != want {
			return fmt.Errorf("ref %s in %s moved from %s to %s", ref, top, orNone(want), orNone(got))
		}
	}
	return nil
}

func orDetached(b string) string {
	if b == "" {
		return "a detached HEAD"
	}
	return b
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
