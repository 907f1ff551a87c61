// Package repo is the core of the git-read provider and its repository
// reads (repo.*, commit.details, history.search, diff.text, file.*,
// conflict.read, worktree.*, submodule.status): read-only tools answered
// from the local git CLI.
//
// Every git call goes through gitexec, which owns the hardening. This
// package adds what is specific to serving untrusted callers: each call
// first proves the path is a work tree and that its git directories stay
// inside the allowed roots, user revisions are refused when they look like
// options and are pinned to a full object id before use, and every output
// has an explicit budget with a truncated flag instead of growing without
// bound.
//
// The other tool families (plugins/gitread/fleet, restore, semantic) are
// served on the same *Provider through the small exported API here (Open,
// Run, Read, Finish, the run-dir and merge-tree helpers); plugins/gitread
// joins every family's table into the one provider.
package repo

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/fluxgit/fluxgit/internal/credpaths"
	"github.com/fluxgit/fluxgit/internal/gitexec"
	"github.com/fluxgit/fluxgit/internal/pathwithin"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// Source is the Result.Source of every answer: the data came from git on
// this machine.
const source = "local-git"

// codeGitFailed and messageGitFailed form the tool error for any failed or
// refused git call; its data is {command, details}.
const (
	codeGitFailed    = 10010
	messageGitFailed = "Local git fallback failed"
)

// Provider serves the git-read tools.
type Provider struct {
	runner    *gitexec.Runner
	discovery discoveryCache
	gitlinks  gitlinkCache
	walks     walkCache
}

// New returns a Provider using the shared hardened git runner.
func New() *Provider { return &Provider{runner: gitexec.Default} }

// NewWithRunner returns a Provider running git with runner (a test's, say,
// observing every command line).
func NewWithRunner(runner *gitexec.Runner) *Provider { return &Provider{runner: runner} }

// ToolFunc serves one tool. Most tools return their data (or an error
// that Finish maps to a tool error) and are wrapped by Read; tools whose
// results are not plain local-git data (gateway-gated, say) build the
// *sdk.Result themselves. Every tool is one line of a family's table
// (tools.go here, and in plugins/gitread/fleet, restore and semantic).
type ToolFunc func(p *Provider, ctx context.Context, call *sdk.Call) (*sdk.Result, error)

// read wraps a data-returning tool: finish maps its outcome to the result.
func read(fn func(p *Provider, ctx context.Context, call *sdk.Call) (any, error)) ToolFunc {
	return func(p *Provider, ctx context.Context, call *sdk.Call) (*sdk.Result, error) {
		// A repository moved during a git call (gitexec.ErrMoved) is
		// usually an innocent rename next to it inside a busy root; the
		// tools only read, so the whole call is simply done again, with
		// fresh pins.
		for attempt := 1; ; attempt++ {
			actx, pins := gitexec.WithPins(ctx)
			data, err := fn(p, actx, call)
			pins.Close()
			if attempt < movedAttempts && errors.Is(err, gitexec.ErrMoved) && ctx.Err() == nil {
				continue
			}
			return finish(data, err)
		}
	}
}

// movedAttempts is how often a call that hit gitexec.ErrMoved is tried.
const movedAttempts = 3

// Call runs one tool on p with the per-call pins: repositories Open
// checks are pinned for this call only (gitexec.WithPins).
func (p *Provider) Call(ctx context.Context, call *sdk.Call, fn ToolFunc) (*sdk.Result, error) {
	ctx, pins := gitexec.WithPins(ctx)
	defer pins.Close()
	return fn(p, ctx, call)
}

// failure is a refusal or an unusable git answer, reported like a failed
// git call (10010) with the command that produced it.
type failure struct {
	command []string
	details string
}

// Error renders the command and the details on one line.
func (f *failure) Error() string { return strings.Join(f.command, " ") + ": " + f.details }

// failData is the 10010 payload: the reference's command and details,
// plus, when the failure is one the agent can fix (not a repository, an
// unknown revision, a missing file), its kind and how to fix it.
type failData struct {
	Command []string `json:"command"`
	Details string   `json:"details"`
	Kind    string   `json:"kind,omitempty"`
	Hint    string   `json:"hint,omitempty"`
}

