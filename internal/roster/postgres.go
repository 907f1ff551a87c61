package roster

import (
	"context"
	crand "crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// NotifyChannel is the PostgreSQL channel every committed roster change is
// announced on (pg_notify in the mutation's own transaction, so it is
// delivered exactly when the change commits).
const NotifyChannel = "shift_roster"

// pgMigrations[i] brings the PostgreSQL roster from schema version i to
// i+1. The version lives in shift_roster_schema and changes in the same
// transaction, under an advisory lock, so concurrent first starts migrate
// once. Workspace and gist are bytea: PostgreSQL text cannot hold NUL,
// which a JSON string (and so a SQLite roster) can.
var pgMigrations = []string{
	`CREATE TABLE shift_roster_workers (
		worker_id     text  NOT NULL PRIMARY KEY CHECK (length(worker_id) = 6 AND worker_id = upper(worker_id)),
		workspace     bytea NOT NULL,
		gist          bytea NOT NULL,
		files         text  NOT NULL DEFAULT '[]' CHECK (json_typeof(files::json) = 'array'),
		checked_in_at text  NOT NULL,
		updated_at    text  NOT NULL
	);
	CREATE INDEX shift_roster_workers_by_workspace ON shift_roster_workers (workspace, checked_in_at, worker_id);`,
	// 2: file leases and the agent that checked the worker in.
	`ALTER TABLE shift_roster_workers ADD COLUMN leases text NOT NULL DEFAULT '[]' CHECK (json_typeof(leases::json) = 'array');
	ALTER TABLE shift_roster_workers ADD COLUMN agent text NOT NULL DEFAULT '{}' CHECK (json_typeof(agent::json) = 'object');`,
}

// PostgresSchemaVersion is the PostgreSQL schema version this build writes.
var PostgresSchemaVersion = len(pgMigrations)

// migrationLock is the pg_advisory_xact_lock key of schema migration
// ("shiftros" in ASCII).
const migrationLock int64 = 0x7368696674726f73

// Postgres is the roster in a PostgreSQL database, shared by every fluxgit
// process (on any machine) given the same SHIFT_DATABASE_URL.
type Postgres struct {
	pool     *pgxpool.Pool
	connCfg  *pgx.ConnConfig
	redacted string
	secrets  []string
	budget   time.Duration
	now      func() time.Time
	hookTx   func(op, stage string)
	// origin marks this store's own notifications, which it skips: the
	// provider already published them.
	origin  string
	changes chan ChangeEvent
	stop    context.CancelFunc
	done    chan struct{}
	once    sync.Once
}

var (
	_ Store    = (*Postgres)(nil)
	_ Notifier = (*Postgres)(nil)
)

// pgMaxConns bounds this process's connections: like SQLite's pool, a few
// are enough for one agent's calls, and a team of agents must not exhaust
// the server's max_connections.
const pgMaxConns = 4

// OpenPostgres connects to the roster database, creates or migrates its
// schema and starts listening for other processes' changes. TLS and every
// other connection parameter (sslmode, sslrootcert, …) pass through to
// pgx. Errors never show the URL's password.
func OpenPostgres(ctx context.Context, rawURL string, opts Options) (*Postgres, error) {
	p := &Postgres{redacted: RedactURL(rawURL), secrets: secretsOf(rawURL), budget: opts.Budget, now: opts.Now, hookTx: opts.TxHook,
		changes: make(chan ChangeEvent, 64), done: make(chan struct{})}
	if p.budget <= 0 {
		p.budget = DefaultBudget
	}
	if p.now == nil {
		p.now = time.Now
	}
	if err := checkScheme(rawURL); err != nil {
		return nil, p.fail("open", ReasonUnavailable, err)
	}
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		return nil, p.fail("open", ReasonUnavailable, fmt.Errorf("%s does not parse: %w", EnvDatabaseURL, err))
	}
	cfg.MaxConns = pgMaxConns
	if cfg.ConnConfig.RuntimeParams == nil {
		cfg.ConnConfig.RuntimeParams = map[string]string{}
	}
	if _, set := cfg.ConnConfig.RuntimeParams["application_name"]; !set {
		cfg.ConnConfig.RuntimeParams["application_name"] = "fluxgit-roster"
	}
	p.connCfg = cfg.ConnConfig.Copy()
	var id [8]byte
	_, _ = crand.Read(id[:])
	p.origin = hex.EncodeToString(id[:])
	openCtx, cancel := context.WithTimeout(ctx, p.budget)
	defer cancel()
	if p.pool, err = pgxpool.NewWithConfig(openCtx, cfg); err != nil {
		return nil, p.classify("open", err)
	}
	if err := p.migrate(openCtx); err != nil {
		p.pool.Close()
		return nil, err
	}
	// The first LISTEN is made before Open returns, so an open store hears
	// every change committed after it; later reconnects run in the
	// background.
	conn, err := p.listenConn(openCtx)
	if err != nil {
		p.pool.Close()
		return nil, p.classify("open", err)
	}
	lctx, stop := context.WithCancel(context.Background())
	p.stop = stop
	go p.listen(lctx, conn)
	return p, nil
}

