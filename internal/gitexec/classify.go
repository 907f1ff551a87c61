package gitexec

import "strings"

// Kinds of a failed git call that an agent can fix itself, reported in
// the 10010 payload's data.kind next to the reference's command and
// details: the reference uses one code and one message for all three, so
// the data says which one it is and data.hint how to fix it.
const (
	// KindNotARepository: the path is not inside a git work tree.
	KindNotARepository = "not_a_repository"
	// KindUnknownRevision: a ref, revision or object id names nothing.
	KindUnknownRevision = "unknown_revision"
	// KindMissingPath: a file path does not exist (at that revision).
	KindMissingPath = "missing_path"
)

// Hints per kind: short (the model pays for every token), naming the
// tools that show what exists.
var kindHints = map[string]string{
	KindNotARepository:  "repoPath must be a directory inside a git work tree: pass the repository's root (the directory holding .git); fleet.digest lists the repositories fluxgit knows.",
	KindUnknownRevision: "Pass a branch, tag or commit that exists: repo.refs lists branches and tags, repo.history commits. Refs are case-sensitive; a short id must be unique.",
	KindMissingPath:     "Paths are relative to the repository root and case-sensitive: repo.status and worktree.changes list changed files; the file may exist only at another revision.",
}

// Patterns of git's own messages and of the gitread providers' messages
// that mean each kind, checked in this order (a missing path first: git's
// "path 'x' does not exist in 'HEAD'" also names a revision).
var kindPatterns = []struct {
	kind     string
	patterns []string
}{
	{KindNotARepository, []string{"not a git repository", "must be run in a work tree", "is this a work tree?"}},
	{KindMissingPath, []string{"does not exist at ", "does not exist in ", "exists on disk, but not in", "no such path", "did not match any file"}},
	{KindUnknownRevision, []string{"unknown revision", "bad revision", "needed a single revision", "invalid object name",
		"not a valid object name", "bad object", "does not name a commit", "does not name a ref", "invalid reference", "not a valid ref"}},
}

// Classify says which fixable kind a failed call's details describe and
// how to fix it, or "", "" when it is none of them (a timeout, a cap, a
// damaged repository: details alone explain those).
func Classify(details string) (kind, hint string) {
	d := strings.ToLower(details)
	for _, k := range kindPatterns {
		for _, p := range k.patterns {
			if strings.Contains(d, p) {
				return k.kind, kindHints[k.kind]
			}
		}
	}
	return "", ""
}
