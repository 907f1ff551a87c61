package roster

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"
)

// Lease modes.
const (
	Shared    = "shared"
	Exclusive = "exclusive"
)

// DefaultLease is how long a claim lasts without a renewing check-in.
const DefaultLease = 15 * time.Minute

// MaxLease bounds one lease (the inputSchema's leaseMinutes maximum).
const MaxLease = 8 * time.Hour

// Lease is one claimed file of a worker as tools and resources show it.
// A lease that ran out stays on the row, marked expired, until the worker
// renews it (any later check-in) or changes its claims: it is never
// deleted silently.
type Lease struct {
	File      string `json:"file"`
	Mode      string `json:"mode"`
	ExpiresAt string `json:"expiresAt"`
	Expired   bool   `json:"expired,omitempty"`
}

// Agent is who checked a worker in: the MCP client's name, the host name
// and the fluxgit server process (whose presence record is
// <run_dir>/presence/mcp/<pid>.json).
type Agent struct {
	Client string `json:"client,omitempty"`
	Host   string `json:"host,omitempty"`
	PID    int    `json:"pid,omitempty"`
}

// storedLease is a lease as the leases column holds it: with its length,
// so a renewal extends it by the same amount.
type storedLease struct {
	File      string `json:"file"`
	Mode      string `json:"mode"`
	TTLms     int64  `json:"ttlMs"`
	ExpiresAt string `json:"expiresAt"`
}

// ClaimError is a claim the store refuses: a file that is not among the
// session's files, or an unknown mode.
type ClaimError struct {
	File, Problem string
}

func (e *ClaimError) Error() string { return fmt.Sprintf("claim of %q: %s", e.File, e.Problem) }

// maxAgentJSON bounds the agent column read back; maxLeasesJSON the
// leases column (MaxFiles leases of MaxFileLen characters, all escaped).
const (
	maxAgentJSON  = 4096
	maxLeasesJSON = MaxFiles*(6*MaxFileLen+96) + 2
)

// patchPlan is what a check-in of a known session does to its row.
type patchPlan struct {
	files   []string // the files the row declares afterwards
	leases  []storedLease
	changed bool // gist, files or claims differ, or the row was clipped
	agent   bool // an agent is given and differs from the stored one
}

// planPatch computes a check-in's patch of the known row old, the same
// for every store.
func planPatch(old Row, in CheckInInput, now time.Time) (patchPlan, error) {
	files := old.Files
	if in.HasFiles {
		files = in.Files
	}
	leases, claimsChanged, err := planLeases(old.stored, files, in, now)
	if err != nil {
		return patchPlan{}, err
	}
	// A clipped row is only known shortened: rewrite it whole.
	changed := old.Clipped || old.Gist != in.Gist || (in.HasFiles && !slices.Equal(old.Files, in.Files)) || claimsChanged
	agent := in.Agent != (Agent{}) && (old.Agent == nil || *old.Agent != in.Agent)
	return patchPlan{files: files, leases: leases, changed: changed, agent: agent}, nil
}

// planLeases computes a check-in's leases: the claims given (each must be
// one of files), or else the stored ones still among files, renewed from
// now. changed reports that the set of (file, mode) claims differs from
// the stored one.
func planLeases(old []storedLease, files []string, in CheckInInput, now time.Time) (leases []storedLease, changed bool, err error) {
	ttl := in.LeaseFor
	if ttl <= 0 {
		ttl = DefaultLease
	}
	expiry := func(d time.Duration) string { return now.Add(d).UTC().Format(timeLayout) }
	if in.HasClaims {
		for _, f := range slices.Sorted(maps.Keys(in.Claims)) {
			mode := in.Claims[f]
			if mode != Shared && mode != Exclusive {
				return nil, false, &ClaimError{File: f, Problem: "mode must be shared or exclusive"}
			}
			if !slices.Contains(files, f) {
				return nil, false, &ClaimError{File: f, Problem: "not among the session's files; add it to files to claim it"}
			}
			leases = append(leases, storedLease{File: f, Mode: mode, TTLms: ttl.Milliseconds(), ExpiresAt: expiry(ttl)})
		}
	} else {
		for _, l := range old {
			if slices.Contains(files, l.File) {
				l.ExpiresAt = expiry(time.Duration(l.TTLms) * time.Millisecond)
				leases = append(leases, l)
			}
		}
	}
	key := func(ls []storedLease) []string {
		out := make([]string, 0, len(ls))
		for _, l := range ls {
			out = append(out, l.Mode+"\x00"+l.File)
		}
		slices.Sort(out)
		return out
	}
	return leases, !slices.Equal(key(old), key(leases)), nil
}

