package roster

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	gosqlite "github.com/glebarez/go-sqlite"
	"github.com/glebarez/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/fluxgit/fluxgit/internal/privdir"
)

// DefaultBudget is how long one open, or one mutation, may wait for the
// roster lock before it fails as store_busy.
const DefaultBudget = 3 * time.Second

// Row is one active worker session as tools and resources show it; it is
// the shape schemas/roster-row.schema.json describes.
type Row struct {
	WorkerID    string   `json:"workerId"`
	Gist        string   `json:"gist"`
	Files       []string `json:"files"`
	CheckedInAt string   `json:"checkedInAt"`
	UpdatedAt   string   `json:"updatedAt"`
	// Clipped marks a row stored beyond today's bounds (by an older
	// version or another program): its gist and file entries are cut to
	// MaxGistLen and MaxFileLen and its files to the first MaxFiles.
	Clipped bool `json:"clipped,omitempty"`
	// Leases are the worker's claims on some of its files.
	Leases []Lease `json:"leases,omitempty"`
	// Agent is who checked the worker in, when known. It is kept out of
	// replies (it would cost every row tokens and differ per machine); the
	// guard, liveness and presence read it.
	Agent *Agent `json:"-"`
	// Stale: no live lease and its fluxgit process is gone.
	Stale bool `json:"stale,omitempty"`
	// stored are the leases as stored (with their lengths), for renewal.
	stored []storedLease
}

// Totals count a workspace's whole roster. A reply may list fewer rows
// (see Listing), and a clipped row lists fewer files than it declared.
type Totals struct {
	Workers int `gorm:"column:workers"`
	Files   int `gorm:"column:files"`
}

// workerRecord is the GORM model of the workers table.
type workerRecord struct {
	WorkerID    string `gorm:"column:worker_id;primaryKey"`
	Workspace   string `gorm:"column:workspace"`
	Gist        string `gorm:"column:gist"`
	Files       string `gorm:"column:files"` // JSON array of strings
	CheckedInAt string `gorm:"column:checked_in_at"`
	Updated     string `gorm:"column:updated_at;autoUpdateTime:false"`
	Leases      string `gorm:"column:leases"` // JSON array of storedLease
	Agent       string `gorm:"column:agent"`  // JSON Agent
}

func (workerRecord) TableName() string { return "workers" }

// timeLayout is the stored and returned timestamp form: RFC 3339 in UTC
// with milliseconds, like JavaScript's toISOString. Equal layouts sort as
// strings, which the roster order relies on.
const timeLayout = "2006-01-02T15:04:05.000Z"

// migrations[i] brings a database from schema version i to i+1; the
// version lives in PRAGMA user_version and changes in the same
// transaction as the migration.
var migrations = []string{
	// 1: the roster. worker_id is globally unique among active sessions,
	// so an id never means two sessions, even across workspaces.
	`CREATE TABLE workers (
		worker_id     TEXT NOT NULL PRIMARY KEY CHECK (length(worker_id) = 6 AND worker_id = upper(worker_id)),
		workspace     TEXT NOT NULL,
		gist          TEXT NOT NULL,
		files         TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(files) AND json_type(files) = 'array'),
		checked_in_at TEXT NOT NULL,
		updated_at    TEXT NOT NULL
	) STRICT;
	CREATE INDEX workers_by_workspace ON workers (workspace, checked_in_at, worker_id);`,
	// 2: file leases and the agent that checked the worker in.
	`ALTER TABLE workers ADD COLUMN leases TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(leases) AND json_type(leases) = 'array');
	ALTER TABLE workers ADD COLUMN agent TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(agent) AND json_type(agent) = 'object');`,
}

// SchemaVersion is the schema version this build writes.
var SchemaVersion = len(migrations)

// Store reasons: the data.reason of the tool error a StoreError becomes.
const (
	ReasonBusy         = "store_busy"
	ReasonCorrupt      = "store_corrupt"
	ReasonReadOnly     = "store_readonly"
	ReasonUnavailable  = "store_unavailable"
	ReasonIncompatible = "store_incompatible"
	// ReasonUnsafe: the state directory (or the database in it) could be
	// read or replaced by someone else: a symbolic link on the way, group
	// or world permissions, or another owner.
	ReasonUnsafe = "state_dir_unsafe"
)

