package agentdetect

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"time"

	// The pure-Go SQLite driver the module already uses (registered as
	// "sqlite"); no cgo.
	_ "github.com/glebarez/go-sqlite"
)

// sqliteBusyTimeout is how long one statement waits for a lock another
// process holds. Agents' databases are live: a writer holding an
// exclusive lock costs this source its findings, not the call's budget.
const sqliteBusyTimeout = 150 * time.Millisecond

// sqliteDSN opens path read-only through SQLite's URI syntax. mode=ro
// makes every write fail in SQLite itself; immutable=1 is deliberately
// absent because the databases are live and it would read torn state.
// The only PRAGMA set is busy_timeout, a connection setting that writes
// nothing.
func sqliteDSN(path string) string {
	u := url.URL{Path: path}
	return fmt.Sprintf("file:%s?mode=ro&_pragma=busy_timeout(%d)", u.EscapedPath(), sqliteBusyTimeout.Milliseconds())
}

// readSQLite runs fn inside one short read transaction of the database at
// path, opened read-only, and closes it. The transaction is a deferred
// BEGIN (no lock until the first SELECT) and always rolls back. ctx
// interrupts a statement that outlives the scan's budget.
func readSQLite(ctx context.Context, path string, fn func(ctx context.Context, tx *sql.Tx) error) error {
	f, _, err := openStoreFile(path)
	if err != nil {
		return err
	}
	f.Close()
	db, err := sql.Open("sqlite", sqliteDSN(path))
	if err != nil {
		return fmt.Errorf("open %s read-only: %w", path, err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin a read of %s: %w", path, err)
	}
	defer tx.Rollback()
	if err := fn(ctx, tx); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	return nil
}
