package repo

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/fluxgit/fluxgit/internal/credpaths"
	"github.com/fluxgit/fluxgit/internal/gitexec"
	"github.com/fluxgit/fluxgit/internal/pathwithin"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

type fileReadArgs struct {
	RepoPath   string       `json:"repoPath"`
	RepoID     string       `json:"repoId"`
	Path       *string      `json:"path"`
	PathBase64 *string      `json:"pathBase64"`
	Rev        *string      `json:"rev"`
	Worktree   bool         `json:"worktree"`
	StartLine  *json.Number `json:"startLine"`
	EndLine    *json.Number `json:"endLine"`
	Offset     *json.Number `json:"offset"`
	Length     *json.Number `json:"length"`
	MaxBytes   *json.Number `json:"maxBytes"`
	Encoding   string       `json:"encoding"`
}

// fileReadData is the file.read payload. Size is the whole file's size;
// Offset and Bytes place the returned content inside it, StartLine and
// EndLine (line reads only) name the lines it covers. TotalLines is known
// only when the whole file was read.
type fileReadData struct {
	Path        string  `json:"path"`
	PathBase64  string  `json:"pathBase64,omitempty"`
	Rev         *string `json:"rev"`
	Commit      *string `json:"commit"`
	Worktree    bool    `json:"worktree"`
	Blob        *string `json:"blob"`
	Mode        string  `json:"mode"`
	Size        int64   `json:"size"`
	Binary      bool    `json:"binary"`
	Encoding    *string `json:"encoding"`
	Content     *string `json:"content"`
	InvalidUTF8 bool    `json:"invalidUtf8"`
	Offset      int64   `json:"offset"`
	Bytes       int64   `json:"bytes"`
	StartLine   *int64  `json:"startLine"`
	EndLine     *int64  `json:"endLine"`
	TotalLines  *int64  `json:"totalLines"`
	Truncated   bool    `json:"truncated"`
	MaxBytes    int64   `json:"maxBytes"`
}

const (
	// defaultReadBytes is modest on purpose: a model pays for every byte,
	// and a range or a larger maxBytes is one argument away.
	defaultReadBytes = 32 << 10
	maxReadBytes     = 1 << 20
	// sniffBytes is the window git itself inspects for a NUL byte when it
	// decides whether content is binary, so both agree on what is text.
	sniffBytes = 8000
)

// errStop ends a stream once the requested range or the budget is
// reached; gitexec kills git on a sink error, so the rest of a huge blob
// is never produced.
var errStop = errors.New("read budget reached")

// filePathArg validates the file named by path or pathBase64 (exact
// bytes, for names that are not valid UTF-8) and returns it relative to
// the top level, slash-separated. Paths into a .git directory are refused:
// the tools read content, not repository internals.
func filePathArg(path, pathBase64 *string, repoPath, top string) (string, error) {
	switch {
	case path != nil && pathBase64 != nil:
		return "", invalid("pass either arguments.path or arguments.pathBase64, not both")
	case path == nil && pathBase64 == nil:
		return "", invalid("arguments.path is required (or arguments.pathBase64 for a name that is not valid UTF-8)")
	}
	p := ""
	if path != nil {
		p = *path
	} else {
		b, err := base64.StdEncoding.DecodeString(*pathBase64)
		if err != nil || len(b) == 0 {
			return "", invalid("arguments.pathBase64 must be the standard base64 encoding of the path's bytes, as returned in pathBase64")
		}
		p = string(b)
	}
	rel, err := repoRelative(p, repoPath, top)
	if err != nil {
		return "", invalid("arguments.path must name a file inside the repository, relative to its top level, without '..'")
	}
	if rel == "" {
		return "", invalid("arguments.path names the repository itself; pass a file inside it")
	}
	rel = filepath.ToSlash(rel)
	for _, seg := range strings.Split(rel, "/") {
		if strings.EqualFold(seg, ".git") {
			return "", invalid("arguments.path must not point into a .git directory; only tracked content and work-tree files can be read")
		}
	}
	return rel, nil
}

// readPlan is the validated request: a line range (start >= 1, end 0 =
// to the end), or a byte range (offset, length 0 = to the end).
type readPlan struct {
	lines          bool
	start, end     int64
	offset, length int64
	budget         int64
	base64         bool
}