// StoreError is a roster store failure with the reason an agent (or its
// user) needs to fix it. It is never papered over with in-memory state.
type StoreError struct {
	Reason string // one of the Reason constants
	// Backend is BackendPostgres for the PostgreSQL roster; empty means
	// SQLite.
	Backend string
	Op      string // "open", "check-in", "check-out", "read"
	Dir     string // state directory
	Path    string // database file
	Err     error
	// Fix, when set, is how to repair the state directory.
	Fix string
}

func (e *StoreError) Error() string {
	return fmt.Sprintf("shift-roster %s: %s: %s: %v", e.Op, e.Reason, e.Path, e.Err)
}

func (e *StoreError) Unwrap() error { return e.Err }

// Options tune a Store; the zero value is the production setting.
type Options struct {
	// Budget bounds the lock wait of an open and of each operation;
	// zero means DefaultBudget.
	Budget time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// TxHook, when set (tests only), runs inside every write transaction:
	// with stage "begin" before its first statement and with stage
	// "commit" after its mutation, just before the commit. Tests of the
	// provider use it to hold a transaction open or die inside it.
	TxHook func(op, stage string)
}

// SQLite is the SQLite roster shared by every process of one OS user that
// uses the same state directory.
type SQLite struct {
	dir, path string
	db        *gorm.DB
	sqlDB     *sql.DB
	budget    time.Duration
	now       func() time.Time
	// writers serializes this process's writers before they queue on the
	// SQLite lock; the wait counts against the same budget.
	writers chan struct{}
	// hookTx, when set (tests only), runs inside every write transaction:
	// with stage "begin" before its first statement and with stage
	// "commit" after its mutation, just before the commit.
	hookTx func(op, stage string)
}

// dsn builds the driver DSN. busy_timeout is set again before every
// transaction (see busySlice). Deliberately no _time_format:
// glebarez/go-sqlite v1.21.2 stops parsing parameters after it, so
// _txlock=immediate would be dropped silently and writers would take the
// lock at their first write instead of at BEGIN (TestTimeFormatDropsTxlock
// pins this down).
// Open also verifies the lock mode at run time.
func dsn(path string) string {
	u := url.URL{Path: path}
	return "file:" + u.EscapedPath() +
		"?_pragma=busy_timeout(3000)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)&_txlock=immediate"
}

// Open opens (creating if needed) roster.sqlite in dir. The directory is
// created 0700 and the database 0600 when they do not exist yet. Lock
// contention is retried for at most the budget; a busy, corrupt or
// read-only store is a *StoreError.
func Open(ctx context.Context, dir string, opts Options) (*SQLite, error) {
	s := &SQLite{dir: dir, path: filepath.Join(dir, DatabaseName), budget: opts.Budget, now: opts.Now, writers: make(chan struct{}, 1), hookTx: opts.TxHook}
	if s.budget <= 0 {
		s.budget = DefaultBudget
	}
	if s.now == nil {
		s.now = time.Now
	}
	if err := s.prepareFiles(); err != nil {
		return nil, err
	}
	db, err := gorm.Open(sqlite.Open(dsn(s.path)), &gorm.Config{
		// GORM's default logger writes to stdout, which belongs to the
		// go-plugin handshake in a provider process.
		Logger:                 logger.Discard,
		SkipDefaultTransaction: true,
	})
	if err != nil {
		if db != nil && db.ConnPool != nil {
			if sqlDB, derr := db.DB(); derr == nil {
				_ = sqlDB.Close()
			}
		}
		return nil, s.classify("open", err)
	}
	s.db = db
	s.sqlDB, err = db.DB()
	if err != nil {
		return nil, s.classify("open", err)
	}
	s.sqlDB.SetMaxOpenConns(4)
	s.sqlDB.SetMaxIdleConns(4)
	if err := s.initialize(ctx); err != nil {
		_ = s.sqlDB.Close()
		return nil, err
	}
	return s, nil
}

// Close releases the database handle.
func (s *SQLite) Close() error { return s.sqlDB.Close() }

// Path is the database file.
func (s *SQLite) Path() string { return s.path }

