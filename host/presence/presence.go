// Package presence keeps this process's presence record: a small file,
// <run_dir>/presence/mcp/<pid>.json, that says which MCP client this
// fluxgit process serves and which repositories it touched last. Other
// fluxgit processes (agents.presence) and FluxGit read these records to see
// which agents work in a repository; the record is how one agent's
// sidecar becomes visible to another's.
//
// The record is best effort: a failure to write it costs one warning on
// stderr and never affects a tool call. It holds only the client's name
// and version and, per repository, its canonical path, the time of the
// last call and the tool's name: never arguments or results.
package presence

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fluxgit/fluxgit/internal/audit"
	"github.com/fluxgit/fluxgit/internal/envflag"
	"github.com/fluxgit/fluxgit/internal/privdir"
	"github.com/fluxgit/fluxgit/internal/rundir"
)

// EnvDisabled, set to a truthy value (see internal/envflag), turns the
// presence record off: no file is written.
const EnvDisabled = "FLUXGIT_MCP_PRESENCE_DISABLED"

// Writer policy. The document's format and its limits (schemaVersion,
// 16 repositories, 128-character client fields) are internal/rundir's.
const (
	// StaleAge: the first write removes records and temporary files at
	// least this old, left behind by processes that did not exit cleanly.
	StaleAge = 24 * time.Hour
	// MaxSweepEntries bounds the directory entries the sweep looks at, so
	// a directory flooded with files cannot stall the first call.
	MaxSweepEntries = 512
)

// Options configure a Writer.
type Options struct {
	// RunDir is fluxgit's run directory; the record goes to
	// rundir.PresenceDir(RunDir)/<PID>.json.
	RunDir string
	// PID names the record; zero means this process.
	PID int
	// Warn reports the first failure (only the first: a broken run
	// directory must not flood the log). Nil writes to stderr.
	Warn func(msg string)
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Writer keeps one process's presence record. Its methods are safe for
// concurrent use; a nil *Writer does nothing.
type Writer struct {
	runDir    string
	dir, path string
	pid       int
	warn      func(string)
	now       func() time.Time
	setupErr  error // a run directory that could not be found

	mu     sync.Mutex
	doc    rundir.Presence
	swept  bool
	warned bool
	wrote  bool // the record exists (as far as this process knows)
	closed bool
}

// New returns a Writer for o. Nothing is written before the first Record.
func New(o Options) *Writer {
	w := &Writer{pid: o.PID, warn: o.Warn, now: o.Now}
	if w.pid == 0 {
		w.pid = os.Getpid()
	}
	if w.now == nil {
		w.now = time.Now
	}
	if w.warn == nil {
		w.warn = func(msg string) { fmt.Fprintln(os.Stderr, "fluxgit: "+msg) }
	}
	switch {
	case o.RunDir == "":
		w.setupErr = errors.New("no run directory")
	case !filepath.IsAbs(o.RunDir):
		w.setupErr = fmt.Errorf("run directory %s is not absolute", o.RunDir)
	default:
		w.runDir = o.RunDir
		w.dir = rundir.PresenceDir(o.RunDir)
		w.path = filepath.Join(w.dir, rundir.PresenceName(w.pid))
	}
	w.doc = rundir.Presence{SchemaVersion: rundir.PresenceSchemaVersion, PID: w.pid, Repos: []rundir.PresenceRepo{}}
	return w
}

// FromEnv returns the Writer the host uses: nil when EnvDisabled is
// truthy, else one for rundir.Dir (a run directory that cannot be
// determined is reported by the first Record's warning).
func FromEnv(warn func(string)) *Writer {
	if envflag.Set(EnvDisabled) {
		return nil
	}
	runDir, err := rundir.Dir()
	w := New(Options{RunDir: runDir, Warn: warn})
	if err != nil {
		w.setupErr = fmt.Errorf("no run directory: %w", err)
	}
	return w
}

// Path is the record's file ("" when there is no run directory).
func (w *Writer) Path() string {
	if w == nil {
		return ""
	}
	return w.path
}

// Record notes a call of tool on the canonical repoPath by the client
// clientName/clientVersion and rewrites the record. The caller decides
// which calls count (F§11: every read naming a repository, and writes
// the gateway accepted). Failures are reported once and otherwise
// ignored.
func (w *Writer) Record(clientName, clientVersion, repoPath, tool string) {
	if w == nil || repoPath == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return // the session ended; a late call must not resurrect the record
	}
	w.doc.Client = client(clientName, clientVersion)
	now := w.now()
	entry := rundir.PresenceRepo{RepoPath: repoPath, LastCallMs: now.UnixMilli(), LastTool: tool}
	repos := make([]rundir.PresenceRepo, 0, rundir.MaxPresenceRepos)
	repos = append(repos, entry)
	for _, r := range w.doc.Repos {
		if r.RepoPath != repoPath && len(repos) < rundir.MaxPresenceRepos {
			repos = append(repos, r)
		}
	}
	w.doc.Repos = repos
	if err := w.write(now); err != nil {
		w.warnOnce(err)
		return
	}
	w.wrote = true
}

// Close deletes the record (the clean exit) and stops further writes.
func (w *Writer) Close() {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	w.closed = true
	if !w.wrote {
		return
	}
	if err := rundir.RemovePresence(w.runDir, w.pid); err != nil {
		w.warnOnce(err)
	}
}

func (w *Writer) warnOnce(err error) {
	if w.warned {
		return
	}
	w.warned = true
	w.warn("presence record not written (tool calls are unaffected; set " + EnvDisabled + "=1 to turn it off): " + err.Error())
}

// write replaces the record atomically: a reader sees the old document or
// the new one, never a partial file.
func (w *Writer) write(now time.Time) error {
	if w.setupErr != nil {
		return w.setupErr
	}
	if err := ensureDir(w.dir); err != nil {
		return err
	}
	if !w.swept {
		w.swept = true
		sweep(w.dir, now)
	}
	if err := rundir.WritePresence(w.runDir, w.doc); err != nil {
		return fmt.Errorf("%s: %w", w.path, err)
	}
	return nil
}

// ensureDir creates the presence directory (0700) and refuses one that is
// a symbolic link or not a directory: records written through a link
// would land wherever it points.
func ensureDir(dir string) error {
	if err := privdir.Check(dir, privdir.Options{Label: "presence directory", Create: true, Forbidden: 0o077}); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir() {
		return fmt.Errorf("presence directory %s is not a real directory", dir)
	}
	return nil
}

// sweep removes records and temporary files at least StaleAge old: those
// of processes that crashed or were killed. It looks at no more than
// MaxSweepEntries entries; failures are ignored (the next process sweeps
// again).
func sweep(dir string, now time.Time) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	entries, _ := d.ReadDir(MaxSweepEntries)
	_ = d.Close()
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".json") && !strings.HasSuffix(name, ".tmp") {
			continue
		}
		if e.IsDir() {
			continue
		}
		fi, err := e.Info()
		if err != nil || now.Sub(fi.ModTime()) < StaleAge {
			continue
		}
		_ = os.Remove(filepath.Join(dir, name))
	}
}

// client builds the record's client: the name is null when it would
// become the host's fallback agent id (no usable name), the version when
// nothing is left of it.
func client(name, version string) rundir.PresenceClient {
	var c rundir.PresenceClient
	if n := rundir.CleanClientField(name); n != "" && audit.SessionID(n) != audit.FallbackSessionID {
		c.Name = &n
	}
	if v := rundir.CleanClientField(version); v != "" {
		c.Version = &v
	}
	return c
}
