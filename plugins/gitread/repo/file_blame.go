package repo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/fluxgit/fluxgit/internal/gitexec"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

type fileBlameArgs struct {
	RepoPath         string       `json:"repoPath"`
	RepoID           string       `json:"repoId"`
	Path             *string      `json:"path"`
	PathBase64       *string      `json:"pathBase64"`
	Rev              *string      `json:"rev"`
	StartLine        *json.Number `json:"startLine"`
	EndLine          *json.Number `json:"endLine"`
	MaxLines         *json.Number `json:"maxLines"`
	DetectMoves      bool         `json:"detectMoves"`
	DetectCopies     bool         `json:"detectCopies"`
	IgnoreWhitespace bool         `json:"ignoreWhitespace"`
}

// blameHunk is a run of consecutive lines last changed by one commit:
// lines StartLine..StartLine+Lines-1 of the file at the blamed revision,
// which were lines OrigStartLine.. of OrigPath (null when it is the
// requested path) in Commit.
type blameHunk struct {
	StartLine      int64   `json:"startLine"`
	Lines          int64   `json:"lines"`
	Commit         string  `json:"commit"`
	OrigStartLine  int64   `json:"origStartLine"`
	OrigPath       *string `json:"origPath"`
	OrigPathBase64 string  `json:"origPathBase64,omitempty"`
	origPathRaw    []byte
}

// blameCommit describes a commit the hunks refer to, once.
type blameCommit struct {
	Hash        string `json:"hash"`
	AuthorName  string `json:"authorName"`
	AuthorEmail string `json:"authorEmail"`
	AuthorTime  int64  `json:"authorTime"`
	Summary     string `json:"summary"`
}

// fileBlameData is the file.blame payload: per-hunk attribution plus one
// entry per commit, so a commit's author and summary are not repeated for
// each of its lines.
type fileBlameData struct {
	Path       string        `json:"path"`
	PathBase64 string        `json:"pathBase64,omitempty"`
	Rev        *string       `json:"rev"`
	Commit     string        `json:"commit"`
	StartLine  int64         `json:"startLine"`
	EndLine    int64         `json:"endLine"`
	Hunks      []blameHunk   `json:"hunks"`
	Commits    []blameCommit `json:"commits"`
	Truncated  bool          `json:"truncated"`
	MaxLines   int64         `json:"maxLines"`
}

const (
	defaultBlameLines = 400
	maxBlameLines     = 10000
)

// blameShortRE recognises git's refusal of a range past the end of the
// file, to say it in terms of the tool's arguments.
var blameShortRE = regexp.MustCompile(`has only (\d+) lines?`)

