// Package roster is the shift-roster store: the per-user SQLite roster
// (roster.sqlite in SHIFT_STATE_DIR) shared by every fluxgit process of the
// user, worker ids, the default-workspace and state-directory rules, and
// the read-only access agents presence and the doctor use.
//
// It sits on the ground floor (issue 24): the shift-roster provider
// (plugins/shiftroster) serves tools and resources on top of it, and the
// agents-presence provider reads it, so neither provider imports the other.
//
// Every mutation, its id allocation and the roster snapshot it returns run
// in one BEGIN IMMEDIATE transaction; lock waits are bounded (3 s); a busy,
// corrupt or read-only store is a *StoreError, never an in-memory fallback.
package roster
