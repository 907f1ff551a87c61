package journal

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	gosqlite "github.com/glebarez/go-sqlite" // registers the "sqlite" database/sql driver
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/fluxgit/fluxgit/internal/privdir"
)

// FileName is the journal's file name inside <runDir>/gateway.
const FileName = "journal.db"

// PathIn is where the gateway keeps its journal for the run directory
// runDir.
func PathIn(runDir string) string { return filepath.Join(runDir, "gateway", FileName) }

// schemaVersion is the PRAGMA user_version a fully migrated journal has.
var schemaVersion = len(migrations)

// migrations[i] brings a journal from schema version i to i+1, in the same
// transaction that sets user_version.
var migrations = []string{
	`CREATE TABLE proposals (
		id                   TEXT    NOT NULL PRIMARY KEY,
		agent_id             TEXT    NOT NULL,
		idempotency_key      TEXT    NOT NULL,
		fingerprint          TEXT    NOT NULL,
		operation_type       TEXT    NOT NULL,
		repo_path            TEXT    NOT NULL,
		reason               TEXT    NOT NULL,
		requested_at         TEXT    NOT NULL,
		created_at           INTEGER NOT NULL,
		expires_at           INTEGER NOT NULL,
		updated_at           INTEGER NOT NULL,
		status               TEXT    NOT NULL CHECK (status IN ('pending','approved','executing','completed','failed','rejected','expired','cancelled')),
		body                 TEXT    NOT NULL,
		binding              TEXT,
		review               TEXT,
		confirmations        TEXT,
		result               TEXT,
		rejection_reason     TEXT    NOT NULL DEFAULT '',
		decided_by           TEXT    NOT NULL DEFAULT '',
		decided_at           INTEGER NOT NULL DEFAULT 0,
		needs_reconciliation INTEGER NOT NULL DEFAULT 0
	);
	CREATE UNIQUE INDEX proposals_agent_key ON proposals (agent_id, idempotency_key);
	CREATE INDEX proposals_status_expiry ON proposals (status, expires_at);
	CREATE INDEX proposals_created ON proposals (created_at);
	CREATE INDEX proposals_status_created ON proposals (status, created_at);`,
	// Version 2: the size of each stored body, and an index that holds it,
	// so the intake quotas (Quota) are counted from the index alone: the
	// body itself spans overflow pages, and a new column sits after it in
	// the row.
	`ALTER TABLE proposals ADD COLUMN body_bytes INTEGER NOT NULL DEFAULT 0;
	UPDATE proposals SET body_bytes = length(CAST(body AS BLOB));
	CREATE INDEX proposals_agent_status_bytes ON proposals (agent_id, status, body_bytes);`,
	// Version 3: the undo and redo of restore points, which are the
	// person's actions on the history and not proposals (RestoreAction).
	`CREATE TABLE restore_actions (
		seq        INTEGER PRIMARY KEY AUTOINCREMENT,
		at         INTEGER NOT NULL,
		action     TEXT    NOT NULL CHECK (action IN ('undo','redo')),
		repo_path  TEXT    NOT NULL,
		restore_id TEXT    NOT NULL DEFAULT '',
		operation  TEXT    NOT NULL DEFAULT '',
		decided_by TEXT    NOT NULL,
		ok         INTEGER NOT NULL,
		message    TEXT    NOT NULL
	);
	CREATE INDEX restore_actions_at ON restore_actions (at);`,
}

// columns is the column list every read selects, in scan order.
const columns = `id, agent_id, idempotency_key, fingerprint, operation_type, repo_path, reason, requested_at,
	created_at, expires_at, updated_at, status, body, binding, review, confirmations, result,
	rejection_reason, decided_by, decided_at, needs_reconciliation`

// columnsNoBody is columns with an empty body in its place: a listing
// never copies the bodies (up to 32 MiB each) out of the database.
const columnsNoBody = `id, agent_id, idempotency_key, fingerprint, operation_type, repo_path, reason, requested_at,
	created_at, expires_at, updated_at, status, '', binding, review, confirmations, result,
	rejection_reason, decided_by, decided_at, needs_reconciliation`

// insertColumns is what Submit writes: columns and the body's size.
const insertColumns = columns + `, body_bytes`

