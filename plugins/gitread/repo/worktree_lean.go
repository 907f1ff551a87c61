package repo

// The lean (default) worktree.list shape: one line per ordinary tree, a
// record for the rows a line would render lossily, and git's short ids,
// which fleet.digest uses too (ShortIDs).

import (
	"context"
	"strings"
)

// ShortIDs maps each full id to git's unique abbreviation in one git
// call; ids git cannot resolve are left out (callers keep the full id).
func (p *Provider) ShortIDs(ctx context.Context, dir string, ids []string) map[string]string {
	out := map[string]string{}
	var args []string
	seen := map[string]bool{}
	for _, id := range ids {
		if isOID(id) && !seen[id] {
			seen[id] = true
			args = append(args, id)
		}
	}
	if len(args) == 0 {
		return out
	}
	res, err := p.runner.Run(ctx, dir, append([]string{"log", "--no-walk=unsorted", "--format=%H %h"}, args...)...)
	if err != nil {
		// One id git no longer has fails the batch: abbreviate one by one.
		for _, id := range args {
			if b, err := p.runner.Run(ctx, dir, "rev-parse", "--short", id); err == nil {
				out[id] = strings.TrimSpace(string(b))
			}
		}
		return out
	}
	for _, line := range strings.Split(string(res), "\n") {
		if full, s, ok := strings.Cut(line, " "); ok {
			out[full] = s
		}
	}
	return out
}

// leanWorktree is a worktree.list row whose string form would be lossy or
// ambiguous (a path that is not valid UTF-8 or holds a line break) or that
// carries a lock or prune reason.
type leanWorktree struct {
	Path       string `json:"path"`
	PathBase64 string `json:"pathBase64,omitempty"`
	Head       string `json:"head,omitempty"`
	Branch     string `json:"branch,omitempty"`
	Detached   bool   `json:"detached,omitempty"`
	Bare       bool   `json:"bare,omitempty"`
	Locked     string `json:"locked,omitempty"`
	Prunable   string `json:"prunable,omitempty"`
}

// leanWorktreeListData is the lean worktree.list payload.
type leanWorktreeListData struct {
	Worktrees []any `json:"worktrees"`
	Total     int64 `json:"total,omitempty"`
}

// leanWorktrees converts the reference payload; full holds each tree's
// full HEAD id (by index) and short its abbreviation.
func leanWorktrees(d *worktreeListData, full []string, short map[string]string) *leanWorktreeListData {
	l := &leanWorktreeListData{Worktrees: []any{}}
	if d.Truncated {
		l.Total = d.Total
	}
	for i, w := range d.Worktrees {
		head := ""
		if i < len(full) && full[i] != "" {
			head = full[i]
			if s, ok := short[head]; ok {
				head = s
			}
		}
		rec := w.PathBase64 != "" || strings.ContainsAny(w.Path, "\n\r") ||
			(w.Locked && w.LockedReason != "") || (w.Prunable && w.PrunableReason != "") ||
			(!w.Bare && head == "")
		if rec {
			lw := leanWorktree{Path: w.Path, PathBase64: w.PathBase64, Head: head, Branch: w.Branch,
				Detached: w.Detached, Bare: w.Bare}
			if w.Locked {
				lw.Locked = w.LockedReason
				if lw.Locked == "" {
					lw.Locked = "locked"
				}
			}
			if w.Prunable {
				lw.Prunable = w.PrunableReason
				if lw.Prunable == "" {
					lw.Prunable = "prunable"
				}
			}
			l.Worktrees = append(l.Worktrees, lw)
			continue
		}
		row := w.Path
		switch {
		case w.Bare:
			row += " (bare)"
		case w.Branch != "":
			row += " " + head + " [" + w.Branch + "]"
		default:
			row += " " + head + " (detached HEAD)"
		}
		if w.Locked {
			row += " locked"
		}
		if w.Prunable {
			row += " prunable"
		}
		l.Worktrees = append(l.Worktrees, row)
	}
	return l
}
