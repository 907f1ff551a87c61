// Package shiftroster is the shift-roster provider: agents working in one
// workspace check in with what they are doing and which files they plan to
// touch, see everyone else who is active, and check out when done.
//
// The roster is internal/roster's store: by default a SQLite database
// (roster.sqlite in SHIFT_STATE_DIR, by default
// ~/.local/state/shift-mcp-server) shared by every fluxgit process of the
// user, or, with SHIFT_DATABASE_URL, a PostgreSQL database shared across
// machines. Every mutation, its id allocation and the roster snapshot it
// returns run in one serialised transaction; waits are bounded (3 s); a
// busy, corrupt, read-only or unreachable store is an explicit tool error,
// never an in-memory fallback.
//
// Resources: shift://status (the default workspace) and the template
// shift://status{?workspace}. After every committed real change this
// process publishes the affected URIs through WatchResources; with
// PostgreSQL it also publishes the changes other processes commit (LISTEN/
// NOTIFY). Reads always see what any process committed.
package shiftroster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/fluxgit/fluxgit/internal/operation"
	"github.com/fluxgit/fluxgit/internal/roster"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// Source is the Result.Source of every answer.
const Source = "shift-roster"

// Tool names.
const (
	ToolCheckIn  = "shift_check_in"
	ToolCheckOut = "shift_check_out"
)

// MaxSummaryLen bounds a check-out summary in characters (the
// inputSchema's maxLength). The row bounds live with the store
// (roster.MaxGistLen, roster.MaxFiles, roster.MaxFileLen).
const MaxSummaryLen = 1000

// Reply bounds: a reply lists at most MaxListedWorkers rows, and stops
// earlier when the rows' JSON, or separately their Markdown table lines,
// would pass MaxListedBytes. The omitted workers and files are counted in
// the reply, so the roster always answers and says what it left out.
// (roster.MaxListedWorkers is the row cap, applied by the store.)
const MaxListedBytes = 1 << 20

// Tool error codes (the roster's range, 10020-10029) with their
// data.reason.
const (
	CodeUnknownWorker     = 10020 // unknown_worker
	CodeStoreBusy         = 10021 // store_busy
	CodeStoreCorrupt      = 10022 // store_corrupt
	CodeStoreReadOnly     = 10023 // store_readonly
	CodeStoreUnavailable  = 10024 // store_unavailable, state_dir_unsafe
	CodeStoreIncompatible = 10025 // store_incompatible
)

// ReasonUnknownWorker is data.reason of CodeUnknownWorker.
const ReasonUnknownWorker = "unknown_worker"

// Config is what a Provider needs from its environment.
type Config struct {
	// StateDir holds roster.sqlite. When empty, StateDirErr says why.
	StateDir    string
	StateDirErr error
	// DefaultWorkspace is used for an omitted or empty workspace and for
	// the bare shift://status. Empty means it could not be determined.
	DefaultWorkspace string
	// DatabaseURL, when set (SHIFT_DATABASE_URL), selects the PostgreSQL
	// roster instead of roster.sqlite in StateDir.
	DatabaseURL string
	// Store tunes the store (tests shorten the budget).
	Store roster.Options
	// Logger defaults to the SDK's stderr logger.
	Logger *slog.Logger
	// AgentPID is the fluxgit server process recorded as a worker's
	// agent; zero means the parent process (built-in providers run as
	// children of the host, whose presence record names its pid).
	AgentPID int
}

// Provider serves shift_check_in, shift_check_out and the status
// resources.
type Provider struct {
	*sdk.Broadcaster
	cfg Config
	log *slog.Logger

	mu    sync.Mutex
	store roster.Store
	// stopRelay ends the goroutine publishing other processes' changes
	// (PostgreSQL roster only).
	stopRelay func()
	// stopBeat ends the goroutine writing tool-call renewals (heartbeat).
	stopBeat func()
}

// Heartbeat timing: the server's presence record is read every
// HeartbeatCheck; a renewal is written at most once per HeartbeatWrite.
const (
	HeartbeatCheck = 5 * time.Second
	HeartbeatWrite = time.Minute
)