// transitions is the lifecycle graph: the states each state may move to.
// approved → failed is a re-validation that failed before execution;
// executing → executing only flags a row for reconciliation (the server
// does that when an execution ends in a way nobody can vouch for).
var transitions = map[Status][]Status{
	Pending:   {Approved, Rejected, Expired, Cancelled},
	Approved:  {Executing, Failed},
	Executing: {Completed, Failed, Executing},
}

// Allowed reports whether the lifecycle lets a proposal move from one state
// to another.
func Allowed(from, to Status) bool { return slices.Contains(transitions[from], to) }

// ErrDuplicateID: a new proposal reuses the previewId of a proposal made
// under another agent or idempotency key.
var ErrDuplicateID = errors.New("previewId is already used by another proposal")

// Journal is an open lifecycle journal. It is safe for concurrent use.
type Journal struct {
	path string
	db   *sql.DB
	// quota bounds what Submit accepts; see SetQuota.
	quotaMu sync.Mutex
	quota   Quota
	// closeOnce makes Close idempotent for the server's shutdown paths.
	closeOnce sync.Once
	closeErr  error
}

// dsn is the driver DSN: busy_timeout and synchronous are per connection,
// so they go in the DSN that every new connection runs; _txlock=immediate
// takes the write lock at BEGIN, so a read-check-write transaction (Submit,
// Transition) can never lose a race to another writer after its check.
// No _time_format: this driver version stops parsing parameters after it.
func dsn(path string) string {
	u := url.URL{Path: filepath.ToSlash(path)}
	return "file:" + u.EscapedPath() +
		"?_pragma=busy_timeout(5000)&_pragma=synchronous(FULL)&_txlock=immediate"
}

// Open opens the journal at path, creating it (and its directory, 0700)
// when missing. The directory must be reached without symbolic links and
// be this user's alone; the file is made 0600. The journal runs in WAL mode
// with synchronous=FULL, so a committed transition survives a crash of the
// process or the machine.
func Open(path string) (*Journal, error) {
	path, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("journal path: %w", err)
	}
	if err := prepare(path); err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		return nil, fmt.Errorf("open journal %s: %w", path, err)
	}
	// One connection: the gateway is the only writer, and one connection
	// keeps every statement in order without lock waits between our own
	// connections.
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	j := &Journal{path: path, db: db}
	if err := j.init(); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open journal %s: %w", path, err)
	}
	return j, nil
}

// prepare creates the directory and an empty file with private modes. An
// existing file is never opened here: closing any descriptor of a SQLite
// file drops this process's POSIX locks on it.
func prepare(path string) error {
	dir := filepath.Dir(path)
	if err := privdir.Check(dir, privdir.Options{Label: "gateway journal directory", Create: true}); err != nil {
		var pe *privdir.Error
		if errors.As(err, &pe) {
			return fmt.Errorf("%w; %s", err, pe.Fix())
		}
		return fmt.Errorf("gateway journal directory %s: %w", dir, err)
	}
	st, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			return f.Close()
		}
		if !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("create journal %s: %w", path, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("journal %s: %w", path, err)
	case st.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("journal %s is a symbolic link; replace it with the journal file itself or move it aside", path)
	case !st.Mode().IsRegular():
		return fmt.Errorf("journal %s is not a regular file; move it aside", path)
	case st.Mode().Perm() != 0o600:
		if err := os.Chmod(path, 0o600); err != nil {
			return fmt.Errorf("journal %s has mode %04o and cannot be made 0600: %w", path, st.Mode().Perm(), err)
		}
	}
	return nil
}

