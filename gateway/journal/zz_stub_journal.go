// TEMPORARY: replaced by helper B's implementation at merge.

package journal

import (
	"encoding/json"
	"os"
	"slices"
	"sort"
	"sync"
	"time"
)

// Journal is an in-memory journal persisted as one JSON file (stub).
type Journal struct {
	mu   sync.Mutex
	path string
	rows map[string]Proposal
}

// Open loads or creates the journal at path.
func Open(path string) (*Journal, error) {
	j := &Journal{path: path, rows: map[string]Proposal{}}
	b, err := os.ReadFile(path)
	if err == nil && len(b) > 0 {
		if err := json.Unmarshal(b, &j.rows); err != nil {
			return nil, err
		}
	} else if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	return j, j.save()
}

func (j *Journal) save() error {
	b, err := json.Marshal(j.rows)
	if err != nil {
		return err
	}
	tmp := j.path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, j.path)
}

// Close closes the journal.
func (j *Journal) Close() error { return nil }

// Submit inserts p or returns the row of the same agent and key.
func (j *Journal) Submit(p Proposal) (Proposal, bool, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, r := range j.rows {
		if r.AgentID == p.AgentID && r.IdempotencyKey == p.IdempotencyKey {
			if r.Fingerprint != p.Fingerprint {
				return Proposal{}, false, ErrKeyConflict
			}
			return r, false, nil
		}
	}
	p.Status = Pending
	p.UpdatedAt = time.Now()
	j.rows[p.ID] = p
	return p, true, j.save()
}

// Get returns one row.
func (j *Journal) Get(id string) (Proposal, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	r, ok := j.rows[id]
	if !ok {
		return Proposal{}, ErrNotFound
	}
	return r, nil
}

// List returns rows newest first.
func (j *Journal) List(f Filter) ([]Proposal, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []Proposal
	for _, r := range j.rows {
		if len(f.Statuses) == 0 || slices.Contains(f.Statuses, r.Status) {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].CreatedAt.After(out[b].CreatedAt) })
	lim := f.Limit
	if lim == 0 {
		lim = 200
	}
	if len(out) > lim {
		out = out[:lim]
	}
	return out, nil
}

// Transition moves id from one of from to to.
func (j *Journal) Transition(id string, from []Status, to Status, mut func(*Proposal)) (Proposal, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	r, ok := j.rows[id]
	if !ok {
		return Proposal{}, ErrNotFound
	}
	if !slices.Contains(from, r.Status) {
		return Proposal{}, &StateError{ID: id, Current: r.Status, Wanted: from}
	}
	if mut != nil {
		mut(&r)
	}
	r.Status = to
	r.UpdatedAt = time.Now()
	j.rows[id] = r
	return r, j.save()
}

// ExpireDue expires pending rows whose time is up.
func (j *Journal) ExpireDue(now time.Time) ([]Proposal, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []Proposal
	for id, r := range j.rows {
		if r.Status == Pending && !r.ExpiresAt.After(now) {
			r.Status, r.DecidedBy, r.DecidedAt, r.UpdatedAt = Expired, "gateway", now, now
			j.rows[id] = r
			out = append(out, r)
		}
	}
	return out, j.save()
}

// Prune deletes terminal rows older than before.
func (j *Journal) Prune(before time.Time) (int, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	n := 0
	for id, r := range j.rows {
		if r.Status.Terminal() && r.UpdatedAt.Before(before) {
			delete(j.rows, id)
			n++
		}
	}
	return n, j.save()
}

// Startup marks executing rows for reconciliation.
func (j *Journal) Startup() (approved, reconcile []Proposal, err error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for id, r := range j.rows {
		switch r.Status {
		case Approved:
			approved = append(approved, r)
		case Executing:
			r.NeedsReconciliation = true
			j.rows[id] = r
			reconcile = append(reconcile, r)
		}
	}
	return approved, reconcile, j.save()
}