func (p *Provider) fileRead(ctx context.Context, call *sdk.Call) (any, error) {
	var a fileReadArgs
	if err := decode(call, &a); err != nil {
		return nil, err
	}
	plan, err := readPlanOf(&a)
	if err != nil {
		return nil, err
	}
	var rev string
	if a.Rev != nil && *a.Rev != "" {
		if a.Worktree {
			return nil, invalid("pass either arguments.rev (a committed version) or arguments.worktree:true (the file on disk), not both")
		}
		rev = *a.Rev
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
	// Before either mode reads anything: a protected path is refused on
	// disk and at every revision alike.
	if err := checkRelPath("arguments.path", r, rel); err != nil {
		return nil, err
	}
	d := &fileReadData{MaxBytes: plan.budget}
	d.Path, d.PathBase64 = pathText([]byte(rel))
	var sink *rangeSink
	if a.Worktree {
		d.Worktree = true
		if sink, err = p.readWorktree(r, rel, plan, d); err != nil {
			return nil, err
		}
	} else {
		if rev != "" {
			d.Rev = &rev
		}
		if sink, err = p.readBlob(ctx, r, rev, rel, plan, d); err != nil {
			return nil, err
		}
	}
	if err := sink.finish(d); err != nil {
		return nil, err
	}
	return d, nil
}

// readPlanOf checks the range and budget arguments before anything runs.
func readPlanOf(a *fileReadArgs) (*readPlan, error) {
	pl := &readPlan{}
	var err error
	if pl.budget, err = intArg("maxBytes", a.MaxBytes, defaultReadBytes, 1, maxReadBytes); err != nil {
		return nil, err
	}
	switch a.Encoding {
	case "", "text":
	case "base64":
		pl.base64 = true
	default:
		return nil, invalid(`arguments.encoding must be "text" (default) or "base64"`)
	}
	if (a.StartLine != nil || a.EndLine != nil) && (a.Offset != nil || a.Length != nil) {
		return nil, invalid("pass a line range (startLine/endLine) or a byte range (offset/length), not both")
	}
	if a.Offset != nil || a.Length != nil {
		if pl.offset, err = intArg("offset", a.Offset, 0, 0, 1<<62); err != nil {
			return nil, err
		}
		if pl.length, err = intArg("length", a.Length, 0, 1, 1<<62); err != nil {
			return nil, err
		}
		return pl, nil
	}
	pl.lines = true
	if pl.start, err = intArg("startLine", a.StartLine, 1, 1, 1<<40); err != nil {
		return nil, err
	}
	if pl.end, err = intArg("endLine", a.EndLine, 0, 1, 1<<40); err != nil {
		return nil, err
	}
	if pl.end != 0 && pl.end < pl.start {
		return nil, invalid(fmt.Sprintf("arguments.endLine (%d) must not be before arguments.startLine (%d)", pl.end, pl.start))
	}
	return pl, nil
}

// treeEntry is one `git ls-tree -l` entry.
type treeEntry struct {
	mode, kind, oid string
	size            int64
}

// lookupPath finds rel in commit's tree. A missing path, a directory or
// a submodule is a failure naming the ls-tree command, with a hint.
func (p *Provider) lookupPath(ctx context.Context, r *Repo, commit, shownRev, rel string) (*treeEntry, error) {
	args := []string{"ls-tree", "-l", "-z", "--full-tree", commit, "--", rel}
	out, err := p.runner.Run(ctx, r.dir, args...)
	if err != nil {
		return nil, err
	}
	for _, rec := range bytes.Split(out, []byte{0}) {
		meta, name, ok := bytes.Cut(rec, []byte{'\t'})
		if !ok || string(name) != rel {
			continue
		}
		f := strings.Fields(string(meta))
		if len(f) != 4 {
			break
		}
		e := &treeEntry{mode: f[0], kind: f[1], oid: f[2], size: -1}
		switch e.kind {
		case "tree":
			return nil, &failure{gitexec.Command(r.dir, args...), fmt.Sprintf("%q is a directory at %s; pass the path of a file inside it", rel, shownRev)}
		case "commit":
			return nil, &failure{gitexec.Command(r.dir, args...), fmt.Sprintf("%q is a submodule at %s; its files live in the submodule's own repository", rel, shownRev)}
		}
		if e.size, err = atoi64(f[3]); err != nil || !isOID(e.oid) {
			break
		}
		return e, nil
	}
	if len(bytes.TrimSpace(out)) == 0 {
		return nil, &failure{gitexec.Command(r.dir, args...), fmt.Sprintf("%q does not exist at %s (paths are relative to the repository top level and case-sensitive)", rel, shownRev)}
	}
	return nil, &failure{gitexec.Command(r.dir, args...), "unexpected git ls-tree output"}
}

// readBlob streams the blob at rev (HEAD when empty) through a rangeSink
// that stops git once it has what it needs.
func (p *Provider) readBlob(ctx context.Context, r *Repo, rev, rel string, plan *readPlan, d *fileReadData) (*rangeSink, error) {
	field, shown := "rev", rev
	if rev == "" {
		field, shown = "rev (default HEAD)", "HEAD"
	}
	commit, err := p.resolveCommit(ctx, r, field, shown)
	if err != nil {
		return nil, err
	}
	e, err := p.lookupPath(ctx, r, commit, shown, rel)
	if err != nil {
		return nil, err
	}
	d.Commit, d.Blob, d.Mode, d.Size = &commit, &e.oid, e.mode, e.size
	sink, err := newRangeSink(plan, e.size)
	if err != nil {
		return nil, err
	}
	args := []string{"cat-file", "blob", e.oid}
	if _, err := p.runner.Stream(ctx, r.dir, sink, args...); err != nil && !errors.Is(err, errStop) {
		if errors.Is(err, gitexec.ErrOutputLimit) {
			return nil, &failure{gitexec.Command(r.dir, args...), fmt.Sprintf(
				"the requested range starts beyond the first %d MiB of the file, which is as far as a read at a revision streams; read the file from the work tree (worktree:true) if it is checked out", gitexec.MaxStream>>20)}
		}
		return nil, err
	}
	return sink, nil
}

// readWorktree reads rel from the work tree. Symbolic links are followed
// only while they stay inside the work tree (and out of .git); the file
// is then opened through no link at all, so a link swapped in after the
// check fails the open instead of leading elsewhere.
func (p *Provider) readWorktree(r *Repo, rel string, plan *readPlan, d *fileReadData) (*rangeSink, error) {
	top := canonicalDir(r.dir)
	real, err := filepath.EvalSymlinks(filepath.Join(top, filepath.FromSlash(rel)))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, invalid(fmt.Sprintf("arguments.path %q does not exist in the work tree; pass worktree:false (or omit it) to read the committed version", rel))
		}
		return nil, invalid(fmt.Sprintf("arguments.path %q cannot be resolved in the work tree: %v", rel, err))
	}
	// Where the path leads, after every symlink: a link in the work tree to
	// the session secret is refused by its target.
	list := protectedList()
	if e, ok := credpaths.Lookup(list, real); ok {
		return nil, refuseProtected("arguments.path", e)
	}
	if !pathwithin.Within(top, real) || real == top {
		return nil, invalid(fmt.Sprintf("arguments.path %q is a symbolic link that leads outside the repository; only files inside it can be read", rel))
	}
	for _, g := range []string{r.gitDir, r.commonDir} {
		if g != "" && pathwithin.Within(canonicalDir(g), real) {
			return nil, invalid(fmt.Sprintf("arguments.path %q leads into the git directory; only tracked content and work-tree files can be read", rel))
		}
	}
	inner, _ := pathwithin.Rel(top, real)
	for _, seg := range strings.Split(inner, "/") {
		if strings.EqualFold(seg, ".git") {
			return nil, invalid(fmt.Sprintf("arguments.path %q leads into a .git directory; only tracked content and work-tree files can be read", rel))
		}
	}
	var f *os.File
	if r.pin != nil {
		f, err = openInTree(r.pin.Dir(), inner)
	} else {
		var dir *os.File
		if dir, err = os.Open(top); err == nil {
			f, err = openInTree(dir, inner)
			dir.Close()
		}
	}
	if err != nil {
		return nil, invalid(fmt.Sprintf("arguments.path %q cannot be opened in the work tree (%v); retry, or read the committed version", rel, err))
	}
	defer f.Close()
	// openInTree follows no link, so a symlink swapped in after the checks
	// fails the open; what it cannot see is a hard link or a rename onto
	// the checked name, so the opened file itself is compared too.
	if e, ok := openedProtected(list, f); ok {
		return nil, refuseProtected("arguments.path", e)
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("file.read: stat %s: %w", rel, err)
	}
	if fi.IsDir() {
		return nil, invalid(fmt.Sprintf("arguments.path %q is a directory; pass the path of a file inside it", rel))
	}
	if !fi.Mode().IsRegular() {
		return nil, invalid(fmt.Sprintf("arguments.path %q is not a regular file (a FIFO, socket or device); only regular files can be read", rel))
	}
	d.Size = fi.Size()
	d.Mode = "100644"
	if fi.Mode().Perm()&0o111 != 0 {
		d.Mode = "100755"
	}
	sink, err := newRangeSink(plan, d.Size)
	if err != nil {
		return nil, err
	}
	// A byte range far into a large file need not be read from the start:
	// the sniff window decides binary-ness, then the read seeks.
	if !plan.lines && plan.offset > sniffBytes {
		head := make([]byte, sniffBytes)
		n, err := io.ReadFull(f, head)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("file.read: read %s: %w", rel, err)
		}
		sink.sniffed(head[:n])
		if _, err := f.Seek(plan.offset, io.SeekStart); err != nil {
			return nil, fmt.Errorf("file.read: seek %s: %w", rel, err)
		}
		sink.pos, sink.uncounted = plan.offset, true
	}
	if _, err := io.Copy(sink, f); err != nil && !errors.Is(err, errStop) {
		return nil, fmt.Errorf("file.read: read %s: %w", rel, err)
	}
	return sink, nil
}