func (j *Journal) init() error {
	var mode string
	if err := j.db.QueryRow("PRAGMA journal_mode = WAL").Scan(&mode); err != nil {
		return fmt.Errorf("enable WAL: %w", err)
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("cannot enable WAL journaling (journal_mode is %q); put the run directory on a local file system", mode)
	}
	var sync int
	if err := j.db.QueryRow("PRAGMA synchronous").Scan(&sync); err != nil {
		return fmt.Errorf("read synchronous: %w", err)
	}
	if sync != 2 { // FULL
		return fmt.Errorf("the SQLite driver ignored synchronous=FULL (it is %d)", sync)
	}
	err := j.tx(func(tx *sql.Tx) error {
		var v int
		if err := tx.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
			return err
		}
		if v > schemaVersion {
			return fmt.Errorf("journal schema version %d is newer than this fluxgit understands (%d); upgrade fluxgit or move the journal aside", v, schemaVersion)
		}
		for ; v < schemaVersion; v++ {
			if _, err := tx.Exec(migrations[v]); err != nil {
				return fmt.Errorf("migrate to version %d: %w", v+1, err)
			}
			// PRAGMA takes no bound parameters; v+1 is our own integer.
			if _, err := tx.Exec(fmt.Sprintf("PRAGMA user_version = %d", v+1)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	var check string
	if err := j.db.QueryRow("PRAGMA quick_check").Scan(&check); err != nil {
		return fmt.Errorf("integrity check: %w", err)
	}
	if check != "ok" {
		return fmt.Errorf("the journal is damaged (%s); move it aside to start an empty one", check)
	}
	return nil
}

// Path is the journal file.
func (j *Journal) Path() string { return j.path }

// Close checkpoints the WAL into the main file and closes the database.
func (j *Journal) Close() error {
	j.closeOnce.Do(func() { j.closeErr = j.db.Close() })
	return j.closeErr
}

// tx runs f in one write transaction (BEGIN IMMEDIATE) and commits it.
func (j *Journal) tx(f func(*sql.Tx) error) error {
	tx, err := j.db.BeginTx(context.Background(), nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := f(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// Submit inserts p as a new pending proposal, in one transaction. When the
// same AgentID and IdempotencyKey are already journalled it inserts
// nothing: with the same Fingerprint it returns that proposal and
// created=false (a replay, accepted even when the quota is full); with
// another it returns ErrKeyConflict. A previewId already used under
// another key is ErrDuplicateID; a new proposal the quota (SetQuota) has
// no room for is a *QuotaError. Status and UpdatedAt are set here;
// CreatedAt defaults to now.
func (j *Journal) Submit(p Proposal) (got Proposal, created bool, err error) {
	if err := validNew(p); err != nil {
		return Proposal{}, false, err
	}
	now := time.Now()
	p.Status = Pending
	if p.CreatedAt.IsZero() {
		p.CreatedAt = now
	}
	p.UpdatedAt = now
	err = j.tx(func(tx *sql.Tx) error {
		old, err := scanOne(tx.QueryRow(`SELECT `+columns+` FROM proposals WHERE agent_id = ? AND idempotency_key = ?`, p.AgentID, p.IdempotencyKey))
		switch {
		case err == nil:
			if old.Fingerprint != p.Fingerprint {
				return fmt.Errorf("%w (agent %s, key %s, proposal %s)", ErrKeyConflict, p.AgentID, p.IdempotencyKey, old.ID)
			}
			got = old
			return nil
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		var n int
		if err := tx.QueryRow(`SELECT count(*) FROM proposals WHERE id = ?`, p.ID).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("%w: %s", ErrDuplicateID, p.ID)
		}
		if err := j.checkQuota(tx, p); err != nil {
			return err
		}
		if _, err := tx.Exec(`INSERT INTO proposals (`+insertColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, append(values(p), len(p.Body))...); err != nil {
			return err
		}
		got, created = p, true
		return nil
	})
	if err != nil {
		return Proposal{}, false, wrap("submit", p.ID, err)
	}
	return normalise(got), created, nil
}

func validNew(p Proposal) error {
	var missing []string
	for _, f := range []struct {
		name string
		ok   bool
	}{
		{"ID", p.ID != ""},
		{"AgentID", p.AgentID != ""},
		{"IdempotencyKey", p.IdempotencyKey != ""},
		{"Fingerprint", p.Fingerprint != ""},
		{"OperationType", p.OperationType != ""},
		{"ExpiresAt", !p.ExpiresAt.IsZero()},
		{"Body", len(p.Body) > 0},
	} {
		if !f.ok {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("journal: a new proposal needs %s", strings.Join(missing, ", "))
	}
	return nil
}

// Get returns the proposal id; ErrNotFound when it was never journalled or
// has been pruned.
func (j *Journal) Get(id string) (Proposal, error) {
	p, err := scanOne(j.db.QueryRow(`SELECT `+columns+` FROM proposals WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Proposal{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return Proposal{}, wrap("get", id, err)
	}
	return p, nil
}

// where is f's WHERE clause (or "") and its arguments.
func (f Filter) where() (string, []any) {
	if len(f.Statuses) == 0 {
		return "", nil
	}
	args := make([]any, 0, len(f.Statuses))
	for _, s := range f.Statuses {
		args = append(args, string(s))
	}
	return ` WHERE status IN (?` + strings.Repeat(",?", len(f.Statuses)-1) + `)`, args
}

// List returns the page of proposals f selects: newest first (oldest
// first with f.Oldest), f.Offset rows skipped, at most f.Limit.
func (j *Journal) List(f Filter) ([]Proposal, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = 200
	}
	offset := max(f.Offset, 0)
	// The page is chosen on the narrow index alone (status, created_at,
	// rowid) and only its rows are read whole: sorting every matching row
	// with its body would cost more than the page as the journal grows.
	order := ` ORDER BY created_at DESC, rowid DESC`
	switch {
	case f.ByExpiry:
		order = ` ORDER BY expires_at ASC, rowid ASC`
	case f.Oldest:
		order = ` ORDER BY created_at ASC, rowid ASC`
	}
	where, args := f.where()
	inner := `SELECT rowid FROM proposals` + where + order + ` LIMIT ? OFFSET ?`
	args = append(args, limit, offset)
	cols := columns
	if f.WithoutBody {
		cols = columnsNoBody
	}
	q := `SELECT ` + cols + ` FROM proposals WHERE rowid IN (` + inner + `)` + order
	rows, err := j.db.Query(q, args...)
	if err != nil {
		return nil, fmt.Errorf("journal: list: %w", err)
	}
	return scanAll(rows)
}

// Count returns how many proposals f's statuses select (Limit, Offset
// and the order do not apply), for a page that says how much it leaves
// out.
func (j *Journal) Count(f Filter) (int, error) {
	where, args := f.where()
	var n int
	if err := j.db.QueryRow(`SELECT count(*) FROM proposals`+where, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("journal: count: %w", err)
	}
	return n, nil
}

// Transition moves proposal id from one of the states from to to, in one
// transaction: it reads the row, refuses with a *StateError when its state
// is not one of from, applies mut to it, and writes back the status and
// the fields mut may change (Result, RejectionReason, DecidedBy,
// DecidedAt, Confirmations, NeedsReconciliation); other changes mut makes
// are not stored. UpdatedAt is set here. A from → to pair outside the
// lifecycle (see Allowed) is a programming error and refused before the
// journal is touched.
func (j *Journal) Transition(id string, from []Status, to Status, mut func(*Proposal)) (Proposal, error) {
	if len(from) == 0 {
		return Proposal{}, fmt.Errorf("journal: transition of %s to %s names no source state", id, to)
	}
	for _, f := range from {
		if !Allowed(f, to) {
			return Proposal{}, fmt.Errorf("journal: %s → %s is not a lifecycle transition", f, to)
		}
	}
	var out Proposal
	err := j.tx(func(tx *sql.Tx) error {
		p, err := scanOne(tx.QueryRow(`SELECT `+columns+` FROM proposals WHERE id = ?`, id))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: %s", ErrNotFound, id)
		}
		if err != nil {
			return err
		}
		if !slices.Contains(from, p.Status) {
			return &StateError{ID: id, Current: p.Status, Wanted: slices.Clone(from)}
		}
		if mut != nil {
			mut(&p)
		}
		p.Status = to
		p.UpdatedAt = time.Now()
		if err := update(tx, p); err != nil {
			return err
		}
		out = p
		return nil
	})
	if err != nil {
		return Proposal{}, wrap("transition", id, err)
	}
	return normalise(out), nil
}

func update(tx *sql.Tx, p Proposal) error {
	_, err := tx.Exec(`UPDATE proposals SET status = ?, updated_at = ?, result = ?, rejection_reason = ?,
		decided_by = ?, decided_at = ?, confirmations = ?, needs_reconciliation = ? WHERE id = ?`,
		string(p.Status), ms(p.UpdatedAt), rawOrNull(p.Result), p.RejectionReason,
		p.DecidedBy, ms(p.DecidedAt), rawOrNull(p.Confirmations), p.NeedsReconciliation, p.ID)
	return err
}

// ExpireDue moves every pending proposal whose ExpiresAt is at or before
// now to expired (DecidedBy "gateway", DecidedAt now), in one transaction,
// and returns the proposals it expired.
func (j *Journal) ExpireDue(now time.Time) ([]Proposal, error) {
	var out []Proposal
	err := j.tx(func(tx *sql.Tx) error {
		rows, err := tx.Query(`SELECT `+columns+` FROM proposals WHERE status = ? AND expires_at <= ? ORDER BY expires_at`, string(Pending), ms(now))
		if err != nil {
			return err
		}
		due, err := scanAll(rows)
		if err != nil {
			return err
		}
		upd := time.Now()
		for _, p := range due {
			p.Status, p.DecidedBy, p.DecidedAt, p.UpdatedAt = Expired, "gateway", now, upd
			if err := update(tx, p); err != nil {
				return err
			}
			out = append(out, normalise(p))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("journal: expire: %w", err)
	}
	return out, nil
}

// Prune deletes terminal proposals last updated before before and returns
// how many it deleted. Pending, approved and executing proposals are never
// pruned, however old.
func (j *Journal) Prune(before time.Time) (int, error) {
	var n int64
	err := j.tx(func(tx *sql.Tx) error {
		r, err := tx.Exec(`DELETE FROM proposals WHERE status IN (?,?,?,?,?) AND updated_at < ?`,
			string(Completed), string(Failed), string(Rejected), string(Expired), string(Cancelled), ms(before))
		if err != nil {
			return err
		}
		n, err = r.RowsAffected()
		if err != nil {
			return err
		}
		_, err = tx.Exec(`DELETE FROM restore_actions WHERE at < ?`, ms(before))
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("journal: prune: %w", err)
	}
	return int(n), nil
}

// Startup is called once when the gateway starts, before it serves. A
// proposal still executing was interrupted mid-operation: it is flagged
// NeedsReconciliation (its state unchanged) so that a person settles it
// and it never runs again by itself. Startup returns the approved
// proposals, which must be re-validated before they run, and every
// executing proposal needing reconciliation, oldest first.
func (j *Journal) Startup() (approved, reconcile []Proposal, err error) {
	err = j.tx(func(tx *sql.Tx) error {
		if _, err := tx.Exec(`UPDATE proposals SET needs_reconciliation = 1, updated_at = ? WHERE status = ? AND needs_reconciliation = 0`,
			ms(time.Now()), string(Executing)); err != nil {
			return err
		}
		rows, err := tx.Query(`SELECT `+columns+` FROM proposals WHERE status = ? ORDER BY created_at, rowid`, string(Approved))
		if err != nil {
			return err
		}
		if approved, err = scanAll(rows); err != nil {
			return err
		}
		rows, err = tx.Query(`SELECT `+columns+` FROM proposals WHERE status = ? ORDER BY created_at, rowid`, string(Executing))
		if err != nil {
			return err
		}
		reconcile, err = scanAll(rows)
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("journal: startup: %w", err)
	}
	return approved, reconcile, nil
}

// wrap adds context to an error, leaving the sentinel and *StateError
// reachable with errors.Is / errors.As and their messages first.
func wrap(op, id string, err error) error {
	var se *StateError
	var qe *QuotaError
	if errors.Is(err, ErrKeyConflict) || errors.Is(err, ErrNotFound) || errors.Is(err, ErrDuplicateID) || errors.As(err, &se) || errors.As(err, &qe) {
		return err
	}
	var sqErr *gosqlite.Error
	if errors.As(err, &sqErr) && sqErr.Code()&0xff == sqlite3.SQLITE_BUSY {
		return fmt.Errorf("journal: %s %s: the journal is locked by another process (another fluxgit gateway on this run directory?): %w", op, id, err)
	}
	return fmt.Errorf("journal: %s %s: %w", op, id, err)
}
