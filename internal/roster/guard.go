package roster

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fluxgit/fluxgit/internal/pathwithin"
)

// EnvWorkerID names the committing agent's own workers for the guard: one
// worker id, or several separated by commas (the gateway passes every
// worker its proposer checked in to the pre-commit hook this way).
const EnvWorkerID = "SHIFT_WORKER_ID"

// EnvGuardOverride, set to 1, lets a commit through the guard: the
// person's override, for `fluxgit guard check` and for the gateway's
// commit execution alike.
const EnvGuardOverride = "FLUXGIT_GUARD_OVERRIDE"

// Owner reports whether a row's leases are the committer's own, so they
// never block its commit.
type Owner func(Row) bool

// WorkerIDs is the Owner of the listed worker ids (SHIFT_WORKER_ID's
// value: ids separated by commas, any case, blanks ignored).
func WorkerIDs(list string) Owner {
	own := map[string]bool{}
	for _, f := range strings.Split(list, ",") {
		if id, ok := NormalizeWorkerID(strings.TrimSpace(f)); ok {
			own[id] = true
		}
	}
	return func(r Row) bool { return own[r.WorkerID] }
}

// CheckedInBy is the Owner of the workers that one fluxgit server process
// checked in: the row's agent names this host, that process id and that
// MCP client label (ClientLabel), and the process still runs. It is how
// the gateway recognises the proposer's own workers: the server that
// sent the proposal names itself (operation.Proposer), never the model,
// and a worker another process checked in is never exempted, whatever
// the proposal says. pid <= 0 or an empty host owns nothing.
func CheckedInBy(host string, pid int, client string) Owner {
	if pid <= 0 || host == "" {
		return func(Row) bool { return false }
	}
	var checked, alive bool // the process is looked up once, on the first matching row
	return func(r Row) bool {
		a := r.Agent
		if a == nil || a.Host != host || a.PID != pid || a.Client != client {
			return false
		}
		if !checked {
			checked, alive = true, !processGone(pid)
		}
		return alive
	}
}

// Hostname is the host name the roster records for this machine's
// agents.
func Hostname() string { return hostname() }

// ConflictLines describes each conflict in one line the committer reads:
// the file, the holding worker and its gist, the workspace and the
// lease's end.
func ConflictLines(cs []Conflict) []string {
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%s: worker %s (%q) in workspace %s, lease until %s", c.File, c.Holder.WorkerID, c.Holder.Gist, c.Workspace, c.Lease.ExpiresAt))
	}
	return out
}

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
// live exclusive lease: not the committer's own (own; nil owns nothing),
// not stale, lease not expired. workspace, when set, limits the rows to that
// workspace; otherwise every row given (the workspaces naming root) counts.
// A lease names its file as the agent gave it: relative to the workspace
// when the workspace is a directory inside root (else to root), or
// absolute.
func GuardConflicts(rows []WorkspaceRow, root, workspace string, own Owner, touched []string) []Conflict {
	set := map[string]bool{}
	for _, f := range touched {
		set[filepath.ToSlash(filepath.Clean(f))] = true
	}
	var out []Conflict
	for _, r := range rows {
		if (workspace != "" && r.Workspace != workspace) || r.Stale || (own != nil && own(r.Row)) {
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
