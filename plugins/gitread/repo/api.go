package repo

// The core API the other git-read families (plugins/gitread/fleet,
// restore, semantic) build on: each is a thin, documented wrapper over
// what the repository reads use themselves, so every family opens,
// confines, runs git and reports failures the same way.

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// MovedAttempts is how often a tool call that hit gitexec.ErrMoved is
// tried (Read does it; a family's own wrapper does the same).
const MovedAttempts = movedAttempts

// Read wraps a data-returning tool like the repository reads: the call is
// done again, with fresh pins, when a repository moved under git, and
// Finish maps the outcome.
func Read(fn func(p *Provider, ctx context.Context, call *sdk.Call) (any, error)) ToolFunc {
	return read(fn)
}

// Finish turns a tool's outcome into the provider answer: data as an OK
// result from local git, refusals (Failure) and git failures as the 10010
// tool error, argument errors as *sdk.ArgumentError.
func Finish(data any, err error) (*sdk.Result, error) { return finish(data, err) }

// Failure is a refusal or an unusable git answer, reported by Finish like
// a failed git call (10010) with the command that produced it.
func Failure(command []string, details string) error { return &failure{command, details} }

// FailureDetails returns the details of a Failure (or of one the core
// reported) err wraps.
func FailureDetails(err error) (string, bool) {
	var f *failure
	if errors.As(err, &f) {
		return f.details, true
	}
	return "", false
}

// Invalid is the *sdk.ArgumentError ("Invalid params") for details.
func Invalid(details string) *sdk.ArgumentError { return invalid(details) }

// Decode unmarshals the call's arguments into v (numbers as json.Number).
func Decode(call *sdk.Call, v any) error { return decode(call, v) }

// IntArg reads an optional integer argument within [lo, hi], def when
// absent.
func IntArg(name string, n *json.Number, def, lo, hi int64) (int64, error) {
	return intArg(name, n, def, lo, hi)
}

// CheckRev refuses a caller revision git could read as an option.
func CheckRev(field, rev string) error { return checkRev(field, rev) }

// Parallel runs independent git calls concurrently and returns the first
// error in argument order.
func Parallel(fns ...func() error) error { return parallel(fns...) }

// ForEach runs fn(i) for i in [0,n) with at most limit at once and returns
// the first error by index.
func ForEach(n, limit int, fn func(i int) error) error { return forEach(n, limit, fn) }

// Atoi64 parses a decimal integer from git output.
func Atoi64(s string) (int64, error) { return atoi64(s) }

// RepoRelative turns the caller's path argument into a repository-relative
// pathspec ("" for the whole repository), refusing one that could climb
// out.
func RepoRelative(path, repoPath, top string) (string, error) {
	return repoRelative(path, repoPath, top)
}

// Open proves repoPath is a git work tree whose git data stays inside the
// call's allowed roots and pins it for the call.
func (p *Provider) Open(ctx context.Context, call *sdk.Call, repoPath string) (*Repo, error) {
	return p.open(ctx, call, repoPath)
}

// ResolveCommit pins a caller revision (argument field) to a full commit
// object id.
func (p *Provider) ResolveCommit(ctx context.Context, r *Repo, field, rev string) (string, error) {
	return p.resolveCommit(ctx, r, field, rev)
}

// GitDirs returns r's absolute git directory and common directory.
func (p *Provider) GitDirs(ctx context.Context, r *Repo) (gitDir, commonDir string, err error) {
	return p.gitDirs(ctx, r)
}

// Run runs one git command in dir with the hardened runner and returns
// its standard output.
func (p *Provider) Run(ctx context.Context, dir string, args ...string) ([]byte, error) {
	return p.runner.Run(ctx, dir, args...)
}

// BranchStatus is the branch part of `git status` for one repository:
// what fleet.radar reports per entry.
type BranchStatus struct {
	Branch, OID, Upstream *string // nil: detached, unborn, no upstream
	Ahead, Behind         int64
	// Changed counts the changed paths (untracked included).
	Changed int
	// Operation names the operation in progress ("merge", "rebase",
	// "bisect", ...), or "".
	Operation string
}

// BranchStatus reads r's branch status in one git status call.
func (p *Provider) BranchStatus(ctx context.Context, call *sdk.Call, r *Repo) (*BranchStatus, error) {
	ps := &statusParser{max: 0}
	if err := p.statusInto(ctx, call, r, ps, statusArgv...); err != nil {
		return nil, err
	}
	st := &ps.data
	return &BranchStatus{
		Branch: st.Branch, OID: st.OID, Upstream: st.Upstream,
		Ahead: st.Ahead, Behind: st.Behind, Changed: ps.count,
		Operation: operationIn(r.gitDir),
	}, nil
}

// Dir is the work tree's top level, where every git call for r runs.
func (r *Repo) Dir() string { return r.dir }
