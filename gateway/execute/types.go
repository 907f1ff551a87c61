// Package execute binds proposals to repositories, describes them for the
// approval card, and executes approved ones with the git CLI behind a
// restore point written in the run-directory format the flux.* and
// safety.* tools read.
package execute

import (
	"encoding/json"

	"github.com/fluxgit/fluxgit/internal/operation"
)

// Binding is what a proposal was checked against when it arrived: the
// canonical repository and the object ids of the refs it names. Execution
// re-resolves everything and refuses when any of it changed.
type Binding struct {
	// RepoPath is the canonical top level of the work tree (symlinks
	// resolved); GitDir its canonical common git directory.
	RepoPath string `json:"repoPath"`
	GitDir   string `json:"gitDir"`
	// Head is HEAD's commit ("" when unborn); Branch the full name of the
	// checked-out branch ("" when detached).
	Head   string `json:"head"`
	Branch string `json:"branch"`
	// Refs maps each ref the body names, as written, to its commit.
	Refs map[string]string `json:"refs,omitempty"`
	// Targets binds each branchDelete target repository (nil otherwise).
	Targets []Binding `json:"targets,omitempty"`
	// RequestedPath is the repoPath as the body wrote it; Revalidate
	// resolves it again and refuses when it now names another repository.
	RequestedPath string `json:"requestedPath,omitempty"`
	// Submodule binds a submodulePointer proposal (nil otherwise).
	Submodule *SubmoduleBinding `json:"submodule,omitempty"`
	// WorktreePath is where a worktree proposal creates its worktree,
	// canonical (symbolic links resolved as far as the path exists) at
	// proposal time; the default location is computed here, so the policy
	// checks and the card shows the real place. Execution resolves the
	// destination again and refuses when it now lies elsewhere.
	WorktreePath string `json:"worktreePath,omitempty"`
	// CommitTree is the tree a commit proposal records, computed at
	// proposal time in a private index from the paths, stageAll or the
	// index the body names; execution refuses when the same computation
	// gives another tree (a file changed after the card was shown).
	CommitTree string `json:"commitTree,omitempty"`
	// Moves lists every ref the operation moves that the body need not
	// name (a commit's or reset's checked-out branch, a rebase's current
	// branch, a push's remote branch), in the short form policy refs use;
	// the agent policy's refs globs cover them as well.
	Moves []string `json:"moves,omitempty"`
	// WorkTree is the tree of the work-tree changes a discard or a hard
	// reset throws away, as the card showed them (workTree); execution
	// computes it again and refuses when the changes differ.
	WorkTree string `json:"workTree,omitempty"`
	// Proposer is the fluxgit server process and MCP client that sent
	// the proposal (the operation.ProposerHeader of its POST; nil when it
	// had none). A commit's guard exempts the workers that process checked
	// in for that client, and only those.
	Proposer *operation.Proposer `json:"proposer,omitempty"`
}

// SubmoduleBinding is the state a submodulePointer proposal was checked
// against: where the parent and the submodule are, the commit the parent
// records for it and the one checked out in it.
type SubmoduleBinding struct {
	// ParentPath and Path are canonical work-tree tops; RelativePath is the
	// submodule's path inside the parent.
	ParentPath   string `json:"parentPath"`
	Path         string `json:"path"`
	RelativePath string `json:"relativePath"`
	ParentHead   string `json:"parentHead"`
	ParentBranch string `json:"parentBranch"`
	Recorded     string `json:"recorded"`
	CheckedOut   string `json:"checkedOut"`
}

// Review is what the approval card shows beyond the body itself, computed
// once when the proposal arrives.
type Review struct {
	// Summary is one line a person reads first.
	Summary  string   `json:"summary"`
	Warnings []string `json:"warnings,omitempty"`
	// Merge describes what a merge (or a plan's merge step) brings in.
	Merge *MergeReview `json:"merge,omitempty"`
	// Verdicts are branchDelete's per-branch verdicts at proposal time.
	Verdicts []BranchVerdict `json:"verdicts,omitempty"`
	// Requires is what the person must confirm to approve.
	Requires Requires `json:"requires"`
	// WorktreePath is where a worktree proposal creates its worktree
	// (the default location spelled out).
	WorktreePath string `json:"worktreePath,omitempty"`
	// Commit describes what a commit proposal records.
	Commit *CommitReview `json:"commit,omitempty"`
	// Facts are labelled lines: the branch that moves, where a branch
	// points, a worktree's real path, a submodule's old and new commit.
	Facts []Fact `json:"facts,omitempty"`
	// Sections are what changes: commits and files with their diffs,
	// bounded (see ReviewMaxCommits) and expandable (FileDiff).
	Sections []Section `json:"sections,omitempty"`
}

// CommitReview is the change a commit proposal records, as bound: the
// tree and its difference from HEAD.
type CommitReview struct {
	Tree         string   `json:"tree"`
	Files        []string `json:"files"` // at most 50 "status<TAB>path" lines
	FilesChanged int      `json:"filesChanged"`
	Insertions   int      `json:"insertions"`
	Deletions    int      `json:"deletions"`
}

// MergeReview summarises a merge of Source into Target.
type MergeReview struct {
	Source       string   `json:"source"`
	Target       string   `json:"target"`
	Commits      int      `json:"commits"`
	Log          []string `json:"log"` // at most 20 one-line commits, newest first
	FilesChanged int      `json:"filesChanged"`
	Insertions   int      `json:"insertions"`
	Deletions    int      `json:"deletions"`
	FastForward  bool     `json:"fastForward"`
}

// BranchVerdict is whether one branchDelete branch may be deleted.
type BranchVerdict struct {
	RepoPath string `json:"repoPath"`
	Branch   string `json:"branch"`
	Delete   bool   `json:"delete"`
	Reason   string `json:"reason"`
	TipOid   string `json:"tipOid,omitempty"`
}

// Requires lists the confirmations an approval must carry.
type Requires struct {
	// TypeBranch: a hard reset; the person must type this branch name.
	TypeBranch string `json:"typeBranch,omitempty"`
	// DestructiveSteps: plan step indexes (0-based) the person must tick.
	DestructiveSteps []int `json:"destructiveSteps,omitempty"`
	// ForcePush: a force-with-lease push; the person must acknowledge it.
	ForcePush bool `json:"forcePush,omitempty"`
}

// Confirmations is what the person confirmed when approving.
type Confirmations struct {
	TypedBranch string `json:"typedBranch,omitempty"`
	Steps       []int  `json:"steps,omitempty"`
	ForcePush   bool   `json:"forcePush,omitempty"`
	// OverrideGuard: the person lets a commit through although another
	// agent holds one of its files exclusively (the shift-roster guard).
	OverrideGuard bool `json:"overrideGuard,omitempty"`
}

// Job is one approved proposal to execute.
type Job struct {
	ID            string
	OperationType string
	Body          json.RawMessage
	Binding       Binding
	Confirmations Confirmations
}

// Outcome is how an execution ended: Status is "completed" or "failed",
// Result the F§7.4 result object (it always carries status and message).
type Outcome struct {
	Status string
	Result json.RawMessage
}
