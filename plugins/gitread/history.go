package gitread

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/fluxgit/fluxgit/plugins/gitexec"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

type historyArgs struct {
	RepoPath string       `json:"repoPath"`
	RepoID   string       `json:"repoId"`
	Limit    *json.Number `json:"limit"`
	Cursor   *string      `json:"cursor"`
}

// HistoryCommit is one entry of repo.history.
type HistoryCommit struct {
	Hash        string `json:"hash"`
	ShortHash   string `json:"shortHash"`
	AuthorName  string `json:"authorName"`
	AuthorEmail string `json:"authorEmail"`
	AuthorTime  int64  `json:"authorTime"`
	Subject     string `json:"subject"`
}

// HistoryData is the repo.history payload. NextCursor is the skip count
// for the next page, null when this page was not full.
type HistoryData struct {
	Commits    []HistoryCommit `json:"commits"`
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
	limit, err := intArg("limit", a.Limit, 50, 1, 200)
	if err != nil {
		return nil, err
	}
	skip := int64(0)
	if a.Cursor != nil {
		if skip, err = parseCursor(*a.Cursor); err != nil {
			return nil, err
		}
	}
	r, err := p.open(ctx, call, a.RepoPath)
	if err != nil {
		return nil, err
	}

	args := []string{"log", "-z", logFormat, "-n" + strconv.FormatInt(limit, 10), "--skip=" + strconv.FormatInt(skip, 10)}
	out, err := p.runner.Run(ctx, r.dir, args...)
	d := &HistoryData{Commits: []HistoryCommit{}}
	if err != nil {
		// `git log` fails on a branch with no commits yet; that is an empty
		// history, not an error. Confirm it rather than guess from stderr.
		if empty, cerr := p.headIsUnborn(ctx, r); cerr == nil && empty {
			return d, nil
		}
		return nil, err
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
	// A cursor past maxCursor could not be passed back; no history is that
	// long, so stopping there loses nothing real.
	if int64(len(d.Commits)) == limit && skip+limit <= maxCursor {
		next := strconv.FormatInt(skip+limit, 10)
		d.NextCursor = &next
	}
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

func parseLogRecord(rec string) (HistoryCommit, bool) {
	f := strings.SplitN(rec, "\x1f", 6)
	if len(f) != 6 {
		return HistoryCommit{}, false
	}
	t, err := atoi64(f[4])
	if err != nil {
		return HistoryCommit{}, false
	}
	return HistoryCommit{Hash: f[0], ShortHash: f[1], AuthorName: f[2], AuthorEmail: f[3], AuthorTime: t, Subject: f[5]}, true
}

// headIsUnborn reports whether HEAD names no commit yet.
func (p *Provider) headIsUnborn(ctx context.Context, r *repo) (bool, error) {
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