var (
	_ sdk.Provider        = (*Provider)(nil)
	_ sdk.ResourceReader  = (*Provider)(nil)
	_ sdk.ResourceWatcher = (*Provider)(nil)
	_ sdk.Describer       = (*Provider)(nil)
)

// Describe lists the tools and status resources, so the host refuses to
// start against a spec that gives this provider something it lacks.
func (p *Provider) Describe() sdk.Description {
	return sdk.Description{Tools: []string{ToolCheckIn, ToolCheckOut}, Resources: []string{StatusURI, StatusTemplate}}
}

// New configures a Provider from the process: SHIFT_STATE_DIR and
// SHIFT_WORKSPACE, and the start directory for the default workspace
// (resolved once, now, at provider start).
func New() *Provider {
	dir, dirErr := roster.StateDirFromEnv(os.Getenv)
	cfg := Config{StateDir: dir, StateDirErr: dirErr, DatabaseURL: roster.DatabaseURL()}
	env := os.Getenv(roster.EnvWorkspace)
	if cwd, err := os.Getwd(); err == nil || env != "" {
		cfg.DefaultWorkspace = roster.ResolveDefaultWorkspace(context.Background(), env, cwd, roster.GitexecTopLevel)
	}
	return NewWithConfig(cfg)
}

// NewWithConfig returns a Provider with an explicit configuration. The
// store is opened on first use, and again on a later call if opening
// failed, so fixing the state directory needs no restart.
func NewWithConfig(cfg Config) *Provider {
	log := cfg.Logger
	if log == nil {
		log = sdk.Logger(Source)
	}
	return &Provider{Broadcaster: &sdk.Broadcaster{}, cfg: cfg, log: log}
}

// DefaultWorkspace is the workspace an omitted workspace argument means.
func (p *Provider) DefaultWorkspace() string { return p.cfg.DefaultWorkspace }

// Close closes the store, if open.
func (p *Provider) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.store == nil {
		return nil
	}
	if p.stopRelay != nil {
		p.stopRelay()
		p.stopRelay = nil
	}
	if p.stopBeat != nil {
		p.stopBeat()
		p.stopBeat = nil
	}
	err := p.store.Close()
	p.store = nil
	return err
}

func (p *Provider) openStore(ctx context.Context) (roster.Store, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.store != nil {
		return p.store, nil
	}
	if p.cfg.DatabaseURL != "" {
		s, err := roster.OpenPostgres(ctx, p.cfg.DatabaseURL, p.cfg.Store)
		if err != nil {
			// err names the database by its redacted URL only.
			p.log.Warn("roster store unavailable", "database", roster.RedactURL(p.cfg.DatabaseURL), "err", err)
			return nil, err
		}
		p.store = s
		p.relay(s)
		p.heartbeat(s)
		return s, nil
	}
	if p.cfg.StateDir == "" {
		err := p.cfg.StateDirErr
		if err == nil {
			err = errors.New("no state directory configured")
		}
		return nil, &roster.StoreError{Reason: roster.ReasonUnavailable, Op: "open", Err: err}
	}
	s, err := roster.Open(ctx, p.cfg.StateDir, p.cfg.Store)
	if err != nil {
		p.log.Warn("roster store unavailable", "dir", p.cfg.StateDir, "err", err)
		return nil, err
	}
	p.store = s
	p.heartbeat(s)
	return s, nil
}

