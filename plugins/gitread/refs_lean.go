package gitread

// Lean caps of repo.refs (CONTRACT §3: capped lists that say what they
// left out). Tags are the list that grows without bound (git/git has
// over a thousand); the newest ones are what an agent asks about.
const (
	leanTagLimit = 20
	leanRefLimit = 100
)

// LeanRefsData is repo.refs' lean payload: empty lists and a false
// detached are left out, local and remote-tracking branches are separate
// lists, stash entries drop their stash@{N} label (an entry's position is
// its N), and Omitted counts, per list, the entries past the cap.
type LeanRefsData struct {
	// Head is the checked-out branch, or the short id of the commit when
	// detached.
	Head           string         `json:"head"`
	Detached       bool           `json:"detached,omitempty"`
	Branches       []string       `json:"branches,omitempty"`
	RemoteBranches []string       `json:"remoteBranches,omitempty"`
	Tags           []string       `json:"tags,omitempty"`
	Remotes        []string       `json:"remotes,omitempty"`
	Stashes        []string       `json:"stashes,omitempty"`
	Omitted        map[string]int `json:"omitted,omitempty"`
}

// leanRefs renders the collected lists in the lean shape.
func leanRefs(d *RefsData, q refsQuery, lists map[string]*capped) *LeanRefsData {
	out := &LeanRefsData{
		Head: d.Head, Detached: d.Detached,
		Branches:       lists[kindBranches].items,
		RemoteBranches: lists[kindRemoteBranches].items,
		Tags:           lists[kindTags].items,
		Remotes:        lists[kindRemotes].items,
		Stashes:        lists[kindStashes].items,
	}
	for k, c := range lists {
		if n := c.omitted(); q.kinds[k] && n > 0 {
			if out.Omitted == nil {
				out.Omitted = map[string]int{}
			}
			out.Omitted[k] = n
		}
	}
	return out
}
