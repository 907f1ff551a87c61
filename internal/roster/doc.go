// Package roster is the shift-roster store: the per-user SQLite roster
// (roster.sqlite in SHIFT_STATE_DIR) shared by every fluxgit process of the
// user, worker ids, the default-workspace and state-directory rules, and
// the read-only access agents presence and the doctor use.
//
// It sits on the ground floor (issue 24): the shift-roster provider
// (plugins/shiftroster) serves tools and resources on top of it, and the
// agents-presence provider reads it, so neither provider imports the other.
//
// With SHIFT_DATABASE_URL (a postgres:// URL) the roster is a PostgreSQL
// database instead (Postgres), with the same semantics, shared by agents on
// several machines; its commits reach other processes through LISTEN/
// NOTIFY (Notifier).
//
// Every mutation, its id allocation and the roster snapshot it returns run
// in one serialised transaction (SQLite: BEGIN IMMEDIATE; PostgreSQL:
// SERIALIZABLE, serialisation failures retried); waits are bounded (3 s);
// a busy, corrupt, read-only or unreachable store is a *StoreError, never
// an in-memory fallback.
package roster
