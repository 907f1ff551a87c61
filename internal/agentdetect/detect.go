package agentdetect

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// DefaultBudget bounds a detection whose context has no deadline: the
// hint runs on every proposal and must not hold it up.
const DefaultBudget = 2 * time.Second

// Report is the merged result of one detection.
type Report struct {
	// Agents are the findings, strongest first, at most MaxAgents.
	Agents []Finding
	// AgentCount is how many agents were found before the cap.
	AgentCount int
	// Truncated says AgentCount > MaxAgents.
	Truncated bool
	// Failed names the sources that failed or ran out of time, sorted.
	Failed []string
}

// Options configures DefaultSources.
type Options struct {
	// Roster lists the shift roster's active check-ins; nil leaves the
	// roster out.
	Roster RosterFunc
	// Extra sources, such as the agents' own stores (StoreSources), run
	// alongside the built-in ones.
	Extra []Source
}

// DefaultSources returns the process, editor and presence-record sources,
// the roster when one is given, and opts.Extra.
func DefaultSources(opts Options) []Source {
	out := []Source{ProcessSource{}, IDESource{}, PresenceSource{}}
	if opts.Roster != nil {
		out = append(out, RosterSource(opts.Roster))
	}
	return append(out, opts.Extra...)
}

type sourceResult struct {
	name     string
	findings []Finding
	err      error
}

// Detect asks every source concurrently and merges what they saw. Each
// source fails soft: an error, a panic or running past ctx's deadline
// (DefaultBudget when ctx has none) puts its name in Failed, and the
// findings it returned with an error are still used. Detect never waits
// past the deadline for a source that ignores ctx.
func Detect(ctx context.Context, q Query, sources []Source) Report {
	if q.Now.IsZero() {
		q.Now = time.Now()
	}
	q = q.prepared()
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultBudget)
		defer cancel()
	}
	results := make(chan sourceResult, len(sources))
	for _, s := range sources {
		go func() {
			name := s.Name()
			defer func() {
				if r := recover(); r != nil {
					results <- sourceResult{name: name, err: fmt.Errorf("source %s panicked: %v", name, r)}
				}
			}()
			fs, err := s.Scan(ctx, q)
			for i := range fs {
				if len(fs[i].Sources) == 0 {
					fs[i].Sources = []string{name}
				}
			}
			results <- sourceResult{name: name, findings: fs, err: err}
		}()
	}
	var all []Finding
	var failed []string
	pending := map[string]int{}
	for _, s := range sources {
		pending[s.Name()]++
	}
collect:
	for range sources {
		select {
		case r := <-results:
			pending[r.name]--
			all = append(all, r.findings...)
			if r.err != nil {
				failed = append(failed, r.name)
			}
		case <-ctx.Done():
			break collect
		}
	}
	for name, n := range pending {
		if n > 0 {
			failed = append(failed, name)
		}
	}
	slices.Sort(failed)
	failed = slices.Compact(failed)
	return merge(all, q, failed)
}

// merge groups, ranks and caps findings.
func merge(all []Finding, q Query, failed []string) Report {
	// Anchors first: an agent's own pid, then a helper's pid, then a
	// session id, then the rest, so loose findings join a concrete agent.
	// The rest of the order only makes the merge independent of which
	// source answered first.
	slices.SortStableFunc(all, func(a, b Finding) int {
		return cmp.Or(
			cmp.Compare(anchorRank(a), anchorRank(b)),
			strings.Compare(a.Agent, b.Agent),
			cmp.Compare(pidOf(a), pidOf(b)),
			strings.Compare(a.SessionID, b.SessionID),
			cmp.Compare(msOf(b), msOf(a)),
			strings.Compare(strings.Join(a.Sources, ","), strings.Join(b.Sources, ",")),
			strings.Compare(a.RosterWorkerID, b.RosterWorkerID),
		)
	})
	var groups [][]Finding
	for _, f := range all {
		if f.Agent == "" {
			continue
		}
		f.Files = cleanFiles(f.Files, q)
		best, bestScore := -1, 0
		for i, g := range groups {
			if s := joinScore(g, f); s > bestScore {
				best, bestScore = i, s
			}
		}
		if best < 0 {
			groups = append(groups, []Finding{f})
		} else {
			groups[best] = append(groups[best], f)
		}
	}
	var out []Finding
	for _, g := range groups {
		m := combine(g, q.Now)
		if m.State == StateRecent && (m.LastActivityMs == nil || q.Now.Sub(time.UnixMilli(*m.LastActivityMs)) > Freshness) {
			continue // neither live nor fresh
		}
		out = append(out, m)
	}
	slices.SortStableFunc(out, compareFindings)
	r := Report{AgentCount: len(out), Failed: failed}
	if len(out) > MaxAgents {
		out, r.Truncated = out[:MaxAgents], true
	}
	r.Agents = out
	if r.Agents == nil {
		r.Agents = []Finding{}
	}
	return r
}

func anchorRank(f Finding) int {
	switch {
	case f.RosterWorkerID != "":
		return 4
	case f.PID != nil && len(f.Ancestry) == 0:
		return 0
	case f.PID != nil:
		return 1
	case f.SessionID != "":
		return 2
	default:
		return 3
	}
}