// newFailData fills in the kind and hint of a 10010 payload.
func newFailData(command []string, details string) failData {
	kind, hint := gitexec.Classify(details)
	return failData{Command: command, Details: details, Kind: kind, Hint: hint}
}

// finish turns a tool's outcome into the provider answer.
func finish(data any, err error) (*sdk.Result, error) {
	if err == nil {
		return sdk.OK(source, data)
	}
	var (
		ae *sdk.ArgumentError
		ge *gitexec.Error
		f  *failure
	)
	switch {
	case errors.As(err, &ae):
		return nil, ae
	case errors.As(err, &f):
		return sdk.Fail(source, codeGitFailed, messageGitFailed, newFailData(f.command, f.details)), nil
	case errors.As(err, &ge):
		return sdk.Fail(source, codeGitFailed, messageGitFailed, newFailData(ge.Command, ge.Details)), nil
	}
	return nil, err
}

func invalid(details string) *sdk.ArgumentError {
	return &sdk.ArgumentError{Message: "Invalid params", Details: details}
}

// decode unmarshals the call's arguments. The host validated them against
// the schema already; this only guards against a host bug or a direct
// caller, so the message stays generic.
func decode(call *sdk.Call, v any) error {
	raw := call.Arguments
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return invalid("arguments do not match the tool's input schema: " + err.Error())
	}
	return nil
}

// intArg reads an optional integer argument within [lo, hi]. JSON Schema's
// "integer" admits 5.0, so a number with an integral value is accepted.
func intArg(name string, n *json.Number, def, lo, hi int64) (int64, error) {
	if n == nil {
		return def, nil
	}
	v, err := n.Int64()
	if err != nil {
		f, ferr := n.Float64()
		if ferr != nil || f != float64(int64(f)) {
			return 0, invalid("arguments." + name + " must be an integer")
		}
		v = int64(f)
	}
	if v < lo || v > hi {
		return 0, invalid(fmt.Sprintf("arguments.%s must be between %d and %d", name, lo, hi))
	}
	return v, nil
}

// Repo is a validated repository for one call.
type Repo struct {
	// dir is the work tree's top level, where every later command runs so
	// repository-relative paths mean the same thing whatever subdirectory
	// repoPath named.
	dir string
	// gitDir and commonDir are the absolute (symlink-free when they
	// resolve) git directory and common directory open() found.
	gitDir, commonDir string
	// pin holds the work tree that passed the checks; git calls naming dir
	// run on it (gitexec.Pin). nil outside CallTool.
	pin *gitexec.Pin
}

