package roster

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/fluxgit/fluxgit/internal/pathwithin"
)

// Conflict is a file a commit touches that another live worker holds
// exclusively.
type Conflict struct {
	File      string // repository-relative, slash-separated
	Workspace string
	Holder    Row
	Lease     Lease
}

// GuardConflicts returns the files among touched (paths relative to the
// work tree root, as git names them) that another worker holds with a
// live exclusive lease: not self (SHIFT_WORKER_ID of the committer), not
// stale, lease not expired. workspace, when set, limits the rows to that
// workspace; otherwise every row given (the workspaces naming root) counts.
// A lease names its file as the agent gave it: relative to the workspace
// when the workspace is a directory inside root (else to root), or
// absolute.
func GuardConflicts(rows []WorkspaceRow, root, workspace, self string, touched []string) []Conflict {
	set := map[string]bool{}
	for _, f := range touched {
		set[filepath.ToSlash(filepath.Clean(f))] = true
	}
	var out []Conflict
	for _, r := range rows {
		if (workspace != "" && r.Workspace != workspace) || r.WorkerID == self || r.Stale {
			continue
		}
		for _, l := range r.Leases {
			if l.Mode != Exclusive || l.Expired {
				continue
			}
			rel, ok := leaseRelative(l.File, r.Workspace, root)
			if !ok || !set[rel] {
				continue
			}
			out = append(out, Conflict{File: rel, Workspace: r.Workspace, Holder: r.Row, Lease: l})
		}
	}
	slices.SortFunc(out, func(a, b Conflict) int { return strings.Compare(a.File+a.Holder.WorkerID, b.File+b.Holder.WorkerID) })
	return out
}

// leaseRelative maps a leased file to a root-relative, slash-separated
// path; false when it lies outside root.
func leaseRelative(file, workspace, root string) (string, bool) {
	base := root
	if filepath.IsAbs(workspace) {
		if ws := filepath.Clean(workspace); pathwithin.Within(root, ws) {
			base = ws
		}
	}
	p := filepath.FromSlash(file)
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p) // Join cleans, so a leased "../x" is judged where it lands
	}
	return pathwithin.Rel(root, filepath.Clean(p))
}
