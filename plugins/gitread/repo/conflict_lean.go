package repo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fluxgit/fluxgit/internal/gitexec"
)

// The lean conflict.read answer (CONTRACT §3 "Lean by default") carries the
// conflicted regions, not the files: per region the ours, base and theirs
// lines (diff3 form), where they are, and three lines of context. The whole
// of a side is read only on request (side, path, startLine, endLine).
//
// Where the regions come from. The index stages are the truth: stage 1
// (base), 2 (ours) and 3 (theirs) are read by git itself, whatever the
// size of the file and wherever the conflict is, and they stay right when
// the agent has already edited or resolved part of the work-tree file.
// fluxgit runs `git diff -U0 --histogram` base→ours and base→theirs on the
// blob ids (read-only, streamed through the hardened runner, no temporary
// file; `git merge-file --object-id` would need git 2.43, CI has 2.38)
// and overlaps the two change lists as git's three-way merge does: changes
// of both sides that overlap or touch in the base form one conflicted
// region, a change of one side only merges cleanly, identical changes are
// no conflict. Without a base (both added) the regions are the changes
// between ours and theirs.
//
// The work-tree file is what the agent edits, so its conflict markers are
// scanned too (streamed, any size) and each region is matched to its
// marker block: `lines` then gives the work-tree lines the resolution
// replaces, markers included, and the context comes from the work tree.
// git moves the lines both sides share to the outside of the markers, so a
// match allows such shared lines before and after the block. A region
// whose markers were resolved or removed, or that git split into several
// blocks, has no `lines`; it keeps its place in each side (`at`) and takes
// its context from ours, and marker blocks no region matched are listed in
// `markers` so none is hidden.

// Bounds of the lean answer.
const (
	leanBudget     = 48 << 10 // region text of one answer (context and sides)
	leanFieldCap   = 4 << 10  // one side of one region
	leanMaxRegions = 200      // regions listed per file
	contextLines   = 3        // lines of context before and after a region
	maxDiffSide    = 32 << 20 // a larger stage is flagged, not diffed
	maxDiffOutput  = 64 << 20 // git diff output read per pair of stages
)

// leanConflict is the lean conflict.read payload.
// It carries no inConflict: operation, always present here, says it
// (only the no-conflict answer has inConflict, false).
type leanConflict struct {
	Operation string `json:"operation"`
	// Ours and Theirs are "<short id> <subject>", like git log --oneline.
	Ours   string     `json:"ours,omitempty"`
	Theirs string     `json:"theirs,omitempty"`
	Files  []leanFile `json:"files"`
	// FilesOmitted counts the unmerged paths beyond maxFiles.
	FilesOmitted int64 `json:"filesOmitted,omitempty"`
	// Truncated says the answer's budget cut region text or left regions out.
	Truncated bool `json:"truncated,omitempty"`
}

// leanFile is one unmerged path of the lean answer.
type leanFile struct {
	Path       string `json:"path"`
	PathBase64 string `json:"pathBase64,omitempty"`
	Kind       string `json:"kind"`
	// Binary, Oversized and Skipped say why a file has no regions.
	Binary    bool   `json:"binary,omitempty"`
	Oversized bool   `json:"oversized,omitempty"`
	Skipped   string `json:"skipped,omitempty"`
	// Worktree says why the work-tree copy was not scanned for markers
	// (missing, a symlink, not a regular file, binary); absent when it was.
	Worktree string       `json:"worktree,omitempty"`
	Regions  []leanRegion `json:"regions,omitempty"`
	// RegionsOmitted counts regions left out by the budget or the cap.
	RegionsOmitted int `json:"regionsOmitted,omitempty"`
	// Markers are work-tree marker blocks (first and last line) that no
	// region matched.
	Markers [][2]int64 `json:"markers,omitempty"`
}

// leanRegion is one conflicted region. Texts are whole lines, each ending
// in a newline; an empty side deleted the lines.
type leanRegion struct {
	// Lines are the work-tree lines the resolution replaces (markers and
	// the lines git moved outside them included).
	Lines *[2]int64 `json:"lines,omitempty"`
	// At is the region's first line in ours, base and theirs; left out
	// when all three equal Lines[0].
	At     *[3]int64 `json:"at,omitempty"`
	Before string    `json:"before,omitempty"`
	Ours   string    `json:"ours"`
	Base   *string   `json:"base,omitempty"`
	Theirs string    `json:"theirs"`
	After  string    `json:"after,omitempty"`
	// Truncated: a text was cut; Counts then gives the line counts of
	// ours, base and theirs.
	Truncated bool      `json:"truncated,omitempty"`
	Counts    *[3]int64 `json:"counts,omitempty"`
}