// heartbeat writes the tool-call renewal of this server's workers to the
// store, so every process reading the roster — on another machine too —
// sees leases an agent keeps busy with (the read side renews from the
// local presence record only, see roster.LastCall). When the server's
// last tool call advanced, the leases of the workers it checked in (its
// pid on this host: never another process's workers) are extended from
// that call, at most once per HeartbeatWrite: one small write a minute
// while the agent works, none while it is idle.
func (p *Provider) heartbeat(s roster.Store) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	p.stopBeat = func() { cancel(); <-done }
	pid := p.agentPID()
	host, _ := os.Hostname()
	go func() {
		defer close(done)
		tick := time.NewTicker(HeartbeatCheck)
		defer tick.Stop()
		var renewed, wrote time.Time // the call last written, and when
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			now := time.Now()
			at, ok := roster.LastCall(pid, now)
			if !ok || !at.After(renewed) || (!wrote.IsZero() && now.Sub(wrote) < HeartbeatWrite) {
				continue
			}
			wctx, stop := context.WithTimeout(ctx, HeartbeatCheck)
			_, err := s.RenewLeases(wctx, host, pid, at)
			stop()
			wrote = now
			if err != nil {
				if ctx.Err() == nil {
					p.log.Warn("lease renewal not written; other machines see the last stored expiry", "err", err)
				}
				continue
			}
			renewed = at
		}
	}()
}

// Store returns the open store, opening it if needed.
func (p *Provider) Store(ctx context.Context) (roster.Store, error) { return p.openStore(ctx) }

// relay publishes the changes other processes commit to a shared
// (PostgreSQL) roster, so shift://status subscribers here hear a check-in
// made on another machine. A change of a workspace whose name only came as
// a hash is published when it is the default workspace; a resync (the
// listening connection was re-established) publishes the default
// workspace's URIs, so subscribers re-read.
func (p *Provider) relay(n roster.Notifier) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	p.stopRelay = func() { cancel(); <-done }
	defaultHash := roster.WorkspaceHash(p.cfg.DefaultWorkspace)
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case ev := <-n.Changes():
				switch {
				case ev.Workspace != "":
					p.publish(ev.Workspace)
				case p.cfg.DefaultWorkspace != "" && (ev.Resync || ev.Hash == defaultHash):
					p.publish(p.cfg.DefaultWorkspace)
				}
			}
		}
	}()
}

// WatchResources streams resource changes. With a PostgreSQL roster it
// opens the store first, so this process listens for other processes'
// changes from the moment anyone subscribes, not from its first call.
func (p *Provider) WatchResources(ctx context.Context, ch chan<- sdk.ResourceChange) error {
	if p.cfg.DatabaseURL != "" {
		if _, err := p.openStore(ctx); err != nil {
			p.log.Warn("roster notifications from other processes unavailable until the store opens", "err", err)
		}
	}
	return p.Broadcaster.WatchResources(ctx, ch)
}

// CheckInData is the structuredContent of a successful shift_check_in:
// the session (flat, as the shift server returns it), what the call
// changed, the resolved workspace and its status URI, the workspace's
// active workers (bounded, with what was left out) and the coordination
// notice.
type CheckInData struct {
	WorkerID    string         `json:"workerId"`
	Gist        string         `json:"gist"`
	Files       []string       `json:"files"`
	Leases      []roster.Lease `json:"leases,omitempty"`
	CheckedInAt string         `json:"checkedInAt"`
	UpdatedAt   string         `json:"updatedAt"`
	Change      roster.Change  `json:"change"`
	// Overlaps is the one line naming the files you and other workers
	// both touch where one of you holds a live lease; omitted when none.
	Overlaps       string       `json:"overlaps,omitempty"`
	Workspace      string       `json:"workspace"`
	StatusURI      string       `json:"statusUri"`
	ActiveWorkers  []roster.Row `json:"activeWorkers"`
	OmittedWorkers int          `json:"omittedWorkers"`
	OmittedFiles   int          `json:"omittedFiles"`
	Notice         string       `json:"notice"`
}

// CheckOutData is the structuredContent of a successful shift_check_out.
type CheckOutData struct {
	Removed        bool         `json:"removed"`
	WorkerID       string       `json:"workerId"`
	Summary        string       `json:"summary,omitempty"`
	Workspace      string       `json:"workspace"`
	StatusURI      string       `json:"statusUri"`
	ActiveWorkers  []roster.Row `json:"activeWorkers"`
	OmittedWorkers int          `json:"omittedWorkers"`
	OmittedFiles   int          `json:"omittedFiles"`
}

