// TEMPORARY: A declares this (ISSUE12 decisions, "Executor"); deleted at merge.

package execute

// UndoResult is what an undo moved: the branch of RepoPath from After back
// to Before.
type UndoResult struct{ RepoPath, RepoID, Before, After, Branch string }
