package repo

import (
	"context"
	"encoding/json"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/fluxgit/fluxgit/internal/gitexec"
	"github.com/fluxgit/fluxgit/internal/resultshape"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// briefBudget is the most characters repo.brief's serialized data may
// take; the answer is shrunk step by step until it fits.
const briefBudget = 2400

type briefArgs struct {
	RepoPath      string       `json:"repoPath"`
	RepoID        string       `json:"repoId"`
	RecentCommits *json.Number `json:"recentCommits"`
}

// briefHead is the branch state.
type briefHead struct {
	Branch   *string `json:"branch"`
	Detached bool    `json:"detached"`
	Sha      *string `json:"sha"`
	Upstream *string `json:"upstream"`
	Ahead    int64   `json:"ahead"`
	Behind   int64   `json:"behind"`
}

// briefTree counts work-tree changes.
type briefTree struct {
	Clean      bool  `json:"clean"`
	Staged     int64 `json:"staged"`
	Unstaged   int64 `json:"unstaged"`
	Untracked  int64 `json:"untracked"`
	Conflicted int64 `json:"conflicted"`
}

// briefSubmodule is a submodule that needs attention.
type briefSubmodule struct {
	State  string `json:"state"`
	Path   string `json:"path"`
	Commit string `json:"commit"`
}

// briefSubmodules summarizes the submodule scan.
type briefSubmodules struct {
	Total              int64            `json:"total"`
	Clean              int64            `json:"clean"`
	Drifted            int64            `json:"drifted"`
	Uninitialized      int64            `json:"uninitialized"`
	Conflicts          int64            `json:"conflicts"`
	Skipped            int64            `json:"skipped"`
	Attention          []briefSubmodule `json:"attention"`
	AttentionTruncated bool             `json:"attentionTruncated"`
}

// briefData is the repo.brief payload.
type briefData struct {
	Head                briefHead       `json:"head"`
	OperationInProgress *string         `json:"operationInProgress"`
	WorkingTree         briefTree       `json:"workingTree"`
	Stashes             int64           `json:"stashes"`
	Submodules          briefSubmodules `json:"submodules"`
	RecentCommits       []shortCommit   `json:"recentCommits"`
	Conventions         struct {
		ConventionalCommitRatio *float64 `json:"conventionalCommitRatio"`
		DefaultBranch           *string  `json:"defaultBranch"`
	} `json:"conventions"`
	Hints []string `json:"hints"`
	// Truncated is set when names, subjects or lists were shortened to
	// keep the answer inside its budget.
	Truncated bool `json:"truncated"`
}

var conventionalRe = regexp.MustCompile(`^[a-z]{1,12}(\([^()]*\))?!?:\s*\S`)

func (p *Provider) repoBrief(ctx context.Context, call *sdk.Call) (any, error) {
	var a briefArgs
	if err := decode(call, &a); err != nil {
		return nil, err
	}
	nCommits, err := intArg("recentCommits", a.RecentCommits, 10, 1, 20)
	if err != nil {
		return nil, err
	}
	r, err := p.open(ctx, call, a.RepoPath)
	if err != nil {
		return nil, err
	}

	var (
		head    *statusHead
		tree    briefTree
		commits []shortCommit
		logErr  error
		defBr   string
		subs    *subScan
	)
	// Four independent git processes at once (open() already supplied the
	// git directories): status without the untracked walk, ls-files for
	// the untracked walk on the other core (the index's gitlinks are read
	// from the index file meanwhile, see listIndexAndOthers), log, and
	// symbolic-ref. The submodule scan adds one rev-parse per initialized
	// submodule.
	err = parallel(
		func() (err error) {
			// One stat thread: the other core is busy with ls-files.
			head, err = p.scanStatusArgs(ctx, call, r, briefStatusArgv, gitexec.Tuning{SerialIndexStat: true}, true, "", func(e statusEntry) {
				switch {
				case e.Status == "??":
					tree.Untracked++ // not listed with -uno; kept for safety
				case isConflict(e.Status):
					tree.Conflicted++
				default:
					if e.Status[0] != ' ' {
						tree.Staged++
					}
					if e.Status[1] != ' ' {
						tree.Unstaged++
					}
				}
			})
			return err
		},
		func() error {
			untracked, links, err := p.listIndexAndOthers(ctx, r)
			if err != nil {
				return err
			}
			tree.Untracked += untracked
			subs, err = p.scanSubmodulesFrom(ctx, call, r, true, links)
			return err
		},
		func() error { commits, logErr = p.shortLog(ctx, r, 50, 120, ""); return nil },
		func() error {
			out, err := p.runner.Run(ctx, r.dir, "symbolic-ref", "-q", "--short", "refs/remotes/origin/HEAD")
			if err == nil {
				defBr = strings.TrimPrefix(strings.TrimSpace(string(out)), "origin/")
				return nil
			}
			if isExit(err, 1, 128) {
				return nil
			}
			return err
		},
	)
	if err != nil {
		return nil, err
	}
	if head.OID != nil && logErr != nil {
		return nil, logErr
	}
	if head.OID == nil {
		commits = nil
	}

	d := &briefData{WorkingTree: tree, Stashes: head.Stashes, Hints: []string{}}
	d.WorkingTree.Clean = tree == briefTree{}
	d.Head = briefHead{Branch: head.Branch, Detached: head.Detached, Upstream: head.Upstream, Ahead: head.Ahead, Behind: head.Behind}
	if len(commits) > 0 {
		sha := commits[0].Sha
		d.Head.Sha = &sha
	}
	if op := operationIn(r.gitDir); op != "" {
		d.OperationInProgress = &op
	}
	if defBr != "" {
		d.Conventions.DefaultBranch = &defBr
	}
	if len(commits) > 0 {
		conv := 0
		for _, c := range commits {
			if conventionalRe.MatchString(c.Subject) {
				conv++
			}
		}
		ratio := math.Round(float64(conv)/float64(len(commits))*100) / 100
		d.Conventions.ConventionalCommitRatio = &ratio
	}
	sm := &d.Submodules
	sm.Attention = []briefSubmodule{}
	sm.Skipped = subs.skipped
	sm.AttentionTruncated = subs.capped
	var attention []briefSubmodule
	for _, m := range subs.list {
		sm.Total++
		switch m.State {
		case " ":
			sm.Clean++
			continue
		case "+":
			sm.Drifted++
		case "-":
			sm.Uninitialized++
		case "U":
			sm.Conflicts++
		}
		attention = append(attention, briefSubmodule{State: m.State, Path: m.Path, Commit: m.Commit})
	}

	// Hints, most urgent first, at most three.
	var hints []string
	if tree.Conflicted > 0 {
		hints = append(hints, strconv.FormatInt(tree.Conflicted, 10)+" conflicted path(s): read them with conflict.read before anything else.")
	}
	if d.OperationInProgress != nil {
		hints = append(hints, "A "+*d.OperationInProgress+" is in progress; finish or abort it before starting new work.")
	}
	if head.Detached {
		hints = append(hints, "HEAD is detached: new commits would belong to no branch.")
	}
	if head.Behind > 0 && tree.Conflicted == 0 {
		hints = append(hints, "The branch is "+strconv.FormatInt(head.Behind, 10)+" commit(s) behind its upstream; check repo.conflictPreflight before merging or rebasing.")
	}
	if len(attention) > 0 || subs.capped {
		hints = append(hints, strconv.Itoa(len(attention))+" submodule(s) need attention; see submodule.status.")
	}
	d.Hints = hints[:min(3, len(hints))]
	if hints == nil {
		d.Hints = []string{}
	}

	if !resultshape.Lean() {
		fitBrief(d, commits, attention, int(nCommits), func(d *briefData) int { return jsonLen(d) })
		return d, nil
	}
	// Lean: hints that only name the next tool, and the budget applied to
	// the lean form (which is what is sent).
	d.Hints = leanBriefHints(tree, head, len(attention) > 0 || subs.capped)
	fitBrief(d, commits, attention, int(nCommits), func(d *briefData) int { return jsonLen(leanBrief(d, len(commits))) })
	return leanBrief(d, len(commits)), nil
}

// fitBrief fills the lists and shortens names until the serialized data
// is under the budget, trying the most generous level first.
func fitBrief(d *briefData, commits []shortCommit, attention []briefSubmodule, nCommits int, size func(*briefData) int) {
	type level struct{ commits, subject, attention, name int }
	levels := []level{
		{nCommits, 72, 10, 120},
		{nCommits, 48, 10, 80},
		{min(nCommits, 10), 40, 5, 60},
		{min(nCommits, 5), 32, 3, 40},
		{min(nCommits, 3), 24, 2, 24},
		{1, 16, 1, 16},
		{0, 0, 0, 12},
	}
	orig := *d
	origHead := d.Head
	for _, lv := range levels {
		*d = orig
		cut := false
		c := func(s string, n int) string {
			s2, t := clip(s, n)
			cut = cut || t
			return s2
		}
		cp := func(s *string, n int) *string {
			if s == nil {
				return nil
			}
			v := c(*s, n)
			return &v
		}
		d.Head.Branch, d.Head.Upstream = cp(origHead.Branch, lv.name), cp(origHead.Upstream, lv.name)
		d.Conventions.DefaultBranch = cp(orig.Conventions.DefaultBranch, lv.name)
		d.RecentCommits = []shortCommit{}
		for i := 0; i < len(commits) && i < lv.commits; i++ {
			d.RecentCommits = append(d.RecentCommits, shortCommit{Sha: commits[i].Sha, Subject: c(commits[i].Subject, lv.subject)})
		}
		if lv.commits < nCommits && len(commits) > lv.commits {
			cut = true
		}
		d.Submodules.Attention = []briefSubmodule{}
		for i := 0; i < len(attention) && i < lv.attention; i++ {
			m := attention[i]
			m.Path = c(m.Path, lv.name)
			d.Submodules.Attention = append(d.Submodules.Attention, m)
		}
		d.Submodules.AttentionTruncated = orig.Submodules.AttentionTruncated || len(attention) > lv.attention
		d.Truncated = cut
		if size(d) < briefBudget {
			return
		}
	}
}

// listIndexAndOthers returns the number of untracked files and the top
// level's gitlinks. The count comes from `git ls-files --others
// --exclude-standard -z`: exactly the "??" entries of `status
// --untracked-files=all` (same walk, same standard excludes, same "already
// in the index" test), run beside a status that skips the walk. The
// gitlinks are read from the index file meanwhile (readIndexGitlinks);
// when that declines, `git ls-files --stage -z` lists them as before.
func (p *Provider) listIndexAndOthers(ctx context.Context, r *Repo) (int64, *gitlinkSet, error) {
	var (
		links *gitlinkSet
		ok    bool
		done  = make(chan struct{})
	)
	go func() {
		defer close(done)
		if r.gitDir != "" {
			links, ok = readIndexGitlinks(r.gitDir)
		}
	}()
	var untracked int64
	err := p.stream(ctx, r, 0, func([]byte) error { untracked++; return nil },
		"ls-files", "--others", "--exclude-standard", "-z")
	<-done
	if err != nil {
		return 0, nil, err
	}
	if !ok {
		links = &gitlinkSet{}
		if err := p.stream(ctx, r, 0, links.add, "ls-files", "--stage", "-z"); err != nil {
			return 0, nil, err
		}
	}
	return untracked, links, nil
}