// Recovery tells the agent what to do next.
type Recovery struct {
	Hint string `json:"hint"`
}

// UnknownWorkerData is error.data of CodeUnknownWorker.
type UnknownWorkerData struct {
	Reason         string       `json:"reason"`
	WorkerID       string       `json:"workerId"`
	Workspace      string       `json:"workspace"`
	StatusURI      string       `json:"statusUri"`
	Recovery       Recovery     `json:"recovery"`
	ActiveWorkers  []roster.Row `json:"activeWorkers"`
	OmittedWorkers int          `json:"omittedWorkers"`
	OmittedFiles   int          `json:"omittedFiles"`
}

// StoreErrorData is error.data of the store error codes.
type StoreErrorData struct {
	Reason    string   `json:"reason"`
	Operation string   `json:"operation"`
	StateDir  string   `json:"stateDir"`
	Database  string   `json:"database"`
	Details   string   `json:"details"`
	Recovery  Recovery `json:"recovery"`
}

type checkInArgs struct {
	Gist      string             `json:"gist"`
	Files     *[]string          `json:"files"`
	Claims    *map[string]string `json:"claims"`
	LeaseMin  int                `json:"leaseMinutes"`
	Workspace string             `json:"workspace"`
	WorkerID  string             `json:"workerId"`
}

type checkOutArgs struct {
	WorkerID  string `json:"workerId"`
	Workspace string `json:"workspace"`
	Summary   string `json:"summary"`
}

// CallTool runs shift_check_in or shift_check_out.
func (p *Provider) CallTool(ctx context.Context, call *sdk.Call) (*sdk.Result, error) {
	if call == nil {
		return nil, errors.New("shiftroster: nil call")
	}
	switch call.Tool {
	case ToolCheckIn:
		return p.checkIn(ctx, call)
	case ToolCheckOut:
		return p.checkOut(ctx, call)
	}
	return nil, invalid("unknown tool: " + call.Tool)
}

func invalid(details string) *sdk.ArgumentError {
	return &sdk.ArgumentError{Message: "Invalid params", Details: details}
}

// decode reads the arguments strictly. The host validated them against the
// inputSchema already; this guards direct callers and host bugs.
func decode(call *sdk.Call, v any) error {
	raw := bytes.TrimSpace(call.Arguments)
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return invalid("arguments do not match the tool's input schema: " + err.Error())
	}
	return nil
}

func checkLen(field, v string, lo, hi int) error {
	switch n := utf8.RuneCountInString(v); {
	case n < lo:
		return invalid(fmt.Sprintf("arguments.%s must not be empty", field))
	case n > hi:
		return invalid(fmt.Sprintf("arguments.%s must be at most %d characters", field, hi))
	}
	return nil
}

// workspace resolves a workspace argument: empty means the default,
// anything else is an opaque name used exactly.
func (p *Provider) workspace(arg string) (string, error) {
	if arg != "" {
		if err := checkLen("workspace", arg, 1, roster.MaxWorkspaceLen); err != nil {
			return "", err
		}
		return arg, nil
	}
	if p.cfg.DefaultWorkspace == "" {
		return "", invalid("arguments.workspace is required here: the default workspace is unknown (the start directory could not be read); pass workspace or set " + roster.EnvWorkspace)
	}
	return p.cfg.DefaultWorkspace, nil
}