// leanSide is the answer to a side request.
// Like leanConflict, it has no inConflict: operation says it.
type leanSide struct {
	Operation  string `json:"operation"`
	Path       string `json:"path"`
	PathBase64 string `json:"pathBase64,omitempty"`
	Kind       string `json:"kind"`
	Side       string `json:"side"`
	// Lines is the first and last line returned; TotalLines the side's
	// line count.
	Lines      *[2]int64 `json:"lines,omitempty"`
	TotalLines int64     `json:"totalLines"`
	Text       *string   `json:"text,omitempty"`
	Truncated  bool      `json:"truncated,omitempty"`
	Binary     bool      `json:"binary,omitempty"`
	Size       int64     `json:"size,omitempty"`
}

// theirsRefOf names the pseudo-ref of theirs for an operation.
func theirsRefOf(op string) string {
	return map[string]string{"merge": "MERGE_HEAD", "rebase": "REBASE_HEAD", "cherry-pick": "CHERRY_PICK_HEAD", "revert": "REVERT_HEAD"}[op]
}

type sideRequest struct {
	stage      int
	name, path string
	start, end int64 // 1-based, inclusive; end 0 means to the end
}

// sideArgs checks side, path, startLine and endLine together.
func sideArgs(a *conflictArgs) (*sideRequest, error) {
	if a.Side == "" {
		if a.Path != "" || a.StartLine != nil || a.EndLine != nil {
			return nil, invalid("arguments.path, startLine and endLine select a side to read: add side (\"ours\", \"base\" or \"theirs\"), or omit them to get the conflicted regions")
		}
		return nil, nil
	}
	st := map[string]int{"base": 1, "ours": 2, "theirs": 3}[a.Side]
	if st == 0 {
		return nil, invalid(fmt.Sprintf("arguments.side must be \"ours\", \"base\" or \"theirs\", not %q", a.Side))
	}
	if a.Path == "" {
		return nil, invalid("arguments.path is required with side: name one conflicted path (conflict.read without side lists them)")
	}
	start, err := intArg("startLine", a.StartLine, 1, 1, 1<<40)
	if err != nil {
		return nil, err
	}
	end, err := intArg("endLine", a.EndLine, 0, 1, 1<<40)
	if err != nil {
		return nil, err
	}
	if a.EndLine != nil && end < start {
		return nil, invalid(fmt.Sprintf("arguments.endLine (%d) is before startLine (%d); give a range with startLine ≤ endLine", end, start))
	}
	return &sideRequest{stage: st, name: a.Side, path: a.Path, start: start, end: end}, nil
}

// conflictSide returns one stage of one unmerged path, or a line range of
// it, streamed: lines outside the range are counted, not kept.
func (p *Provider) conflictSide(ctx context.Context, r *Repo, op string, files []unmerged, q *sideRequest, perSide int64) (any, error) {
	var f *unmerged
	for i := range files {
		if string(files[i].path) == q.path {
			f = &files[i]
			break
		}
	}
	if f == nil {
		return nil, invalid(fmt.Sprintf("arguments.path %q is not an unmerged path; conflict.read without side lists the conflicted paths", q.path))
	}
	if e, ok := protectedRel(protectedList(), r, string(f.path)); ok {
		return nil, refuseProtected("arguments.path", e)
	}
	sha, mode := f.shas[q.stage], f.modes[q.stage]
	if sha == "" {
		return nil, invalid(fmt.Sprintf("arguments.side: %q has no %s version (kind %s); read another side", q.path, q.name,
			conflictKind(f.shas[1] != "", f.shas[2] != "", f.shas[3] != "")))
	}
	out := &leanSide{Operation: op, Side: q.name, Kind: conflictKind(f.shas[1] != "", f.shas[2] != "", f.shas[3] != "")}
	out.Path, out.PathBase64 = pathText(f.path)
	probe := p.readSide(ctx, r, mode, sha, binaryProbe)
	switch {
	case probe.Error != "":
		return nil, fmt.Errorf("conflict.read: the %s blob of %q: %s", q.name, q.path, probe.Error)
	case probe.Binary:
		out.Binary, out.Size = true, *probe.Size
		return out, nil
	}
	var text strings.Builder
	var line, first, last int64
	err := p.stream(ctx, r, '\n', func(l []byte) error {
		line++
		if line < q.start || (q.end > 0 && line > q.end) || out.Truncated {
			return nil
		}
		if int64(text.Len()+len(l)+1) > perSide {
			out.Truncated = true
			return nil
		}
		if first == 0 {
			first = line
		}
		last = line
		text.Write(bytes.ToValidUTF8(l, []byte("\uFFFD")))
		text.WriteByte('\n')
		return nil
	}, "cat-file", "blob", sha)
	if err != nil {
		return nil, err
	}
	out.TotalLines = line
	if q.start > line && line > 0 {
		return nil, invalid(fmt.Sprintf("arguments.startLine %d is past the end: the %s side of %q has %d lines", q.start, q.name, q.path, line))
	}
	if first > 0 {
		out.Lines = &[2]int64{first, last}
	}
	s := text.String()
	out.Text = &s
	return out, nil
}