func (p *Provider) fileBlame(ctx context.Context, call *sdk.Call) (any, error) {
	var a fileBlameArgs
	if err := decode(call, &a); err != nil {
		return nil, err
	}
	maxLines, err := intArg("maxLines", a.MaxLines, defaultBlameLines, 1, maxBlameLines)
	if err != nil {
		return nil, err
	}
	start, err := intArg("startLine", a.StartLine, 1, 1, 1<<40)
	if err != nil {
		return nil, err
	}
	end, err := intArg("endLine", a.EndLine, 0, 1, 1<<40)
	if err != nil {
		return nil, err
	}
	if end != 0 && end < start {
		return nil, invalid(fmt.Sprintf("arguments.endLine (%d) must not be before arguments.startLine (%d)", end, start))
	}
	rev, field := "HEAD", "rev (default HEAD)"
	if a.Rev != nil && *a.Rev != "" {
		rev, field = *a.Rev, "rev"
		if err := checkRev("rev", rev); err != nil {
			return nil, err
		}
	}
	r, err := p.open(ctx, call, a.RepoPath)
	if err != nil {
		return nil, err
	}
	rel, err := filePathArg(a.Path, a.PathBase64, a.RepoPath, r.dir)
	if err != nil {
		return nil, err
	}
	// Blame prints every line of the file: a committed copy of a
	// protected file is refused as file.read refuses it.
	if err := checkRelPath("arguments.path", r, rel); err != nil {
		return nil, err
	}
	commit, err := p.resolveCommit(ctx, r, field, rev)
	if err != nil {
		return nil, err
	}
	e, err := p.lookupPath(ctx, r, commit, rev, rel)
	if err != nil {
		return nil, err
	}
	d := &fileBlameData{Commit: commit, StartLine: start, EndLine: start - 1, Hunks: []blameHunk{}, Commits: []blameCommit{}, MaxLines: maxLines}
	d.Path, d.PathBase64 = pathText([]byte(rel))
	if a.Rev != nil && *a.Rev != "" {
		d.Rev = a.Rev
	}
	if e.size == 0 {
		if start > 1 {
			return nil, invalid(fmt.Sprintf("arguments.startLine %d is past the end of the file, which is empty", start))
		}
		return d, nil
	}
	// One line past the cap is asked for, so a cut is known rather than
	// guessed; an endLine past the end of the file is clamped by git
	// only with the +count form, so both forms use it.
	want := maxLines + 1
	if end != 0 && end-start+1 <= maxLines {
		want = end - start + 1
	}
	args := []string{"blame", "--porcelain", "--ignore-revs-file=", "-L", strconv.FormatInt(start, 10) + ",+" + strconv.FormatInt(want, 10)}
	if a.DetectMoves {
		args = append(args, "-M")
	}
	if a.DetectCopies {
		args = append(args, "-C")
	}
	if a.IgnoreWhitespace {
		args = append(args, "-w")
	}
	args = append(args, commit, "--", rel)
	bp := &blameParser{commits: map[string]int{}, paths: map[string][]byte{}, d: d, atStart: true}
	if _, err := p.runner.Stream(ctx, r.dir, bp, args...); err != nil {
		var ge *gitexec.Error
		if errors.As(err, &ge) && errors.Is(err, gitexec.ErrExit) {
			if m := blameShortRE.FindStringSubmatch(ge.Details); m != nil {
				return nil, invalid(fmt.Sprintf("arguments.startLine %d is past the end of the file, which has %s lines", start, m[1]))
			}
		}
		return nil, err
	}
	if err := bp.flush(); err != nil {
		return nil, &failure{gitexec.Command(r.dir, args...), err.Error()}
	}
	// Drop the probe line (and anything past the cap).
	var lines int64
	for i := range d.Hunks {
		h := &d.Hunks[i]
		if lines+h.Lines > maxLines {
			h.Lines = maxLines - lines
			d.Truncated = true
			if h.Lines == 0 {
				d.Hunks = d.Hunks[:i]
				break
			}
		}
		lines += h.Lines
		if h.origPathRaw != nil && string(h.origPathRaw) != rel {
			text, b64 := pathText(h.origPathRaw)
			h.OrigPath, h.OrigPathBase64 = &text, b64
		}
	}
	d.EndLine = start + lines - 1
	used := map[string]bool{}
	for _, h := range d.Hunks {
		used[h.Commit] = true
	}
	kept := d.Commits[:0]
	for _, c := range d.Commits {
		if used[c.Hash] {
			kept = append(kept, c)
		}
	}
	d.Commits = kept
	return d, nil
}

// blameParser reads `git blame --porcelain` as it streams. Content lines
// (tab-prefixed) are skipped without being buffered, so a very long line
// costs nothing; header lines are kept up to maxField.
type blameParser struct {
	d       *fileBlameData
	commits map[string]int    // hash -> index in d.Commits
	paths   map[string][]byte // hash -> filename of its first group
	cur     *blameHunk
	curHash string

	line    []byte
	content bool // inside a content line
	atStart bool // the next byte starts a line
}