// renewStored moves each lease's expiry to at plus its length when that is
// later; changed reports whether any moved.
func renewStored(ls []storedLease, at time.Time) (out []storedLease, changed bool) {
	out = make([]storedLease, len(ls))
	for i, l := range ls {
		if e := at.Add(time.Duration(l.TTLms) * time.Millisecond).UTC().Format(timeLayout); l.TTLms > 0 && e > l.ExpiresAt {
			l.ExpiresAt, changed = e, true
		}
		out[i] = l
	}
	return out, changed
}

// agentIs reports whether the agent column (JSON) names host and pid.
func agentIs(agentJSON, host string, pid int) bool {
	var a Agent
	return json.Unmarshal([]byte(agentJSON), &a) == nil && a.Host == host && a.PID == pid && pid > 0 && host != ""
}

func encodeLeases(ls []storedLease) (string, error) {
	if ls == nil {
		ls = []storedLease{}
	}
	b, err := json.Marshal(ls)
	return string(b), err
}

func encodeAgent(a Agent) (string, error) {
	b, err := json.Marshal(a)
	return string(b), err
}

// decodeExtras fills a row's leases and agent from their columns (either
// empty when the column holds nothing usable: a row of an older schema or
// another program).
func decodeExtras(row *Row, leasesJSON, agentJSON string) []storedLease {
	var stored []storedLease
	if json.Unmarshal([]byte(leasesJSON), &stored) != nil {
		stored = nil
	}
	for _, l := range stored {
		if l.File == "" || (l.Mode != Shared && l.Mode != Exclusive) {
			continue
		}
		row.Leases = append(row.Leases, Lease{File: l.File, Mode: l.Mode, ExpiresAt: l.ExpiresAt})
	}
	var a Agent
	if json.Unmarshal([]byte(agentJSON), &a) == nil && a != (Agent{}) {
		row.Agent = &a
	}
	return stored
}

// markTimes renews leases by the agent's tool calls (renewByCalls), sets
// Expired on every lease that ran out by now, and Stale on
// a worker none of whose leases is live and whose fluxgit process, on
// this host, is gone (see processGone): the roster stays readable without
// deleting anyone's session.
func markTimes(rows []Row, now time.Time) {
	ts := now.UTC().Format(timeLayout)
	host := hostname()
	calls := map[int]time.Time{}
	for i := range rows {
		renewByCalls(&rows[i], host, now, calls)
		live := false
		for j := range rows[i].Leases {
			if rows[i].Leases[j].ExpiresAt <= ts {
				rows[i].Leases[j].Expired = true
			} else {
				live = true
			}
		}
		if a := rows[i].Agent; !live && a != nil && a.PID > 0 && a.Host != "" && a.Host == host && processGone(a.PID) {
			rows[i].Stale = true
		}
	}
}

func markRow(r *Row, now time.Time) {
	rows := []Row{*r}
	markTimes(rows, now)
	*r = rows[0]
}

// LiveExclusive reports the unexpired exclusive lease of file on row.
func (r Row) LiveExclusive(file string) (Lease, bool) {
	for _, l := range r.Leases {
		if l.File == file && l.Mode == Exclusive && !l.Expired {
			return l, true
		}
	}
	return Lease{}, false
}