// prepareFiles creates the directory and the database file with private
// permissions and refuses a state directory this process cannot write,
// before SQLite gets a chance to fail with a vaguer message. It never
// opens an existing database file: closing any descriptor of a SQLite file
// drops this process's locks on it.
func (s *SQLite) prepareFiles() error {
	fail := func(reason string, err error) error {
		return &StoreError{Reason: reason, Op: "open", Dir: s.dir, Path: s.path, Err: err}
	}
	// The directory is checked like the audit ledger's: reached without
	// symbolic links and ours. Others may read it (the database itself is
	// 0600) but never write it, or they could swap the roster under us.
	if err := privdir.Check(s.dir, privdir.Options{Label: "roster state directory", Create: true, Forbidden: 0o022}); err != nil {
		var pe *privdir.Error
		if errors.As(err, &pe) {
			reason := ReasonUnsafe
			if pe.Problem == privdir.NotDirectory {
				reason = ReasonUnavailable
			}
			return &StoreError{Reason: reason, Op: "open", Dir: s.dir, Path: s.path, Err: err, Fix: pe.Fix()}
		}
		return fail(fsReason(err), fmt.Errorf("cannot create the state directory: %w", err))
	}
	if err := writable(s.dir); err != nil {
		return fail(fsReason(err), fmt.Errorf("state directory is not writable (SQLite needs to create its -wal and -shm files there): %w", err))
	}
	st, err := os.Lstat(s.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		f, err := os.OpenFile(s.path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			return f.Close() // new and empty: nobody holds locks on it yet
		}
		if !errors.Is(err, fs.ErrExist) { // else another process just created it
			return fail(fsReason(err), fmt.Errorf("cannot create the database: %w", err))
		}
	case err != nil:
		return fail(fsReason(err), err)
	case st.Mode()&fs.ModeSymlink != 0:
		return &StoreError{Reason: ReasonUnsafe, Op: "open", Dir: s.dir, Path: s.path,
			Err: fmt.Errorf("%s is a symbolic link; the roster database is never reached through links", s.path),
			Fix: "Replace the link " + s.path + " with the database file itself, or move it aside to start an empty roster."}
	case !st.Mode().IsRegular():
		return fail(ReasonUnavailable, fmt.Errorf("%s is not a regular file", s.path))
	default:
		if err := ownedByMe(st); err != nil {
			return &StoreError{Reason: ReasonUnsafe, Op: "open", Dir: s.dir, Path: s.path, Err: fmt.Errorf("%s: %w", s.path, err),
				Fix: "Move " + s.path + " aside (the next call starts an empty roster), or use a state directory of your own."}
		}
		if err := writable(s.path); err != nil {
			return fail(fsReason(err), fmt.Errorf("database file is not writable: %w", err))
		}
	}
	return nil
}

func fsReason(err error) string {
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) || errors.Is(err, syscall.EPERM) {
		return ReasonReadOnly
	}
	return ReasonUnavailable
}

// errTxLockIgnored means the driver started a write transaction without
// taking the write lock: serializing writers would silently fail.
var errTxLockIgnored = errors.New("the SQLite driver ignored _txlock=immediate: a write transaction did not take the write lock at BEGIN")

// initialize switches to WAL, migrates, checks integrity and proves that
// write transactions lock at BEGIN, retrying lock contention within the
// budget.
func (s *SQLite) initialize(ctx context.Context) error {
	deadline := time.Now().Add(s.budget)
	return s.retry(ctx, "open", deadline, func() error {
		return s.db.WithContext(ctx).Connection(func(c *gorm.DB) error {
			if err := setBusyTimeout(c, deadline); err != nil {
				return err
			}
			var mode string
			if err := c.Raw("PRAGMA journal_mode = WAL").Scan(&mode).Error; err != nil {
				return err
			}
			if !strings.EqualFold(mode, "wal") {
				return &StoreError{Reason: ReasonUnavailable, Op: "open", Dir: s.dir, Path: s.path,
					Err: fmt.Errorf("cannot enable WAL journaling (journal_mode is %q); use a local file system that supports SQLite locking", mode)}
			}
			if err := c.Transaction(s.migrate); err != nil {
				return err
			}
			if err := s.quickCheck(c); err != nil {
				return err
			}
			return s.verifyImmediate(c)
		})
	})
}

func (s *SQLite) migrate(tx *gorm.DB) error {
	var version int
	if err := tx.Raw("PRAGMA user_version").Scan(&version).Error; err != nil {
		return err
	}
	if version > len(migrations) {
		return &StoreError{Reason: ReasonIncompatible, Op: "open", Dir: s.dir, Path: s.path,
			Err: fmt.Errorf("roster schema version %d is newer than this fluxgit understands (%d); upgrade fluxgit or use another SHIFT_STATE_DIR", version, len(migrations))}
	}
	for v := version; v < len(migrations); v++ {
		if err := tx.Exec(migrations[v]).Error; err != nil {
			return err
		}
		// PRAGMA takes no bound parameters; v+1 is our own integer.
		if err := tx.Exec(fmt.Sprintf("PRAGMA user_version = %d", v+1)).Error; err != nil {
			return err
		}
	}
	return nil
}