// Location is the database URL, credentials redacted.
func (p *Postgres) Location() string { return p.redacted }

// Backend is BackendPostgres.
func (p *Postgres) Backend() string { return BackendPostgres }

// Changes implements Notifier.
func (p *Postgres) Changes() <-chan ChangeEvent { return p.changes }

// Close stops listening and closes the pool.
func (p *Postgres) Close() error {
	p.once.Do(func() {
		p.stop()
		<-p.done
		p.pool.Close()
	})
	return nil
}

func (p *Postgres) fail(op, reason string, err error) *StoreError {
	return &StoreError{Reason: reason, Backend: BackendPostgres, Op: op, Path: p.redacted, Err: scrub(err, p.secrets)}
}

func (p *Postgres) migrate(ctx context.Context) error {
	err := pgx.BeginTxFunc(ctx, p.pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLock); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS shift_roster_schema (
			singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
			version   integer NOT NULL)`); err != nil {
			return err
		}
		version := 0
		if err := tx.QueryRow(ctx, `SELECT version FROM shift_roster_schema`).Scan(&version); err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if version > len(pgMigrations) {
			return p.fail("open", ReasonIncompatible, fmt.Errorf("roster schema version %d is newer than this fluxgit understands (%d); upgrade fluxgit or use another database", version, len(pgMigrations)))
		}
		for v := version; v < len(pgMigrations); v++ {
			if _, err := tx.Exec(ctx, pgMigrations[v]); err != nil {
				return fmt.Errorf("migrate the roster schema to version %d: %w", v+1, err)
			}
		}
		_, err := tx.Exec(ctx, `INSERT INTO shift_roster_schema (singleton, version) VALUES (true, $1)
			ON CONFLICT (singleton) DO UPDATE SET version = EXCLUDED.version`, len(pgMigrations))
		return err
	})
	if err != nil {
		return p.classify("open", err)
	}
	return nil
}

// retryable reports a failure that rolling back and trying again cures:
// serialisation failures and deadlocks (SERIALIZABLE's normal way of
// refusing a conflicting transaction), and a concurrent insert of the same
// random worker id.
func retryable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "40001", "40P01", "23505", "55P03":
			return true
		}
	}
	return false
}

// readOnly is the workspace argument of tx for a read.
const readOnly = "\x00read"

// tx runs fn in one transaction: SERIALIZABLE for a mutation of
// workspace, a REPEATABLE READ READ ONLY snapshot for a read (workspace
// readOnly). Serialisation failures are retried within the budget (the
// counterpart of SQLite's busy wait); fn must have no effects outside its
// transaction.
//
// Mutations of one workspace first queue on a session-level advisory lock
// of that workspace, taken before BEGIN so the transaction's snapshot is
// taken after the previous holder committed. Without it every check-in of
// a busy workspace (each reads the whole roster it returns) conflicts
// with every other one, and SERIALIZABLE aborts them by the dozen: with 32
// concurrent agents some ran out of the 3 s budget in BenchmarkCheckIn.
// The lock orders them as SQLite's write lock does; SERIALIZABLE still
// guards what the lock does not cover (ids are unique across workspaces).
func (p *Postgres) tx(ctx context.Context, op, workspace string, fn func(pgx.Tx) error) error {
	write := workspace != readOnly
	deadline := time.Now().Add(p.budget)
	opts := pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}
	if write {
		opts = pgx.TxOptions{IsoLevel: pgx.Serializable, AccessMode: pgx.ReadWrite}
	}
	lock := int64(0)
	if write {
		lock = workspaceLock(workspace)
	}
	for attempt := 0; ; attempt++ {
		err := p.attempt(ctx, deadline, op, opts, lock, fn)
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
		left := time.Until(deadline)
		if !retryable(err) {
			if left <= 0 && errors.Is(err, context.DeadlineExceeded) {
				return p.busy(op, err)
			}
			return p.classify(op, err)
		}
		if left <= 0 {
			return p.busy(op, err)
		}
		// Back off a little more on each conflict, with jitter, so the
		// writers of one workspace spread out instead of colliding again.
		pause := min(time.Duration(500+rand.IntN(1000*min(attempt+1, 20)))*time.Microsecond, left)
		select {
		case <-time.After(pause):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (p *Postgres) attempt(ctx context.Context, deadline time.Time, op string, opts pgx.TxOptions, lock int64, fn func(pgx.Tx) error) error {
	actx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	conn, err := p.pool.Acquire(actx)
	if err != nil {
		return err
	}
	// A connection whose lock state is uncertain never goes back to the
	// pool: closing it ends its session, which releases every lock.
	healthy := false
	defer func() {
		if healthy {
			conn.Release()
		} else {
			_ = conn.Hijack().Close(context.WithoutCancel(ctx))
		}
	}()
	if lock != 0 {
		if _, err := conn.Exec(actx, `SELECT pg_advisory_lock($1)`, lock); err != nil {
			return err
		}
	}
	err = p.run(ctx, actx, conn.Conn(), op, opts, fn)
	if lock != 0 {
		if _, uerr := conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, lock); uerr != nil {
			return errors.Join(err, uerr)
		}
	}
	healthy = conn.Conn().PgConn().TxStatus() == 'I'
	return err
}

// run is one transaction on conn.
func (p *Postgres) run(ctx, actx context.Context, conn *pgx.Conn, op string, opts pgx.TxOptions, fn func(pgx.Tx) error) error {
	tx, err := conn.BeginTx(actx, opts)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }() // no-op after Commit
	if p.hookTx != nil && opts.AccessMode == pgx.ReadWrite {
		p.hookTx(op, "begin")
	}
	if err := fn(tx); err != nil {
		return err
	}
	if p.hookTx != nil && opts.AccessMode == pgx.ReadWrite {
		p.hookTx(op, "commit")
	}
	return tx.Commit(actx)
}

// workspaceLock is the advisory lock key of a workspace's mutations: the
// first 8 bytes of SHA-256 over a fixed prefix and the name (never 0).
func workspaceLock(ws string) int64 {
	h := sha256.Sum256([]byte("shift_roster\x00" + ws))
	k := int64(binary.BigEndian.Uint64(h[:8]))
	if k == 0 {
		k = 1
	}
	return k
}

func (p *Postgres) busy(op string, err error) error {
	return p.fail(op, ReasonBusy, fmt.Errorf("conflicting roster transactions kept this %s from committing for the whole %s budget: %w", op, p.budget, err))
}

// classify turns a driver error into a StoreError. A lost connection
// during a mutation is said to be one: the transaction did not commit
// unless the server had already received its COMMIT, and nothing is kept
// in memory instead.
func (p *Postgres) classify(op string, err error) error {
	var se *StoreError
	if err == nil || errors.As(err, &se) || errors.Is(err, context.Canceled) {
		return err
	}
	var (
		pe *pgconn.PgError
		ce *pgconn.ConnectError
	)
	switch {
	case errors.Is(err, errBadRow):
		return p.fail(op, ReasonCorrupt, err)
	case errors.As(err, &pe):
		switch {
		case pe.Code == "25006" || pe.Code == "42501":
			return p.fail(op, ReasonReadOnly, fmt.Errorf("the database refuses this user's writes: %w", err))
		case len(pe.Code) == 2+3 && pe.Code[:2] == "28":
			return p.fail(op, ReasonUnavailable, fmt.Errorf("the PostgreSQL server refused the credentials of %s: %w", EnvDatabaseURL, err))
		}
		return p.fail(op, ReasonUnavailable, err)
	case errors.As(err, &ce):
		return p.fail(op, ReasonUnavailable, fmt.Errorf("cannot reach the PostgreSQL roster: %w", err))
	}
	if op == "open" || op == "read" || op == "list workspaces" {
		return p.fail(op, ReasonUnavailable, fmt.Errorf("the PostgreSQL roster connection failed: %w", err))
	}
	return p.fail(op, ReasonUnavailable, fmt.Errorf("the PostgreSQL roster connection failed during the %s; it did not commit unless the server had already received the commit (read shift://status to see): %w", op, err))
}

// pgBoundedRows is boundedRows for PostgreSQL: every stored value is cut
// near today's bounds inside the server, so a row written beyond them is
// never transferred whole.
const pgBoundedRows = `SELECT w.worker_id,
	substring(w.gist from 1 for $1) AS gist,
	CASE WHEN octet_length(w.files) <= $2 THEN w.files ELSE
	  (SELECT coalesce(json_agg(left(e.value, $3) ORDER BY e.ord), '[]'::json)::text
	     FROM (SELECT value, ord FROM json_array_elements_text(w.files::json) WITH ORDINALITY AS a(value, ord) ORDER BY ord LIMIT $4) AS e) END AS files,
	octet_length(w.files) > $2 AS files_over,
	left(w.checked_in_at, 24), left(w.updated_at, 24),
	CASE WHEN octet_length(w.leases) <= $5 THEN w.leases ELSE '[]' END,
	CASE WHEN octet_length(w.agent) <= $6 THEN w.agent ELSE '{}' END
	FROM shift_roster_workers AS w `

func pgBoundedArgs(args ...any) []any {
	return append([]any{gistBytes, filesJSONBytes, MaxFileLen, MaxFiles, maxLeasesJSON, maxAgentJSON}, args...)
}

func pgRows(ctx context.Context, tx pgx.Tx, where string, args ...any) ([]Row, error) {
	rows, err := tx.Query(ctx, pgBoundedRows+where, pgBoundedArgs(args...)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Row{}
	for rows.Next() {
		var r boundedRecord
		if err := rows.Scan(&r.WorkerID, &r.Gist, &r.Files, &r.FilesOver, &r.CheckedInAt, &r.Updated, &r.Leases, &r.Agent); err != nil {
			return nil, err
		}
		row, err := r.row()
		if err != nil {
			return nil, err
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

func pgSession(ctx context.Context, tx pgx.Tx, workspace, id string) (Row, bool, error) {
	rows, err := pgRows(ctx, tx, "WHERE w.worker_id = $7 AND w.workspace = $8", id, []byte(workspace))
	if err != nil || len(rows) == 0 {
		return Row{}, false, err
	}
	return rows[0], true, nil
}

func pgList(ctx context.Context, tx pgx.Tx, workspace string) ([]Row, Totals, error) {
	var totals Totals
	if err := tx.QueryRow(ctx, `SELECT count(*), coalesce(sum(json_array_length(files::json)), 0) FROM shift_roster_workers WHERE workspace = $1`,
		[]byte(workspace)).Scan(&totals.Workers, &totals.Files); err != nil {
		return nil, Totals{}, err
	}
	rows, err := pgRows(ctx, tx, "WHERE w.workspace = $7 ORDER BY w.checked_in_at, w.worker_id LIMIT $8", []byte(workspace), MaxListedWorkers)
	return rows, totals, err
}

// maxNotifyPayload keeps a notification under PostgreSQL's 8000-byte
// payload limit; a longer workspace name is sent as its hash.
const maxNotifyPayload = 7000

// WorkspaceHash is the hex SHA-256 of a workspace name, the form a
// notification names a workspace too long for its payload by.
func WorkspaceHash(ws string) string {
	h := sha256.Sum256([]byte(ws))
	return hex.EncodeToString(h[:])
}

type notifyPayload struct {
	Origin    string `json:"o"`
	Workspace string `json:"w,omitempty"`
	Hash      string `json:"h,omitempty"`
}

// notify announces a change of ws inside the mutation's transaction.
func (p *Postgres) notify(ctx context.Context, tx pgx.Tx, ws string) error {
	b, err := json.Marshal(notifyPayload{Origin: p.origin, Workspace: ws})
	if err != nil {
		return err
	}
	if len(b) > maxNotifyPayload {
		if b, err = json.Marshal(notifyPayload{Origin: p.origin, Hash: WorkspaceHash(ws)}); err != nil {
			return err
		}
	}
	_, err = tx.Exec(ctx, `SELECT pg_notify($1, $2)`, NotifyChannel, string(b))
	return err
}

// listenConn opens a connection LISTENing on NotifyChannel.
func (p *Postgres) listenConn(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, p.connCfg.Copy())
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, "LISTEN "+NotifyChannel); err != nil {
		_ = conn.Close(context.Background())
		return nil, err
	}
	return conn, nil
}

// listen forwards other processes' changes heard on conn, reconnecting
// with a growing pause when it breaks; after a reconnect it sends a
// Resync event, since changes may have been missed meanwhile.
func (p *Postgres) listen(ctx context.Context, conn *pgx.Conn) {
	defer close(p.done)
	pause := 100 * time.Millisecond
	for {
		for {
			n, err := conn.WaitForNotification(ctx)
			if err != nil {
				break
			}
			var pl notifyPayload
			if json.Unmarshal([]byte(n.Payload), &pl) != nil || pl.Origin == p.origin {
				continue
			}
			p.send(ChangeEvent{Workspace: pl.Workspace, Hash: pl.Hash})
		}
		_ = conn.Close(context.Background())
		for {
			select {
			case <-time.After(pause):
			case <-ctx.Done():
				return
			}
			pause = min(pause*2, 5*time.Second)
			var err error
			if conn, err = p.listenConn(ctx); err == nil {
				break
			}
		}
		pause = 100 * time.Millisecond
		p.send(ChangeEvent{Resync: true})
	}
}

// send never blocks the listener: a full queue means the reader is far
// behind, and a Resync tells it to re-read.
func (p *Postgres) send(ev ChangeEvent) {
	select {
	case p.changes <- ev:
	default:
	}
}

// CheckIn implements Store with the same patch semantics as SQLite.
func (p *Postgres) CheckIn(ctx context.Context, in CheckInInput) (*CheckInResult, error) {
	if in.Files == nil {
		in.Files = []string{}
	}
	filesJSON, err := json.Marshal(in.Files)
	if err != nil {
		return nil, err
	}
	ws := []byte(in.Workspace)
	var res CheckInResult
	err = p.tx(ctx, "check-in", in.Workspace, func(tx pgx.Tx) error {
		res = CheckInResult{}
		id := in.WorkerID
		t := p.now()
		now := t.UTC().Format(timeLayout)
		agentJSON, err := encodeAgent(in.Agent)
		if err != nil {
			return err
		}
		if id != "" {
			old, found, err := pgSession(ctx, tx, in.Workspace, id)
			if err != nil {
				return err
			}
			if !found {
				workers, totals, err := pgList(ctx, tx, in.Workspace)
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
			leasesJSON, err := encodeLeases(leases)
			if err != nil {
				return err
			}
			if changed {
				fj, err := json.Marshal(plan.files)
				if err != nil {
					return err
				}
				if _, err := tx.Exec(ctx, `UPDATE shift_roster_workers SET gist = $1, files = $2, updated_at = $3, leases = $4 WHERE worker_id = $5 AND workspace = $6`,
					[]byte(in.Gist), string(fj), now, leasesJSON, id, ws); err != nil {
					return err
				}
			} else if len(leases) > 0 {
				// Leases are renewed by every check-in, a change or not.
				if _, err := tx.Exec(ctx, `UPDATE shift_roster_workers SET leases = $1 WHERE worker_id = $2 AND workspace = $3`, leasesJSON, id, ws); err != nil {
					return err
				}
			}
			if plan.agent {
				if _, err := tx.Exec(ctx, `UPDATE shift_roster_workers SET agent = $1 WHERE worker_id = $2 AND workspace = $3`, agentJSON, id, ws); err != nil {
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
			if id, err = pgAllocateID(ctx, tx); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO shift_roster_workers (worker_id, workspace, gist, files, checked_in_at, updated_at, leases, agent) VALUES ($1, $2, $3, $4, $5, $5, $6, $7)`,
				id, ws, []byte(in.Gist), string(filesJSON), now, leasesJSON, agentJSON); err != nil {
				return err
			}
			res.Change = Created
		}
		if res.Change != Unchanged {
			if err := p.notify(ctx, tx, in.Workspace); err != nil {
				return err
			}
		}
		// The session is usually among the listed rows: one query less
		// per check-in.
		res.Workers, res.Totals, err = pgList(ctx, tx, in.Workspace)
		if err != nil {
			return err
		}
		markTimes(res.Workers, t)
		i := slices.IndexFunc(res.Workers, func(r Row) bool { return r.WorkerID == id })
		if i >= 0 {
			res.Session = res.Workers[i]
			return nil
		}
		session, found, err := pgSession(ctx, tx, in.Workspace, id)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("worker %s vanished inside its own transaction", id)
		}
		markRow(&session, t)
		res.Session = session
		return err
	})
	if err != nil {
		return nil, err
	}
	return &res, nil
}

