package fleet

// The lean shapes (CONTRACT §3) of fleet.radar, fleet.digest and
// worktree.list. Each tool computes its reference payload as before and, in
// lean mode (resultshape.Lean), converts it here, so the reference shape
// stays byte for byte what it was. Repositories are named relative to one
// common root, clean repositories are counted rather than listed, and rows
// are compact strings in git's own notation (status -sb, reflog, worktree
// list), with a record form where a string would be lossy or ambiguous.

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fluxgit/fluxgit/internal/pathwithin"
)

// commonRoot is the deepest directory containing every path; rel names
// each path relative to it ("." for the root itself).
func commonRoot(paths []string) (root string, rel []string) {
	if len(paths) == 0 {
		return "", nil
	}
	root = filepath.Dir(paths[0])
	for _, p := range paths[1:] {
		for !pathwithin.Within(root, p) {
			parent := filepath.Dir(root)
			if parent == root {
				break
			}
			root = parent
		}
	}
	for _, p := range paths {
		r, err := filepath.Rel(root, p)
		if err != nil {
			r = p
		}
		rel = append(rel, filepath.ToSlash(r))
	}
	return root, rel
}

// leanRadarRecord is a fleet.radar row whose string form would be
// ambiguous: the repository name itself contains ": " or is not UTF-8.
type leanRadarRecord struct {
	Repo  string `json:"repo"`
	State string `json:"state"`
}

// leanRadarData is the lean fleet.radar payload.
type leanRadarData struct {
	Root string `json:"root"`
	// Repos lists the repositories needing attention, most urgent first:
	// "<name> <status>: <branch line>[, <n> changed][, <op> in progress][, <n> would conflict]".
	Repos []any `json:"repos,omitempty"`
	// Predicted lists, per repository, up to 20 paths a merge with the upstream would conflict on.
	Predicted map[string][]string `json:"predicted,omitempty"`
	Clean     int                 `json:"clean,omitempty"`
	Truncated int                 `json:"truncated,omitempty"`
}

// radarBranchLine is git status -sb's header without "## ".
func radarBranchLine(e *radarEntry) string {
	var b strings.Builder
	if e.Branch != nil {
		b.WriteString(*e.Branch)
	} else {
		b.WriteString("HEAD (no branch)")
	}
	if e.Upstream != nil {
		b.WriteString("..." + *e.Upstream)
	}
	switch {
	case e.Ahead > 0 && e.Behind > 0:
		fmt.Fprintf(&b, " [ahead %d, behind %d]", e.Ahead, e.Behind)
	case e.Ahead > 0:
		fmt.Fprintf(&b, " [ahead %d]", e.Ahead)
	case e.Behind > 0:
		fmt.Fprintf(&b, " [behind %d]", e.Behind)
	}
	return b.String()
}

// leanRadar converts the reference fleet.radar payload.
func leanRadar(d *radarData) *leanRadarData {
	paths := make([]string, len(d.Entries))
	for i, e := range d.Entries {
		paths[i] = e.RepoPath
	}
	root, rel := commonRoot(paths)
	name := map[string]string{}
	for i, p := range paths {
		name[p] = rel[i]
	}
	l := &leanRadarData{Root: root, Truncated: d.TruncatedCount}
	order := make([]int, 0, len(d.Entries))
	for i, e := range d.Entries {
		if e.Status == "clean" {
			l.Clean++
			continue
		}
		order = append(order, i)
	}
	sort.SliceStable(order, func(a, b int) bool { return d.Entries[order[a]].Priority > d.Entries[order[b]].Priority })
	for _, i := range order {
		e := &d.Entries[i]
		n := name[e.RepoPath]
		var state string
		if e.Status == "unknown" {
			state = "unknown: " + e.Error
		} else {
			state = e.Status + ": " + radarBranchLine(e)
			if e.ChangedFiles > 0 {
				state += fmt.Sprintf(", %d changed", e.ChangedFiles)
			}
			if e.ConflictOperation != nil {
				state += ", " + *e.ConflictOperation + " in progress"
			}
			if e.PotentialConflictActive {
				state += fmt.Sprintf(", %d would conflict", e.PotentialConflictCount)
				if len(e.PotentialConflictPaths) > 0 {
					if l.Predicted == nil {
						l.Predicted = map[string][]string{}
					}
					l.Predicted[n] = e.PotentialConflictPaths
				}
			}
		}
		if strings.Contains(n, ": ") || strings.ContainsRune(n, ' ') || !utf8.ValidString(n) {
			l.Repos = append(l.Repos, leanRadarRecord{Repo: n, State: state})
		} else {
			l.Repos = append(l.Repos, n+" "+state)
		}
	}
	return l
}

// leanDigestData is the lean fleet.digest payload.
type leanDigestData struct {
	Root string `json:"root"`
	// Events maps a repository (relative to root) to its reflog moves,
	// newest first: "<time> <ref> <old>..<new>[ (rewrote)][ by <identity>:] <message>".
	Events map[string][]string `json:"events,omitempty"`
	// Identity is who made every move, when that is one identity.
	Identity  string            `json:"identity,omitempty"`
	Errors    map[string]string `json:"errors,omitempty"`
	Excluded  int               `json:"excluded,omitempty"`
	Truncated bool              `json:"truncated,omitempty"`
}

// leanDigest converts the reference fleet.digest payload; short maps a
// full id to git's unique abbreviation (missing: the full id is kept).
func leanDigest(d *digestData, short map[string]string) *leanDigestData {
	paths := make([]string, len(d.Repos))
	for i, r := range d.Repos {
		paths[i] = r.RepoPath
	}
	root, rel := commonRoot(paths)
	name := map[string]string{}
	for i, p := range paths {
		name[p] = rel[i]
	}
	l := &leanDigestData{Root: root, Excluded: d.ExcludedOutsideAllowedRoots, Truncated: d.Truncated}
	for _, r := range d.Repos {
		if r.Error != nil {
			if l.Errors == nil {
				l.Errors = map[string]string{}
			}
			l.Errors[name[r.RepoPath]] = *r.Error
		}
	}
	uniform := true
	for _, ev := range d.Events {
		if ev.Identity != d.Events[0].Identity {
			uniform = false
			break
		}
	}
	if uniform && len(d.Events) > 0 {
		l.Identity = d.Events[0].Identity
	}
	abbr := func(o *string) string {
		if o == nil {
			return ""
		}
		if s, ok := short[*o]; ok {
			return s
		}
		return *o
	}
	for _, ev := range d.Events {
		if l.Events == nil {
			l.Events = map[string][]string{}
		}
		ref := strings.TrimPrefix(ev.RefName, "refs/heads/")
		if ev.RefName == "refs/heads/HEAD" {
			ref = ev.RefName
		}
		row := time.UnixMilli(ev.AtMs).UTC().Format(time.RFC3339) + " " + ref + " " + abbr(ev.OldOID) + ".." + abbr(ev.NewOID)
		if ev.Rewrote {
			row += " (rewrote)"
		}
		if !uniform {
			row += " by " + ev.Identity + ":"
		}
		row += " " + ev.Message
		n := name[ev.RepoPath]
		l.Events[n] = append(l.Events[n], row)
	}
	return l
}
