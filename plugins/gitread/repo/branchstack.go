package repo

import (
	"bytes"
	"context"
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"github.com/fluxgit/fluxgit/internal/gitexec"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// maxBranchRefs bounds how many refs repo.branchStack loads.
const maxBranchRefs = 10000

var defaultBaseCandidates = []string{"main", "master", "develop", "dev", "trunk"}

type branchStackArgs struct {
	RepoPath       string       `json:"repoPath"`
	RepoID         string       `json:"repoId"`
	BaseCandidates []string     `json:"baseCandidates"`
	MaxRelated     *json.Number `json:"maxRelated"`
}

// stackCurrent is the checked-out position.
type stackCurrent struct {
	Ref    string  `json:"ref"`
	Label  string  `json:"label"`
	Commit *string `json:"commit"`
	Ahead  int64   `json:"ahead"`
	Behind int64   `json:"behind"`
}

// stackRef is a ref with its commit.
type stackRef struct {
	Ref    string `json:"ref"`
	Label  string `json:"label"`
	Commit string `json:"commit"`
}

// stackBase is the base branch and the distance to it.
type stackBase struct {
	stackRef
	Distance struct {
		AheadFromBase int64 `json:"aheadFromBase"`
		BehindBase    int64 `json:"behindBase"`
	} `json:"distance"`
}

// stackRelated is a local branch related to the current one.
type stackRelated struct {
	stackRef
	Relation       string  `json:"relation"`
	AheadOfCurrent int64   `json:"aheadOfCurrent"`
	BehindCurrent  int64   `json:"behindCurrent"`
	Upstream       *string `json:"upstream"`
}

// stackAction is a suggested follow-up call.
type stackAction struct {
	ID          string         `json:"id"`
	Tool        string         `json:"tool"`
	Arguments   map[string]any `json:"arguments"`
	Description string         `json:"description"`
}

// branchStackData is the repo.branchStack payload.
type branchStackData struct {
	Current               stackCurrent   `json:"current"`
	Upstream              *stackRef      `json:"upstream"`
	Base                  *stackBase     `json:"base"`
	Related               []stackRelated `json:"related"`
	RelatedTruncated      bool           `json:"relatedTruncated"`
	Risk                  string         `json:"risk"`
	Summary               string         `json:"summary"`
	Guidance              string         `json:"guidance"`
	SuggestedActions      []stackAction  `json:"suggestedActions"`
	Model                 string         `json:"model"`
	NetworkFetchPerformed bool           `json:"networkFetchPerformed"`
	ReadOnly              bool           `json:"readOnly"`
}

type refInfo struct{ oid, upstream string }

func refLabel(ref string) string {
	for _, p := range []string{"refs/heads/", "refs/remotes/", "refs/tags/"} {
		if strings.HasPrefix(ref, p) {
			return strings.TrimPrefix(ref, p)
		}
	}
	return ref
}

func (p *Provider) branchStack(ctx context.Context, call *sdk.Call) (any, error) {
	var a branchStackArgs
	if err := decode(call, &a); err != nil {
		return nil, err
	}
	maxRelated, err := intArg("maxRelated", a.MaxRelated, 8, 1, 50)
	if err != nil {
		return nil, err
	}
	cands, err := baseCandidates(a.BaseCandidates)
	if err != nil {
		return nil, err
	}
	r, err := p.open(ctx, call, a.RepoPath)
	if err != nil {
		return nil, err
	}

	// Phase 1: HEAD, its commit and every branch with its upstream, at once.
	b, err := p.readBranchRefs(ctx, r)
	if err != nil {
		return nil, err
	}
	curRef, headOID, refs, locals := b.curRef, b.headOID, b.refs, b.locals

	d := &branchStackData{Related: []stackRelated{}, Model: "real-git-refs-no-virtual-branches", ReadOnly: true}
	d.Current.Ref, d.Current.Label = "HEAD", "HEAD (detached)"
	if curRef != "" {
		d.Current.Ref, d.Current.Label = curRef, refLabel(curRef)
	}
	if isOID(headOID) {
		d.Current.Commit = &headOID
	}
	if up := refs[curRef].upstream; curRef != "" && up != "" {
		if info, ok := refs[up]; ok {
			d.Upstream = &stackRef{Ref: up, Label: refLabel(up), Commit: info.oid}
		}
	}
	for _, c := range cands {
		for _, ref := range []string{"refs/heads/" + c, "refs/remotes/origin/" + c} {
			if info, ok := refs[ref]; ok && ref != curRef && d.Base == nil {
				d.Base = &stackBase{stackRef: stackRef{Ref: ref, Label: refLabel(ref), Commit: info.oid}}
			}
		}
	}

	// Phase 2: distances and branch containment, all independent.
	var tracking, descends, shares []string
	if d.Current.Commit != nil {
		if descends, shares, err = p.stackDistances(ctx, r, d, headOID); err != nil {
			return nil, err
		}
	}
	for _, l := range locals {
		if refs[l].upstream == curRef && curRef != "" && l != curRef {
			tracking = append(tracking, l)
		}
	}

	// Phase 3: the related branches, each with its distance to HEAD.
	if err := p.relatedBranches(ctx, r, d, b, maxRelated, tracking, descends, shares); err != nil {
		return nil, err
	}

	c := d.Current
	switch {
	case c.Ahead > 0 && c.Behind > 0:
		d.Risk = "high"
	case d.Upstream == nil || c.Behind > 0 || len(d.Related) > 0:
		d.Risk = "medium"
	default:
		d.Risk = "low"
	}
	d.Summary = stackSummary(d)
	d.Guidance = "Refs are read as they are on disk: no fetch was run, so remote-tracking branches may be stale. " +
		"Before rewriting this branch (rebase, amend, reset) check the related branches: branches that descend " +
		"from it or track it would need to be rebased too. Use repo.conflictPreflight to test a merge or rebase " +
		"without touching the work tree."
	d.SuggestedActions = stackActions(d)
	return d, nil
}

// baseCandidates checks arguments.baseCandidates (the default list when
// absent): at most 256 names, each 1 to 4096 characters and not an option.
func baseCandidates(cands []string) ([]string, error) {
	if cands == nil {
		cands = defaultBaseCandidates
	}
	if len(cands) > 256 {
		return nil, invalid("arguments.baseCandidates must have at most 256 items")
	}
	for i, c := range cands {
		if err := checkRev("baseCandidates["+strconv.Itoa(i)+"]", c); err != nil {
			return nil, err
		}
		if c == "" || len(c) > 4096 {
			return nil, invalid("arguments.baseCandidates[" + strconv.Itoa(i) + "] must be 1 to 4096 characters")
		}
	}
	return cands, nil
}

// branchRefs is what repo.branchStack reads first: the current branch
// ("" when detached), the HEAD commit ("" when unborn), and every local
// and remote-tracking branch with its commit and upstream.
type branchRefs struct {
	curRef, headOID string
	refs            map[string]refInfo
	locals          []string
}

// readBranchRefs reads the branchRefs with three concurrent git calls.
func (p *Provider) readBranchRefs(ctx context.Context, r *Repo) (*branchRefs, error) {
	var curRef, headOID string
	refs := map[string]refInfo{}
	var locals []string
	err := parallel(
		func() error {
			out, err := p.runner.Run(ctx, r.dir, "symbolic-ref", "-q", "HEAD")
			if isExit(err, 1) {
				return nil // detached
			}
			curRef = strings.TrimSpace(string(out))
			return err
		},
		func() error {
			out, err := p.runner.Run(ctx, r.dir, "rev-parse", "--verify", "-q", "HEAD^{commit}")
			if isExit(err, 1) {
				return nil // unborn
			}
			headOID = strings.TrimSpace(string(out))
			return err
		},
		func() error {
			return p.stream(ctx, r, '\n', func(line []byte) error {
				f := bytes.Split(line, []byte{0})
				if len(f) != 3 || len(refs) >= maxBranchRefs {
					return nil
				}
				name := string(f[0])
				refs[name] = refInfo{oid: string(f[1]), upstream: string(f[2])}
				if strings.HasPrefix(name, "refs/heads/") {
					locals = append(locals, name)
				}
				return nil
			}, "for-each-ref", "--format=%(refname)%00%(objectname)%00%(upstream)", "refs/heads", "refs/remotes")
		},
	)
	if err != nil {
		return nil, err
	}
	return &branchRefs{curRef: curRef, headOID: headOID, refs: refs, locals: locals}, nil
}

// stackDistances fills the current branch's distance to its upstream and
// to the base, and lists the branches that contain HEAD (descends) and
// those that contain the fork point with the base (shares).
func (p *Provider) stackDistances(ctx context.Context, r *Repo, d *branchStackData, headOID string) (descends, shares []string, err error) {
	err = parallel(
		func() (err error) {
			if d.Upstream != nil {
				d.Current.Ahead, d.Current.Behind, err = p.leftRight(ctx, r, headOID, d.Upstream.Commit)
			}
			return err
		},
		func() (err error) {
			if d.Base != nil {
				d.Base.Distance.AheadFromBase, d.Base.Distance.BehindBase, err = p.leftRight(ctx, r, headOID, d.Base.Commit)
			}
			return err
		},
		func() (err error) {
			descends, err = p.containing(ctx, r, headOID)
			return err
		},
		func() error {
			if d.Base == nil {
				return nil
			}
			out, err := p.runner.Run(ctx, r.dir, "merge-base", headOID, d.Base.Commit)
			if isExit(err, 1) {
				return nil // unrelated histories
			}
			if err != nil {
				return err
			}
			fork := strings.TrimSpace(string(out))
			if isOID(fork) {
				shares, err = p.containing(ctx, r, fork)
			}
			return err
		},
	)
	return descends, shares, err
}

// relatedBranches lists the branches related to the current one (tracking
// it, descending from it, sharing its base; each once, the base and the
// current branch excluded), at most maxRelated, each with its distance to
// HEAD, into d.Related.
func (p *Provider) relatedBranches(ctx context.Context, r *Repo, d *branchStackData, b *branchRefs, maxRelated int64, tracking, descends, shares []string) error {
	curRef, headOID, refs := b.curRef, b.headOID, b.refs
	seen := map[string]bool{curRef: true}
	if d.Base != nil {
		seen[d.Base.Ref] = true
	}
	var cand []stackRelated
	add := func(list []string, rel string) {
		sort.Strings(list)
		for _, ref := range list {
			if seen[ref] {
				continue
			}
			seen[ref] = true
			info := refs[ref]
			sr := stackRelated{stackRef: stackRef{Ref: ref, Label: refLabel(ref), Commit: info.oid}, Relation: rel}
			if info.upstream != "" {
				up := info.upstream
				sr.Upstream = &up
			}
			cand = append(cand, sr)
		}
	}
	add(tracking, "tracks-current")
	add(descends, "descends-from-current")
	add(shares, "shares-base")
	if int64(len(cand)) > maxRelated {
		cand, d.RelatedTruncated = cand[:maxRelated], true
	}
	if d.Current.Commit != nil {
		err := forEach(len(cand), 8, func(i int) (err error) {
			cand[i].BehindCurrent, cand[i].AheadOfCurrent, err = p.leftRight(ctx, r, headOID, cand[i].Commit)
			return err
		})
		if err != nil {
			return err
		}
	}
	d.Related = append(d.Related, cand...)
	return nil
}

// leftRight counts commits only in a (left) and only in b (right).
func (p *Provider) leftRight(ctx context.Context, r *Repo, a, b string) (int64, int64, error) {
	args := []string{"rev-list", "--left-right", "--count", a + "..." + b, "--"}
	out, err := p.runner.Run(ctx, r.dir, args...)
	if err != nil {
		return 0, 0, err
	}
	l, rr, ok := strings.Cut(strings.TrimSpace(string(out)), "\t")
	x, err1 := atoi64(l)
	y, err2 := atoi64(rr)
	if !ok || err1 != nil || err2 != nil {
		return 0, 0, &failure{gitexec.Command(r.dir, args...), "unexpected rev-list output"}
	}
	return x, y, nil
}

// containing lists local branches whose history contains oid.
func (p *Provider) containing(ctx context.Context, r *Repo, oid string) ([]string, error) {
	var out []string
	err := p.stream(ctx, r, '\n', func(line []byte) error {
		if len(out) < maxBranchRefs && len(line) > 0 {
			out = append(out, string(line))
		}
		return nil
	}, "for-each-ref", "--format=%(refname)", "--contains", oid, "refs/heads")
	return out, err
}

func stackSummary(d *branchStackData) string {
	var b strings.Builder
	b.WriteString(d.Current.Label)
	if d.Upstream != nil {
		b.WriteString(" is " + strconv.FormatInt(d.Current.Ahead, 10) + " ahead and " + strconv.FormatInt(d.Current.Behind, 10) + " behind " + d.Upstream.Label)
	} else {
		b.WriteString(" has no upstream")
	}
	if d.Base != nil {
		b.WriteString("; " + strconv.FormatInt(d.Base.Distance.AheadFromBase, 10) + " commit(s) on top of base " + d.Base.Label +
			", which has " + strconv.FormatInt(d.Base.Distance.BehindBase, 10) + " newer commit(s)")
	}
	b.WriteString("; " + strconv.Itoa(len(d.Related)) + " related branch(es); risk " + d.Risk + ".")
	s, _ := clip(b.String(), 1000)
	return s
}

func stackActions(d *branchStackData) []stackAction {
	acts := []stackAction{}
	if d.Base != nil {
		acts = append(acts, stackAction{ID: "compareWithBase", Tool: "diff.text",
			Arguments:   map[string]any{"base": d.Base.Commit, "head": "HEAD"},
			Description: "Show what this branch changes relative to " + d.Base.Label + "."})
	}
	acts = append(acts,
		stackAction{ID: "showAllBranchContext", Tool: "repo.refs", Arguments: map[string]any{},
			Description: "List every branch, tag and stash."},
		stackAction{ID: "openSafetyTimeline", Tool: "safety.timeline", Arguments: map[string]any{},
			Description: "Review recent FluxGit safety events and restore points (needs FluxGit)."})
	if d.Base != nil {
		acts = append(acts, stackAction{ID: "prepareGuardedRebasePlan", Tool: "operation.preview.rebase",
			Arguments:   map[string]any{},
			Description: "Propose a rebase onto the base for human approval; nothing runs until it is approved."})
	}
	return acts
}
