package repo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/fluxgit/fluxgit/internal/gitexec"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

type historySearchArgs struct {
	RepoPath   string       `json:"repoPath"`
	RepoID     string       `json:"repoId"`
	Text       *string      `json:"text"`
	Regex      *string      `json:"regex"`
	IgnoreCase bool         `json:"ignoreCase"`
	Rev        *string      `json:"rev"`
	Paths      []string     `json:"paths"`
	Limit      *json.Number `json:"limit"`
}

// searchFile is one file of a history.search hit whose change matched.
type searchFile struct {
	Path string `json:"path"`
	// PathBase64 holds the exact bytes when the path is not valid UTF-8.
	PathBase64 string `json:"pathBase64,omitempty"`
}

// searchCommit is one history.search hit.
type searchCommit struct {
	historyCommit
	// Files are the files of the commit whose diff matched, at most
	// maxSearchFiles; FilesTruncated says more matched.
	Files          []searchFile `json:"files"`
	FilesTruncated bool         `json:"filesTruncated"`
}

// historySearchData is the history.search payload.
type historySearchData struct {
	// Mode is "text" (the number of occurrences changed, git log -S) or
	// "regex" (an added or removed line matches, git log -G).
	Mode    string         `json:"mode"`
	Commits []searchCommit `json:"commits"`
	// Truncated is true when more commits match than limit.
	Truncated bool `json:"truncated"`
}

// maxSearchFiles caps the files listed per hit: one commit touching
// thousands of matching files (a vendored tree, a mass rename) must not
// use the whole answer.
const maxSearchFiles = 100

// errSearchFull stops git once one hit more than the limit was seen: that
// hit is only there to tell whether the answer was cut.
var errSearchFull = errors.New("history.search: result budget reached")

// searchFormat starts every commit with RS (0x1e) so a header is told from
// the NUL-terminated file names that follow it. tformat ends the header
// with NUL under -z too (format: would not), and git prints a newline
// between the header and the first name.
const searchFormat = "--pretty=tformat:%x1e%H%x1f%h%x1f%an%x1f%ae%x1f%at%x1f%s"

func (p *Provider) historySearch(ctx context.Context, call *sdk.Call) (any, error) {
	var a historySearchArgs
	if err := decode(call, &a); err != nil {
		return nil, err
	}
	limit, err := intArg("limit", a.Limit, 20, 1, 200)
	if err != nil {
		return nil, err
	}
	var needle string
	d := &historySearchData{Commits: []searchCommit{}}
	switch {
	case a.Text != nil && a.Regex != nil:
		return nil, invalid("pass either arguments.text (a literal string whose number of occurrences changed) or arguments.regex (a pattern added or removed lines match), not both")
	case a.Text != nil:
		if err := textArg("text", *a.Text); err != nil {
			return nil, err
		}
		d.Mode, needle = "text", "-S"+*a.Text
	case a.Regex != nil:
		if err := textArg("regex", *a.Regex); err != nil {
			return nil, err
		}
		d.Mode, needle = "regex", "-G"+*a.Regex
	default:
		return nil, invalid("arguments.text or arguments.regex is required: the string or pattern to look for in the changes of each commit")
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

	// The pickaxe value stays inside its -S/-G element, where git takes it
	// as the option's argument whatever it looks like. -n counts matching
	// commits, so git stops walking once the budget (plus the one that
	// proves truncation) is found. Renames are paired whatever the
	// repository's diff.renames says, so moving a file that contains the
	// string is not reported as removing and adding it.
	args := []string{"log", "-z", searchFormat, "--name-only", "--find-renames", needle,
		"-n" + strconv.FormatInt(limit+1, 10)}
	if a.IgnoreCase {
		args = append(args, "--regexp-ignore-case")
	}
	if rng != nil {
		args = append(append(args, "--end-of-options"), rng.args()...)
	}
	args = append(append(args, "--"), specs...)
	// -G answers a regex about a file's content, which would spell out a
	// committed secret one character at a time: a match in a protected
	// file is dropped, and a commit that matched only there is not listed
	// (git prints only the matching files of each commit). Such a commit
	// still counts against -n, so a search may list fewer than limit.
	guarded, err := protectedFilter("arguments.repoPath", r)
	if err != nil {
		return nil, err
	}
	sawGuarded := false

	var cur *searchCommit
	firstFile := false
	flush := func() error {
		if cur == nil {
			return nil
		}
		if sawGuarded && len(cur.Files) == 0 && !cur.FilesTruncated {
			cur = nil
			return nil
		}
		if int64(len(d.Commits)) == limit {
			d.Truncated = true
			return errSearchFull
		}
		d.Commits = append(d.Commits, *cur)
		cur = nil
		return nil
	}
	err = p.stream(ctx, r, 0, func(f []byte) error {
		if len(f) > 0 && f[0] == 0x1e {
			if err := flush(); err != nil {
				return err
			}
			c, ok := parseLogRecord(string(f[1:]))
			if !ok {
				return &failure{gitexec.Command(r.dir, args...), "unexpected git log output"}
			}
			cur, firstFile, sawGuarded = &searchCommit{historyCommit: c, Files: []searchFile{}}, true, false
			return nil
		}
		if cur == nil {
			if len(f) == 0 {
				return nil
			}
			return &failure{gitexec.Command(r.dir, args...), "unexpected git log output"}
		}
		if firstFile {
			// The newline git prints between the header and the names.
			f, firstFile = bytes.TrimPrefix(f, []byte{'\n'}), false
		}
		if len(f) == 0 {
			return nil
		}
		if guarded != nil && guarded(string(f)) {
			sawGuarded = true
			return nil
		}
		if len(cur.Files) == maxSearchFiles {
			cur.FilesTruncated = true
			return nil
		}
		var sf searchFile
		sf.Path, sf.PathBase64 = pathText(f)
		cur.Files = append(cur.Files, sf)
		return nil
	}, args...)
	if err == nil {
		err = flush()
	}
	switch {
	case errors.Is(err, errSearchFull):
		return d, nil
	case err != nil && a.Regex != nil && badRegex(err):
		// git compiles the pattern with the system's POSIX extended
		// expressions (GNU extensions such as \b and \w included where the
		// platform has them), so git, not a second parser here, judges it.
		return nil, invalid("arguments.regex is not a valid POSIX extended regular expression (" + badRegexReason(err) + "); escape special characters such as ( [ { with a backslash, or pass a literal string as arguments.text")
	case err != nil:
		// `git log` fails on a branch with no commits yet; nothing to search.
		if empty, cerr := p.headIsUnborn(ctx, r); rng == nil && cerr == nil && empty {
			return d, nil
		}
		return nil, err
	}
	return d, nil
}

// badRegex reports whether git refused the -G pattern ("fatal: invalid
// regex: ..."; exit 128).
func badRegex(err error) bool {
	var ge *gitexec.Error
	return errors.As(err, &ge) && ge.ExitCode == 128 && strings.Contains(ge.Details, "invalid regex")
}

// badRegexReason is git's explanation of a refused pattern, one line.
func badRegexReason(err error) string {
	var ge *gitexec.Error
	errors.As(err, &ge)
	_, reason, _ := strings.Cut(ge.Details, "invalid regex: ")
	reason, _, _ = strings.Cut(reason, "\n")
	return strings.TrimSpace(reason)
}
