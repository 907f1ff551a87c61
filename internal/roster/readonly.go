package roster

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "github.com/glebarez/go-sqlite" // registers the "sqlite" database/sql driver

	"github.com/fluxgit/fluxgit/internal/pathwithin"
	"github.com/fluxgit/fluxgit/internal/privdir"
)

// StateDir is the roster's state directory for this process:
// SHIFT_STATE_DIR (made absolute) or DefaultStateDir.
func StateDir() (string, error) { return StateDirFromEnv(os.Getenv) }

// ActiveForWorkTreeFromEnv is ActiveForWorkTree on the roster this
// process is configured for: the PostgreSQL roster when
// SHIFT_DATABASE_URL is set, else roster.sqlite in the state directory.
// It reads only.
func ActiveForWorkTreeFromEnv(ctx context.Context, root string) ([]WorkspaceRow, error) {
	if u := DatabaseURL(); u != "" {
		return ActiveForWorkTreePostgres(ctx, u, root)
	}
	dir, err := StateDir()
	if err != nil {
		return nil, err
	}
	return ActiveForWorkTree(ctx, dir, root)
}

// WorkspaceRow is one active check-in and the workspace it belongs to.
type WorkspaceRow struct {
	Workspace string
	Row
}

// readOnlyBusyMs is how long a read-only roster query waits for a writer's
// lock: detection has a small budget and must not queue behind a check-in.
const readOnlyBusyMs = 200

// ActiveForWorkTree lists, without writing anything, the active check-ins
// of every workspace that names the work tree root (a canonical top
// level): the workspace equal to root (the default-workspace rule of
// ResolveDefaultWorkspace gives the real path of the enclosing work-tree
// root), a workspace that is an absolute path inside root, and one equal
// to root's base name (an agent that named its workspace after the
// project). A missing roster is no check-ins. The database is opened
// read-only (mode=ro): detection never creates, migrates or locks it for
// writing. Rows are bounded as the tools bound them; malformed rows are
// skipped.
func ActiveForWorkTree(ctx context.Context, stateDir, root string) ([]WorkspaceRow, error) {
	if !filepath.IsAbs(stateDir) || !filepath.IsAbs(root) {
		return nil, fmt.Errorf("roster state directory %q and work tree %q must be absolute", stateDir, root)
	}
	// The same checks the roster applies before trusting its directory, so
	// nobody else's file is read as the user's roster.
	if err := privdir.Check(stateDir, privdir.Options{Label: "roster state directory", Forbidden: 0o022}); err != nil {
		return nil, err
	}
	path := filepath.Join(stateDir, DatabaseName)
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, err
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	db, err := sql.Open("sqlite", readOnlyDSN(path))
	if err != nil {
		return nil, fmt.Errorf("open roster read-only: %w", err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("read roster: %w", err)
	}
	defer func() { _ = tx.Rollback() }() // a read: nothing to commit

	names, err := workspacesNaming(ctx, tx, root)
	if err != nil {
		return nil, err
	}
	var out []WorkspaceRow
	// A version 1 roster has no leases or agent yet; reading it must not
	// migrate it.
	var version int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return nil, fmt.Errorf("read roster version: %w", err)
	}
	query := boundedRows
	if version < 2 {
		query = strings.Replace(boundedRows, boundedExtras, boundedExtrasV1, 1)
	}
	for _, ws := range names {
		q := query + "WHERE w.workspace = ? ORDER BY w.checked_in_at, w.worker_id LIMIT ?"
		rows, err := tx.QueryContext(ctx, q, boundedArgs(ws, MaxListedWorkers)...)
		if err != nil {
			return out, fmt.Errorf("read roster workspace %q: %w", ws, err)
		}
		for rows.Next() {
			var r boundedRecord
			if err := rows.Scan(&r.WorkerID, &r.Gist, &r.Files, &r.FilesOver, &r.CheckedInAt, &r.Updated, &r.Leases, &r.Agent); err != nil {
				continue
			}
			row, err := r.row()
			if err != nil {
				continue // a row this build cannot have written tells nothing reliable
			}
			markRow(&row, time.Now())
			out = append(out, WorkspaceRow{Workspace: ws, Row: row})
		}
		err = rows.Err()
		_ = rows.Close()
		if err != nil {
			return out, fmt.Errorf("read roster workspace %q: %w", ws, err)
		}
	}
	return out, nil
}

// readOnlyDSN opens the roster without creating or changing any file.
// While a process has the roster open, its -shm index exists and
// readonly_shm=1 reads beside it without writing it. When no process has
// it open, SQLite has checkpointed and removed the -wal and -shm files on
// the last close, so the database file is the whole roster: immutable=1
// reads it without creating them (a writer that opens it meanwhile can at
// worst make this one read fail or skip a row, which detection absorbs).
// A -wal left without its index (a crashed writer) needs recovery that only
// a writer may do, so the roster is read like a live one.
func readOnlyDSN(path string) string {
	u := url.URL{Path: path}
	mode := "mode=ro&readonly_shm=1"
	_, shmErr := os.Lstat(path + "-shm")
	_, walErr := os.Lstat(path + "-wal")
	if errors.Is(shmErr, fs.ErrNotExist) {
		mode = "mode=ro"
		if errors.Is(walErr, fs.ErrNotExist) {
			mode = "mode=ro&immutable=1"
		}
	}
	return "file:" + u.EscapedPath() + "?" + mode + fmt.Sprintf("&_pragma=busy_timeout(%d)", readOnlyBusyMs)
}

// maxWorkspacesScanned bounds the distinct workspaces considered, so a
// roster with thousands of workspaces cannot stall detection.
const maxWorkspacesScanned = 1000

// workspacesNaming returns the roster's workspaces that name root.
func workspacesNaming(ctx context.Context, tx *sql.Tx, root string) ([]string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT DISTINCT workspace FROM workers LIMIT ?`, maxWorkspacesScanned)
	if err != nil {
		return nil, fmt.Errorf("read roster workspaces: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var ws string
		if rows.Scan(&ws) == nil && WorkspaceNames(ws, root) {
			out = append(out, ws)
		}
	}
	return out, rows.Err()
}

// WorkspaceNames reports whether the roster workspace ws names the work
// tree root: ws is root, an absolute path inside it (symbolic links
// resolved), or root's base name.
func WorkspaceNames(ws, root string) bool {
	if ws == root || ws == filepath.Base(root) {
		return true
	}
	if !filepath.IsAbs(ws) {
		return false
	}
	if r, err := filepath.EvalSymlinks(ws); err == nil {
		ws = r
	}
	return pathwithin.Within(root, ws)
}