func (p *Provider) checkIn(ctx context.Context, call *sdk.Call) (*sdk.Result, error) {
	var a checkInArgs
	if err := decode(call, &a); err != nil {
		return nil, err
	}
	if err := checkLen("gist", a.Gist, 1, roster.MaxGistLen); err != nil {
		return nil, err
	}
	in := roster.CheckInInput{Gist: a.Gist}
	if a.Files != nil {
		if len(*a.Files) > roster.MaxFiles {
			return nil, invalid(fmt.Sprintf("arguments.files must have at most %d items", roster.MaxFiles))
		}
		for i, f := range *a.Files {
			if err := checkLen(fmt.Sprintf("files[%d]", i), f, 1, roster.MaxFileLen); err != nil {
				return nil, err
			}
		}
		in.Files, in.HasFiles = *a.Files, true
	}
	if a.Claims != nil {
		if len(*a.Claims) > roster.MaxFiles {
			return nil, invalid(fmt.Sprintf("arguments.claims must have at most %d entries", roster.MaxFiles))
		}
		for f, m := range *a.Claims {
			if m != roster.Shared && m != roster.Exclusive {
				return nil, invalid(fmt.Sprintf("arguments.claims[%q] must be \"shared\" or \"exclusive\"", f))
			}
		}
		in.Claims, in.HasClaims = *a.Claims, true
	}
	if a.LeaseMin != 0 {
		if a.LeaseMin < 1 || time.Duration(a.LeaseMin)*time.Minute > roster.MaxLease {
			return nil, invalid(fmt.Sprintf("arguments.leaseMinutes must be between 1 and %d", int(roster.MaxLease/time.Minute)))
		}
		in.LeaseFor = time.Duration(a.LeaseMin) * time.Minute
	}
	in.Agent = p.agent(call.Meta)
	if a.WorkerID != "" {
		id, ok := roster.NormalizeWorkerID(a.WorkerID)
		if !ok {
			return nil, invalid("arguments.workerId must be 6 ASCII letters or digits")
		}
		in.WorkerID = id
	}
	ws, err := p.workspace(a.Workspace)
	if err != nil {
		return nil, err
	}
	in.Workspace = ws
	store, err := p.openStore(ctx)
	if err != nil {
		return p.storeFailure(err, ws)
	}
	res, err := store.CheckIn(ctx, in)
	var (
		uw *roster.UnknownWorkerError
		ce *roster.ClaimError
	)
	if errors.As(err, &uw) {
		return unknownWorker(uw), nil
	}
	if errors.As(err, &ce) {
		return nil, invalid("arguments.claims: " + ce.Error())
	}
	if err != nil {
		return p.storeFailure(err, ws)
	}
	if res.Change != roster.Unchanged {
		p.publish(ws)
	}
	l := ListRows(res.Workers, res.Totals)
	d := &CheckInData{
		WorkerID: res.Session.WorkerID, Gist: res.Session.Gist, Files: res.Session.Files, Leases: res.Session.Leases,
		CheckedInAt: res.Session.CheckedInAt, UpdatedAt: res.Session.UpdatedAt, Change: res.Change,
		Workspace: ws, StatusURI: QualifiedStatusURI(ws), ActiveWorkers: l.Rows,
		OmittedWorkers: l.OmittedWorkers, OmittedFiles: l.OmittedFiles,
		Notice:   Notice(l.solo(res.Session.WorkerID)),
		Overlaps: OverlapLine(res.Workers, res.Session.WorkerID),
	}
	return ok(d, CheckInMarkdown(d))
}

func (p *Provider) checkOut(ctx context.Context, call *sdk.Call) (*sdk.Result, error) {
	var a checkOutArgs
	if err := decode(call, &a); err != nil {
		return nil, err
	}
	id, valid := roster.NormalizeWorkerID(a.WorkerID)
	if !valid {
		return nil, invalid("arguments.workerId must be 6 ASCII letters or digits")
	}
	if err := checkLen("summary", a.Summary, 0, MaxSummaryLen); err != nil {
		return nil, err
	}
	ws, err := p.workspace(a.Workspace)
	if err != nil {
		return nil, err
	}
	store, err := p.openStore(ctx)
	if err != nil {
		return p.storeFailure(err, ws)
	}
	res, err := store.CheckOut(ctx, ws, id)
	if err != nil {
		return p.storeFailure(err, ws)
	}
	if res.Removed {
		p.publish(ws)
	}
	l := ListRows(res.Workers, res.Totals)
	d := &CheckOutData{Removed: res.Removed, WorkerID: id, Summary: a.Summary, Workspace: ws,
		StatusURI: QualifiedStatusURI(ws), ActiveWorkers: l.Rows, OmittedWorkers: l.OmittedWorkers, OmittedFiles: l.OmittedFiles}
	return ok(d, CheckOutMarkdown(d))
}

