package roster

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/fluxgit/fluxgit/internal/rundir"
)

// Tool calls renew leases: the fluxgit server that checked a worker in
// records every tool call naming a repository in its presence record
// (<run_dir>/presence/mcp/<pid>.json, written by host/presence: lastCallMs
// per repository). A lease of that worker counts as renewed at the
// server's last call, by its own length, so an agent busy with its files
// keeps its claims without checking in again. Only records on this host
// can be read: so that other machines sharing a PostgreSQL roster see the
// renewal too, the shift-roster provider of that server also writes it to
// the store (RenewLeases, at most once a minute while the calls go on);
// elsewhere the stored expiry holds.

// maxCallSkew drops a lastCallMs from the future.
const maxCallSkew = time.Minute

// LastCall is the last tool call the fluxgit server pid on this host
// recorded in its presence record, if it has one (a time more than a
// minute after now is ignored).
func LastCall(pid int, now time.Time) (time.Time, bool) {
	run, err := rundir.Dir()
	if err != nil || pid <= 0 {
		return time.Time{}, false
	}
	path := filepath.Join(rundir.PresenceDir(run), rundir.PresenceName(pid))
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > rundir.MaxPresenceBytes {
		return time.Time{}, false
	}
	f, err := os.Open(path)
	if err != nil {
		return time.Time{}, false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, rundir.MaxPresenceBytes))
	if err != nil {
		return time.Time{}, false
	}
	var doc struct {
		PID   int `json:"pid"`
		Repos []struct {
			LastCallMs int64 `json:"lastCallMs"`
		} `json:"repos"`
	}
	if json.Unmarshal(b, &doc) != nil || doc.PID != pid {
		return time.Time{}, false
	}
	var best int64
	for _, r := range doc.Repos {
		best = max(best, r.LastCallMs)
	}
	at := time.UnixMilli(best)
	if best == 0 || at.After(now.Add(maxCallSkew)) {
		return time.Time{}, false
	}
	return at, true
}

// renewByCalls moves each lease's expiry to the agent's last tool call
// plus the lease's length when that is later (read side: nothing is
// written).
func renewByCalls(row *Row, host string, now time.Time, calls map[int]time.Time) {
	a := row.Agent
	if a == nil || a.Host != host || a.PID <= 0 || len(row.Leases) == 0 {
		return
	}
	at, seen := calls[a.PID]
	if !seen {
		at, _ = LastCall(a.PID, now)
		calls[a.PID] = at
	}
	if at.IsZero() {
		return
	}
	for i := range row.Leases {
		for _, s := range row.stored {
			if s.File != row.Leases[i].File {
				continue
			}
			if e := at.Add(time.Duration(s.TTLms) * time.Millisecond).UTC().Format(timeLayout); e > row.Leases[i].ExpiresAt {
				row.Leases[i].ExpiresAt = e
			}
		}
	}
}
