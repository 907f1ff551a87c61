package journal

import (
	"database/sql"
	"fmt"
	"time"
)

// RestoreAction is a person's undo or redo of a restore point, kept in the
// journal beside the proposals so the history shows it (the audit ledger
// has the same entry, fingerprinted).
type RestoreAction struct {
	Seq int64     `json:"seq"`
	At  time.Time `json:"at"`
	// Action is "undo" or "redo".
	Action    string `json:"action"`
	RepoPath  string `json:"repoPath"`
	RestoreID string `json:"restoreId,omitempty"`
	Operation string `json:"operation,omitempty"`
	// DecidedBy is the surface the person used: "page" or "cli".
	DecidedBy string `json:"decidedBy"`
	// OK is false for a refused undo or redo; Message says what was done
	// or why it was refused.
	OK      bool   `json:"ok"`
	Message string `json:"message"`
}

// maxActionMessage bounds a stored message (git's explanation of a refusal
// can be long).
const maxActionMessage = 4096

// RecordAction appends a to the journal; Seq and, when zero, At are set
// here.
func (j *Journal) RecordAction(a RestoreAction) (RestoreAction, error) {
	if a.Action != "undo" && a.Action != "redo" {
		return a, fmt.Errorf("journal: restore action %q is not undo or redo", a.Action)
	}
	if a.At.IsZero() {
		a.At = time.Now()
	}
	if len(a.Message) > maxActionMessage {
		a.Message = a.Message[:maxActionMessage]
	}
	err := j.tx(func(tx *sql.Tx) error {
		r, err := tx.Exec(`INSERT INTO restore_actions (at, action, repo_path, restore_id, operation, decided_by, ok, message) VALUES (?,?,?,?,?,?,?,?)`,
			ms(a.At), a.Action, a.RepoPath, a.RestoreID, a.Operation, a.DecidedBy, a.OK, a.Message)
		if err != nil {
			return err
		}
		a.Seq, err = r.LastInsertId()
		return err
	})
	if err != nil {
		return a, fmt.Errorf("journal: record %s of %s: %w", a.Action, a.RepoPath, err)
	}
	return a, nil
}

// Actions returns the newest limit restore actions, newest first.
func (j *Journal) Actions(limit int) ([]RestoreAction, error) {
	rows, err := j.db.Query(`SELECT seq, at, action, repo_path, restore_id, operation, decided_by, ok, message
		FROM restore_actions ORDER BY seq DESC LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("journal: list restore actions: %w", err)
	}
	defer rows.Close()
	out := []RestoreAction{}
	for rows.Next() {
		var a RestoreAction
		var at int64
		if err := rows.Scan(&a.Seq, &at, &a.Action, &a.RepoPath, &a.RestoreID, &a.Operation, &a.DecidedBy, &a.OK, &a.Message); err != nil {
			return nil, fmt.Errorf("journal: read a restore action: %w", err)
		}
		a.At = fromMS(at)
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("journal: list restore actions: %w", err)
	}
	return out, nil
}
