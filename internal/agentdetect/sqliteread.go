package agentdetect

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
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
// makes every write to the database fail in SQLite itself; readonly_shm=1
// keeps a WAL database's shared-memory index read-only too, so reading
// beside a live writer changes no file; immutable=1 is deliberately absent
// because the databases are live and it would read torn state. The only
// PRAGMA set is busy_timeout, a connection setting that writes nothing.
func sqliteDSN(path string) string {
	u := url.URL{Path: path}
	return fmt.Sprintf("file:%s?mode=ro&readonly_shm=1&_pragma=busy_timeout(%d)", u.EscapedPath(), sqliteBusyTimeout.Milliseconds())
}

// readSQLite runs fn inside one short read transaction of the database at
// path, opened read-only, and closes it. The transaction is a deferred
// BEGIN (no lock until the first SELECT) and always rolls back. ctx
// interrupts a statement that outlives the scan's budget.
func readSQLite(ctx context.Context, path string, fn func(ctx context.Context, tx *sql.Tx) error) error {
	if err := sqliteReadableWAL(path); err != nil {
		return err
	}
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

// errSQLiteNotOpen marks a WAL database that no process has open.
var errSQLiteNotOpen = errors.New("no process has this WAL database open (it has no -shm file), and reading it would create its -wal and -shm files, so it is left unread")

// sqliteReadableWAL refuses a WAL database without its -shm file before
// SQLite sees it: a read-only reader cannot build the shared-memory index
// without creating files in the agent's store, and a scan writes nothing.
// Such a database belongs to an agent that is not running; its process
// and its other files still speak for it.
func sqliteReadableWAL(path string) error {
	f, _, err := openStoreFile(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var hdr [20]byte
	if _, err := io.ReadFull(f, hdr[:]); err != nil {
		return fmt.Errorf("read the header of %s: %w", path, err)
	}
	// Bytes 18 and 19 are the file format's write and read versions: 2
	// means WAL.
	if hdr[18] != 2 && hdr[19] != 2 {
		return nil
	}
	if _, err := os.Lstat(path + "-shm"); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: %w", path, errSQLiteNotOpen)
	}
	return nil
}
