package journal

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
)

// ms stores a time as Unix milliseconds; the zero time is 0.
func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// fromMS is the inverse of ms, in UTC.
func fromMS(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}

func rawOrNull(r json.RawMessage) any {
	if len(r) == 0 {
		return nil
	}
	return string(r)
}

func rawOf(s sql.NullString) json.RawMessage {
	if !s.Valid {
		return nil
	}
	return json.RawMessage(s.String)
}

// normalise gives a proposal built in memory the form a read returns:
// times at millisecond precision in UTC.
func normalise(p Proposal) Proposal {
	p.CreatedAt = fromMS(ms(p.CreatedAt))
	p.ExpiresAt = fromMS(ms(p.ExpiresAt))
	p.UpdatedAt = fromMS(ms(p.UpdatedAt))
	p.DecidedAt = fromMS(ms(p.DecidedAt))
	return p
}

// values are p's columns in the order of columns.
func values(p Proposal) []any {
	return []any{
		p.ID, p.AgentID, p.IdempotencyKey, p.Fingerprint, p.OperationType, p.RepoPath, p.Reason, p.RequestedAt,
		ms(p.CreatedAt), ms(p.ExpiresAt), ms(p.UpdatedAt), string(p.Status), string(p.Body),
		rawOrNull(p.Binding), rawOrNull(p.Review), rawOrNull(p.Confirmations), rawOrNull(p.Result),
		p.RejectionReason, p.DecidedBy, ms(p.DecidedAt), p.NeedsReconciliation,
	}
}

type scanner interface{ Scan(dest ...any) error }

func scanOne(s scanner) (Proposal, error) {
	var (
		p                                   Proposal
		created, expires, updated, decided  int64
		status, body                        string
		binding, review, confirmations, res sql.NullString
	)
	err := s.Scan(&p.ID, &p.AgentID, &p.IdempotencyKey, &p.Fingerprint, &p.OperationType, &p.RepoPath, &p.Reason, &p.RequestedAt,
		&created, &expires, &updated, &status, &body, &binding, &review, &confirmations, &res,
		&p.RejectionReason, &p.DecidedBy, &decided, &p.NeedsReconciliation)
	if err != nil {
		return Proposal{}, err
	}
	p.CreatedAt, p.ExpiresAt, p.UpdatedAt, p.DecidedAt = fromMS(created), fromMS(expires), fromMS(updated), fromMS(decided)
	p.Status = Status(status)
	p.Body = json.RawMessage(body)
	p.Binding, p.Review, p.Confirmations, p.Result = rawOf(binding), rawOf(review), rawOf(confirmations), rawOf(res)
	return p, nil
}

func scanAll(rows *sql.Rows) ([]Proposal, error) {
	defer rows.Close()
	var out []Proposal
	for rows.Next() {
		p, err := scanOne(rows)
		if err != nil {
			return nil, fmt.Errorf("read proposal row: %w", err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read proposal rows: %w", err)
	}
	return out, nil
}
