package repo

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// revRange is a caller revision or range pinned to object ids: a single
// commit (To only), A..B or A...B. Only these ids reach git's command line
// afterwards, so nothing the caller typed is parsed by `git log`.
type revRange struct {
	From, To string
	// Symmetric is A...B (commits reachable from either side but not both).
	Symmetric bool
}

// args renders the range for `git log` after --end-of-options.
func (r revRange) args() []string {
	switch {
	case r.From == "":
		return []string{r.To}
	case r.Symmetric:
		return []string{r.From + "..." + r.To}
	}
	return []string{r.From + ".." + r.To}
}

// resolveRange validates and resolves the caller's rev argument: a
// revision ("main", "v1.2", "HEAD~3", an abbreviated hash) or a range
// "A..B" / "A...B" whose empty side means HEAD, as in git. Each side is
// checked like every other revision (checkRev) and pinned with rev-parse
// (resolveCommit); a ref name cannot contain "..", so the split is
// unambiguous.
func (p *Provider) resolveRange(ctx context.Context, r *Repo, field, rev string) (revRange, error) {
	if err := checkRev(field, rev); err != nil {
		return revRange{}, err
	}
	sep := ""
	switch {
	case strings.Contains(rev, "..."):
		sep = "..."
	case strings.Contains(rev, ".."):
		sep = ".."
	}
	if sep == "" {
		oid, err := p.resolveCommit(ctx, r, field, rev)
		return revRange{To: oid}, err
	}
	from, to, _ := strings.Cut(rev, sep)
	if strings.Contains(to, "..") || from == "" && to == "" {
		return revRange{}, invalid("arguments." + field + " must be one revision or a range A..B or A...B (an empty side means HEAD), not " + strconv.Quote(rev))
	}
	if from == "" {
		from = "HEAD"
	}
	if to == "" {
		to = "HEAD"
	}
	// Both sides are checked before either costs a process.
	for _, s := range []string{from, to} {
		if err := checkRev(field, s); err != nil {
			return revRange{}, invalid("arguments." + field + ": each side of the range " + strconv.Quote(rev) + " must be a revision that does not start with '-'")
		}
	}
	var out revRange
	out.Symmetric = sep == "..."
	err := parallel(
		func() (err error) { out.From, err = p.resolveCommit(ctx, r, field, from); return err },
		func() (err error) { out.To, err = p.resolveCommit(ctx, r, field, to); return err },
	)
	return out, err
}

// maxPaths bounds the paths argument (the schema says the same).
const maxPaths = 1000

// pathspecs turns the caller's paths into literal repository-relative
// pathspecs (the runner passes --literal-pathspecs), refusing any that
// could leave the repository. A path naming the top level ("." or the
// repository itself) means "everything", so the filter is dropped.
func pathspecs(field string, paths []string, repoPath, top string) ([]string, error) {
	if len(paths) > maxPaths {
		return nil, invalid(fmt.Sprintf("arguments.%s has %d entries; pass at most %d paths (a directory covers everything below it)", field, len(paths), maxPaths))
	}
	out := make([]string, 0, len(paths))
	for i, p := range paths {
		if p == "" {
			return nil, invalid(fmt.Sprintf("arguments.%s[%d] is empty; pass a repository-relative path such as src/app.go, or omit %s", field, i, field))
		}
		rel, err := repoRelative(p, repoPath, top)
		if err != nil {
			return nil, invalid(fmt.Sprintf("arguments.%s[%d] must be a path inside the repository, relative to its top level and without '..' (got %q)", field, i, p))
		}
		if rel == "" {
			return nil, nil
		}
		out = append(out, rel)
	}
	return out, nil
}

// textArg checks a free-text search value (author, message grep, pickaxe
// string). Such values travel inside one argv element (--author=<v>,
// --grep=<v>, -S<v>), so git takes them as the option's value whatever
// they look like: "--output=x" is searched for, never obeyed.
func textArg(field, v string) error {
	switch {
	case v == "":
		return invalid("arguments." + field + " must not be empty; omit it to match everything")
	case strings.IndexByte(v, 0) >= 0:
		return invalid("arguments." + field + " must not contain NUL")
	case len(v) > 4096:
		return invalid("arguments." + field + " must be at most 4096 bytes")
	}
	return nil
}

var relDate = regexp.MustCompile(`^([0-9]{1,6}) ?(second|minute|hour|day|week|month|year)s? ago$`)

// dateFormats are the absolute forms parseDate accepts besides Unix
// seconds. A form without a zone is UTC.
var dateFormats = []string{time.RFC3339, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02T15:04", "2006-01-02 15:04"}

// parseDate turns a since/until value into Unix seconds. Git's own date
// parser accepts nearly anything (an unparsable string silently becomes
// some date), so the value is parsed here and only the resulting number
// reaches git (--max-age/--min-age). Accepted: Unix seconds, RFC 3339
// (2024-05-01T12:00:00Z, with or without the zone), a calendar day
// (2024-05-01: its first second for since, its last for until, UTC) and
// "N units ago" (second, minute, hour, day, week, month = 30 days,
// year = 365 days).
func parseDate(field, s string, endOfDay bool, now time.Time) (int64, error) {
	bad := invalid("arguments." + field + " must be a date: Unix seconds (1714521600), RFC 3339 (2024-05-01T12:00:00Z), a day (2024-05-01, UTC) or a relative age such as \"2 weeks ago\"; got " + strconv.Quote(s))
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, bad
	}
	if isDigits(s) {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n > maxDate {
			return 0, bad
		}
		return n, nil
	}
	if m := relDate.FindStringSubmatch(s); m != nil {
		n, _ := strconv.ParseInt(m[1], 10, 64)
		unit := map[string]int64{"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 7 * 86400, "month": 30 * 86400, "year": 365 * 86400}[m[2]]
		t := now.Unix() - n*unit
		if t < 0 {
			t = 0
		}
		return t, nil
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		if endOfDay {
			t = t.Add(24*time.Hour - time.Second)
		}
		return clampDate(t.Unix(), bad)
	}
	for _, f := range dateFormats {
		if t, err := time.Parse(f, s); err == nil {
			return clampDate(t.Unix(), bad)
		}
	}
	return 0, bad
}

// maxDate is the last second of year 9999: git's date arithmetic is not
// meant for more, and no commit is dated later.
const maxDate = 253402300799

func clampDate(n int64, bad error) (int64, error) {
	if n < 0 || n > maxDate {
		return 0, bad
	}
	return n, nil
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
