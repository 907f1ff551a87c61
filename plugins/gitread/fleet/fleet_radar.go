package fleet

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/fluxgit/fluxgit/internal/gitexec"
	"github.com/fluxgit/fluxgit/internal/resultshape"
	"github.com/fluxgit/fluxgit/plugins/gitread/repo"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// radarMaxPaths bounds the predicted conflict paths listed per repository.
const radarMaxPaths = 20

type radarArgs struct {
	RepoPaths    []string `json:"repoPaths"`
	Repositories []struct {
		RepoPath string `json:"repoPath"`
		RepoID   string `json:"repoId"`
		Label    string `json:"label"`
	} `json:"repositories"`
	MaxRepos *json.Number `json:"maxRepos"`
}

// radarEntry is one repository of fleet.radar.
type radarEntry struct {
	RepoID                          *string  `json:"repoId"`
	Label                           string   `json:"label"`
	RepoPath                        string   `json:"repoPath"`
	Status                          string   `json:"status"`
	Priority                        int      `json:"priority"`
	Summary                         string   `json:"summary"`
	Dirty                           bool     `json:"dirty"`
	ChangedFiles                    int64    `json:"changedFiles"`
	Ahead                           int64    `json:"ahead"`
	Behind                          int64    `json:"behind"`
	HasUpstream                     bool     `json:"hasUpstream"`
	Upstream                        *string  `json:"upstream"`
	Branch                          *string  `json:"branch"`
	Head                            *string  `json:"head"`
	ShortHead                       *string  `json:"shortHead"`
	ConflictActive                  bool     `json:"conflictActive"`
	ConflictOperation               *string  `json:"conflictOperation"`
	PotentialConflictActive         bool     `json:"potentialConflictActive"`
	PotentialConflictCount          int      `json:"potentialConflictCount"`
	PotentialConflictTarget         *string  `json:"potentialConflictTarget"`
	PotentialConflictPaths          []string `json:"potentialConflictPaths"`
	PotentialConflictPathsTruncated bool     `json:"potentialConflictPathsTruncated"`
	LastCommitTimestamp             *int64   `json:"lastCommitTimestamp"`
	ElapsedMs                       int64    `json:"elapsedMs"`
	Error                           string   `json:"error"`
	SuggestedActions                []string `json:"suggestedActions"`
}

// radarAttention is an entry of the attention stack.
type radarAttention struct {
	RepoID           *string  `json:"repoId"`
	Label            string   `json:"label"`
	RepoPath         string   `json:"repoPath"`
	Status           string   `json:"status"`
	Priority         int      `json:"priority"`
	Summary          string   `json:"summary"`
	SuggestedActions []string `json:"suggestedActions"`
}

// radarData is the fleet.radar payload.
type radarData struct {
	Entries        []radarEntry     `json:"entries"`
	AttentionStack []radarAttention `json:"attentionStack"`
	RequestedCount int              `json:"requestedCount"`
	ScannedCount   int              `json:"scannedCount"`
	FailedCount    int              `json:"failedCount"`
	DirtyCount     int              `json:"dirtyCount"`
	ConflictCount  int              `json:"conflictCount"`
	PotentialCount int              `json:"potentialConflictRepoCount"`
	TruncatedCount int              `json:"truncatedCount"`
	Truncated      bool             `json:"truncated"`
	ElapsedMs      int64            `json:"elapsedMs"`
	Network        struct {
		FetchPerformed    bool   `json:"fetchPerformed"`
		RemoteStateSource string `json:"remoteStateSource"`
	} `json:"network"`
	Guidance string `json:"guidance"`
}

type radarStatus struct {
	priority int
	summary  string
	actions  []string
}

var radarStatuses = map[string]radarStatus{
	"conflict":           {100, "A merge, rebase, cherry-pick or revert stopped with conflicts and is still in progress.", []string{"Read the conflicted paths with repo.status and diff.text.", "Resolve or abort the operation through an approved write proposal."}},
	"potential_conflict": {95, "The branch and its upstream diverged and merging them would conflict.", []string{"Check the details with repo.conflictPreflight against the upstream.", "Coordinate before pushing; a rebase or merge needs approval."}},
	"divergent":          {90, "The branch and its upstream diverged; they would merge cleanly.", []string{"Plan a merge or rebase (operation.preview.merge / operation.preview.rebase)."}},
	"local_changes":      {80, "The work tree has uncommitted changes.", []string{"Review them with repo.status and diff.text before switching work."}},
	"behind":             {70, "The branch is behind its upstream as last fetched.", []string{"Fast-forward when ready (operation.preview.merge)."}},
	"ahead":              {60, "The branch has commits its upstream does not have.", []string{"Review with repo.history, then propose a push (operation.preview.push)."}},
	"no_upstream":        {40, "The branch has no upstream configured.", []string{"Set an upstream or push the branch when it should be shared."}},
	"clean":              {0, "Clean and in sync with its upstream.", []string{}},
	"unknown":            {10, "The repository could not be inspected.", []string{"Check that the path is a git work tree inside the allowed roots."}},
}

type radarTarget struct {
	path, label string
	id          *string
}

