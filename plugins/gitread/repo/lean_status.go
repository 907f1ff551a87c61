package repo

// The lean shapes (CONTRACT §3) of repo.status, worktree.changes and
// repo.brief. Each tool computes its reference payload as before and, in
// lean mode (resultshape.Lean), converts it here, so the reference shape
// stays byte for byte what it was and the lean one is derived from the same
// facts: nothing default-valued, empty or derivable is sent, and changed
// paths are porcelain-style strings.

import (
	"strings"
)

// renameSep separates the new path from the original one in the string
// form of a rename or copy entry: "R  new <- old".
const renameSep = " <- "

// leanEntry is the compact form of a changed path: the string "XY path",
// "XY new <- old" for a rename or copy, or the full record (statusEntry)
// when the string would be lossy (a path that is not valid UTF-8) or
// ambiguous (a path that itself contains " <- "). So a string holds " <- "
// exactly when it is a rename or copy.
func leanEntry(e statusEntry) any {
	if e.PathBase64 != "" || e.OrigPathBase64 != "" ||
		strings.Contains(e.Path, renameSep) || strings.Contains(e.OrigPath, renameSep) {
		return e
	}
	if e.OrigPath != "" {
		return e.Status + " " + e.Path + renameSep + e.OrigPath
	}
	return e.Status + " " + e.Path
}

// leanUntracked is the compact form of an untracked path: the path itself,
// or the full record when it is not valid UTF-8.
func leanUntracked(e statusEntry) any {
	if e.PathBase64 != "" {
		return e
	}
	return e.Path
}

