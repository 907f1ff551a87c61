// Package preflight checks the host's whole configuration before it serves:
// the repository roots, the git executable and its version, the run and
// state directories, the audit ledger and its signing key, the
// configuration file and the gateway address. Each problem comes with one
// sentence saying how to fix it, so `fluxgit serve` can report it on one
// stderr line and `fluxgit doctor` can print it in a table.
//
// Every check only reads: a failing configuration must leave no file or
// directory behind (docs/configuration.md, "Checking the configuration").
package preflight

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fluxgit/fluxgit/host/repopath"
	"github.com/fluxgit/fluxgit/host/setup"
	"github.com/fluxgit/fluxgit/internal/audit"
	"github.com/fluxgit/fluxgit/internal/fluxbridge"
	"github.com/fluxgit/fluxgit/internal/gitexec"
	"github.com/fluxgit/fluxgit/internal/privdir"
	"github.com/fluxgit/fluxgit/internal/resultshape"
	"github.com/fluxgit/fluxgit/internal/roster"
	"github.com/fluxgit/fluxgit/internal/rundir"
)

// Status is a check's outcome.
type Status string

// Outcomes, mildest first.
const (
	OK   Status = "ok"
	Skip Status = "skip"
	Warn Status = "warn"
	Fail Status = "fail"
)

// Names of the checks, in the order Run reports them.
const (
	CheckConfig = "config"
	CheckRoots  = "roots"
	CheckGit    = "git"
	CheckRunDir = "run-dir"
	CheckState  = "state-dir"
	// CheckRosterDB is SHIFT_DATABASE_URL, the PostgreSQL roster.
	CheckRosterDB = "roster-db"
	CheckSignKey  = "signing-key"
	CheckLedger   = "ledger"
	CheckGateway  = "gateway"
	// CheckResultShape is FLUXGIT_MCP_RESULT_SHAPE (package resultshape).
	CheckResultShape = "result-shape"
)

// MinGit is the oldest git the providers support.
var MinGit = [3]int{2, 38, 0}

// Result is one check.
type Result struct {
	Name   string
	Status Status
	// Detail says what was found (for OK) or what is wrong.
	Detail string
	// Fix is one sentence telling the user how to repair a problem; empty
	// for OK.
	Fix string
	// Fatal marks a failure the server refuses to start with. Other
	// failures are reported as warnings by `serve`, which starts as it
	// always has (the affected calls then fail with their own error).
	Fatal bool
}

// Line renders a problem as the one stderr line `serve` prints.
func (r Result) Line() string {
	s := r.Name + ": " + r.Detail
	if r.Fix != "" {
		s += "; fix: " + r.Fix
	}
	return s
}

// Options say what to check.
type Options struct {
	// ConfigPath is the --config / FLUXGIT_CONFIG file ("" for none).
	ConfigPath string
	// Builtins are the compiled-in provider names (setup.LoadConfig).
	Builtins []string
	// LookupEnv reads the environment; nil means the process's. The
	// checks that reuse other packages' resolvers (run dir, state dir,
	// ledger, git) always read the process environment.
	LookupEnv func(string) (string, bool)
}

func (o Options) lookup(k string) (string, bool) {
	if o.LookupEnv != nil {
		return o.LookupEnv(k)
	}
	return os.LookupEnv(k)
}

// Run performs every check. It never writes.
func Run(ctx context.Context, o Options) []Result {
	if ctx == nil {
		ctx = context.Background()
	}
	return []Result{
		checkConfig(o),
		checkRoots(o),
		checkGit(ctx, o),
		checkRunDir(),
		checkStateDir(),
		checkRosterDB(ctx, o),
		checkSignKey(o),
		checkLedger(o),
		checkGateway(o),
		checkResultShape(o),
	}
}

// Failed reports whether any result failed; fatal narrows it to failures
// the server must not start with.
func Failed(rs []Result, fatal bool) bool {
	for _, r := range rs {
		if r.Status == Fail && (!fatal || r.Fatal) {
			return true
		}
	}
	return false
}

// Find returns the result named name.
func Find(rs []Result, name string) (Result, bool) {
	for _, r := range rs {
		if r.Name == name {
			return r, true
		}
	}
	return Result{}, false
}

func ok(name, detail string) Result { return Result{Name: name, Status: OK, Detail: detail} }