// open checks that repoPath is a git work tree and, when the host confines
// calls, that everything git may read for it stays inside the allowed
// roots (confineRepo). The directory that passed is pinned for the rest
// of the call, so a later git call cannot be sent elsewhere by replacing
// it. Discovery (one rev-parse) is cached per path and reused while the
// files it was derived from are unchanged (discovery.go), so a tool that
// needs one git call makes one.
func (p *Provider) open(ctx context.Context, call *sdk.Call, repoPath string) (*Repo, error) {
	if repoPath == "" {
		return nil, invalid("arguments.repoPath is required")
	}
	if !filepath.IsAbs(repoPath) {
		return nil, invalid("arguments.repoPath must be an absolute filesystem path")
	}
	if strings.ContainsAny(repoPath, "\x00\n") {
		return nil, invalid("arguments.repoPath must not contain NUL or newline characters")
	}
	repoPath = filepath.Clean(repoPath)
	// A repository inside a protected location (the gateway's state, the
	// secret directory) is refused whole; the host refuses it first.
	if e, ok := credpaths.Lookup(protectedList(), repoPath); ok {
		return nil, refuseProtected("arguments.repoPath", e)
	}
	pins := gitexec.PinsFrom(ctx)
	var pin *gitexec.Pin
	if pins != nil {
		var err error
		if pin, err = gitexec.OpenPin(repoPath); err != nil {
			// Let git describe the problem (missing, not a directory, no
			// permission) in its usual words.
			args := []string{"rev-parse", "--show-toplevel"}
			if _, gerr := p.runner.Run(ctx, repoPath, args...); gerr != nil {
				return nil, gerr
			}
			return nil, &failure{gitexec.Command(repoPath, args...), "cannot open the repository directory: " + err.Error()}
		}
		pins.Add(pin)
	}

	d, cached := p.discovery.get(repoPath, pin)
	if !cached {
		var err error
		if d, err = p.discover(ctx, repoPath, pin); err != nil {
			return nil, err
		}
	}
	gitlinks := func() ([]gitlink, error) { return p.gitlinksOf(ctx, d.top, d.gitDir) }
	if err := confineRepo(call.Meta.AllowedRoots, d.top, d.gitDir, d.commonDir, gitlinks, &p.walks); err != nil {
		return nil, err
	}
	if err := p.confineIncludes(ctx, call.Meta.AllowedRoots, d); err != nil {
		return nil, err
	}
	r := &Repo{dir: d.top, gitDir: d.gitDir, commonDir: d.commonDir, pin: pin}
	if pin == nil {
		return r, nil
	}
	if d.top != repoPath {
		// repoPath named a subdirectory (or a path with symlinks): pin the
		// work tree itself, after proving it holds the directory checked.
		top, err := gitexec.OpenPin(d.top)
		if err != nil {
			return nil, &failure{gitexec.Command(repoPath, "rev-parse", "--show-toplevel"), "cannot open the work tree: " + err.Error()}
		}
		pins.Add(top)
		if fi, err := os.Stat(filepath.Join(d.top, filepath.FromSlash(d.prefix))); err != nil || !os.SameFile(fi, pin.Info()) {
			return nil, &failure{gitexec.Command(repoPath, "rev-parse", "--show-toplevel"),
				"the repository directory was moved or replaced while it was being checked; retry the call"}
		}
		pin, r.pin = top, top
	}
	for _, w := range [][2]string{{"the git directory", d.gitDir}, {"the git common directory", d.commonDir}} {
		if err := pin.Watch(w[0], w[1]); err != nil {
			return nil, &failure{gitexec.Command(repoPath, "rev-parse", "--git-dir"), "cannot stat " + w[0] + ": " + err.Error()}
		}
	}
	if roots := call.Meta.AllowedRoots; len(roots) > 0 {
		// Confined: also detect the work tree (or the repository holding
		// the git data of a linked work tree) being renamed away and back
		// while git runs (gitexec.Pin.Guard). The directories above it are
		// guarded, not the work tree itself, whose entries change whenever
		// a file is saved.
		dirs := guardedDirs(filepath.Dir(d.top), roots)
		if !pathwithin.Within(d.top, d.commonDir) {
			dirs = append(dirs, guardedDirs(filepath.Dir(filepath.Dir(d.commonDir)), roots)...)
		}
		for _, g := range dirs {
			if err := pin.Guard(g); err != nil {
				return nil, &failure{gitexec.Command(repoPath, "rev-parse", "--show-toplevel"),
					"the repository was moved or replaced while it was being checked; retry the call"}
			}
		}
	}
	return r, nil
}

