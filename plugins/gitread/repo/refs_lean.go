package repo

import "strings"

// Lean caps of repo.refs (CONTRACT §3: capped lists that say what they
// left out). Tags are the list that grows without bound (git/git has
// over a thousand); the newest ones are what an agent asks about.
const (
	leanTagLimit = 20
	leanRefLimit = 100
)

// leanRefsData is repo.refs' lean payload: empty lists and a false
// detached are left out, local and remote-tracking branches are separate
// lists, stash entries drop their stash@{N} label (an entry's position is
// its N), and Omitted counts, per list, the entries past the cap.
type leanRefsData struct {
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
func leanRefs(d *refsData, q refsQuery, lists map[string]*capped) *leanRefsData {
	out := &leanRefsData{
		Head: d.Head, Detached: d.Detached,
		Branches:       lists[kindBranches].items,
		RemoteBranches: lists[kindRemoteBranches].items,
		Tags:           lists[kindTags].items,
		Remotes:        lists[kindRemotes].items,
		Stashes:        lists[kindStashes].items,
	}
	if remotesSaidByBranches(out.Remotes, out.RemoteBranches) {
		out.Remotes = nil
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

// remotesSaidByBranches reports whether the remotes list only repeats what
// the remote-tracking branches sent already say: every remote is the
// "<remote>/" prefix of a listed one. A remote name holding a slash keeps
// the list (origin/x/main would not say which part is the remote), and so
// does a remote none of whose branches is listed.
func remotesSaidByBranches(remotes, remoteBranches []string) bool {
	if len(remotes) == 0 {
		return false
	}
	for _, r := range remotes {
		if strings.Contains(r, "/") {
			return false
		}
		found := false
		for _, b := range remoteBranches {
			if strings.HasPrefix(b, r+"/") {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