func checkConfig(o Options) Result {
	if o.ConfigPath == "" {
		return ok(CheckConfig, "none (built-in providers only)")
	}
	cfg, err := setup.LoadConfig(o.ConfigPath, o.Builtins)
	if err != nil {
		return Result{Name: CheckConfig, Status: Fail, Fatal: true, Detail: err.Error(),
			Fix: "correct the file named by --config or " + setup.EnvConfig + " (docs/providers.md), or unset it"}
	}
	for _, p := range cfg.Providers {
		if _, err := os.Stat(p.Command); err != nil {
			return Result{Name: CheckConfig, Status: Fail, Detail: fmt.Sprintf("provider %q: command %s: %v", p.Name, p.Command, errors.Unwrap(err)),
				Fix: "point the provider's command at an existing executable (relative paths are resolved against the configuration file's directory)"}
		}
		if fi, err := os.Stat(p.Spec); err != nil || !fi.IsDir() {
			return Result{Name: CheckConfig, Status: Fail, Detail: fmt.Sprintf("provider %q: spec %s is not a directory", p.Name, p.Spec),
				Fix: "point the provider's spec at the directory holding its tools/*.yaml"}
		}
	}
	return ok(CheckConfig, fmt.Sprintf("%s (%d provider(s))", o.ConfigPath, len(cfg.Providers)))
}

func checkRoots(o Options) Result {
	v, set := o.lookup(repopath.EnvAllowedRoots)
	if !set {
		return Result{Name: CheckRoots, Status: Warn, Detail: repopath.EnvAllowedRoots + " is unset: every absolute path on this machine is reachable",
			Fix: "set " + repopath.EnvAllowedRoots + " to the absolute directories agents may read, separated by " + string(filepath.ListSeparator)}
	}
	p := repopath.Parse(v)
	if err := p.Check(); err != nil {
		var re *repopath.Error
		detail := err.Error()
		if errors.As(err, &re) {
			detail = fmt.Sprintf("%s=%q: %v", repopath.EnvAllowedRoots, v, re.Data["details"])
			if r, ok := re.Data["root"].(string); ok {
				detail += " (" + r + ")"
			}
		}
		return Result{Name: CheckRoots, Status: Fail, Detail: detail + "; every tool call answers -32010 until it is fixed",
			Fix: "list existing absolute directories, separated by " + string(filepath.ListSeparator) + ", e.g. " + repopath.EnvAllowedRoots + "=" + filepath.Join(string(filepath.Separator)+"home", "me", "src")}
	}
	return ok(CheckRoots, strings.Join(p.Roots, string(filepath.ListSeparator)))
}

var gitVersionRE = regexp.MustCompile(`^git version (\d+)\.(\d+)(?:\.(\d+))?`)

// ParseGitVersion reads `git --version` output ("git version 2.43.0",
// "git version 2.39.3 (Apple Git-146)").
func ParseGitVersion(out string) ([3]int, error) {
	m := gitVersionRE.FindStringSubmatch(strings.TrimSpace(out))
	if m == nil {
		return [3]int{}, fmt.Errorf("unrecognised git --version output %q", strings.TrimSpace(out))
	}
	var v [3]int
	for i := range 3 {
		if m[i+1] != "" {
			v[i], _ = strconv.Atoi(m[i+1])
		}
	}
	return v, nil
}