// rangeSink receives a file from its start (or, after a seek, from the
// start of a byte range) and keeps only the requested range, up to the
// budget plus a few bytes to see whether a character straddles the cut.
// It returns errStop as soon as nothing more is needed, so git is killed
// instead of producing the rest of a large blob.
type rangeSink struct {
	plan *readPlan
	size int64

	pos       int64 // file offset of the next byte
	newlines  int64 // newlines seen so far
	lastByte  byte
	uncounted bool // a seek skipped bytes: line numbers are unknown
	sniff     []byte
	binary    *bool // decided after sniffBytes, or by finish

	inRange   bool
	full      bool  // the range or the budget is satisfied
	keepFrom  int64 // file offset of kept[0]
	firstLine int64
	kept      []byte
}

func newRangeSink(plan *readPlan, size int64) (*rangeSink, error) {
	if !plan.lines && plan.offset > size {
		return nil, invalid(fmt.Sprintf("arguments.offset %d is past the end of the file (%d bytes)", plan.offset, size))
	}
	return &rangeSink{plan: plan, size: size}, nil
}

// limit is how many bytes of the range are kept before stopping.
func (s *rangeSink) limit() int { return int(s.plan.budget) + utf8.UTFMax }

func (s *rangeSink) sniffed(head []byte) {
	b := bytes.IndexByte(head, 0) >= 0
	s.binary = &b
}