func pgAllocateID(ctx context.Context, tx pgx.Tx) (string, error) {
	for range maxIDAttempts {
		id, err := NewWorkerID()
		if err != nil {
			return "", err
		}
		var taken bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM shift_roster_workers WHERE worker_id = $1)`, id).Scan(&taken); err != nil {
			return "", err
		}
		if !taken {
			return id, nil
		}
	}
	return "", fmt.Errorf("no free worker id after %d attempts", maxIDAttempts)
}

// CheckOut implements Store.
func (p *Postgres) CheckOut(ctx context.Context, workspace, workerID string) (*CheckOutResult, error) {
	var res CheckOutResult
	err := p.tx(ctx, "check-out", workspace, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM shift_roster_workers WHERE worker_id = $1 AND workspace = $2`, workerID, []byte(workspace))
		if err != nil {
			return err
		}
		removed := tag.RowsAffected() > 0
		if removed {
			if err := p.notify(ctx, tx, workspace); err != nil {
				return err
			}
		}
		workers, totals, err := pgList(ctx, tx, workspace)
		markTimes(workers, p.now())
		res = CheckOutResult{Removed: removed, Workers: workers, Totals: totals}
		return err
	})
	if err != nil {
		return nil, err
	}
	return &res, nil
}

// Snapshot implements Store.
func (p *Postgres) Snapshot(ctx context.Context, workspace string) ([]Row, Totals, error) {
	var (
		rows   []Row
		totals Totals
	)
	err := p.tx(ctx, "read", readOnly, func(tx pgx.Tx) error {
		var err error
		rows, totals, err = pgList(ctx, tx, workspace)
		markTimes(rows, p.now())
		return err
	})
	return rows, totals, err
}

