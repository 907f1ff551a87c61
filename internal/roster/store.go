package roster

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"
)

// EnvDatabaseURL selects the PostgreSQL roster: a postgres:// (or
// postgresql://) URL. Unset, the roster is the SQLite file in the state
// directory (CONTRACT §9, §10 "Roster across machines").
const EnvDatabaseURL = "SHIFT_DATABASE_URL"

// Backends, the StoreError.Backend values.
const (
	BackendSQLite   = "sqlite"
	BackendPostgres = "postgres"
)

// Store is a roster: the SQLite file of one user (the default) or a
// PostgreSQL database shared across machines. Both give the same
// semantics: every mutation and the snapshot it returns run in one
// serialised transaction, lock and serialisation waits are bounded by
// Options.Budget, failures are *StoreError, never an in-memory fallback.
type Store interface {
	// CheckIn registers a new session or patches an existing one.
	CheckIn(ctx context.Context, in CheckInInput) (*CheckInResult, error)
	// CheckOut ends a session; an unknown id is Removed false.
	CheckOut(ctx context.Context, workspace, workerID string) (*CheckOutResult, error)
	// Snapshot reads the oldest MaxListedWorkers rows and the totals.
	Snapshot(ctx context.Context, workspace string) ([]Row, Totals, error)
	// List is Snapshot without the totals.
	List(ctx context.Context, workspace string) ([]Row, error)
	// RenewLeases writes a tool-call renewal: every lease of the workers
	// the fluxgit server pid on host checked in (their Agent) expires no
	// earlier than at plus its own length. Only the leases' expiry
	// changes: no notification, updatedAt kept. It returns how many
	// workers' leases moved.
	RenewLeases(ctx context.Context, host string, pid int, at time.Time) (int, error)
	// Workspaces lists the workspaces with active workers, sorted.
	Workspaces(ctx context.Context, limit int) ([]string, error)
	// Location names the store in messages: the database file, or the
	// PostgreSQL URL with its credentials redacted.
	Location() string
	// Backend is BackendSQLite or BackendPostgres.
	Backend() string
	// Close releases the store.
	Close() error
}

// Notifier is a Store that hears the commits of other processes (the
// PostgreSQL roster, through LISTEN/NOTIFY). SQLite's notifications stay
// inside the process, as the shift seed says.
type Notifier interface {
	// Changes delivers the workspaces other processes changed. An event
	// with Resync set means notifications may have been missed (the
	// listening connection was re-established): subscribers should
	// re-read.
	Changes() <-chan ChangeEvent
}

// ChangeEvent is one committed change heard from another process.
type ChangeEvent struct {
	// Workspace is the changed workspace; empty when only its hash fit
	// into the notification (see WorkspaceHash) or on Resync.
	Workspace string
	// Hash is WorkspaceHash of the workspace when its name was too long
	// for a notification payload.
	Hash   string
	Resync bool
}

var _ Store = (*SQLite)(nil)

// Location is the database file.
func (s *SQLite) Location() string { return s.path }

// Backend is BackendSQLite.
func (s *SQLite) Backend() string { return BackendSQLite }

// OpenStore opens the configured roster: PostgreSQL when databaseURL is
// set, else roster.sqlite in stateDir.
func OpenStore(ctx context.Context, stateDir, databaseURL string, opts Options) (Store, error) {
	if databaseURL != "" {
		return OpenPostgres(ctx, databaseURL, opts)
	}
	if stateDir == "" {
		return nil, &StoreError{Reason: ReasonUnavailable, Op: "open", Err: errors.New("no state directory configured")}
	}
	return Open(ctx, stateDir, opts)
}

// DatabaseURL is SHIFT_DATABASE_URL, trimmed; empty means SQLite.
func DatabaseURL() string { return strings.TrimSpace(os.Getenv(EnvDatabaseURL)) }

// redactedMark replaces every secret in a shown URL or message.
const redactedMark = "xxxxx"

// secretParams are the URL query parameters libpq and pgx read a secret
// from (https://www.postgresql.org/docs/current/libpq-connect.html).
var secretParams = []string{"password", "sslpassword"}

// RedactURL returns the database URL fit for logs, errors, the ledger and
// doctor: the password of its user information and of its query
// parameters replaced by xxxxx. A URL that does not parse is not shown at
// all (it could be anything, a password included).
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return "(" + EnvDatabaseURL + " is not a URL; not shown)"
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), redactedMark)
		}
	}
	if u.RawQuery != "" {
		q, err := url.ParseQuery(u.RawQuery)
		if err != nil {
			u.RawQuery = "(query not shown)"
		} else {
			for k := range q {
				if isSecretParam(k) {
					q.Set(k, redactedMark)
				}
			}
			u.RawQuery = q.Encode()
		}
	}
	u.Fragment = ""
	return u.String()
}

func isSecretParam(k string) bool {
	for _, s := range secretParams {
		if strings.EqualFold(k, s) {
			return true
		}
	}
	return false
}

// secretsOf lists every secret string raw carries (and PGPASSWORD, which
// pgx reads when the URL has none), longest first, so scrub removes them
// from any message a driver writes.
func secretsOf(raw string) []string {
	var out []string
	add := func(s string) {
		if s != "" {
			out = append(out, s)
			if e := url.QueryEscape(s); e != s {
				out = append(out, e)
			}
			if e := url.PathEscape(s); e != s {
				out = append(out, e)
			}
		}
	}
	if u, err := url.Parse(raw); err == nil {
		if u.User != nil {
			p, _ := u.User.Password()
			add(p)
		}
		if q, err := url.ParseQuery(u.RawQuery); err == nil {
			for k, vs := range q {
				if isSecretParam(k) {
					for _, v := range vs {
						add(v)
					}
				}
			}
		}
	}
	add(os.Getenv("PGPASSWORD"))
	add(raw)
	// Longest first: a secret that contains another is replaced whole.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && len(out[j]) > len(out[j-1]); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// scrubbedError carries a driver error whose text had secrets removed;
// errors.Is/As still reach the cause, its text never shows it.
type scrubbedError struct {
	msg   string
	cause error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.cause }

func scrub(err error, secrets []string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	for _, s := range secrets {
		msg = strings.ReplaceAll(msg, s, redactedMark)
	}
	return &scrubbedError{msg: msg, cause: err}
}

// describeURL checks the scheme; the pgx parser checks the rest.
func checkScheme(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return fmt.Errorf("%s must be a postgres:// or postgresql:// URL (it is %s)", EnvDatabaseURL, RedactURL(raw))
	}
	return nil
}