func (s *rangeSink) advance(b []byte) {
	if len(b) == 0 {
		return
	}
	s.pos += int64(len(b))
	s.newlines += int64(bytes.Count(b, []byte{'\n'}))
	s.lastByte = b[len(b)-1]
}

// Write consumes p; see the type comment.
func (s *rangeSink) Write(p []byte) (int, error) {
	n := len(p)
	if s.binary == nil {
		s.sniff = append(s.sniff, p[:min(sniffBytes-len(s.sniff), len(p))]...)
		if len(s.sniff) >= sniffBytes {
			s.sniffed(s.sniff)
		}
	}
	if s.binary != nil && *s.binary && !s.plan.base64 {
		// No content will be returned: stop once binary-ness is known.
		return n, errStop
	}
	if s.full {
		// The content is complete; only the sniff window was still open.
		if s.binary != nil {
			return n, errStop
		}
		return n, nil
	}
	for len(p) > 0 {
		if !s.inRange {
			if s.plan.lines {
				if s.newlines+1 < s.plan.start {
					i := bytes.IndexByte(p, '\n')
					if i < 0 {
						s.advance(p)
						return n, nil
					}
					s.advance(p[:i+1])
					p = p[i+1:]
					continue
				}
			} else if s.pos < s.plan.offset {
				k := min(int64(len(p)), s.plan.offset-s.pos)
				s.advance(p[:k])
				p = p[k:]
				continue
			}
			s.inRange, s.keepFrom, s.firstLine = true, s.pos, s.newlines+1
		}
		take, done := len(p), false
		switch {
		case s.plan.lines && s.plan.end > 0:
			need, off := s.plan.end-s.newlines, 0
			for need > 0 {
				i := bytes.IndexByte(p[off:], '\n')
				if i < 0 {
					break
				}
				off += i + 1
				need--
			}
			if need == 0 {
				take, done = off, true
			}
		case !s.plan.lines && s.plan.length > 0:
			if rest := s.plan.offset + s.plan.length - s.pos; int64(take) >= rest {
				take, done = int(rest), true
			}
		}
		if room := s.limit() - len(s.kept); take > room {
			take, done = room, true
		}
		s.kept = append(s.kept, p[:take]...)
		s.advance(p[:take])
		p = p[take:]
		if done {
			// Stop, unless git's binary test still needs bytes.
			s.full = true
			if s.binary != nil {
				return n, errStop
			}
			return n, nil
		}
	}
	return n, nil
}

