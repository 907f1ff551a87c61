package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/fluxgit/fluxgit/internal/gitexec"
	"github.com/fluxgit/fluxgit/internal/resultshape"
	"github.com/fluxgit/fluxgit/plugins/gitread/repo"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// fleet.digest reads reflog files directly (no git log): the last MiB of
// each branch reflog and of HEAD's, newest first, stopping at sinceMs.
// When no repoPaths are given, repositories come from the FluxGit registry
// <runDir>/repos/*.path, where runDir is FLUXGIT_RUN_DIR (read at call
// time) or the per-OS default.

const (
	digestMaxRepos       = 500
	digestEventsPerRepo  = 200
	digestMaxReflogFiles = 2000
	digestMaxDepth       = 16
)

type digestArgs struct {
	SinceMs   *json.Number `json:"sinceMs"`
	RepoPaths []string     `json:"repoPaths"`
	MaxEvents *json.Number `json:"maxEvents"`
}

// digestEvent is one reflog entry of fleet.digest.
type digestEvent struct {
	RepoPath string  `json:"repoPath"`
	AtMs     int64   `json:"atMs"`
	RefName  string  `json:"refName"`
	Kind     string  `json:"kind"`
	OldOID   *string `json:"oldOid"`
	NewOID   *string `json:"newOid"`
	Message  string  `json:"message"`
	Identity string  `json:"identity"`
	Rewrote  bool    `json:"rewrote"`
	Source   string  `json:"source"`
}

// digestRepo is the per-repository report of fleet.digest.
type digestRepo struct {
	RepoPath   string  `json:"repoPath"`
	Error      *string `json:"error"`
	Truncated  bool    `json:"truncated"`
	EventCount int     `json:"eventCount"`
}

// digestData is the fleet.digest payload.
type digestData struct {
	SinceMs                     int64         `json:"sinceMs"`
	Events                      []digestEvent `json:"events"`
	EventCount                  int           `json:"eventCount"`
	Repos                       []digestRepo  `json:"repos"`
	RepoSource                  string        `json:"repoSource"`
	RequestedRepoCount          int           `json:"requestedRepoCount"`
	ExcludedOutsideAllowedRoots int           `json:"excludedOutsideAllowedRoots"`
	Truncated                   bool          `json:"truncated"`
	ElapsedMs                   int64         `json:"elapsedMs"`
	Attribution                 string        `json:"attribution"`
	Guidance                    string        `json:"guidance"`
}

func fleetDigest(p *repo.Provider, ctx context.Context, call *sdk.Call) (any, error) {
	start := time.Now()
	var a digestArgs
	if err := repo.Decode(call, &a); err != nil {
		return nil, err
	}
	if a.SinceMs == nil {
		return nil, repo.Invalid("arguments.sinceMs is required")
	}
	since, err := repo.IntArg("sinceMs", a.SinceMs, 0, 0, 1<<62)
	if err != nil {
		return nil, err
	}
	maxEvents, err := repo.IntArg("maxEvents", a.MaxEvents, 200, 1, 1000)
	if err != nil {
		return nil, err
	}
	d := &digestData{SinceMs: since, Events: []digestEvent{}, Repos: []digestRepo{}, RepoSource: "arguments"}
	var paths []string
	seen := map[string]bool{}
	if len(a.RepoPaths) > 0 {
		d.RequestedRepoCount = len(a.RepoPaths)
		for _, rp := range a.RepoPaths {
			if !seen[rp] {
				seen[rp] = true
				paths = append(paths, rp)
			}
		}
	} else {
		d.RepoSource = "fluxgit-registry"
		runDir, err := repo.RunDirFor("")
		if err != nil {
			return nil, err
		}
		entries, excluded := repo.ReadRegistry(runDir, call.Meta.AllowedRoots)
		d.ExcludedOutsideAllowedRoots = excluded
		d.RequestedRepoCount = len(entries) + excluded
		for _, e := range entries {
			paths = append(paths, e.Path)
		}
		if len(paths) == 0 {
			return nil, repo.Invalid("arguments.repoPaths is empty and the FluxGit registry (" + filepath.Join(runDir, "repos") + ") lists no usable repository")
		}
	}
	if len(paths) > digestMaxRepos {
		paths = paths[:digestMaxRepos]
		d.Truncated = true
	}
	perRepo := make([][]digestEvent, len(paths))
	d.Repos = make([]digestRepo, len(paths))
	_ = repo.ForEach(len(paths), fleetWorkers, func(i int) error {
		evs, truncated, repoPath, err := digestOne(p, ctx, call, paths[i], since)
		rep := digestRepo{RepoPath: repoPath, Truncated: truncated, EventCount: len(evs)}
		if err != nil {
			msg := repo.TruncRunes(err.Error(), 512)
			rep.Error = &msg
		}
		d.Repos[i], perRepo[i] = rep, evs
		return nil
	})
	for i, evs := range perRepo {
		d.Events = append(d.Events, evs...)
		d.Truncated = d.Truncated || d.Repos[i].Truncated
	}
	sort.SliceStable(d.Events, func(i, j int) bool {
		if d.Events[i].AtMs != d.Events[j].AtMs {
			return d.Events[i].AtMs > d.Events[j].AtMs
		}
		return d.Events[i].RepoPath < d.Events[j].RepoPath
	})
	if len(d.Events) > int(maxEvents) {
		d.Events = d.Events[:maxEvents]
		d.Truncated = true
	}
	d.EventCount = len(d.Events)
	d.Attribution = "identity is exactly what git recorded in the reflog (user.name and user.email at the time); it is not verified."
	d.Guidance = "Events are reflog moves newest first. rewrote:true marks history that was replaced (reset, amend, rebase); inspect it with commit.details or diff.text before building on it."
	d.ElapsedMs = time.Since(start).Milliseconds()
	if !resultshape.Lean() {
		return d, nil
	}
	// git's unique abbreviation of every id, one git call per repository.
	ids := map[string][]string{}
	for _, ev := range d.Events {
		for _, o := range []*string{ev.OldOID, ev.NewOID} {
			if o != nil {
				ids[ev.RepoPath] = append(ids[ev.RepoPath], *o)
			}
		}
	}
	dirs := make([]string, 0, len(ids))
	for dir := range ids {
		dirs = append(dirs, dir)
	}
	maps := make([]map[string]string, len(dirs))
	_ = repo.ForEach(len(dirs), fleetWorkers, func(i int) error {
		maps[i] = p.ShortIDs(ctx, dirs[i], ids[dirs[i]])
		return nil
	})
	short := map[string]string{}
	for _, m := range maps {
		for k, v := range m {
			short[k] = v
		}
	}
	return leanDigest(d, short), nil
}