func older(a, b [3]int) bool {
	for i := range 3 {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

func checkGit(ctx context.Context, o Options) Result {
	fix := "install git " + fmtVersion(MinGit) + " or newer, or set " + gitexec.EnvGitPath + " to the absolute path of a usable git"
	exe, err := gitexec.ResolveExecutable("")
	if err != nil {
		return Result{Name: CheckGit, Status: Fail, Detail: "no usable git: " + err.Error(), Fix: fix}
	}
	// gitexec.Version bounds the run even when something git started
	// keeps its output open: the server reads no request before this.
	out, err := gitexec.Version(ctx, exe)
	if err != nil {
		return Result{Name: CheckGit, Status: Fail, Detail: err.Error(), Fix: fix}
	}
	v, err := ParseGitVersion(out)
	if err != nil {
		return Result{Name: CheckGit, Status: Fail, Detail: exe + ": " + err.Error(), Fix: fix}
	}
	if older(v, MinGit) {
		return Result{Name: CheckGit, Status: Fail, Detail: fmt.Sprintf("%s is git %s, older than %s", exe, fmtVersion(v), fmtVersion(MinGit)), Fix: fix}
	}
	return ok(CheckGit, fmt.Sprintf("%s (git %s)", exe, fmtVersion(v)))
}

func fmtVersion(v [3]int) string { return fmt.Sprintf("%d.%d.%d", v[0], v[1], v[2]) }

// checkDir reports a directory that exists but that the component using it
// would refuse; a missing one is fine (it is created on first use).
func checkDir(name, label string, dir string, forbidden os.FileMode) Result {
	fi, err := os.Stat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return ok(name, dir+" (created on first use)")
	}
	if err == nil && !fi.IsDir() {
		return Result{Name: name, Status: Fail, Detail: label + " " + dir + " is not a directory", Fix: "move " + dir + " aside or choose another directory"}
	}
	if err := privdir.Check(dir, privdir.Options{Label: label, Forbidden: forbidden}); err != nil {
		var pe *privdir.Error
		if errors.As(err, &pe) {
			return Result{Name: name, Status: Fail, Detail: pe.Error(), Fix: strings.TrimSuffix(pe.Fix(), ".")}
		}
		return Result{Name: name, Status: Fail, Detail: err.Error(), Fix: "choose another directory"}
	}
	return ok(name, dir)
}

func checkRunDir() Result {
	dir, err := rundir.Dir()
	if err != nil {
		return Result{Name: CheckRunDir, Status: Fail, Detail: "no run directory: " + err.Error(),
			Fix: "set " + rundir.EnvRunDir + " to an absolute directory of your own"}
	}
	// The ledger resolves links above its own directory (audit.Open), so a
	// run directory reached through a link (macOS's /var, a linked home)
	// is fine; what it holds is read by tools, so others must not write it.
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	return checkDir(CheckRunDir, "run directory", dir, 0o022)
}

func checkStateDir() Result {
	dir, err := roster.StateDir()
	if err != nil {
		return Result{Name: CheckState, Status: Fail, Detail: "no roster state directory: " + err.Error(),
			Fix: "set " + roster.EnvStateDir + " to an absolute directory of your own"}
	}
	return checkDir(CheckState, "roster state directory", dir, 0o022)
}

// rosterProbeTimeout bounds the doctor's connection to the roster
// database, so a server that does not answer cannot stall serve's start.
const rosterProbeTimeout = 2 * time.Second

// checkRosterDB reports the PostgreSQL roster: its URL with credentials
// redacted, whether it answers and its schema version. It reads only
// (roster.ProbePostgres never creates or migrates). A database that does
// not answer fails, but not fatally: every other tool still works.
func checkRosterDB(ctx context.Context, o Options) Result {
	raw, _ := o.lookup(roster.EnvDatabaseURL)
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return ok(CheckRosterDB, "none ("+roster.EnvDatabaseURL+" unset: the roster is roster.sqlite in the state directory)")
	}
	shown := roster.RedactURL(raw)
	ctx, cancel := context.WithTimeout(ctx, rosterProbeTimeout)
	defer cancel()
	v, err := roster.ProbePostgres(ctx, raw)
	switch {
	case err != nil:
		return Result{Name: CheckRosterDB, Status: Fail, Detail: "PostgreSQL roster " + shown + ": " + err.Error(),
			Fix: "start or reach the server, correct " + roster.EnvDatabaseURL + " (a postgres:// URL; sslmode and the other libpq parameters pass through), or unset it for the local SQLite roster"}
	case v == 0:
		return ok(CheckRosterDB, "PostgreSQL roster "+shown+" (reachable; fluxgit creates the schema on first use)")
	case v > roster.PostgresSchemaVersion:
		return Result{Name: CheckRosterDB, Status: Fail, Detail: fmt.Sprintf("PostgreSQL roster %s has schema version %d, newer than this fluxgit (%d)", shown, v, roster.PostgresSchemaVersion),
			Fix: "upgrade fluxgit, or point " + roster.EnvDatabaseURL + " at another database"}
	}
	return ok(CheckRosterDB, fmt.Sprintf("PostgreSQL roster %s (reachable, schema version %d)", shown, v))
}

