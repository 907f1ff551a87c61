package journal

import (
	"database/sql"
	"fmt"
)

// Quota bounds what agents can make the journal hold. Agent ids are
// self-declared, so each bound per agent has a total beside it: an agent
// that rotates its name escapes the first, never the second. Pending
// counts proposals waiting for the person; the byte bounds count the
// bodies of every proposal still stored, whatever its state, because a
// decided or cancelled proposal keeps its body until it is pruned, an hour
// after it ended. Zero leaves a bound off.
type Quota struct {
	PendingPerAgent int
	PendingTotal    int
	BytesPerAgent   int64
	BytesTotal      int64
}

// QuotaError is a new proposal refused because the journal has no room
// for it under Quota. Its message is for the agent: what is full and what
// to do.
type QuotaError struct {
	// Bound names the bound that is full: "pending-per-agent",
	// "pending-total", "bytes-per-agent" or "bytes-total".
	Bound   string
	AgentID string
	// Limit is the bound; Held what is already held against it; Size the
	// refused body's bytes (byte bounds only).
	Limit, Held, Size int64
}

func (e *QuotaError) Error() string {
	const after = "No proposal was created. Wait for the person to decide the proposals already waiting, or withdraw ones you no longer need with operation.cancel, then propose again"
	switch e.Bound {
	case "pending-per-agent":
		return fmt.Sprintf("agent %s already has %d pending proposals, the gateway's limit per agent (%d). %s.", e.AgentID, e.Held, e.Limit, after)
	case "pending-total":
		return fmt.Sprintf("the gateway already holds %d pending proposals, its limit for all agents together (%d). %s.", e.Held, e.Limit, after)
	case "bytes-per-agent":
		return fmt.Sprintf("the gateway stores %d bytes of proposal bodies from agent %s; this %d-byte proposal would pass the limit per agent (%d bytes). %s; decided proposals are removed an hour after they end. Split a large patch into smaller proposals.", e.Held, e.AgentID, e.Size, e.Limit, after)
	default:
		return fmt.Sprintf("the gateway stores %d bytes of proposal bodies; this %d-byte proposal would pass its limit for all agents together (%d bytes). %s; decided proposals are removed an hour after they end.", e.Held, e.Size, e.Limit, after)
	}
}

// SetQuota sets the bounds Submit enforces from now on.
func (j *Journal) SetQuota(q Quota) {
	j.quotaMu.Lock()
	j.quota = q
	j.quotaMu.Unlock()
}

func (j *Journal) currentQuota() Quota {
	j.quotaMu.Lock()
	defer j.quotaMu.Unlock()
	return j.quota
}

// Admits reports whether Submit would have room for p: nil when p replays
// a stored proposal (same AgentID and IdempotencyKey) or fits the quota,
// else a *QuotaError. It is a cheap early answer for a flood, before the
// gateway inspects the repository; Submit decides atomically.
func (j *Journal) Admits(p Proposal) error {
	var n int
	if err := j.db.QueryRow(`SELECT count(*) FROM proposals WHERE agent_id = ? AND idempotency_key = ?`, p.AgentID, p.IdempotencyKey).Scan(&n); err != nil {
		return fmt.Errorf("journal: quota: %w", err)
	}
	if n > 0 {
		return nil
	}
	return j.checkQuota(j.db, p)
}

// rowQuerier is what checkQuota reads with: the database or a transaction.
type rowQuerier interface {
	QueryRow(query string, args ...any) *sql.Row
}

// checkQuota refuses p when it does not fit, inside Submit's transaction
// (BEGIN IMMEDIATE), so two concurrent proposals cannot both take the
// last place. Every count is answered from an index.
func (j *Journal) checkQuota(tx rowQuerier, p Proposal) error {
	q := j.currentQuota()
	count := func(query string, args ...any) (int64, error) {
		var n sql.NullInt64
		if err := tx.QueryRow(query, args...).Scan(&n); err != nil {
			return 0, fmt.Errorf("count for the quota: %w", err)
		}
		return n.Int64, nil
	}
	size := int64(len(p.Body))
	for _, c := range []struct {
		bound string
		limit int64
		query string
		args  []any
		bytes bool
	}{
		{"pending-per-agent", int64(q.PendingPerAgent), `SELECT count(*) FROM proposals WHERE agent_id = ? AND status = ?`, []any{p.AgentID, string(Pending)}, false},
		{"pending-total", int64(q.PendingTotal), `SELECT count(*) FROM proposals WHERE status = ?`, []any{string(Pending)}, false},
		{"bytes-per-agent", q.BytesPerAgent, `SELECT sum(body_bytes) FROM proposals WHERE agent_id = ?`, []any{p.AgentID}, true},
		{"bytes-total", q.BytesTotal, `SELECT sum(body_bytes) FROM proposals INDEXED BY proposals_agent_status_bytes`, nil, true},
	} {
		if c.limit <= 0 {
			continue
		}
		held, err := count(c.query, c.args...)
		if err != nil {
			return err
		}
		full := held >= c.limit
		if c.bytes {
			full = held+size > c.limit
		}
		if full {
			e := &QuotaError{Bound: c.bound, AgentID: p.AgentID, Limit: c.limit, Held: held}
			if c.bytes {
				e.Size = size
			}
			return e
		}
	}
	return nil
}