func (s *SQLite) quickCheck(c *gorm.DB) error {
	var lines []string
	if err := c.Raw("PRAGMA quick_check").Scan(&lines).Error; err != nil {
		return err
	}
	if len(lines) == 1 && lines[0] == "ok" {
		return nil
	}
	return &StoreError{Reason: ReasonCorrupt, Op: "open", Dir: s.dir, Path: s.path,
		Err: fmt.Errorf("integrity check failed: %s", strings.Join(lines, "; "))}
}

// verifyImmediate opens a write transaction and, before it runs any
// statement, tries BEGIN IMMEDIATE on a second connection without waiting.
// That must fail with SQLITE_BUSY: otherwise the driver dropped _txlock.
func (s *SQLite) verifyImmediate(c *gorm.DB) error {
	return c.Transaction(func(*gorm.DB) error {
		return s.db.Connection(func(other *gorm.DB) error {
			if err := other.Exec("PRAGMA busy_timeout = 0").Error; err != nil {
				return err
			}
			err := other.Exec("BEGIN IMMEDIATE").Error
			if err == nil {
				_ = other.Exec("ROLLBACK").Error
				return &StoreError{Reason: ReasonUnavailable, Op: "open", Dir: s.dir, Path: s.path, Err: errTxLockIgnored}
			}
			if sqliteCode(err)&0xff == sqlite3.SQLITE_BUSY {
				return nil
			}
			return err
		})
	})
}

// busySlice caps how long SQLite's own busy handler waits in one attempt.
// Its back-off grows to 100 ms sleeps, so a process that has waited long
// polls rarely and loses the lock to newcomers again and again; short
// slices plus retry keep every waiter polling at a few milliseconds,
// which is what keeps the tail under contention far inside the budget.
const busySlice = 20 * time.Millisecond

func setBusyTimeout(c *gorm.DB, deadline time.Time) error {
	ms := min(time.Until(deadline), busySlice).Milliseconds()
	if ms < 1 {
		ms = 1
	}
	return c.Exec(fmt.Sprintf("PRAGMA busy_timeout = %d", ms)).Error
}