// conflictLean builds the lean answer for the listed unmerged paths.
func (p *Provider) conflictLean(ctx context.Context, r *Repo, op string, files []unmerged, count int64) (any, error) {
	d := &leanConflict{Operation: op, Files: make([]leanFile, len(files)), FilesOmitted: count - int64(len(files))}
	list := protectedList()
	results := make([][]conflictRegion, len(files))
	blocks := make([][]markerBlock, len(files))
	err := parallel(
		func() (err error) { d.Ours, err = p.commitLine(ctx, r, "HEAD"); return err },
		func() (err error) {
			if ref := theirsRefOf(op); ref != "" {
				d.Theirs, err = p.commitLine(ctx, r, ref)
			}
			return err
		},
		func() error {
			return forEach(len(files), 4, func(i int) error {
				f := files[i]
				lf := &d.Files[i]
				lf.Path, lf.PathBase64 = pathText(f.path)
				lf.Kind = conflictKind(f.shas[1] != "", f.shas[2] != "", f.shas[3] != "")
				if e, ok := protectedRel(list, r, string(f.path)); ok {
					lf.Skipped = protectedSkip(e)
					return nil
				}
				if f.shas[2] == "" || f.shas[3] == "" {
					// Deleted on one side: no region to show; the kind says
					// it, and a side can be read on request.
					return nil
				}
				regions, why, err := p.stageRegions(ctx, r, f)
				if err != nil {
					return err
				}
				switch why {
				case "binary":
					lf.Binary = true
					return nil
				case "oversized":
					lf.Oversized = true
					return nil
				case "":
				default:
					lf.Skipped = why
					return nil
				}
				results[i] = regions
				blocks[i], lf.Worktree = scanBlocks(r, string(f.path))
				return nil
			})
		},
	)
	if err != nil {
		return nil, err
	}
	budget := leanBudget
	for i := range files {
		if len(results[i]) == 0 && len(blocks[i]) == 0 {
			continue
		}
		if err := p.fillRegions(ctx, r, files[i], &d.Files[i], results[i], blocks[i], &budget); err != nil {
			return nil, err
		}
		if d.Files[i].RegionsOmitted > 0 {
			d.Truncated = true
		}
		for _, rg := range d.Files[i].Regions {
			d.Truncated = d.Truncated || rg.Truncated
		}
	}
	return d, nil
}

// commitLine is "<short id> <subject>" of a constant pseudo-ref, "" when
// the ref is missing.
func (p *Provider) commitLine(ctx context.Context, r *Repo, name string) (string, error) {
	out, err := p.runner.Run(ctx, r.dir, "log", "-1", "--format=%h %s", "--end-of-options", name, "--")
	if err != nil {
		if isExit(err, 128) {
			return "", nil
		}
		return "", err
	}
	line, _ := clip(strings.ToValidUTF8(strings.TrimRight(string(out), "\n"), "\uFFFD"), 200)
	return line, nil
}

// change is one run of changed lines between two versions (0-based
// positions; n lines at a0 became the m lines b at b0).
type change struct {
	a0, b0 int64
	a, b   []string
}