func checkSignKey(o Options) Result {
	p, set := o.lookup(audit.EnvSignKey)
	if !set {
		return ok(CheckSignKey, "none (ledger entries are unsigned)")
	}
	fix := "point " + audit.EnvSignKey + " at a PEM PKCS#8 Ed25519 private key readable only by you (chmod 600), or unset it"
	if strings.TrimSpace(p) == "" {
		detail := (&audit.ConfigError{Err: fmt.Errorf("%s is set but empty", audit.EnvSignKey)}).Error()
		return Result{Name: CheckSignKey, Status: Fail, Fatal: true, Detail: detail, Fix: fix}
	}
	s, err := audit.LoadSigner(p)
	if err != nil {
		// The wording matches audit.FromEnv's (serve printed it before
		// these checks existed): "failing closed".
		detail := (&audit.ConfigError{Err: fmt.Errorf("%s: %w", audit.EnvSignKey, err)}).Error()
		return Result{Name: CheckSignKey, Status: Fail, Fatal: true, Detail: detail, Fix: fix}
	}
	return ok(CheckSignKey, p+" (key "+s.KeyID()+")")
}

func checkLedger(o Options) Result {
	if _, set := o.lookup(audit.EnvSignKey); set {
		if r := checkSignKey(o); r.Status != OK {
			return Result{Name: CheckLedger, Status: Skip, Detail: "not checked: the signing key is unusable"}
		}
	}
	if _, err := audit.RetentionFromEnv(); err != nil {
		return Result{Name: CheckLedger, Status: Fail, Fatal: true, Detail: err.Error(),
			Fix: "set the variable named above as its message says, or unset it for the default (docs/audit.md, \"Retention\", lists " + strings.Join(audit.RetentionVariables, ", ") + ")"}
	}
	// FromEnv reads only: Open and Check create nothing (internal/audit).
	l, err := audit.FromEnv(hclog.NewNullLogger())
	if err != nil {
		return Result{Name: CheckLedger, Status: Fail, Fatal: true, Detail: err.Error(),
			Fix: "fix the path or permissions named above, set " + audit.EnvLog + " to a private file, or set " + audit.EnvDisabled + "=1 to turn auditing off"}
	}
	if l == nil {
		return ok(CheckLedger, "disabled ("+audit.EnvDisabled+")")
	}
	defer l.Close()
	return ok(CheckLedger, l.Path()+" ("+retentionText(l.Policy())+")")
}

// retentionText is the ledger's retention policy in a few words.
func retentionText(r audit.Retention) string {
	size, age, floor := "no size limit", "no age limit", "no age floor"
	if r.RetainBytes > 0 {
		size = fmt.Sprintf("retains %d bytes", r.RetainBytes)
	}
	if r.RetainAge > 0 {
		age = "prunes after " + audit.FormatAge(r.RetainAge)
	}
	if r.MinAge > 0 {
		floor = "keeps " + audit.FormatAge(r.MinAge) + " at least"
	}
	return fmt.Sprintf("%s, %s, %s, %d-byte segments", size, age, floor, r.SegmentBytes)
}

func checkGateway(o Options) Result {
	for _, v := range fluxbridge.Variables {
		raw, set := o.lookup(v)
		if !set || strings.TrimSpace(raw) == "" {
			continue
		}
		ap, err := fluxbridge.Normalize(raw)
		if err != nil {
			return Result{Name: CheckGateway, Status: Fail, Detail: fmt.Sprintf("%s=%q: %v; FluxGit tools will answer that FluxGit is not configured", v, raw, err),
				Fix: "set " + v + " to a loopback IP and port, e.g. 127.0.0.1:59647, or unset it"}
		}
		return ok(CheckGateway, ap.String()+" (from "+v+")")
	}
	return ok(CheckGateway, "not configured (FluxGit tools answer that FluxGit is not configured)")
}

// checkResultShape warns about a value of FLUXGIT_MCP_RESULT_SHAPE that is
// neither lean nor reference: the server then sends the lean shape, which
// a client that asked for the reference's (most likely by a typo) would
// not expect.
func checkResultShape(o Options) Result {
	raw, _ := o.lookup(resultshape.Env)
	v := strings.TrimSpace(raw)
	switch {
	case !resultshape.Known(v):
		return Result{Name: CheckResultShape, Status: Warn,
			Detail: fmt.Sprintf("%s=%q is not one of %s; results take the lean shape", resultshape.Env, raw, strings.Join(resultshape.Values, ", ")),
			Fix:    fmt.Sprintf("set %s to reference for the reference's full result shapes, or to lean (or unset it) for the lean default", resultshape.Env)}
	case v == "reference":
		return ok(CheckResultShape, "reference (the reference's full result shapes, from "+resultshape.Env+")")
	}
	return ok(CheckResultShape, "lean (the default; "+resultshape.Env+"=reference sends the reference's full shapes)")
}