// retry runs fn until it succeeds, fails with something other than lock
// contention, or the deadline passes. Each attempt lets SQLite's busy
// handler wait for at most busySlice; lock contention then rolls the
// attempt back and it starts again after a short random pause, so fn must
// have no effects outside its transaction.
func (s *SQLite) retry(ctx context.Context, op string, deadline time.Time, fn func() error) error {
	var err error
	for attempt := 0; ; attempt++ {
		err = fn()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var (
			se *StoreError
			uw *UnknownWorkerError
			ce *ClaimError
		)
		if errors.As(err, &se) || errors.As(err, &uw) || errors.As(err, &ce) {
			return err
		}
		if !isBusy(err) {
			return s.classify(op, err)
		}
		left := time.Until(deadline)
		if left <= 0 {
			return s.busy(op, err)
		}
		pause := min(time.Duration(100+rand.IntN(1900))*time.Microsecond, left)
		select {
		case <-time.After(pause):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (s *SQLite) busy(op string, err error) error {
	return &StoreError{Reason: ReasonBusy, Op: op, Dir: s.dir, Path: s.path,
		Err: fmt.Errorf("the roster stayed locked for the whole %s budget: %w", s.budget, err)}
}

// sqliteCode is the (extended) SQLite result code in err, or 0.
func sqliteCode(err error) int {
	var e *gosqlite.Error
	if errors.As(err, &e) {
		return e.Code()
	}
	return 0
}

func isBusy(err error) bool {
	switch sqliteCode(err) & 0xff {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return true
	}
	return false
}

// classify turns a driver or file-system error into a StoreError. Errors
// the store raised itself, the caller's cancellation and domain errors pass
// through unchanged.
func (s *SQLite) classify(op string, err error) error {
	var se *StoreError
	if err == nil || errors.As(err, &se) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	reason := ReasonUnavailable
	switch code := sqliteCode(err); code & 0xff {
	case 0:
		switch {
		case errors.Is(err, errBadRow):
			reason = ReasonCorrupt
		case errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS):
			reason = ReasonReadOnly
		}
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return s.busy(op, err)
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		reason = ReasonCorrupt
		err = fmt.Errorf("the roster database is damaged or not a SQLite database (move it aside to start an empty roster): %w", err)
	case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM, sqlite3.SQLITE_AUTH:
		reason = ReasonReadOnly
	case sqlite3.SQLITE_CANTOPEN:
		if writable(s.dir) != nil {
			reason = ReasonReadOnly
		}
	}
	return &StoreError{Reason: reason, Op: op, Dir: s.dir, Path: s.path, Err: err}
}

// read runs fn in a deferred (read-only) transaction: one consistent
// snapshot of what every process has committed.
func (s *SQLite) read(ctx context.Context, op string, fn func(tx *gorm.DB) error) error {
	deadline := time.Now().Add(s.budget)
	return s.retry(ctx, op, deadline, func() error {
		return s.db.WithContext(ctx).Connection(func(c *gorm.DB) error {
			if err := setBusyTimeout(c, deadline); err != nil {
				return err
			}
			return c.Transaction(fn, &sql.TxOptions{ReadOnly: true})
		})
	})
}

// write runs fn in one BEGIN IMMEDIATE transaction: the write lock is held
// from BEGIN, so everything fn reads is still true when it commits.
func (s *SQLite) write(ctx context.Context, op string, fn func(tx *gorm.DB) error) error {
	deadline := time.Now().Add(s.budget)
	wait, cancel := context.WithDeadline(ctx, deadline)
	select {
	case s.writers <- struct{}{}:
		cancel()
	case <-wait.Done():
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return s.busy(op, errors.New("other writers in this process held it"))
	}
	defer func() { <-s.writers }()
	return s.retry(ctx, op, deadline, func() error {
		return s.db.WithContext(ctx).Connection(func(c *gorm.DB) error {
			if err := setBusyTimeout(c, deadline); err != nil {
				return err
			}
			return c.Transaction(func(tx *gorm.DB) error {
				if s.hookTx != nil {
					s.hookTx(op, "begin")
				}
				if err := fn(tx); err != nil {
					return err
				}
				if s.hookTx != nil {
					s.hookTx(op, "commit")
				}
				return nil
			})
		})
	})
}

// UnknownWorkerError is a check-in naming a worker id that has no active
// session in the workspace. Workers is the roster read in the same
// transaction.
type UnknownWorkerError struct {
	WorkerID  string
	Workspace string
	Workers   []Row
	Totals    Totals
}

func (e *UnknownWorkerError) Error() string {
	return fmt.Sprintf("worker %s has no active session in workspace %q", e.WorkerID, e.Workspace)
}

// CheckInInput is one check-in. An empty WorkerID starts a new session.
type CheckInInput struct {
	Workspace string
	WorkerID  string
	Gist      string
	// Files replaces the declared files when HasFiles; otherwise the
	// stored files are kept (a new session starts with none).
	Files    []string
	HasFiles bool
	// Claims, when HasClaims, replace the leases: file -> Shared or
	// Exclusive, every file one of the session's files. Otherwise the
	// stored leases are kept (those still among the files) and renewed.
	Claims    map[string]string
	HasClaims bool
	// LeaseFor is the length of new leases; zero means DefaultLease.
	LeaseFor time.Duration
	// Agent is who makes this check-in; it is recorded on the row.
	Agent Agent
}

// Change says what a check-in did.
type Change string

const (
	Created   Change = "created"
	Updated   Change = "updated"
	Unchanged Change = "unchanged"
)

// CheckInResult is the session after a check-in and the workspace's roster
// in the same transaction.
type CheckInResult struct {
	Session Row
	Change  Change
	// Workers are the oldest MaxListedWorkers rows; Totals count them all.
	Workers []Row
	Totals  Totals
}

// maxIDAttempts bounds id allocation; with 36^6 ids a collision is rare
// and many in a row mean something is wrong.
const maxIDAttempts = 64

// CheckIn registers a new session or patches an existing one: the gist is
// replaced, the files only when given, checkedInAt is kept. A patch that
// changes nothing writes nothing.
func (s *SQLite) CheckIn(ctx context.Context, in CheckInInput) (*CheckInResult, error) {
	if in.Files == nil {
		in.Files = []string{}
	}
	filesJSON, err := json.Marshal(in.Files)
	if err != nil {
		return nil, err
	}
	var res CheckInResult
	err = s.write(ctx, "check-in", func(tx *gorm.DB) error {
		// This may run again after a busy rollback: keep it free of
		// side effects outside the transaction.
		res = CheckInResult{}
		id := in.WorkerID
		t := s.now()
		now := t.UTC().Format(timeLayout)
		agentJSON, err := encodeAgent(in.Agent)
		if err != nil {
			return err
		}
		if id != "" {
			old, found, err := sessionTx(tx, in.Workspace, id)
			if err != nil {
				return err
			}
			if !found {
				workers, totals, err := listTx(tx, in.Workspace)
				if err != nil {
					return err
				}
				markTimes(workers, t)
				return &UnknownWorkerError{WorkerID: id, Workspace: in.Workspace, Workers: workers, Totals: totals}
			}
			plan, err := planPatch(old, in, t)
			if err != nil {
				return err
			}
			leases, changed := plan.leases, plan.changed
			upd := map[string]any{}
			if changed {
				upd["gist"], upd["updated_at"] = in.Gist, now
				if in.HasFiles || old.Clipped {
					fj := filesJSON
					if !in.HasFiles {
						// Keep what the old row declared, within today's bounds.
						if fj, err = json.Marshal(old.Files); err != nil {
							return err
						}
					}
					upd["files"] = string(fj)
				}
			}
			// Leases are renewed by every check-in, a change or not.
			if changed || len(leases) > 0 || len(old.stored) > 0 {
				if upd["leases"], err = encodeLeases(leases); err != nil {
					return err
				}
			}
			if plan.agent {
				upd["agent"] = agentJSON
			}
			if len(upd) > 0 {
				if err := tx.Model(&workerRecord{}).Where("worker_id = ? AND workspace = ?", id, in.Workspace).Updates(upd).Error; err != nil {
					return err
				}
			}
			res.Change = Unchanged
			if changed {
				res.Change = Updated
			}
		} else {
			leases, _, err := planLeases(nil, in.Files, in, t)
			if err != nil {
				return err
			}
			leasesJSON, err := encodeLeases(leases)
			if err != nil {
				return err
			}
			if id, err = allocateID(tx); err != nil {
				return err
			}
			rec := workerRecord{WorkerID: id, Workspace: in.Workspace, Gist: in.Gist, Files: string(filesJSON), CheckedInAt: now, Updated: now, Leases: leasesJSON, Agent: agentJSON}
			if err := tx.Create(&rec).Error; err != nil {
				return err
			}
			res.Change = Created
		}
		session, found, err := sessionTx(tx, in.Workspace, id)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("worker %s vanished inside its own transaction", id)
		}
		markRow(&session, t)
		res.Session = session
		res.Workers, res.Totals, err = listTx(tx, in.Workspace)
		markTimes(res.Workers, t)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &res, nil
}

func allocateID(tx *gorm.DB) (string, error) {
	for range maxIDAttempts {
		id, err := NewWorkerID()
		if err != nil {
			return "", err
		}
		var n int64
		if err := tx.Model(&workerRecord{}).Where("worker_id = ?", id).Count(&n).Error; err != nil {
			return "", err
		}
		if n == 0 {
			return id, nil
		}
	}
	return "", fmt.Errorf("no free worker id after %d attempts", maxIDAttempts)
}

// CheckOutResult is the outcome of a check-out and the roster after it.
type CheckOutResult struct {
	Removed bool
	Workers []Row
	Totals  Totals
}

// CheckOut ends a session. An id without a session in the workspace is not
// an error: Removed is false and nothing changes.
func (s *SQLite) CheckOut(ctx context.Context, workspace, workerID string) (*CheckOutResult, error) {
	var res CheckOutResult
	err := s.write(ctx, "check-out", func(tx *gorm.DB) error {
		del := tx.Where("worker_id = ? AND workspace = ?", workerID, workspace).Delete(&workerRecord{})
		if del.Error != nil {
			return del.Error
		}
		workers, totals, err := listTx(tx, workspace)
		markTimes(workers, s.now())
		res = CheckOutResult{Removed: del.RowsAffected > 0, Workers: workers, Totals: totals}
		return err
	})
	if err != nil {
		return nil, err
	}
	return &res, nil
}

// List returns the active workers of a workspace, oldest check-in first,
// at most MaxListedWorkers of them (see Snapshot for the totals).
func (s *SQLite) List(ctx context.Context, workspace string) ([]Row, error) {
	rows, _, err := s.Snapshot(ctx, workspace)
	return rows, err
}

// Snapshot returns the oldest MaxListedWorkers active workers of a
// workspace and the totals of all of them, read in one transaction.
func (s *SQLite) Snapshot(ctx context.Context, workspace string) ([]Row, Totals, error) {
	var (
		rows   []Row
		totals Totals
	)
	err := s.read(ctx, "read", func(tx *gorm.DB) error {
		var err error
		rows, totals, err = listTx(tx, workspace)
		markTimes(rows, s.now())
		return err
	})
	return rows, totals, err
}

// Workspaces returns the names of the workspaces that have active
// workers, sorted, at most limit of them.
func (s *SQLite) Workspaces(ctx context.Context, limit int) ([]string, error) {
	var names []string
	err := s.read(ctx, "list workspaces", func(tx *gorm.DB) error {
		return tx.Model(&workerRecord{}).Distinct("workspace").Order("workspace").Limit(limit).Pluck("workspace", &names).Error
	})
	return names, err
}

// boundedRows selects rows with every stored value cut near today's
// bounds inside SQLite, so a row written by an older version or another
// program (a 12 MB files list, say) never reaches rendering whole: reads
// stay bounded whatever the table holds. The gist comes back as at most
// gistBytes bytes (SQLite's text functions stop at a NUL; blob ones do
// not), and a files list whose JSON is longer than any row within today's
// bounds can be comes back as its first MaxFiles entries, each cut to
// MaxFileLen characters, with files_over set. boundedRecord.row finishes
// the job in characters. The caller appends the WHERE condition.
const boundedRows = `SELECT w.worker_id AS worker_id,
	substr(CAST(w.gist AS BLOB), 1, ?) AS gist,
	CASE WHEN length(CAST(w.files AS BLOB)) <= ? THEN w.files ELSE
	  (SELECT json_group_array(substr(CAST(f.value AS TEXT), 1, ?))
	     FROM (SELECT value FROM json_each(w.files) ORDER BY key LIMIT ?) AS f) END AS files,
	length(CAST(w.files AS BLOB)) > ? AS files_over,
	substr(w.checked_in_at, 1, 24) AS checked_in_at,
	substr(w.updated_at, 1, 24) AS updated_at,
	` + boundedExtras + `
	FROM workers AS w `

// boundedExtras reads the leases and agent columns (schema version 2),
// each replaced by an empty value when longer than any row within today's
// bounds can hold. boundedExtrasV1 stands in for them on a version 1
// roster that a read-only reader cannot migrate.
const (
	boundedExtras = `CASE WHEN length(CAST(w.leases AS BLOB)) <= ? THEN w.leases ELSE '[]' END AS leases,
	CASE WHEN length(CAST(w.agent AS BLOB)) <= ? THEN w.agent ELSE '{}' END AS agent`
	boundedExtrasV1 = `CASE WHEN ? THEN '[]' END AS leases, CASE WHEN ? THEN '{}' END AS agent`
)

// gistBytes holds MaxGistLen characters of any UTF-8 text plus one more
// character, so a longer gist is recognised as longer.
const gistBytes = 4*MaxGistLen + 4

// filesJSONBytes is the longest JSON a files list within today's bounds
// can have: every character escaped as \u00XX (6 bytes), quotes, commas
// and brackets.
const filesJSONBytes = MaxFiles*(6*MaxFileLen+3) + 2

func boundedArgs(args ...any) []any {
	return append([]any{gistBytes, filesJSONBytes, MaxFileLen, MaxFiles, filesJSONBytes, maxLeasesJSON, maxAgentJSON}, args...)
}

// boundedRecord is one row of boundedRows.
type boundedRecord struct {
	WorkerID    string `gorm:"column:worker_id"`
	Gist        []byte `gorm:"column:gist"`
	Files       string `gorm:"column:files"`
	FilesOver   bool   `gorm:"column:files_over"`
	CheckedInAt string `gorm:"column:checked_in_at"`
	Updated     string `gorm:"column:updated_at"`
	Leases      string `gorm:"column:leases"`
	Agent       string `gorm:"column:agent"`
}

// sessionTx reads one session, bounded like every listed row.
func sessionTx(tx *gorm.DB, workspace, id string) (Row, bool, error) {
	var recs []boundedRecord
	if err := tx.Raw(boundedRows+"WHERE w.worker_id = ? AND w.workspace = ?", boundedArgs(id, workspace)...).Scan(&recs).Error; err != nil {
		return Row{}, false, err
	}
	if len(recs) == 0 {
		return Row{}, false, nil
	}
	row, err := recs[0].row()
	return row, true, err
}

// listTx reads the oldest MaxListedWorkers rows of a workspace and the
// totals of all its rows.
func listTx(tx *gorm.DB, workspace string) ([]Row, Totals, error) {
	var totals Totals
	if err := tx.Raw(`SELECT count(*) AS workers, coalesce(sum(json_array_length(files)), 0) AS files FROM workers WHERE workspace = ?`, workspace).Scan(&totals).Error; err != nil {
		return nil, Totals{}, err
	}
	var recs []boundedRecord
	q := boundedRows + "WHERE w.workspace = ? ORDER BY w.checked_in_at, w.worker_id LIMIT ?"
	if err := tx.Raw(q, boundedArgs(workspace, MaxListedWorkers)...).Scan(&recs).Error; err != nil {
		return nil, Totals{}, err
	}
	rows := make([]Row, 0, len(recs))
	for _, r := range recs {
		row, err := r.row()
		if err != nil {
			return nil, Totals{}, err
		}
		rows = append(rows, row)
	}
	return rows, totals, nil
}

// row decodes a bounded record and clips what is still beyond today's
// bounds, counted in characters as the inputSchema counts them.
func (r boundedRecord) row() (Row, error) {
	row, err := workerRecord{WorkerID: r.WorkerID, Gist: string(r.Gist), Files: r.Files, CheckedInAt: r.CheckedInAt, Updated: r.Updated}.row()
	if err != nil {
		return row, err
	}
	row.Clipped = r.FilesOver
	if g, cut := clipRunes(row.Gist, MaxGistLen); cut {
		row.Gist, row.Clipped = g, true
	}
	if len(row.Files) > MaxFiles {
		row.Files, row.Clipped = row.Files[:MaxFiles], true
	}
	for i, f := range row.Files {
		if c, cut := clipRunes(f, MaxFileLen); cut {
			row.Files[i], row.Clipped = c, true
		}
	}
	row.stored = decodeExtras(&row, r.Leases, r.Agent)
	return row, nil
}

// clipRunes cuts s to at most n characters; a byte sequence cut in the
// middle of a character at the end is dropped.
func clipRunes(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	count := 0
	for i := range s {
		if count == n {
			return s[:i], true
		}
		count++
	}
	if !utf8.ValidString(s) {
		return strings.ToValidUTF8(s, ""), true
	}
	return s, false
}

// errBadRow marks a stored row this build cannot have written.
var errBadRow = errors.New("malformed roster row")

func (r workerRecord) row() (Row, error) {
	files := []string{}
	if err := json.Unmarshal([]byte(r.Files), &files); err != nil || files == nil {
		return Row{}, fmt.Errorf("%w: files of worker %s: %v", errBadRow, r.WorkerID, err)
	}
	// Anything the row schema forbids would make every reply that lists
	// this row fail its outputSchema; name the row instead.
	if r.Gist == "" || slices.Contains(files, "") {
		return Row{}, fmt.Errorf("%w: worker %s has an empty gist or file entry", errBadRow, r.WorkerID)
	}
	for _, ts := range []string{r.CheckedInAt, r.Updated} {
		if _, err := time.Parse(timeLayout, ts); err != nil || len(ts) != len(timeLayout) {
			return Row{}, fmt.Errorf("%w: worker %s has the timestamp %q", errBadRow, r.WorkerID, ts)
		}
	}
	return Row{WorkerID: r.WorkerID, Gist: r.Gist, Files: files, CheckedInAt: r.CheckedInAt, UpdatedAt: r.Updated}, nil
}

// RenewLeases implements Store: one write transaction over the workers
// whose agent is the fluxgit server pid on host.
func (s *SQLite) RenewLeases(ctx context.Context, host string, pid int, at time.Time) (int, error) {
	n := 0
	err := s.write(ctx, "renew", func(tx *gorm.DB) error {
		n = 0
		var recs []workerRecord
		q := tx.Select("worker_id", "leases", "agent").
			Where("leases <> '[]' AND json_extract(agent, '$.host') = ? AND json_extract(agent, '$.pid') = ?", host, pid).
			Limit(MaxListedWorkers).Find(&recs)
		if q.Error != nil {
			return q.Error
		}
		for _, r := range recs {
			var stored []storedLease
			if !agentIs(r.Agent, host, pid) || json.Unmarshal([]byte(r.Leases), &stored) != nil {
				continue
			}
			renewed, changed := renewStored(stored, at)
			if !changed {
				continue
			}
			enc, err := encodeLeases(renewed)
			if err != nil {
				return err
			}
			if err := tx.Model(&workerRecord{}).Where("worker_id = ?", r.WorkerID).Update("leases", enc).Error; err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}