// joinScore says how well f fits group g: 0 when it must not join (other
// agent, another pid or start time, another session, a second roster
// check-in), 3 for the same pid or a pid in the other's ancestry, 2 for
// the same session or helpers of one parent, 1 for a loose fit (same
// agent, one side without a pid).
func joinScore(g []Finding, f Finding) int {
	score := 1
	for _, h := range g {
		if h.Agent != f.Agent {
			return 0
		}
		if h.RosterWorkerID != "" && f.RosterWorkerID != "" {
			return 0
		}
		if h.SessionID != "" && f.SessionID != "" {
			if h.SessionID != f.SessionID {
				return 0
			}
			score = max(score, 2)
		}
		if h.PID != nil && f.PID != nil {
			switch {
			case *h.PID == *f.PID:
				if !h.StartTime.IsZero() && !f.StartTime.IsZero() && absDur(h.StartTime.Sub(f.StartTime)) > pidReuseSlack {
					return 0 // the pid was reused
				}
				score = 3
			case slices.Contains(f.Ancestry, *h.PID) || slices.Contains(h.Ancestry, *f.PID):
				score = 3
			case len(f.Ancestry) > 0 && len(h.Ancestry) > 0 && f.Ancestry[0] == h.Ancestry[0]:
				score = max(score, 2) // two helpers of one parent (two MCP servers of one agent)
			default:
				return 0
			}
		}
	}
	return score
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

var (
	stateRank      = map[string]int{StateWorking: 0, StateOpen: 1, StateRecent: 2}
	confidenceRank = map[string]int{ConfidenceRegistry: 0, ConfidenceArgv: 1, ConfidenceCwd: 2, ConfidenceDeclared: 3}
)

func rankOf(m map[string]int, k string) int {
	if r, ok := m[k]; ok {
		return r
	}
	return len(m)
}

// combine folds one agent's findings: sources united, the strongest
// confidence and liveliest state, the agent's own pid (not a helper's),
// the newest activity, and the branch and tool of the newest finding
// that has them; files newest first.
func combine(g []Finding, now time.Time) Finding {
	slices.SortStableFunc(g, func(a, b Finding) int { return cmp.Compare(msOf(b), msOf(a)) })
	m := Finding{Agent: g[0].Agent, State: StateRecent, Confidence: ConfidenceDeclared, Files: []string{}}
	seenFile := map[string]bool{}
	var helperPID *int
	for _, f := range g {
		m.Sources = append(m.Sources, f.Sources...)
		if rankOf(stateRank, f.State) < rankOf(stateRank, m.State) {
			m.State = f.State
		}
		if f.Confidence != ConfidenceDeclared && (m.Confidence == ConfidenceDeclared || rankOf(confidenceRank, f.Confidence) < rankOf(confidenceRank, m.Confidence)) {
			m.Confidence = f.Confidence
		}
		if f.PID != nil {
			if len(f.Ancestry) == 0 && m.PID == nil {
				m.PID, m.StartTime = f.PID, f.StartTime
			} else if helperPID == nil {
				helperPID = f.PID
			}
		}
		if f.LastActivityMs != nil && (m.LastActivityMs == nil || *f.LastActivityMs > *m.LastActivityMs) {
			m.LastActivityMs = f.LastActivityMs
		}
		if m.Branch == nil && f.Branch != nil {
			m.Branch = f.Branch
		}
		if m.LastTool == nil && f.LastTool != nil {
			m.LastTool = f.LastTool
		}
		if m.MCPClient == nil && f.MCPClient != nil {
			m.MCPClient = f.MCPClient
		}
		if m.SessionID == "" {
			m.SessionID = f.SessionID
		}
		if m.RosterWorkerID == "" {
			m.RosterWorkerID = f.RosterWorkerID
		}
		if m.Leases == "" {
			m.Leases = f.Leases
		}
		for _, p := range f.Files {
			if !seenFile[p] && len(m.Files) < MaxFilesPerAgent {
				seenFile[p] = true
				m.Files = append(m.Files, p)
			}
		}
	}
	if m.PID == nil {
		m.PID = helperPID
	}
	slices.Sort(m.Sources)
	m.Sources = slices.Compact(m.Sources)
	if m.LastActivityMs != nil && now.Sub(time.UnixMilli(*m.LastActivityMs)) <= WorkingWindow {
		m.State = StateWorking
	}
	if m.State == "" {
		m.State = StateRecent
	}
	return m
}

func msOf(f Finding) int64 {
	if f.LastActivityMs == nil {
		return -1
	}
	return *f.LastActivityMs
}

// compareFindings orders the report: working before open before recent,
// then by confidence, then newest activity, then agent and pid so the
// order is stable.
func compareFindings(a, b Finding) int {
	return cmp.Or(
		cmp.Compare(rankOf(stateRank, a.State), rankOf(stateRank, b.State)),
		cmp.Compare(rankOf(confidenceRank, a.Confidence), rankOf(confidenceRank, b.Confidence)),
		cmp.Compare(msOf(b), msOf(a)),
		strings.Compare(a.Agent, b.Agent),
		cmp.Compare(pidOf(a), pidOf(b)),
		strings.Compare(a.RosterWorkerID, b.RosterWorkerID),
	)
}

func pidOf(f Finding) int {
	if f.PID == nil {
		return 0
	}
	return *f.PID
}

// cleanFiles keeps a source's files only in the reported form:
// repository-relative, '/'-separated, inside the repository, no
// duplicates. "." (a declared whole repository) is kept.
func cleanFiles(files []string, q Query) []string {
	var out []string
	for _, p := range files {
		switch {
		case p == ".":
		case filepath.IsAbs(p):
			rel, ok := RepoRelative(p, q)
			if !ok {
				continue
			}
			p = rel
		default:
			rel, ok := RepoRelative(p, q)
			if !ok {
				continue
			}
			p = rel
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}
