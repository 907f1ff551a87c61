package repo

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/fluxgit/fluxgit/internal/gitexec"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

type preflightArgs struct {
	RepoPath   string       `json:"repoPath"`
	RepoID     string       `json:"repoId"`
	CurrentRef string       `json:"currentRef"`
	TargetRef  string       `json:"targetRef"`
	MaxPaths   *json.Number `json:"maxPaths"`
}

// preflightData is the repo.conflictPreflight payload.
type preflightData struct {
	CurrentRef               string   `json:"currentRef"`
	TargetRef                string   `json:"targetRef"`
	CurrentOID               string   `json:"currentOid"`
	TargetOID                string   `json:"targetOid"`
	MergeBaseOID             *string  `json:"mergeBaseOid"`
	Status                   string   `json:"status"`
	ConflictingPaths         []string `json:"conflictingPaths"`
	ConflictCount            int      `json:"conflictCount"`
	Truncated                bool     `json:"truncated"`
	ReadOnly                 bool     `json:"readOnly"`
	NetworkFetchPerformed    bool     `json:"networkFetchPerformed"`
	WorkingTreeMutated       bool     `json:"workingTreeMutated"`
	ApprovalRequiredForMerge bool     `json:"approvalRequiredForMerge"`
	Guidance                 string   `json:"guidance"`
}

// Preflight statuses.
const (
	preflightUnrelated = "unrelated-histories"
	preflightUpToDate  = "already-up-to-date"
	preflightFF        = "fast-forward"
	preflightClean     = "clean-merge"
	preflightConflicts = "conflicts"
)

var preflightGuidance = map[string]string{
	preflightUnrelated: "The two commits share no history; merging them needs --allow-unrelated-histories and a human decision.",
	preflightUpToDate:  "targetRef is already contained in currentRef; there is nothing to merge.",
	preflightFF:        "currentRef can fast-forward to targetRef without a merge commit or conflicts.",
	preflightClean:     "A three-way merge would succeed without conflicts. Merging still requires approval (operation.preview.merge).",
	preflightConflicts: "A three-way merge would stop with conflicts in conflictingPaths. Inspect them with diff.text before proposing a merge.",
}

func (p *Provider) conflictPreflight(ctx context.Context, call *sdk.Call) (any, error) {
	var a preflightArgs
	if err := decode(call, &a); err != nil {
		return nil, err
	}
	if a.CurrentRef == "" {
		a.CurrentRef = "HEAD"
	}
	if a.TargetRef == "" {
		return nil, invalid("arguments.targetRef is required")
	}
	// Refuse option-like revisions before touching the repository.
	if err := checkRev("currentRef", a.CurrentRef); err != nil {
		return nil, err
	}
	if err := checkRev("targetRef", a.TargetRef); err != nil {
		return nil, err
	}
	maxPaths, err := intArg("maxPaths", a.MaxPaths, 1000, 1, 10000)
	if err != nil {
		return nil, err
	}
	r, err := p.open(ctx, call, a.RepoPath)
	if err != nil {
		return nil, err
	}
	var cur, tgt string
	if err := parallel(
		func() (err error) { cur, err = p.resolveCommit(ctx, r, "currentRef", a.CurrentRef); return },
		func() (err error) { tgt, err = p.resolveCommit(ctx, r, "targetRef", a.TargetRef); return },
	); err != nil {
		return nil, err
	}
	d := &preflightData{
		CurrentRef: a.CurrentRef, TargetRef: a.TargetRef, CurrentOID: cur, TargetOID: tgt,
		ConflictingPaths: []string{}, ReadOnly: true, ApprovalRequiredForMerge: true,
	}
	base, err := p.mergeBase(ctx, r, cur, tgt)
	if err != nil {
		return nil, err
	}
	switch {
	case base == "":
		d.Status = preflightUnrelated
	case base == tgt:
		d.Status = preflightUpToDate
	case base == cur:
		d.Status = preflightFF
	default:
		m, err := p.MergeTree(ctx, r, cur, tgt)
		if err != nil {
			return nil, err
		}
		d.Status = preflightClean
		if !m.Clean {
			d.Status = preflightConflicts
			d.ConflictCount = len(m.Paths)
			for _, path := range m.Paths {
				if len(d.ConflictingPaths) == int(maxPaths) {
					d.Truncated = true
					break
				}
				d.ConflictingPaths = append(d.ConflictingPaths, TextPath(path))
			}
		}
	}
	if base != "" {
		d.MergeBaseOID = &base
	}
	d.Guidance = preflightGuidance[d.Status]
	return d, nil
}

// mergeBase returns the best common ancestor of two commit ids, or "" when
// they share no history (merge-base exits 1).
func (p *Provider) mergeBase(ctx context.Context, r *Repo, a, b string) (string, error) {
	args := []string{"merge-base", a, b}
	out, err := p.runner.Run(ctx, r.dir, args...)
	if err != nil {
		var ge *gitexec.Error
		if errors.As(err, &ge) && ge.ExitCode == 1 && errors.Is(err, gitexec.ErrExit) {
			return "", nil
		}
		return "", err
	}
	oid := strings.TrimSpace(string(out))
	if !isOID(oid) {
		return "", &failure{gitexec.Command(r.dir, args...), "merge-base did not return an object id"}
	}
	return oid, nil
}