// agent is who makes a call: the MCP client, this host and the fluxgit
// server process.
func (p *Provider) agent(m sdk.Meta) roster.Agent {
	host, _ := os.Hostname()
	pid := p.agentPID()
	// The same label the handshake provider sends as the proposer, so the
	// gateway's guard recognises this client's workers.
	return roster.Agent{Client: operation.ClientLabel(m.ClientName, m.ClientVersion), Host: host, PID: pid}
}

// agentPID is the fluxgit server process recorded as a worker's agent.
func (p *Provider) agentPID() int {
	if p.cfg.AgentPID != 0 {
		return p.cfg.AgentPID
	}
	return os.Getppid()
}

func ok(data any, text string) (*sdk.Result, error) {
	r, err := sdk.OK(Source, data)
	if err != nil {
		return nil, err
	}
	r.Text = text
	return r, nil
}

// publish announces a committed change of ws: its qualified URI, and the
// bare URI too when ws is the default workspace.
func (p *Provider) publish(ws string) {
	p.Publish(sdk.ResourceChange{URI: QualifiedStatusURI(ws)})
	if ws == p.cfg.DefaultWorkspace {
		p.Publish(sdk.ResourceChange{URI: StatusURI})
	}
}

func unknownWorker(e *roster.UnknownWorkerError) *sdk.Result {
	d := &UnknownWorkerData{
		Reason: ReasonUnknownWorker, WorkerID: e.WorkerID, Workspace: e.Workspace,
		StatusURI: QualifiedStatusURI(e.Workspace),
		Recovery:  Recovery{Hint: "Omit workerId to start a new session, or reuse an ID from the active workers table (it may have been checked out, or belong to another workspace)."},
	}
	l := ListRows(e.Workers, e.Totals)
	d.ActiveWorkers, d.OmittedWorkers, d.OmittedFiles = l.Rows, l.OmittedWorkers, l.OmittedFiles
	msg := fmt.Sprintf("Worker ID %s not found in workspace %s. Omit workerId to start a new session.", e.WorkerID, EscapeCell(e.Workspace))
	r := sdk.Fail(Source, CodeUnknownWorker, msg, d)
	r.Text = UnknownWorkerMarkdown(d, msg)
	return r
}

// storeFailure turns a store error into its tool error. Cancellation and
// anything unexpected stay Go errors (JSON-RPC errors from the host).
func (p *Provider) storeFailure(err error, ws string) (*sdk.Result, error) {
	var se *roster.StoreError
	if !errors.As(err, &se) {
		return nil, err
	}
	code, msg, hint := describeStoreError(se)
	d := &StoreErrorData{Reason: se.Reason, Operation: se.Op, StateDir: se.Dir, Database: se.Path, Details: fmt.Sprint(se.Err), Recovery: Recovery{Hint: hint}}
	p.log.Warn("roster store error", "reason", se.Reason, "op", se.Op, "path", se.Path, "workspace", ws, "err", se.Err)
	r := sdk.Fail(Source, code, msg, d)
	r.Text = StoreErrorMarkdown(d, msg)
	return r, nil
}