// conflictRegion is one region in diff3 form; base is nil without a base.
type conflictRegion struct {
	ours, theirs []string
	base         []string
	hasBase      bool
	at           [3]int64 // first line (1-based) in ours, base, theirs
}

// stageRegions computes the conflicted regions of a path from its index
// stages. why is "binary", "oversized" or an unreadable-stage reason when
// there are none to compute.
func (p *Provider) stageRegions(ctx context.Context, r *Repo, f unmerged) (regions []conflictRegion, why string, err error) {
	for st := 1; st <= 3; st++ {
		if f.modes[st] == "160000" {
			// A submodule has no lines to merge: one commit must be chosen.
			return nil, "a submodule (mode 160000): choose the ours or the theirs commit", nil
		}
	}
	for st := 1; st <= 3; st++ {
		if f.shas[st] == "" {
			continue
		}
		s := p.readSide(ctx, r, f.modes[st], f.shas[st], binaryProbe)
		switch {
		case s.Error != "":
			return nil, s.Error, nil
		case s.Binary:
			return nil, "binary", nil
		case *s.Size > maxDiffSide:
			return nil, "oversized", nil
		}
	}
	if f.shas[1] == "" {
		// Both added: the conflicts are the differences of the two.
		cs, big, err := p.blobChanges(ctx, r, f.shas[2], f.shas[3])
		if err != nil || big {
			return nil, map[bool]string{true: "oversized"}[big], err
		}
		for _, c := range cs {
			regions = append(regions, conflictRegion{ours: c.a, theirs: c.b, at: [3]int64{c.a0 + 1, 0, c.b0 + 1}})
		}
		return regions, "", nil
	}
	var ours, theirs []change
	var bigO, bigT bool
	err = parallel(
		func() (err error) { ours, bigO, err = p.blobChanges(ctx, r, f.shas[1], f.shas[2]); return err },
		func() (err error) { theirs, bigT, err = p.blobChanges(ctx, r, f.shas[1], f.shas[3]); return err },
	)
	if err != nil || bigO || bigT {
		return nil, map[bool]string{true: "oversized"}[bigO || bigT], err
	}
	return merge3(ours, theirs), "", nil
}

// merge3 overlaps the changes base→ours and base→theirs (each sorted, none
// touching another of its own side) into conflicted regions, as git's
// three-way merge does: changes of both sides that overlap or touch in the
// base conflict; a change of one side alone, or the same change on both,
// merges cleanly.
func merge3(ours, theirs []change) []conflictRegion {
	var out []conflictRegion
	var i, j int
	var dOurs, dTheirs int64 // lines added minus removed before the group
	end := func(c change) int64 { return c.a0 + int64(len(c.a)) }
	for i < len(ours) || j < len(theirs) {
		var lo int64
		if j >= len(theirs) || (i < len(ours) && ours[i].a0 <= theirs[j].a0) {
			lo = ours[i].a0
		} else {
			lo = theirs[j].a0
		}
		hi := lo
		gi, gj := i, j
		for grew := true; grew; {
			grew = false
			for i < len(ours) && ours[i].a0 <= hi {
				hi = max(hi, end(ours[i]))
				i, grew = i+1, true
			}
			for j < len(theirs) && theirs[j].a0 <= hi {
				hi = max(hi, end(theirs[j]))
				j, grew = j+1, true
			}
		}
		og, tg := ours[gi:i], theirs[gj:j]
		atO, atT := lo+dOurs, lo+dTheirs
		for _, c := range og {
			dOurs += int64(len(c.b) - len(c.a))
		}
		for _, c := range tg {
			dTheirs += int64(len(c.b) - len(c.a))
		}
		if len(og) == 0 || len(tg) == 0 {
			continue
		}
		// Every base line of [lo, hi) lies in a change of one side or the
		// other: the group is a chain of overlapping changes.
		base := make([]string, hi-lo)
		for _, c := range append(append([]change(nil), og...), tg...) {
			copy(base[c.a0-lo:], c.a)
		}
		apply := func(cs []change) []string {
			var v []string
			cur := lo
			for _, c := range cs {
				v = append(v, base[cur-lo:c.a0-lo]...)
				v = append(v, c.b...)
				cur = end(c)
			}
			return append(v, base[cur-lo:]...)
		}
		o, t := apply(og), apply(tg)
		if equalLines(o, t) {
			continue
		}
		out = append(out, conflictRegion{ours: o, theirs: t, base: base, hasBase: true, at: [3]int64{atO + 1, lo + 1, atT + 1}})
	}
	return out
}