// guardedDirs lists dir and its ancestors up to the allowed root that
// holds it (none when dir is not inside a root): renaming an entry of any
// of them would send a path-based lookup elsewhere.
func guardedDirs(dir string, roots []string) []string {
	if !insideAny(dir, roots) {
		return nil
	}
	var out []string
	for {
		out = append(out, dir)
		for _, r := range roots {
			if dir == filepath.Clean(r) {
				return out
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return out
		}
		dir = parent
	}
}

// checkRev refuses a caller revision git could read as an option, such as
// "--output=/some/file", and one the exec layer could not pass.
func checkRev(field, rev string) error {
	if strings.HasPrefix(rev, "-") {
		return invalid("arguments." + field + " must not start with '-'")
	}
	if strings.IndexByte(rev, 0) >= 0 {
		return invalid("arguments." + field + " must not contain NUL")
	}
	return nil
}

// resolveCommit pins a caller revision to a full commit object id. Only the
// id is used afterwards, so nothing the caller typed reaches a later
// command line, and every later command sees the same commit.
func (p *Provider) resolveCommit(ctx context.Context, r *Repo, field, rev string) (string, error) {
	if err := checkRev(field, rev); err != nil {
		return "", err
	}
	args := []string{"rev-parse", "--verify", "--quiet", "--end-of-options", rev + "^{commit}"}
	out, err := p.runner.Run(ctx, r.dir, args...)
	if err != nil {
		var ge *gitexec.Error
		if errors.As(err, &ge) && errors.Is(err, gitexec.ErrExit) {
			return "", &failure{ge.Command, fmt.Sprintf("arguments.%s %q does not name a commit in this repository", field, rev)}
		}
		return "", err
	}
	oid := strings.TrimSpace(string(out))
	if !isOID(oid) {
		return "", &failure{gitexec.Command(r.dir, args...), "rev-parse did not return an object id"}
	}
	return oid, nil
}

// isOID accepts full SHA-1 and SHA-256 object ids.
func isOID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// pathText renders path bytes for JSON. Git paths are bytes, not text: when
// they are not valid UTF-8 the string is a lossy rendering and the exact
// bytes travel base64-encoded beside it.
func pathText(b []byte) (text, b64 string) {
	if utf8.Valid(b) {
		return string(b), ""
	}
	return strings.ToValidUTF8(string(b), "\uFFFD"), base64.StdEncoding.EncodeToString(b)
}

// fieldWriter splits a git output stream on sep and hands each complete
// field to fn as it arrives, so outputs far larger than the complete-mode
// cap can be counted while only a bounded prefix is kept. fn must copy the
// field if it keeps it.
// fn may return gitexec.ErrStop to end the call early once it has what it
// needs: git is killed and the unfinished last field is dropped.
type fieldWriter struct {
	sep     byte
	fn      func(field []byte) error
	partial []byte
	stopped bool
}

// maxField bounds one field (a path, a ref name) so a stream without
// separators cannot grow the buffer without limit.
const maxField = 1 << 20

// Write splits p into fields; an error from fn stops git.
func (w *fieldWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, w.sep)
		if i < 0 {
			if len(w.partial)+len(p) > maxField {
				return 0, errors.New("output field too long")
			}
			w.partial = append(w.partial, p...)
			break
		}
		field := p[:i]
		if len(w.partial) > 0 {
			w.partial = append(w.partial, field...)
			field = w.partial
		}
		err := w.fn(field)
		w.partial = w.partial[:0]
		if err != nil {
			w.stopped = errors.Is(err, gitexec.ErrStop)
			return 0, err
		}
		p = p[i+1:]
	}
	return n, nil
}

// flush delivers a final field that had no terminating separator.
func (w *fieldWriter) flush() error {
	if w.stopped || len(w.partial) == 0 {
		return nil
	}
	err := w.fn(w.partial)
	w.partial = nil
	return err
}

// stream runs git feeding fields to fn and flushes the last one.
func (p *Provider) stream(ctx context.Context, r *Repo, sep byte, fn func([]byte) error, args ...string) error {
	return p.streamTuned(ctx, r, gitexec.Tuning{}, sep, fn, args...)
}

// streamTuned is stream with performance settings for the call.
func (p *Provider) streamTuned(ctx context.Context, r *Repo, t gitexec.Tuning, sep byte, fn func([]byte) error, args ...string) error {
	w := &fieldWriter{sep: sep, fn: fn}
	if _, err := p.runner.StreamTuned(ctx, r.dir, t, w, args...); err != nil {
		return err
	}
	if err := w.flush(); err != nil {
		return &failure{gitexec.Command(r.dir, args...), err.Error()}
	}
	return nil
}

// parallel runs independent git calls of one tool concurrently and returns
// the first error in argument order, so the reported failure does not
// depend on scheduling.
func parallel(fns ...func() error) error {
	errs := make([]error, len(fns))
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fn()
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// atoi64 parses a decimal integer from git output.
func atoi64(s string) (int64, error) { return strconv.ParseInt(strings.TrimSpace(s), 10, 64) }