func fleetRadar(p *repo.Provider, ctx context.Context, call *sdk.Call) (any, error) {
	start := time.Now()
	var a radarArgs
	if err := repo.Decode(call, &a); err != nil {
		return nil, err
	}
	maxRepos, err := repo.IntArg("maxRepos", a.MaxRepos, 200, 1, 500)
	if err != nil {
		return nil, err
	}
	var targets []radarTarget
	seen := map[string]bool{}
	add := func(t radarTarget) {
		if !seen[t.path] {
			seen[t.path] = true
			targets = append(targets, t)
		}
	}
	for _, r := range a.Repositories {
		t := radarTarget{path: r.RepoPath, label: r.Label}
		if r.RepoID != "" {
			t.id = &r.RepoID
		}
		add(t)
	}
	for _, rp := range a.RepoPaths {
		add(radarTarget{path: rp})
	}
	requested := len(a.RepoPaths) + len(a.Repositories)
	if requested == 0 {
		return nil, repo.Invalid("arguments.repoPaths or arguments.repositories must name at least one repository")
	}
	d := &radarData{RequestedCount: requested, Entries: []radarEntry{}, AttentionStack: []radarAttention{}}
	if len(targets) > int(maxRepos) {
		d.TruncatedCount = len(targets) - int(maxRepos)
		d.Truncated = true
		targets = targets[:maxRepos]
	}
	d.Entries = make([]radarEntry, len(targets))
	_ = repo.ForEach(len(targets), fleetWorkers, func(i int) error {
		d.Entries[i] = radarInspect(p, ctx, call, targets[i])
		return nil
	})
	for _, e := range d.Entries {
		d.ScannedCount++
		if e.Error != "" {
			d.FailedCount++
		}
		if e.Dirty {
			d.DirtyCount++
		}
		if e.ConflictActive {
			d.ConflictCount++
		}
		if e.PotentialConflictActive {
			d.PotentialCount++
		}
		if e.Status != "clean" {
			d.AttentionStack = append(d.AttentionStack, radarAttention{e.RepoID, e.Label, e.RepoPath, e.Status, e.Priority, e.Summary, e.SuggestedActions})
		}
	}
	sort.SliceStable(d.AttentionStack, func(i, j int) bool { return d.AttentionStack[i].Priority > d.AttentionStack[j].Priority })
	d.Network.RemoteStateSource = "cached local refs only"
	d.Guidance = "Work the attentionStack from the top. Remote state is what the last fetch recorded; no fetch was made. Predicted conflicts come from a three-way merge of HEAD with its upstream (git merge-tree)."
	d.ElapsedMs = time.Since(start).Milliseconds()
	if resultshape.Lean() {
		return leanRadar(d), nil
	}
	return d, nil
}

// radarInspect builds one entry; failures become an "unknown" entry.
func radarInspect(p *repo.Provider, ctx context.Context, call *sdk.Call, t radarTarget) radarEntry {
	start := time.Now()
	label := t.label
	if label == "" {
		label = filepath.Base(t.path)
	}
	e := radarEntry{RepoID: t.id, Label: label, RepoPath: t.path, PotentialConflictPaths: []string{}}
	err := radarFill(p, ctx, call, &e)
	status := "clean"
	switch {
	case err != nil:
		status = "unknown"
		e.Error = repo.TruncRunes(err.Error(), 512)
	case e.ConflictActive:
		status = "conflict"
	case e.PotentialConflictActive:
		status = "potential_conflict"
	case e.Ahead > 0 && e.Behind > 0:
		status = "divergent"
	case e.Dirty:
		status = "local_changes"
	case e.Behind > 0:
		status = "behind"
	case e.Ahead > 0:
		status = "ahead"
	case !e.HasUpstream:
		status = "no_upstream"
	}
	s := radarStatuses[status]
	e.Status, e.Priority, e.Summary, e.SuggestedActions = status, s.priority, s.summary, s.actions
	e.ElapsedMs = time.Since(start).Milliseconds()
	return e
}

func radarFill(p *repo.Provider, ctx context.Context, call *sdk.Call, e *radarEntry) error {
	r, err := p.Open(ctx, call, e.RepoPath)
	if err != nil {
		return err
	}
	e.RepoPath = r.Dir()
	st, err := p.BranchStatus(ctx, call, r)
	if err != nil {
		return err
	}
	// A bisect is not a conflict; every other operation in progress is.
	op := st.Operation
	if op == "bisect" {
		op = ""
	}
	e.Branch, e.Head, e.Upstream = st.Branch, st.OID, st.Upstream
	e.HasUpstream = st.Upstream != nil
	e.Ahead, e.Behind = st.Ahead, st.Behind
	e.ChangedFiles = int64(st.Changed)
	e.Dirty = st.Changed > 0
	if op != "" {
		e.ConflictActive, e.ConflictOperation = true, &op
	}
	if st.OID == nil {
		return nil // unborn branch
	}
	var fns []func() error
	fns = append(fns, func() error {
		args := []string{"log", "-1", "--format=%h%x00%ct", *st.OID}
		out, err := p.Run(ctx, r.Dir(), args...)
		if err != nil {
			return err
		}
		short, ct, ok := strings.Cut(strings.TrimSpace(string(out)), "\x00")
		n, perr := repo.Atoi64(ct)
		if !ok || perr != nil {
			return repo.Failure(gitexec.Command(r.Dir(), args...), "unexpected log output")
		}
		e.ShortHead, e.LastCommitTimestamp = &short, &n
		return nil
	})
	if e.Ahead > 0 && e.Behind > 0 && e.Upstream != nil {
		fns = append(fns, func() error {
			up, err := p.ResolveCommit(ctx, r, "upstream", "@{upstream}")
			if err != nil {
				return err
			}
			m, err := p.MergeTree(ctx, r, *st.OID, up)
			if err != nil {
				return err
			}
			if !m.Clean {
				e.PotentialConflictActive = true
				e.PotentialConflictCount = len(m.Paths)
				e.PotentialConflictTarget = e.Upstream
				for _, path := range m.Paths {
					if len(e.PotentialConflictPaths) == radarMaxPaths {
						e.PotentialConflictPathsTruncated = true
						break
					}
					e.PotentialConflictPaths = append(e.PotentialConflictPaths, repo.TextPath(path))
				}
			}
			return nil
		})
	}
	return repo.Parallel(fns...)
}