func equalLines(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if a[k] != b[k] {
			return false
		}
	}
	return true
}

// sameText compares region lines with work-tree lines ignoring a final
// CR: the work-tree copy may have CRLF line ends where the blobs have LF
// (eol attributes, autocrlf).
func sameText(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if strings.TrimSuffix(a[k], "\r") != strings.TrimSuffix(b[k], "\r") {
			return false
		}
	}
	return true
}

// blobChanges runs `git diff -U0` between two blobs and returns its runs of
// changed lines. big reports output past maxDiffOutput.
func (p *Provider) blobChanges(ctx context.Context, r *Repo, from, to string) (cs []change, big bool, err error) {
	var read int64
	var cur *change
	var apos, bpos int64
	inHunk := false
	flush := func() {
		if cur != nil {
			cs = append(cs, *cur)
			cur = nil
		}
	}
	err = p.stream(ctx, r, '\n', func(l []byte) error {
		read += int64(len(l)) + 1
		if read > maxDiffOutput {
			big = true
			return gitexec.ErrStop
		}
		switch {
		case bytes.HasPrefix(l, []byte("@@ ")):
			flush()
			a, b, ok := hunkStarts(string(l))
			if !ok {
				return fmt.Errorf("unexpected hunk header %q", l)
			}
			apos, bpos, inHunk = a, b, true
		case !inHunk || len(l) == 0:
		case l[0] == '-' || l[0] == '+':
			if cur == nil {
				cur = &change{a0: apos, b0: bpos}
			}
			text := strings.ToValidUTF8(string(l[1:]), "\uFFFD")
			if l[0] == '-' {
				cur.a = append(cur.a, text)
				apos++
			} else {
				cur.b = append(cur.b, text)
				bpos++
			}
		case l[0] == ' ':
			// Context (diff.interHunkContext can add some): a change ends.
			flush()
			apos, bpos = apos+1, bpos+1
		}
		return nil
	}, "diff", "--no-ext-diff", "--no-textconv", "--no-color", "--text", "-U0", "--inter-hunk-context=0", "--histogram",
		"--no-indent-heuristic", "--end-of-options", from, to)
	flush()
	if err != nil {
		return nil, false, err
	}
	return cs, big, nil
}

// hunkStarts reads "@@ -a[,n] +b[,m] @@" as 0-based positions of the first
// changed line: a run of zero lines sits after line a, so it starts at a.
func hunkStarts(h string) (a, b int64, ok bool) {
	f := strings.Fields(h)
	if len(f) < 4 || !strings.HasPrefix(f[1], "-") || !strings.HasPrefix(f[2], "+") {
		return 0, 0, false
	}
	pos := func(s string) (int64, bool) {
		n, cnt, hasCnt := strings.Cut(s[1:], ",")
		v, err := strconv.ParseInt(n, 10, 64)
		if err != nil {
			return 0, false
		}
		if hasCnt && cnt == "0" {
			return v, true
		}
		return v - 1, true
	}
	a, ok1 := pos(f[1])
	b, ok2 := pos(f[2])
	return a, b, ok1 && ok2
}

// markerBlock is one <<<<<<< … >>>>>>> block of the work-tree file.
type markerBlock struct {
	start, end   int64
	ours, theirs []string
	used         bool
}

// maxBlockText bounds the marker text kept for matching.
const maxBlockText = 8 << 20

// scanBlocks streams the work-tree copy of rel and returns its marker
// blocks, or why it could not: the file is missing, not a regular file,
// reached through a symlink or binary (the regions then stand alone).
func scanBlocks(r *Repo, rel string) ([]markerBlock, string) {
	var out []markerBlock
	var cur *markerBlock
	inBase, inTheirs := false, false
	kept := 0
	err := r.eachTreeLine(rel, func(n int64, l []byte) bool {
		l = bytes.TrimSuffix(l, []byte{'\r'})
		switch {
		case marker(l, '<'):
			cur, inBase, inTheirs = &markerBlock{start: n}, false, false
		case cur == nil:
		case !inTheirs && marker(l, '|'):
			inBase = true
		case !inTheirs && len(l) == 7 && string(l) == "=======":
			inTheirs = true
		case inTheirs && marker(l, '>'):
			cur.end = n
			out = append(out, *cur)
			cur = nil
		default:
			kept += len(l)
			if kept > maxBlockText {
				return false
			}
			s := strings.ToValidUTF8(string(l), "\uFFFD")
			if inTheirs {
				cur.theirs = append(cur.theirs, s)
			} else if !inBase {
				cur.ours = append(cur.ours, s)
			}
		}
		return true
	})
	switch {
	case err == nil:
		return out, ""
	case errors.Is(err, errSymlink):
		return nil, "reached through a symlink"
	case errors.Is(err, errNotRegular):
		return nil, "not a regular file"
	case errors.Is(err, fs.ErrNotExist):
		return nil, "missing"
	case errors.Is(err, errBinary):
		return nil, "binary"
	}
	return nil, "unreadable"
}