// finish decides binary-ness for a file shorter than the sniff window,
// checks that a line range started inside the file, cuts the kept bytes to
// the budget and fills d.
func (s *rangeSink) finish(d *fileReadData) error {
	if s.binary == nil {
		s.sniffed(s.sniff)
	}
	d.Binary = *s.binary
	whole := s.pos == s.size && !s.uncounted
	total := int64(-1)
	if whole {
		total = s.newlines
		if s.size > 0 && s.lastByte != '\n' {
			total++
		}
		if !d.Binary {
			d.TotalLines = &total
		}
	}
	if d.Binary && !s.plan.base64 {
		if !s.plan.lines {
			d.Offset = s.plan.offset
		}
		return nil
	}
	if !s.inRange {
		if s.plan.lines && whole && s.plan.start > max(total, 1) {
			return invalid(fmt.Sprintf("arguments.startLine %d is past the end of the file, which has %d lines", s.plan.start, total))
		}
		s.keepFrom, s.firstLine = s.pos, s.newlines+1
	}
	out := s.kept
	if int64(len(out)) > s.plan.budget {
		d.Truncated = true
		out = s.cut(out)
	}
	d.Offset, d.Bytes = s.keepFrom, int64(len(out))
	if s.plan.lines {
		start := s.firstLine
		end := start - 1 + int64(bytes.Count(out, []byte{'\n'}))
		if len(out) > 0 && out[len(out)-1] != '\n' {
			end++
		}
		d.StartLine, d.EndLine = &start, &end
	}
	enc := "utf-8"
	var text string
	switch {
	case s.plan.base64:
		enc = "base64"
		text = base64.StdEncoding.EncodeToString(out)
	case !utf8.Valid(out):
		d.InvalidUTF8 = true
		text = strings.ToValidUTF8(string(out), "\uFFFD")
	default:
		text = string(out)
	}
	d.Encoding, d.Content = &enc, &text
	return nil
}

// cut shortens out to the budget: base64 exactly; text of a line read
// after the last newline that fits, otherwise on a character boundary so
// no character is shown half.
func (s *rangeSink) cut(out []byte) []byte {
	n := int(s.plan.budget)
	if s.plan.base64 {
		return out[:n]
	}
	if s.plan.lines {
		if i := bytes.LastIndexByte(out[:n], '\n'); i >= 0 {
			return out[:i+1]
		}
	}
	for k := 0; k < utf8.UTFMax-1 && n > 0 && !utf8.RuneStart(out[n]); k++ {
		n--
	}
	return out[:n]
}