// digestOne collects one repository's events since sinceMs.
func digestOne(p *repo.Provider, ctx context.Context, call *sdk.Call, repoPath string, since int64) (events []digestEvent, truncated bool, path string, err error) {
	events = []digestEvent{}
	r, err := p.Open(ctx, call, repoPath)
	if err != nil {
		return events, false, repoPath, err
	}
	gitDir, commonDir, err := p.GitDirs(ctx, r)
	if err != nil {
		return events, false, r.Dir(), err
	}
	type file struct{ ref, path string }
	var files []file
	headsDir := filepath.Join(commonDir, "logs", "refs", "heads")
	werr := filepath.WalkDir(headsDir, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(headsDir, p)
		if de.IsDir() {
			if rel != "." && strings.Count(rel, string(filepath.Separator))+1 > digestMaxDepth {
				return fs.SkipDir
			}
			return nil
		}
		if !de.Type().IsRegular() || len(files) >= digestMaxReflogFiles {
			return nil // symlinks and anything past the cap are ignored
		}
		files = append(files, file{"refs/heads/" + filepath.ToSlash(rel), p})
		return nil
	})
	if werr != nil {
		return events, false, r.Dir(), repo.Failure(gitexec.Command(r.Dir(), "reflog"), "cannot list reflogs: "+werr.Error())
	}
	sort.Slice(files, func(i, j int) bool { return files[i].ref < files[j].ref })
	files = append(files, file{"HEAD", filepath.Join(gitDir, "logs", "HEAD")})

	type key struct {
		old, new string
		unix     int64
		msg      string
	}
	dup := map[key]bool{}
	for _, f := range files {
		entries, err := repo.ReadReflogTail(f.path)
		if err != nil {
			return events, truncated, r.Dir(), repo.Failure(gitexec.Command(r.Dir(), "reflog"), "cannot read "+f.ref+" reflog: "+err.Error())
		}
		for i := len(entries) - 1; i >= 0; i-- {
			e := entries[i]
			at := e.Unix * 1000
			if at < since {
				break
			}
			k := key{e.Old, e.New, e.Unix, e.Message}
			if dup[k] {
				continue
			}
			dup[k] = true
			if len(events) == digestEventsPerRepo {
				truncated = true
				break
			}
			kind, source := digestKind(e.Message)
			ev := digestEvent{
				RepoPath: r.Dir(), AtMs: at, RefName: f.ref, Kind: kind, Source: source,
				Message: repo.TruncRunes(e.Message, 200), Identity: repo.TruncRunes(e.Identity, 256),
			}
			if e.Old != "" {
				ev.OldOID = &e.Old
			}
			if e.New != "" {
				ev.NewOID = &e.New
			}
			events = append(events, ev)
		}
	}
	// rewrote: old is no longer an ancestor of new. Amends replace the tip
	// by definition; resets and rebases need an ancestry check.
	var checks []int
	for i, ev := range events {
		if ev.OldOID == nil || ev.NewOID == nil || *ev.OldOID == *ev.NewOID {
			continue
		}
		switch ev.Kind {
		case "amend":
			events[i].Rewrote = true
		case "reset", "rebase":
			checks = append(checks, i)
		}
	}
	_ = repo.ForEach(len(checks), fleetWorkers, func(j int) error {
		ev := &events[checks[j]]
		_, err := p.Run(ctx, r.Dir(), "merge-base", "--is-ancestor", *ev.OldOID, *ev.NewOID)
		ev.Rewrote = err != nil
		return nil
	})
	return events, truncated, r.Dir(), nil
}

// digestKind classifies a reflog message by its prefix.
func digestKind(msg string) (kind, source string) {
	has := func(p string) bool { return strings.HasPrefix(msg, p) }
	switch {
	case has("Fleet Radar:"):
		return "branch", "fluxgit"
	case has("commit (amend)"):
		return "amend", "git"
	case has("commit (merge)"), has("merge "):
		return "merge", "git"
	case has("commit"):
		return "commit", "git"
	case has("checkout:"), has("switch"):
		return "checkout", "git"
	case has("pull"):
		return "pull", "git"
	case has("reset:"):
		return "reset", "git"
	case has("rebase"):
		return "rebase", "git"
	case has("cherry-pick"):
		return "cherryPick", "git"
	case has("revert"):
		return "revert", "git"
	case has("branch:"):
		return "branch", "git"
	case has("fetch"):
		return "fetch", "git"
	}
	return "other", "git"
}