// errBinary marks a work-tree file with a NUL in its first 8,000 bytes.
var errBinary = errors.New("binary")

// eachTreeLine streams the regular work-tree file rel (through no symlink,
// never blocking on a FIFO) line by line, 1-based; fn returns false to
// stop. A file with a NUL in its first 8,000 bytes is binary: no line is
// handed over.
func (r *Repo) eachTreeLine(rel string, fn func(n int64, l []byte) bool) error {
	if !filepath.IsLocal(filepath.FromSlash(rel)) {
		return errors.New("path is not local")
	}
	var f *os.File
	var err error
	if r.pin != nil {
		f, err = openInTree(r.pin.Dir(), rel)
	} else {
		var dir *os.File
		if dir, err = os.Open(r.dir); err == nil {
			f, err = openInTree(dir, rel)
			dir.Close()
		}
	}
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return errNotRegular
	}
	buf := make([]byte, 64<<10)
	var partial []byte
	var n int64
	first := true
	for {
		k, rerr := f.Read(buf)
		chunk := buf[:k]
		if first && k > 0 {
			first = false
			if bytes.IndexByte(chunk[:min(len(chunk), binaryProbe)], 0) >= 0 {
				return errBinary
			}
		}
		for len(chunk) > 0 {
			i := bytes.IndexByte(chunk, '\n')
			if i < 0 {
				if len(partial)+len(chunk) > maxField {
					return errors.New("line too long")
				}
				partial = append(partial, chunk...)
				break
			}
			line := chunk[:i]
			if len(partial) > 0 {
				line = append(partial, line...)
			}
			n++
			if !fn(n, line) {
				return nil
			}
			partial = partial[:0]
			chunk = chunk[i+1:]
		}
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			return rerr
		}
	}
	if len(partial) > 0 {
		n++
		fn(n, partial)
	}
	return nil
}

// matchBlock finds the first unused block at or after from that shows the
// region: its ours and theirs are the region's with the same k lines
// before and the same m lines after taken away (git's shared lines moved
// out of the markers). It returns the block index and k, m.
func matchBlock(blocks []markerBlock, from int, rg conflictRegion) (idx int, k, m int64) {
	for b := from; b < len(blocks); b++ {
		blk := blocks[b]
		cut := len(rg.ours) - len(blk.ours)
		if cut < 0 || len(rg.theirs)-len(blk.theirs) != cut {
			continue
		}
		for pre := 0; pre <= cut; pre++ {
			post := cut - pre
			if sameText(rg.ours[pre:len(rg.ours)-post], blk.ours) &&
				sameText(rg.theirs[pre:len(rg.theirs)-post], blk.theirs) &&
				equalLines(rg.ours[:pre], rg.theirs[:pre]) &&
				equalLines(rg.ours[len(rg.ours)-post:], rg.theirs[len(rg.theirs)-post:]) {
				return b, int64(pre), int64(post)
			}
		}
	}
	return -1, 0, 0
}

