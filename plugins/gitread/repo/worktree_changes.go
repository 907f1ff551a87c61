package repo

import (
	"context"

	"github.com/fluxgit/fluxgit/internal/gitexec"
	"github.com/fluxgit/fluxgit/internal/resultshape"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// maxChangeEntries caps each list of worktree.changes.
const maxChangeEntries = 1000

type repoOnlyArgs struct {
	RepoPath string `json:"repoPath"`
	RepoID   string `json:"repoId"`
}

// worktreeChangesData is the worktree.changes payload: the porcelain
// entries split by where the change lives. A path staged and then edited
// again appears in both staged and unstaged; conflicted paths too.
type worktreeChangesData struct {
	Staged         []statusEntry `json:"staged"`
	Unstaged       []statusEntry `json:"unstaged"`
	Untracked      []statusEntry `json:"untracked"`
	StagedCount    int64         `json:"stagedCount"`
	UnstagedCount  int64         `json:"unstagedCount"`
	UntrackedCount int64         `json:"untrackedCount"`
	Truncated      bool          `json:"truncated"`
}

func (p *Provider) worktreeChanges(ctx context.Context, call *sdk.Call) (any, error) {
	var a repoOnlyArgs
	if err := decode(call, &a); err != nil {
		return nil, err
	}
	r, err := p.open(ctx, call, a.RepoPath)
	if err != nil {
		return nil, err
	}
	d := &worktreeChangesData{Staged: []statusEntry{}, Unstaged: []statusEntry{}, Untracked: []statusEntry{}}
	add := func(list *[]statusEntry, n *int64, e statusEntry) {
		*n++
		if len(*list) < maxChangeEntries {
			*list = append(*list, e)
		} else {
			d.Truncated = true
		}
	}
	lean := resultshape.Lean()
	var all []statusEntry // lean: every entry once, in git's order
	var total int64
	_, err = p.scanStatusArgs(ctx, call, r, statusArgvFor(lean), gitexec.Tuning{}, false, "", func(e statusEntry) {
		if total++; lean && len(all) < maxChangeEntries {
			all = append(all, e)
		}
		if e.Status == "??" {
			add(&d.Untracked, &d.UntrackedCount, e)
			return
		}
		if e.Status[0] != ' ' {
			add(&d.Staged, &d.StagedCount, e)
		}
		if e.Status[1] != ' ' {
			add(&d.Unstaged, &d.UnstagedCount, e)
		}
	})
	if err != nil {
		return nil, err
	}
	if lean {
		return leanChanges(d, all, total), nil
	}
	return d, nil
}
