package repo

import (
	"context"
	"strings"

	"github.com/fluxgit/fluxgit/internal/resultshape"

	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// maxWorktrees caps worktree.list; maxReason caps a lock or prune reason.
const (
	maxWorktrees = 1000
	maxReason    = 512
)

// worktree is one entry of worktree.list.
type worktree struct {
	Path string `json:"path"`
	// PathBase64 carries the exact bytes when the path is not valid UTF-8.
	PathBase64     string `json:"pathBase64,omitempty"`
	IsMain         bool   `json:"isMain"`
	Detached       bool   `json:"detached"`
	Locked         bool   `json:"locked"`
	Prunable       bool   `json:"prunable"`
	HeadSha        string `json:"headSha,omitempty"`
	Branch         string `json:"branch,omitempty"`
	Bare           bool   `json:"bare,omitempty"`
	LockedReason   string `json:"lockedReason,omitempty"`
	PrunableReason string `json:"prunableReason,omitempty"`
}

// worktreeListData is the worktree.list payload.
type worktreeListData struct {
	Total     int64      `json:"total"`
	Worktrees []worktree `json:"worktrees"`
	Truncated bool       `json:"truncated"`
}

func (p *Provider) worktreeList(ctx context.Context, call *sdk.Call) (any, error) {
	var a repoOnlyArgs
	if err := decode(call, &a); err != nil {
		return nil, err
	}
	r, err := p.open(ctx, call, a.RepoPath)
	if err != nil {
		return nil, err
	}
	d := &worktreeListData{Worktrees: []worktree{}}
	var cur *worktree
	// full is each listed tree's full HEAD id: the lean shape abbreviates
	// it the way git does, the reference keeps 12 characters.
	var full []string
	curFull := ""
	flush := func() {
		if cur == nil {
			return
		}
		cur.IsMain = d.Total == 0
		d.Total++
		if len(d.Worktrees) < maxWorktrees {
			d.Worktrees = append(d.Worktrees, *cur)
			full = append(full, curFull)
		} else {
			d.Truncated = true
		}
		cur = nil
	}
	// -z: every attribute ends in NUL and an empty field ends a worktree,
	// so paths with newlines are exact.
	err = p.stream(ctx, r, 0, func(f []byte) error {
		if len(f) == 0 {
			flush()
			return nil
		}
		key, val, _ := strings.Cut(string(f), " ")
		if key == "worktree" {
			flush()
			cur, curFull = &worktree{}, ""
			cur.Path, cur.PathBase64 = pathText(f[len("worktree "):])
			return nil
		}
		if cur == nil {
			return errStatusFormat
		}
		switch key {
		case "HEAD":
			if isOID(val) {
				curFull = val
			}
			if len(val) >= 12 {
				cur.HeadSha = val[:12]
			}
		case "branch":
			cur.Branch = strings.ToValidUTF8(strings.TrimPrefix(val, "refs/heads/"), "\uFFFD")
		case "detached":
			cur.Detached = true
		case "bare":
			cur.Bare = true
		case "locked":
			cur.Locked = true
			cur.LockedReason, _ = clip(strings.ToValidUTF8(val, "\uFFFD"), maxReason)
		case "prunable":
			cur.Prunable = true
			cur.PrunableReason, _ = clip(strings.ToValidUTF8(val, "\uFFFD"), maxReason)
		}
		return nil
	}, "worktree", "list", "--porcelain", "-z")
	if err != nil {
		return nil, err
	}
	flush()
	if !resultshape.Lean() {
		return d, nil
	}
	return leanWorktrees(d, full, p.ShortIDs(ctx, r.dir, full)), nil
}
