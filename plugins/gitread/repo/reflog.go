package repo

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/fluxgit/fluxgit/internal/gitexec"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

type reflogArgs struct {
	RepoPath string       `json:"repoPath"`
	RepoID   string       `json:"repoId"`
	RefName  *string      `json:"refName"`
	Limit    *json.Number `json:"limit"`
}

// reflogEntry is one reflog line; OldCommit is the value the ref had
// before this update (the next, older entry's NewCommit), null for the
// oldest entry returned when nothing older is known.
type reflogEntry struct {
	Index          int64   `json:"index"`
	RefName        string  `json:"refName"`
	Selector       string  `json:"selector"`
	OldCommit      *string `json:"oldCommit"`
	NewCommit      string  `json:"newCommit"`
	ShortNewCommit string  `json:"shortNewCommit"`
	Message        string  `json:"message"`
	AuthorName     string  `json:"authorName"`
	AuthorEmail    string  `json:"authorEmail"`
	Timestamp      int64   `json:"timestamp"`
	CanCompare     bool    `json:"canCompare"`
}

// reflogData is the repo.reflog payload.
type reflogData struct {
	RefName          string        `json:"refName"`
	Entries          []reflogEntry `json:"entries"`
	EntryCount       int64         `json:"entryCount"`
	Truncated        bool          `json:"truncated"`
	ReadOnly         bool          `json:"readOnly"`
	RecoveryGuidance string        `json:"recoveryGuidance"`
}

const maxReflogText = 1000

const reflogGuidance = "The reflog records where this ref pointed after each update, newest first, so commits " +
	"dropped by a reset, amend or rebase stay reachable here until git expires them. To inspect one, pass its " +
	"newCommit to commit.details or compare oldCommit with newCommit using diff.text (base=oldCommit, " +
	"head=newCommit). To recover, propose a new branch at that newCommit (operation.preview.branch) rather " +
	"than resetting; nothing here changes the repository."

func (p *Provider) repoReflog(ctx context.Context, call *sdk.Call) (any, error) {
	var a reflogArgs
	if err := decode(call, &a); err != nil {
		return nil, err
	}
	ref := "HEAD"
	if a.RefName != nil && *a.RefName != "" {
		ref = *a.RefName
	}
	if err := checkRev("refName", ref); err != nil {
		return nil, err
	}
	limit, err := intArg("limit", a.Limit, 12, 1, 100)
	if err != nil {
		return nil, err
	}
	r, err := p.open(ctx, call, a.RepoPath)
	if err != nil {
		return nil, err
	}
	full := "HEAD"
	if ref != "HEAD" {
		if full, err = p.resolveRef(ctx, r, ref); err != nil {
			return nil, err
		}
	}

	d := &reflogData{RefName: ref, Entries: []reflogEntry{}, ReadOnly: true, RecoveryGuidance: reflogGuidance}
	// One entry more than asked gives the last entry its oldCommit and
	// tells whether the list was cut. The ref is the resolved full name,
	// after --end-of-options, so it is never read as an option.
	args := []string{"log", "--walk-reflogs", "--date=unix", "-z",
		"--format=%H%x1f%h%x1f%gd%x1f%gs%x1f%gn%x1f%ge", "-n" + strconv.FormatInt(limit+1, 10),
		"--end-of-options", full, "--"}
	var all []reflogEntry
	err = p.stream(ctx, r, 0, func(rec []byte) error {
		rec = bytes.TrimPrefix(rec, []byte{'\n'})
		if len(rec) == 0 {
			return nil
		}
		f := strings.Split(strings.ToValidUTF8(string(rec), "\uFFFD"), "\x1f")
		if len(f) != 6 || !isOID(f[0]) {
			return errStatusFormat
		}
		e := reflogEntry{RefName: ref, NewCommit: f[0], ShortNewCommit: f[1]}
		if i := strings.LastIndex(f[2], "@{"); i >= 0 && strings.HasSuffix(f[2], "}") {
			if ts, err := strconv.ParseInt(f[2][i+2:len(f[2])-1], 10, 64); err == nil && ts >= 1e9 {
				e.Timestamp = ts
			}
		}
		e.Message, _ = clip(f[3], maxReflogText)
		e.AuthorName, _ = clip(f[4], 256)
		e.AuthorEmail, _ = clip(f[5], 256)
		all = append(all, e)
		return nil
	}, args...)
	if err != nil && !(full == "HEAD" && isExit(err, 128) && p.unborn(ctx, r)) {
		return nil, err
	}
	for i := range all {
		if int64(i) >= limit {
			d.Truncated = true
			break
		}
		e := all[i]
		e.Index = int64(i)
		e.Selector = ref + "@{" + strconv.Itoa(i) + "}"
		if i+1 < len(all) {
			old := all[i+1].NewCommit
			e.OldCommit = &old
			e.CanCompare = old != e.NewCommit
		}
		d.Entries = append(d.Entries, e)
	}
	d.EntryCount = int64(len(d.Entries))
	return d, nil
}

// resolveRef turns a caller's ref name into its full name (HEAD,
// refs/heads/main, refs/stash, ...) without letting git read it as an
// option. Anything that is not a ref (an object id, HEAD~2) is refused.
func (p *Provider) resolveRef(ctx context.Context, r *Repo, ref string) (string, error) {
	args := []string{"rev-parse", "--verify", "--quiet", "--symbolic-full-name", "--end-of-options", ref}
	out, err := p.runner.Run(ctx, r.dir, args...)
	full := strings.TrimSpace(string(out))
	if err != nil && !isExit(err, 1, 128) {
		return "", err
	}
	if err != nil || full == "" || strings.ContainsAny(full, "\n") || (full != "HEAD" && !strings.HasPrefix(full, "refs/")) {
		return "", &failure{gitexec.Command(r.dir, args...), "arguments.refName " + strconv.Quote(ref) + " does not name a ref in this repository"}
	}
	return full, nil
}

// unborn reports whether HEAD names no commit yet (an empty repository).
func (p *Provider) unborn(ctx context.Context, r *Repo) bool {
	_, err := p.runner.Run(ctx, r.dir, "rev-parse", "--verify", "-q", "HEAD")
	return isExit(err, 1)
}