// List implements Store.
func (p *Postgres) List(ctx context.Context, workspace string) ([]Row, error) {
	rows, _, err := p.Snapshot(ctx, workspace)
	return rows, err
}

// Workspaces implements Store.
func (p *Postgres) Workspaces(ctx context.Context, limit int) ([]string, error) {
	var names []string
	err := p.tx(ctx, "list workspaces", readOnly, func(tx pgx.Tx) error {
		names = nil
		rows, err := tx.Query(ctx, `SELECT DISTINCT workspace FROM shift_roster_workers ORDER BY workspace LIMIT $1`, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var b []byte
			if err := rows.Scan(&b); err != nil {
				return err
			}
			names = append(names, string(b))
		}
		return rows.Err()
	})
	slices.Sort(names)
	return names, err
}

// Ping checks that the database answers and reports its schema version
// (doctor).
func (p *Postgres) Ping(ctx context.Context) (int, error) {
	version := 0
	err := p.tx(ctx, "read", readOnly, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT version FROM shift_roster_schema`).Scan(&version)
	})
	return version, err
}

// ProbePostgres connects to the roster database without writing anything
// and reports the schema version found there (0: not created yet, fluxgit
// creates it on first use). Its errors never show the URL's password. The
// doctor uses it.
func ProbePostgres(ctx context.Context, rawURL string) (int, error) {
	p := &Postgres{redacted: RedactURL(rawURL), secrets: secretsOf(rawURL)}
	if err := checkScheme(rawURL); err != nil {
		return 0, p.fail("probe", ReasonUnavailable, err)
	}
	cfg, err := pgx.ParseConfig(rawURL)
	if err != nil {
		return 0, p.fail("probe", ReasonUnavailable, fmt.Errorf("%s does not parse: %w", EnvDatabaseURL, err))
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return 0, p.classify("probe", err)
	}
	defer conn.Close(context.Background())
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT to_regclass('shift_roster_schema') IS NOT NULL`).Scan(&exists); err != nil {
		return 0, p.classify("probe", err)
	}
	version := 0
	if exists {
		if err := conn.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM shift_roster_schema`).Scan(&version); err != nil {
			return 0, p.classify("probe", err)
		}
	}
	return version, nil
}

// ActiveForWorkTreePostgres is ActiveForWorkTree for the PostgreSQL
// roster: the active check-ins of every workspace naming root, read in one
// read-only transaction that creates nothing (a database without the
// roster schema has no check-ins). Malformed rows are skipped.
func ActiveForWorkTreePostgres(ctx context.Context, rawURL, root string) ([]WorkspaceRow, error) {
	p := &Postgres{redacted: RedactURL(rawURL), secrets: secretsOf(rawURL)}
	if err := checkScheme(rawURL); err != nil {
		return nil, p.fail("read", ReasonUnavailable, err)
	}
	cfg, err := pgx.ParseConfig(rawURL)
	if err != nil {
		return nil, p.fail("read", ReasonUnavailable, fmt.Errorf("%s does not parse: %w", EnvDatabaseURL, err))
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, p.classify("read", err)
	}
	defer conn.Close(context.Background())
	var out []WorkspaceRow
	err = pgx.BeginTxFunc(ctx, conn, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT to_regclass('shift_roster_workers') IS NOT NULL`).Scan(&exists); err != nil || !exists {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT DISTINCT workspace FROM shift_roster_workers LIMIT $1`, maxWorkspacesScanned)
		if err != nil {
			return err
		}
		var names []string
		for rows.Next() {
			var b []byte
			if rows.Scan(&b) == nil && WorkspaceNames(string(b), root) {
				names = append(names, string(b))
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, ws := range names {
			recs, err := tx.Query(ctx, pgBoundedRows+"WHERE w.workspace = $7 ORDER BY w.checked_in_at, w.worker_id LIMIT $8", pgBoundedArgs([]byte(ws), MaxListedWorkers)...)
			if err != nil {
				return err
			}
			for recs.Next() {
				var r boundedRecord
				if recs.Scan(&r.WorkerID, &r.Gist, &r.Files, &r.FilesOver, &r.CheckedInAt, &r.Updated, &r.Leases, &r.Agent) != nil {
					continue
				}
				if row, err := r.row(); err == nil {
					markRow(&row, time.Now())
					out = append(out, WorkspaceRow{Workspace: ws, Row: row})
				}
			}
			recs.Close()
			if err := recs.Err(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return out, p.classify("read", err)
	}
	return out, nil
}

// RenewLeases implements Store: the workers whose agent is the fluxgit
// server pid on host are found in one read, then renewed workspace by
// workspace, each under the workspace's lock as a check-in would be, so
// a renewal and a check-in of the same worker never interleave.
func (p *Postgres) RenewLeases(ctx context.Context, host string, pid int, at time.Time) (int, error) {
	byWS := map[string][]string{}
	err := p.tx(ctx, "renew", readOnly, func(tx pgx.Tx) error {
		clear(byWS)
		rows, err := tx.Query(ctx, `SELECT worker_id, workspace FROM shift_roster_workers
			WHERE leases <> '[]' AND agent::jsonb->>'host' = $1 AND agent::jsonb->>'pid' = $2 LIMIT $3`, host, strconv.Itoa(pid), MaxListedWorkers)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			var ws []byte
			if err := rows.Scan(&id, &ws); err != nil {
				return err
			}
			byWS[string(ws)] = append(byWS[string(ws)], id)
		}
		return rows.Err()
	})
	if err != nil {
		return 0, err
	}
	n := 0
	for ws, ids := range byWS {
		moved := 0
		err := p.tx(ctx, "renew", ws, func(tx pgx.Tx) error {
			moved = 0 // a retried attempt counts again from the start
			for _, id := range ids {
				var leases, agent string
				err := tx.QueryRow(ctx, `SELECT leases, agent FROM shift_roster_workers WHERE worker_id = $1 AND workspace = $2`, id, []byte(ws)).Scan(&leases, &agent)
				if errors.Is(err, pgx.ErrNoRows) {
					continue // checked out meanwhile
				}
				if err != nil {
					return err
				}
				var stored []storedLease
				if !agentIs(agent, host, pid) || json.Unmarshal([]byte(leases), &stored) != nil {
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
				if _, err := tx.Exec(ctx, `UPDATE shift_roster_workers SET leases = $1 WHERE worker_id = $2 AND workspace = $3`, enc, id, []byte(ws)); err != nil {
					return err
				}
				moved++
			}
			return nil
		})
		if err != nil {
			return n, err
		}
		n += moved
	}
	return n, nil
}