// fillRegions matches regions to marker blocks, reads their context and
// spends the answer's budget on their text.
func (p *Provider) fillRegions(ctx context.Context, r *Repo, f unmerged, lf *leanFile, regions []conflictRegion, blocks []markerBlock, budget *int) error {
	type placed struct {
		rg        conflictRegion
		wt        *[2]int64
		fromOurs  bool
		from, to  int64 // context line ranges: [from, first) and (last, to]
		first, ln int64
	}
	var ps []placed
	next := 0
	for _, rg := range regions {
		pl := placed{rg: rg}
		if b, k, m := matchBlock(blocks, next, rg); b >= 0 {
			blocks[b].used = true
			next = b + 1
			pl.wt = &[2]int64{blocks[b].start - k, blocks[b].end + m}
			pl.first, pl.ln = pl.wt[0], pl.wt[1]
		} else {
			pl.fromOurs = true
			pl.first, pl.ln = rg.at[0], rg.at[0]+int64(len(rg.ours))-1
		}
		ps = append(ps, pl)
	}
	for _, b := range blocks {
		if !b.used {
			lf.Markers = append(lf.Markers, [2]int64{b.start, b.end})
		}
	}
	// Context: one streamed pass over the work tree and one over ours, each
	// keeping only the wanted lines.
	wantWT, wantOurs := map[int64]string{}, map[int64]string{}
	for _, pl := range ps {
		w := wantWT
		if pl.fromOurs {
			w = wantOurs
		}
		for n := pl.first - contextLines; n < pl.first; n++ {
			if n >= 1 {
				w[n] = ""
			}
		}
		for n := pl.ln + 1; n <= pl.ln+contextLines; n++ {
			w[n] = ""
		}
	}
	have := map[int64]bool{}
	haveOurs := map[int64]bool{}
	if len(wantWT) > 0 {
		_ = r.eachTreeLine(string(f.path), func(n int64, l []byte) bool {
			if _, ok := wantWT[n]; ok {
				wantWT[n], have[n] = strings.ToValidUTF8(string(l), "\uFFFD"), true
			}
			return true
		})
	}
	if len(wantOurs) > 0 {
		var n int64
		if err := p.stream(ctx, r, '\n', func(l []byte) error {
			n++
			if _, ok := wantOurs[n]; ok {
				wantOurs[n], haveOurs[n] = strings.ToValidUTF8(string(l), "\uFFFD"), true
			}
			return nil
		}, "cat-file", "blob", f.shas[2]); err != nil {
			return err
		}
	}
	for idx, pl := range ps {
		if len(lf.Regions) >= leanMaxRegions || *budget <= 0 {
			lf.RegionsOmitted = len(ps) - idx
			break
		}
		src, ok := wantWT, have
		if pl.fromOurs {
			src, ok = wantOurs, haveOurs
		}
		ctxText := func(a, b int64) string {
			var sb strings.Builder
			for n := a; n <= b; n++ {
				if ok[n] {
					sb.WriteString(src[n])
					sb.WriteByte('\n')
				}
			}
			return sb.String()
		}
		out := leanRegion{Lines: pl.wt}
		if pl.wt == nil || pl.rg.at[0] != pl.wt[0] || (pl.rg.hasBase && pl.rg.at[1] != pl.wt[0]) || pl.rg.at[2] != pl.wt[0] {
			at := pl.rg.at
			out.At = &at
		}
		cut := false
		take := func(lines []string) string {
			s := joinLines(lines)
			limit := min(leanFieldCap, max(*budget, 0))
			if len(s) > limit {
				s = cutLines(s, limit)
				cut = true
			}
			*budget -= len(s)
			return s
		}
		out.Before = take(splitKeep(ctxText(pl.first-contextLines, pl.first-1)))
		out.Ours = take(pl.rg.ours)
		if pl.rg.hasBase {
			b := take(pl.rg.base)
			out.Base = &b
		}
		out.Theirs = take(pl.rg.theirs)
		out.After = take(splitKeep(ctxText(pl.ln+1, pl.ln+contextLines)))
		if cut {
			out.Truncated = true
			out.Counts = &[3]int64{int64(len(pl.rg.ours)), int64(len(pl.rg.base)), int64(len(pl.rg.theirs))}
		}
		lf.Regions = append(lf.Regions, out)
	}
	return nil
}

// joinLines ends every line with a newline.
func joinLines(lines []string) string {
	var sb strings.Builder
	for _, l := range lines {
		sb.WriteString(l)
		sb.WriteByte('\n')
	}
	return sb.String()
}

// splitKeep undoes joinLines.
func splitKeep(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// cutLines shortens s to whole lines within n bytes (or, when its first
// line alone is longer, to n bytes at a character boundary).
func cutLines(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if i := strings.LastIndexByte(s[:n], '\n'); i >= 0 {
		return s[:i+1]
	}
	return cutUTF8(s, int64(n))
}