func describeStoreError(se *roster.StoreError) (code int, message, hint string) {
	if se.Backend == roster.BackendPostgres {
		return describePostgresError(se)
	}
	switch se.Reason {
	case roster.ReasonBusy:
		return CodeStoreBusy, "Roster store busy: another process held the roster lock for the whole wait budget",
			"Retry the call shortly. If it keeps failing, a process may be stuck holding the lock on " + se.Path + "."
	case roster.ReasonCorrupt:
		return CodeStoreCorrupt, "Roster store corrupt: " + se.Path + " is not a usable SQLite roster",
			"Move " + se.Path + " and its -wal and -shm files aside (the next call starts an empty roster), then check in again."
	case roster.ReasonReadOnly:
		return CodeStoreReadOnly, "Roster store read-only: " + se.Dir + " cannot be written",
			"Make " + se.Dir + " and " + se.Path + " writable for this user, or set " + roster.EnvStateDir + " to a writable local directory, then retry."
	case roster.ReasonIncompatible:
		return CodeStoreIncompatible, "Roster store written by a newer fluxgit",
			"Upgrade fluxgit, or set " + roster.EnvStateDir + " to another directory."
	case roster.ReasonUnsafe:
		return CodeStoreUnavailable, "Roster state directory unsafe: " + fmt.Sprint(se.Err),
			se.Fix + " Or set " + roster.EnvStateDir + " to a private directory of your own (a missing one is created with mode 0700)."
	}
	return CodeStoreUnavailable, "Roster store unavailable",
		"Set " + roster.EnvStateDir + " to a writable directory on a local file system that supports SQLite locking, then retry."
}

// describePostgresError words a PostgreSQL roster failure; se.Path is
// the URL with its credentials redacted.
func describePostgresError(se *roster.StoreError) (code int, message, hint string) {
	switch se.Reason {
	case roster.ReasonBusy:
		return CodeStoreBusy, "Roster store busy: conflicting transactions on the PostgreSQL roster kept this call from committing within the wait budget",
			"Retry the call shortly; nothing was changed."
	case roster.ReasonCorrupt:
		return CodeStoreCorrupt, "Roster store corrupt: the PostgreSQL roster holds a row this fluxgit cannot have written",
			"Delete the malformed row from shift_roster_workers in " + se.Path + " (its worker id is in details), then retry."
	case roster.ReasonReadOnly:
		return CodeStoreReadOnly, "Roster store read-only: the PostgreSQL roster refuses this user's writes",
			"Grant the user of " + roster.EnvDatabaseURL + " INSERT, UPDATE and DELETE on shift_roster_workers (or use a primary, not a standby), then retry."
	case roster.ReasonIncompatible:
		return CodeStoreIncompatible, "Roster store written by a newer fluxgit",
			"Upgrade fluxgit, or point " + roster.EnvDatabaseURL + " at another database."
	}
	return CodeStoreUnavailable, "Roster store unavailable: the PostgreSQL roster at " + se.Path + " cannot be used",
		"Check that the server named by " + roster.EnvDatabaseURL + " is running and reachable and its credentials are right (or unset it for the local SQLite roster), then retry; read shift://status to see what was committed."
}

// ReadResource serves shift://status and shift://status?workspace=NAME as
// Markdown.
func (p *Provider) ReadResource(ctx context.Context, uri string, _ sdk.Meta) (*sdk.Resource, error) {
	ws, isDefault, valid := ParseStatusURI(uri)
	if !valid {
		return nil, sdk.ErrResourceNotFound
	}
	if isDefault {
		if p.cfg.DefaultWorkspace == "" {
			return nil, sdk.ErrResourceNotFound
		}
		ws = p.cfg.DefaultWorkspace
	}
	var (
		rows   []roster.Row
		totals roster.Totals
	)
	if !p.noRosterYet() {
		store, err := p.openStore(ctx)
		if err != nil {
			return nil, err
		}
		if rows, totals, err = store.Snapshot(ctx, ws); err != nil {
			return nil, err
		}
	}
	return &sdk.Resource{URI: uri, MimeType: "text/markdown", Text: StatusMarkdown(ws, ListRows(rows, totals))}, nil
}

// noRosterYet reports that no process has created the roster database, so
// a read can answer "nobody is active" without creating the state
// directory: reads have no side effects on disk.
func (p *Provider) noRosterYet() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.store != nil || p.cfg.StateDir == "" || p.cfg.DatabaseURL != "" {
		return false
	}
	_, err := os.Stat(filepath.Join(p.cfg.StateDir, roster.DatabaseName))
	return errors.Is(err, fs.ErrNotExist)
}
