package agentspresence

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fluxgit/fluxgit/internal/agentdetect"
	"github.com/fluxgit/fluxgit/internal/envflag"
	"github.com/fluxgit/fluxgit/internal/gitexec"
	"github.com/fluxgit/fluxgit/internal/roster"
	"github.com/fluxgit/fluxgit/internal/rundir"
)

// EnvDetectionDisabled, set to a truthy value (internal/envflag), turns
// agent detection off: agents.presence answers 10011 and proposals carry
// no otherAgents hint.
const EnvDetectionDisabled = "FLUXGIT_MCP_AGENT_DETECTION_DISABLED"

// DetectionDisabled reports whether EnvDetectionDisabled is set.
func DetectionDisabled() bool { return envflag.Set(EnvDetectionDisabled) }

// Detector holds what one detection needs beyond the repository: where
// the stores, presence records and roster live, and which sources run.
// Both agents.presence and the handshake provider's otherAgents hint use
// it; neither calls the other.
type Detector struct {
	// Sources replaces the default sources (tests); nil means every
	// source: processes, editors, presence records, the agents' own
	// stores and the shift roster.
	Sources []agentdetect.Source
	// Roster lists a work tree's active check-ins; nil reads the shift
	// roster's store read-only (RosterFromStore).
	Roster agentdetect.RosterFunc
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Host is the fluxgit process serving the provider. Built-in providers run
// as child processes of the host (`fluxgit provider NAME`), so the host's
// own presence record, and the ancestors likelyCaller compares with, are
// those of the parent.
func Host() int { return os.Getppid() }

func (d *Detector) sources() []agentdetect.Source {
	if d.Sources != nil {
		return d.Sources
	}
	roster := d.Roster
	if roster == nil {
		roster = RosterFromStore
	}
	return agentdetect.DefaultSources(agentdetect.Options{Roster: roster, Extra: agentdetect.StoreSources()})
}

// Query builds the detection query for a repository whose work tree top
// level is top and whose work trees are worktrees.
func (d *Detector) Query(top string, worktrees []string) agentdetect.Query {
	now := time.Now
	if d.Now != nil {
		now = d.Now
	}
	home, _ := os.UserHomeDir()
	run, _ := rundir.Dir()
	return agentdetect.Query{Repo: top, Worktrees: worktrees, Home: home, Env: os.Getenv, RunDir: run, SelfPID: Host(), Now: now()}
}

// Detect runs every source for the repository under ctx.
func (d *Detector) Detect(ctx context.Context, top string, worktrees []string) agentdetect.Report {
	return agentdetect.Detect(ctx, d.Query(top, worktrees), d.sources())
}

// RosterFromStore lists the active shift roster check-ins of the
// workspaces naming root, reading the roster's store read-only.
func RosterFromStore(ctx context.Context, root string) ([]agentdetect.RosterEntry, error) {
	// The shared PostgreSQL roster counts too when configured (CONTRACT §7).
	rows, err := roster.ActiveForWorkTreeFromEnv(ctx, root)
	out := make([]agentdetect.RosterEntry, 0, len(rows))
	for _, r := range rows {
		// A stale worker (no live lease, its fluxgit process gone) is a
		// session nobody works in: it is no other agent at work.
		if r.Stale {
			continue
		}
		e := agentdetect.RosterEntry{WorkerID: r.WorkerID, Gist: r.Gist, Files: r.Files}
		e.CheckedInAt, _ = time.Parse(time.RFC3339Nano, r.CheckedInAt)
		e.UpdatedAt, _ = time.Parse(time.RFC3339Nano, r.UpdatedAt)
		for _, l := range r.Leases {
			at, err := time.Parse(time.RFC3339Nano, l.ExpiresAt)
			if err != nil {
				continue
			}
			e.Leases = append(e.Leases, agentdetect.RosterLease{File: l.File, Mode: l.Mode, ExpiresAt: at, Expired: l.Expired})
		}
		out = append(out, e)
	}
	return out, err
}

// Locate finds a repository's work tree top level and all its work trees
// (canonical paths, top first). A path that is not inside a work tree is
// a *gitexec.Error, the 10010 tool error. One git call finds the top level
// and the common git directory; the other work trees are read from the
// common directory's worktrees/*/gitdir files (what git worktree list
// reads), so detection starts one git process, not two. A work tree whose
// directory is gone is left out.
func Locate(ctx context.Context, repoPath string) (top string, worktrees []string, err error) {
	args := []string{"rev-parse", "--path-format=absolute", "--show-toplevel", "--git-common-dir"}
	out, err := gitexec.Run(ctx, repoPath, args...)
	if err != nil {
		return "", nil, err
	}
	lines := strings.Split(strings.TrimRight(string(out), "\r\n"), "\n")
	if len(lines) != 2 || !filepath.IsAbs(lines[0]) || !filepath.IsAbs(lines[1]) {
		return "", nil, &gitexec.Error{Command: gitexec.Command(repoPath, args...),
			Details: "not inside a git work tree (a bare repository has no files agents could edit)", ExitCode: -1, Err: gitexec.ErrExit}
	}
	top = canonical(lines[0])
	common := canonical(lines[1])
	worktrees = []string{top}
	add := func(wt string) {
		wt = canonical(wt)
		if slices.Contains(worktrees, wt) || len(worktrees) >= maxWorktrees {
			return
		}
		if fi, err := os.Stat(wt); err == nil && fi.IsDir() {
			worktrees = append(worktrees, wt)
		}
	}
	if filepath.Base(common) == ".git" {
		add(filepath.Dir(common)) // the main work tree
	}
	entries, _ := os.ReadDir(filepath.Join(common, "worktrees"))
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(common, "worktrees", e.Name(), "gitdir"))
		if err != nil || len(b) > 64<<10 {
			continue
		}
		// gitdir names the linked work tree's .git file.
		if g := strings.TrimSpace(string(b)); filepath.IsAbs(g) {
			add(filepath.Dir(g))
		}
	}
	return top, worktrees, nil
}

// maxWorktrees bounds the work trees one detection looks into.
const maxWorktrees = 64

func canonical(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}
