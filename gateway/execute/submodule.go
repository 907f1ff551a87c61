package execute

import (
	"context"
	"fmt"

	"github.com/fluxgit/fluxgit/internal/operation"
)

// submodulePointer records the submodule's checked-out commit in its
// parent (direction record: a commit of the gitlink alone, through the
// user's commit pipeline with hooks and signing; nothing is pushed) or
// checks the recorded commit out in the submodule, detached (direction
// return), keeping the previous checkout as the restore point. The
// submodule must be initialised, clean, and differ from the recorded
// pointer; the optional pins must still match.
func (x *execution) submodulePointer(ctx context.Context, r *operation.SubmodulePointer) result {
	e := x.e
	s := x.job.Binding.Submodule
	if s == nil {
		return failed("the proposal has no submodule binding")
	}
	if r.ExpectedRecordedOid != "" && r.ExpectedRecordedOid != s.Recorded {
		return failed("expectedRecordedOid %s does not match the recorded pointer %s", r.ExpectedRecordedOid, s.Recorded)
	}
	if r.ExpectedCheckedOutOid != "" && r.ExpectedCheckedOutOid != s.CheckedOut {
		return failed("expectedCheckedOutOid %s does not match the checked-out commit %s", r.ExpectedCheckedOutOid, s.CheckedOut)
	}
	if st, err := e.run(ctx, s.Path, "status", "--porcelain=v1", "--untracked-files=no"); err != nil || st != "" {
		return failed("the submodule %s has uncommitted changes (or its status cannot be read); it must be clean", s.RelativePath)
	}
	info := map[string]any{"direction": r.Direction, "parentPath": r.ParentPath, "relativePath": s.RelativePath,
		"parentHeadRef": strp(s.ParentBranch), "previousParentOid": strp(s.ParentHead)}
	switch r.Direction {
	case "record":
		cp, err := e.begin(s.ParentPath, record{Operation: "submodulePointer", BeforeCommit: strp(s.ParentHead), BranchRef: strp(s.ParentBranch),
			BeforeRef: strp(s.ParentBranch), AfterRef: strp(s.ParentBranch)})
		if err != nil {
			return failed("record not started: %v", err)
		}
		if _, err := e.hooked.Run(ctx, s.ParentPath, "commit", "-q", "-m", r.Message, "--only", "--", s.RelativePath); err != nil {
			cp.abandon()
			return failed("git commit of the submodule pointer failed, nothing was committed: %s", details(err))
		}
		after, _ := e.resolve(ctx, s.ParentPath, "HEAD")
		if err := cp.complete(after, nil); err != nil {
			return failed("committed %s but the restore point could not be completed: %v", after, err)
		}
		info["commitSha"], info["pointerOid"], info["checkedOutOid"] = after, s.CheckedOut, s.CheckedOut
		info["restorePoint"] = map[string]any{"previousRef": strp(s.ParentBranch), "previousOid": s.ParentHead}
		return cp.attach(ctx, result{"status": "completed", "commitSha": after, "submodulePointer": info,
			"message": fmt.Sprintf("recorded %s as the pointer of %s in commit %s", s.CheckedOut, s.RelativePath, after)})
	case "return":
		_, prevRef, err := e.headState(ctx, s.Path)
		if err != nil {
			return failed("return not started: %v", err)
		}
		cp, err := e.begin(s.Path, record{Operation: "submodulePointer", BeforeCommit: strp(s.CheckedOut), BeforeRef: strp(prevRef)})
		if err != nil {
			return failed("return not started: %v", err)
		}
		if _, err := e.run(ctx, s.Path, "checkout", "-q", "--detach", s.Recorded); err != nil {
			cp.abandon()
			return failed("cannot check out the recorded commit %s in %s: %s", s.Recorded, s.RelativePath, details(err))
		}
		if err := cp.complete(s.Recorded, nil); err != nil {
			return failed("checked out %s but the restore point could not be completed: %v", s.Recorded, err)
		}
		info["commitSha"], info["pointerOid"], info["checkedOutOid"] = nil, s.Recorded, s.Recorded
		info["restorePoint"] = map[string]any{"previousRef": strp(prevRef), "previousOid": s.CheckedOut}
		return cp.attach(ctx, result{"status": "completed", "commitSha": nil, "submodulePointer": info,
			"message": fmt.Sprintf("checked out the recorded commit %s in %s (detached); it was at %s", s.Recorded, s.RelativePath, s.CheckedOut)})
	}
	return failed("direction %q is not record or return", r.Direction)
}