func leanEntries(list []statusEntry, conv func(statusEntry) any) []any {
	if len(list) == 0 {
		return nil
	}
	out := make([]any, len(list))
	for i, e := range list {
		out[i] = conv(e)
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// leanStatusData is the lean repo.status payload. Absent fields have their
// default: detached false, no upstream, ahead/behind 0, no entries (clean),
// changedFiles equal to the number of entries.
type leanStatusData struct {
	Branch   string `json:"branch,omitempty"`
	Detached bool   `json:"detached,omitempty"`
	// OID is HEAD's short id, sent only when HEAD is detached (a branch
	// names the commit otherwise; repo.brief carries its id).
	OID string `json:"oid,omitempty"`
	// Unborn is set on a branch without commits.
	Unborn   bool   `json:"unborn,omitempty"`
	Upstream string `json:"upstream,omitempty"`
	Ahead    int64  `json:"ahead,omitempty"`
	Behind   int64  `json:"behind,omitempty"`
	Entries  []any  `json:"entries,omitempty"`
	// ChangedFiles is sent only when entries was cut at maxEntries.
	ChangedFiles int64 `json:"changedFiles,omitempty"`
}

// leanStatus converts the reference repo.status payload; shortOID is HEAD's
// abbreviated id (used only when detached).
func leanStatus(d *statusData, shortOID string) *leanStatusData {
	l := &leanStatusData{
		Branch: deref(d.Branch), Detached: d.Detached, Upstream: deref(d.Upstream),
		Ahead: d.Ahead, Behind: d.Behind, Unborn: d.OID == nil,
		Entries: leanEntries(d.Entries, leanEntry),
	}
	if d.Detached {
		l.OID = shortOID
	}
	if d.Truncated {
		l.ChangedFiles = d.ChangedFiles
	}
	return l
}

// leanChangesData is the lean worktree.changes payload: every changed
// path once, in git's order, as in repo.status (the XY code says where the
// change lives: X in the index, Y in the work tree, "??" untracked). The
// counts by location are sent only when the list was cut.
type leanChangesData struct {
	Entries        []any `json:"entries,omitempty"`
	StagedCount    int64 `json:"stagedCount,omitempty"`
	UnstagedCount  int64 `json:"unstagedCount,omitempty"`
	UntrackedCount int64 `json:"untrackedCount,omitempty"`
}

// leanChanges converts the counted reference payload, given the entries
// in git's order (at most maxChangeEntries of them) and how many there
// were in all.
func leanChanges(d *worktreeChangesData, all []statusEntry, total int64) *leanChangesData {
	l := &leanChangesData{Entries: leanEntries(all, leanEntry)}
	if total > int64(len(all)) {
		l.StagedCount, l.UnstagedCount, l.UntrackedCount = d.StagedCount, d.UnstagedCount, d.UntrackedCount
	}
	return l
}

// leanBriefSubmodules is the lean submodule summary: zero counts left out.
type leanBriefSubmodules struct {
	Total         int64 `json:"total,omitempty"`
	Clean         int64 `json:"clean,omitempty"`
	Drifted       int64 `json:"drifted,omitempty"`
	Uninitialized int64 `json:"uninitialized,omitempty"`
	Conflicts     int64 `json:"conflicts,omitempty"`
	Skipped       int64 `json:"skipped,omitempty"`
	// Attention lists "<state><commit> <path>", the way git submodule
	// status prints a submodule.
	Attention          []string `json:"attention,omitempty"`
	AttentionTruncated bool     `json:"attentionTruncated,omitempty"`
}

// leanBriefData is the lean repo.brief payload: head and work-tree state
// at the top level, every field left out at its default (documented in the
// outputSchema).
type leanBriefData struct {
	Branch   string `json:"branch,omitempty"`
	Detached bool   `json:"detached,omitempty"`
	// Sha is HEAD's short id, sent only when no recent commit is listed
	// (recentCommits[0] is HEAD otherwise).
	Sha                 string               `json:"sha,omitempty"`
	Upstream            string               `json:"upstream,omitempty"`
	Ahead               int64                `json:"ahead,omitempty"`
	Behind              int64                `json:"behind,omitempty"`
	OperationInProgress string               `json:"operationInProgress,omitempty"`
	Staged              int64                `json:"staged,omitempty"`
	Unstaged            int64                `json:"unstaged,omitempty"`
	Untracked           int64                `json:"untracked,omitempty"`
	Conflicted          int64                `json:"conflicted,omitempty"`
	Stashes             int64                `json:"stashes,omitempty"`
	Submodules          *leanBriefSubmodules `json:"submodules,omitempty"`
	// RecentCommits are "<short id> <subject>", newest first.
	RecentCommits           []string `json:"recentCommits,omitempty"`
	ConventionalCommitRatio *float64 `json:"conventionalCommitRatio,omitempty"`
	DefaultBranch           string   `json:"defaultBranch,omitempty"`
	Hints                   []string `json:"hints,omitempty"`
	Truncated               bool     `json:"truncated,omitempty"`
}

// Conventional commits count as a convention of the repository only with
// at least convMinCommits subjects of which convMinRatio follow it (git/git
// at 0.42 has no such convention).
const (
	convMinCommits = 10
	convMinRatio   = 0.8
)

// leanBrief converts a (fitted) reference repo.brief payload; nCommits is
// the number of subjects the ratio was computed over.
func leanBrief(d *briefData, nCommits int) *leanBriefData {
	h, w := d.Head, d.WorkingTree
	l := &leanBriefData{
		Branch: deref(h.Branch), Detached: h.Detached, Upstream: deref(h.Upstream),
		Ahead: h.Ahead, Behind: h.Behind, OperationInProgress: deref(d.OperationInProgress),
		Staged: w.Staged, Unstaged: w.Unstaged, Untracked: w.Untracked, Conflicted: w.Conflicted,
		Stashes: d.Stashes, Hints: d.Hints, Truncated: d.Truncated,
	}
	// The default branch is news only when it is not the branch at hand.
	if db := deref(d.Conventions.DefaultBranch); db != l.Branch {
		l.DefaultBranch = db
	}
	if len(l.Hints) == 0 {
		l.Hints = nil
	}
	for _, c := range d.RecentCommits {
		l.RecentCommits = append(l.RecentCommits, c.Sha+" "+c.Subject)
	}
	if len(d.RecentCommits) == 0 {
		l.Sha = deref(h.Sha)
	}
	if r := d.Conventions.ConventionalCommitRatio; r != nil && nCommits >= convMinCommits && *r >= convMinRatio {
		l.ConventionalCommitRatio = r
	}
	s := d.Submodules
	if s.Total > 0 || s.Skipped > 0 || s.AttentionTruncated {
		ls := &leanBriefSubmodules{Total: s.Total, Clean: s.Clean, Drifted: s.Drifted,
			Uninitialized: s.Uninitialized, Conflicts: s.Conflicts, Skipped: s.Skipped,
			AttentionTruncated: s.AttentionTruncated}
		for _, m := range s.Attention {
			ls.Attention = append(ls.Attention, m.State+m.Commit+" "+m.Path)
		}
		l.Submodules = ls
	}
	return l
}

// leanBriefHints are repo.brief's lean hints: only the next step a field
// does not already say (which tool to call), most urgent first.
func leanBriefHints(tree briefTree, head *statusHead, subsNeedAttention bool) []string {
	var hints []string
	// Conflicted paths are not hinted at: conflicted and
	// operationInProgress already say so, and conflict.read is the only
	// tool that reads them.
	if head.Behind > 0 && tree.Conflicted == 0 {
		hints = append(hints, "Run repo.conflictPreflight before merging or rebasing.")
	}
	if subsNeedAttention {
		hints = append(hints, "Use submodule.status.")
	}
	return hints
}
