package repo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/fluxgit/fluxgit/internal/gitexec"
	"github.com/fluxgit/fluxgit/internal/resultshape"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

type historyArgs struct {
	RepoPath    string       `json:"repoPath"`
	RepoID      string       `json:"repoId"`
	Limit       *json.Number `json:"limit"`
	Cursor      *string      `json:"cursor"`
	Rev         *string      `json:"rev"`
	Paths       []string     `json:"paths"`
	Author      *string      `json:"author"`
	Since       *string      `json:"since"`
	Until       *string      `json:"until"`
	Grep        *string      `json:"grep"`
	FirstParent bool         `json:"firstParent"`
	Merges      *string      `json:"merges"`
	// Fields asks the lean shape for more than id and subject per commit.
	Fields []string `json:"fields"`
}

// historyFilter is repo.history's validated selection, rendered as git log
// options whose caller values are each inside one --opt=value element.
type historyFilter struct {
	author, grep *string
	since, until *int64
	firstParent  bool
	merges       string // "", "only" or "exclude"
}

// parseHistoryFilter validates the filters that need no repository, so a
// refused argument never costs a git process.
func parseHistoryFilter(a *historyArgs, now time.Time) (historyFilter, error) {
	f := historyFilter{author: a.Author, grep: a.Grep, firstParent: a.FirstParent}
	for _, t := range []struct {
		field string
		v     *string
	}{{"author", a.Author}, {"grep", a.Grep}} {
		if t.v != nil {
			if err := textArg(t.field, *t.v); err != nil {
				return f, err
			}
		}
	}
	for _, d := range []struct {
		field string
		v     *string
		end   bool
		out   **int64
	}{{"since", a.Since, false, &f.since}, {"until", a.Until, true, &f.until}} {
		if d.v != nil {
			n, err := parseDate(d.field, *d.v, d.end, now)
			if err != nil {
				return f, err
			}
			*d.out = &n
		}
	}
	if f.since != nil && f.until != nil && *f.since > *f.until {
		return f, invalid("arguments.since is later than arguments.until, so no commit could match; swap them or drop one")
	}
	if a.Merges != nil {
		switch *a.Merges {
		case "include":
		case "only", "exclude":
			f.merges = *a.Merges
		default:
			return f, invalid("arguments.merges must be include, only or exclude (got " + strconv.Quote(*a.Merges) + ")")
		}
	}
	return f, nil
}

// args renders the filter for git log. Author and message are matched as
// fixed strings, case-insensitively: a model searching for "fix(api)"
// means those characters, not a regular expression.
func (f historyFilter) args() []string {
	var out []string
	if f.author != nil || f.grep != nil {
		out = append(out, "--fixed-strings", "--regexp-ignore-case")
	}
	if f.author != nil {
		out = append(out, "--author="+*f.author)
	}
	if f.grep != nil {
		out = append(out, "--grep="+*f.grep)
	}
	if f.since != nil {
		out = append(out, "--max-age="+strconv.FormatInt(*f.since, 10))
	}
	if f.until != nil {
		out = append(out, "--min-age="+strconv.FormatInt(*f.until, 10))
	}
	if f.firstParent {
		out = append(out, "--first-parent")
	}
	switch f.merges {
	case "only":
		out = append(out, "--merges")
	case "exclude":
		out = append(out, "--no-merges")
	}
	return out
}

// historyCommit is one entry of repo.history.
type historyCommit struct {
	Hash        string `json:"hash"`
	ShortHash   string `json:"shortHash"`
	AuthorName  string `json:"authorName"`
	AuthorEmail string `json:"authorEmail"`
	AuthorTime  int64  `json:"authorTime"`
	Subject     string `json:"subject"`
}

// historyData is the repo.history payload. NextCursor is the skip count
// for the next page, null when this page was not full.
type historyData struct {
	Commits    []historyCommit `json:"commits"`
	NextCursor *string         `json:"nextCursor"`
}

// logFormat separates fields with US (0x1f) and, with -z, commits with NUL:
// neither appears in names, emails or one-line subjects in practice, and
// the subject is last so a stray separator there cannot shift fields.
const logFormat = "--pretty=format:%H%x1f%h%x1f%an%x1f%ae%x1f%at%x1f%s"

