package repo

import (
	"strconv"
	"strings"

	"github.com/fluxgit/fluxgit/internal/gitexec"
)

// leanHistoryLimit is repo.history's default page in the lean shape: what
// an agent reads before it narrows with rev, paths or a filter.
const leanHistoryLimit = 20

// leanLogFormat is the lean shape's record: git's unique abbreviation of
// the id (never a fixed width), author name and e-mail, the strict ISO
// 8601 author date with the author's own offset, and the subject, which
// comes last so a stray separator there cannot shift fields.
const leanLogFormat = "--pretty=format:%h%x1f%an%x1f%ae%x1f%aI%x1f%s"

// History fields a caller may add to the lean row.
const (
	historyFieldAuthor = "author"
	historyFieldTime   = "time"
)

// historyFields is the validated fields argument of repo.history.
type historyFields struct{ author, time bool }

func (f historyFields) any() bool { return f.author || f.time }

func parseHistoryFields(list []string) (historyFields, error) {
	var f historyFields
	if list != nil && len(list) == 0 {
		return f, invalid("arguments.fields is empty; list author and/or time, or omit fields for id and subject only")
	}
	for i, v := range list {
		switch v {
		case historyFieldAuthor:
			f.author = true
		case historyFieldTime:
			f.time = true
		default:
			return f, invalid("arguments.fields[" + strconv.Itoa(i) + "] must be author or time (got " + strconv.Quote(v) + ")")
		}
	}
	return f, nil
}

// leanHistoryData is repo.history's lean payload. Each commit is the
// string "<short id> <subject>" (git log --oneline) or, when fields were
// asked for, the tuple [short id, subject, author?, time?] with the asked
// fields in that order. NextCursor is absent on the last page.
type leanHistoryData struct {
	Commits    []any  `json:"commits"`
	NextCursor string `json:"nextCursor,omitempty"`
}

// leanHistory renders git log output in leanLogFormat as the lean page.
func leanHistory(out []byte, fields historyFields, limit, skip int64, dir string, args []string) (*leanHistoryData, error) {
	d := &leanHistoryData{Commits: []any{}}
	if len(out) > 0 {
		for _, rec := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
			f := strings.SplitN(rec, "\x1f", 5)
			if len(f) != 5 {
				return nil, &failure{gitexec.Command(dir, args...), "unexpected git log output"}
			}
			if !fields.any() {
				d.Commits = append(d.Commits, f[0]+" "+f[4])
				continue
			}
			row := []string{f[0], f[4]}
			if fields.author {
				row = append(row, f[1]+" <"+f[2]+">")
			}
			if fields.time {
				row = append(row, f[3])
			}
			d.Commits = append(d.Commits, row)
		}
	}
	if next := nextCursor(len(d.Commits), limit, skip); next != nil {
		d.NextCursor = *next
	}
	return d, nil
}

// nextCursor is the cursor of the page after a full one, nil after the
// last page. A cursor past maxCursor could not be passed back; no history
// is that long, so stopping there loses nothing real.
func nextCursor(n int, limit, skip int64) *string {
	if int64(n) == limit && skip+limit <= maxCursor {
		next := strconv.FormatInt(skip+limit, 10)
		return &next
	}
	return nil
}