// Write splits p into lines; see the type comment.
func (b *blameParser) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if b.atStart {
			b.atStart = false
			b.content = p[0] == '\t'
		}
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		if !b.content {
			if len(b.line)+len(chunk) > maxField {
				return 0, errors.New("blame header line too long")
			}
			b.line = append(b.line, chunk...)
		}
		if i < 0 {
			break
		}
		if !b.content {
			if err := b.header(b.line); err != nil {
				return 0, err
			}
		}
		b.line = b.line[:0]
		b.atStart = true
		p = p[i+1:]
	}
	return n, nil
}

// flush handles a final header line without a newline.
func (b *blameParser) flush() error {
	if !b.content && len(b.line) > 0 {
		return b.header(b.line)
	}
	return nil
}

// header handles one non-content porcelain line: a group header
// "<hash> <orig> <final> <count>", a continuation "<hash> <orig> <final>",
// or a commit detail ("author ...", "summary ...", "filename ...").
func (b *blameParser) header(line []byte) error {
	key, val, _ := bytes.Cut(line, []byte{' '})
	if isOID(string(key)) {
		f := strings.Fields(string(val))
		if len(f) != 2 && len(f) != 3 {
			return errors.New("unexpected git blame output: " + string(line))
		}
		if len(f) == 2 {
			return nil // a line inside the current group
		}
		orig, err1 := strconv.ParseInt(f[0], 10, 64)
		final, err2 := strconv.ParseInt(f[1], 10, 64)
		count, err3 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			return errors.New("unexpected git blame output: " + string(line))
		}
		hash := string(key)
		if _, ok := b.commits[hash]; !ok {
			b.commits[hash] = len(b.d.Commits)
			b.d.Commits = append(b.d.Commits, blameCommit{Hash: hash})
		}
		b.d.Hunks = append(b.d.Hunks, blameHunk{StartLine: final, Lines: count, Commit: hash, OrigStartLine: orig, origPathRaw: b.paths[hash]})
		b.cur, b.curHash = &b.d.Hunks[len(b.d.Hunks)-1], hash
		return nil
	}
	if b.cur == nil {
		return errors.New("unexpected git blame output before the first group: " + string(line))
	}
	c := &b.d.Commits[b.commits[b.curHash]]
	switch string(key) {
	case "author":
		c.AuthorName = string(val)
	case "author-mail":
		c.AuthorEmail = strings.TrimSuffix(strings.TrimPrefix(string(val), "<"), ">")
	case "author-time":
		c.AuthorTime, _ = strconv.ParseInt(string(val), 10, 64)
	case "summary":
		c.Summary = string(val)
	case "filename":
		name, err := unquoteCPath(val)
		if err != nil {
			return err
		}
		if _, ok := b.paths[b.curHash]; !ok {
			b.paths[b.curHash] = name
		}
		b.cur.origPathRaw = name
	}
	return nil
}

// unquoteCPath undoes git's C-style quoting of a path ("...", with \t, \n,
// \", \\ and octal escapes), which blame applies to names with special or
// non-ASCII bytes; an unquoted name is returned as is.
func unquoteCPath(b []byte) ([]byte, error) {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return append([]byte(nil), b...), nil
	}
	b = b[1 : len(b)-1]
	out := make([]byte, 0, len(b))
	bad := errors.New("unexpected quoting in git blame output: " + string(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		if i >= len(b) {
			return nil, bad
		}
		switch e := b[i]; e {
		case 'a':
			out = append(out, '\a')
		case 'b':
			out = append(out, '\b')
		case 't':
			out = append(out, '\t')
		case 'n':
			out = append(out, '\n')
		case 'v':
			out = append(out, '\v')
		case 'f':
			out = append(out, '\f')
		case 'r':
			out = append(out, '\r')
		case '"', '\\':
			out = append(out, e)
		default:
			if i+2 >= len(b) || e < '0' || e > '3' {
				return nil, bad
			}
			v, err := strconv.ParseUint(string(b[i:i+3]), 8, 8)
			if err != nil {
				return nil, bad
			}
			out = append(out, byte(v))
			i += 2
		}
	}
	return out, nil
}