func (p *Provider) repoHistory(ctx context.Context, call *sdk.Call) (any, error) {
	var a historyArgs
	if err := decode(call, &a); err != nil {
		return nil, err
	}
	lean := resultshape.Lean()
	// The reference pages 50 commits by default; the lean default is what
	// an agent reads before it narrows (CONTRACT §3).
	defLimit := int64(50)
	if lean {
		defLimit = leanHistoryLimit
	}
	limit, err := intArg("limit", a.Limit, defLimit, 1, 200)
	if err != nil {
		return nil, err
	}
	fields, err := parseHistoryFields(a.Fields)
	if err != nil {
		return nil, err
	}
	skip := int64(0)
	if a.Cursor != nil {
		if skip, err = parseCursor(*a.Cursor); err != nil {
			return nil, err
		}
	}
	filter, err := parseHistoryFilter(&a, time.Now())
	if err != nil {
		return nil, err
	}
	if a.Rev != nil {
		if err := checkRev("rev", *a.Rev); err != nil {
			return nil, err
		}
	}
	r, err := p.open(ctx, call, a.RepoPath)
	if err != nil {
		return nil, err
	}
	specs, err := pathspecs("paths", a.Paths, a.RepoPath, r.dir)
	if err != nil {
		return nil, err
	}
	var rng *revRange
	if a.Rev != nil {
		rr, err := p.resolveRange(ctx, r, "rev", *a.Rev)
		if err != nil {
			return nil, err
		}
		rng = &rr
	}

	format := logFormat
	if lean {
		format = leanLogFormat
	}
	args := []string{"log", "-z", format, "-n" + strconv.FormatInt(limit, 10), "--skip=" + strconv.FormatInt(skip, 10)}
	args = append(args, filter.args()...)
	if rng != nil {
		args = append(append(args, "--end-of-options"), rng.args()...)
	}
	if rng != nil || len(specs) > 0 {
		// "--" ends the revisions, so an object id is never taken for a
		// file name or the other way round.
		args = append(append(args, "--"), specs...)
	}
	out, err := p.runner.Run(ctx, r.dir, args...)
	d := &historyData{Commits: []historyCommit{}}
	if err != nil {
		// `git log` fails on a branch with no commits yet; that is an empty
		// history, not an error. Confirm it rather than guess from stderr.
		// With an explicit rev the revision resolved, so HEAD does not matter.
		if empty, cerr := p.headIsUnborn(ctx, r); rng == nil && cerr == nil && empty {
			if lean {
				return &leanHistoryData{Commits: []any{}}, nil
			}
			return d, nil
		}
		return nil, err
	}
	if lean {
		return leanHistory(out, fields, limit, skip, r.dir, args)
	}
	if len(out) > 0 {
		for _, rec := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
			c, ok := parseLogRecord(rec)
			if !ok {
				return nil, &failure{gitexec.Command(r.dir, args...), "unexpected git log output"}
			}
			d.Commits = append(d.Commits, c)
		}
	}
	d.NextCursor = nextCursor(len(d.Commits), limit, skip)
	return d, nil
}

// maxCursor is the largest skip count git handles: it parses --skip into
// a C int, so a larger value wraps (to a negative or small count) and a
// client following nextCursor would loop over the same pages forever.
const maxCursor = math.MaxInt32

// parseCursor accepts only a decimal offset, as produced by nextCursor,
// within what git can skip.
func parseCursor(s string) (int64, error) {
	bad := invalid("arguments.cursor must be a decimal offset as returned in nextCursor; omit it to start from the newest commit")
	if s == "" {
		return 0, bad
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, bad
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n > maxCursor {
		return 0, invalid(fmt.Sprintf("arguments.cursor must be at most %d (git cannot skip more commits); pass the nextCursor of the previous page, or omit it to start from the newest commit", maxCursor))
	}
	return n, nil
}

func parseLogRecord(rec string) (historyCommit, bool) {
	f := strings.SplitN(rec, "\x1f", 6)
	if len(f) != 6 {
		return historyCommit{}, false
	}
	t, err := atoi64(f[4])
	if err != nil {
		return historyCommit{}, false
	}
	return historyCommit{Hash: f[0], ShortHash: f[1], AuthorName: f[2], AuthorEmail: f[3], AuthorTime: t, Subject: f[5]}, true
}

// headIsUnborn reports whether HEAD names no commit yet.
func (p *Provider) headIsUnborn(ctx context.Context, r *Repo) (bool, error) {
	_, err := p.runner.Run(ctx, r.dir, "rev-parse", "--verify", "--quiet", "HEAD")
	if err == nil {
		return false, nil
	}
	var ge *gitexec.Error
	if errors.As(err, &ge) && ge.ExitCode == 1 && errors.Is(err, gitexec.ErrExit) {
		return true, nil
	}
	return false, err
}
