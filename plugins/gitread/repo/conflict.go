package repo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/fluxgit/fluxgit/internal/gitexec"
	"github.com/fluxgit/fluxgit/internal/resultshape"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// Bounds of conflict.read.
const (
	binaryProbe      = 8000    // NUL in this many leading bytes means binary
	maxMarkerScan    = 8 << 20 // work-tree files larger than this are not scanned
	maxRegions       = 200     // marker regions reported per file
	maxConflictBytes = 4 << 20 // all side contents of one answer together
)

type conflictArgs struct {
	RepoPath        string       `json:"repoPath"`
	RepoID          string       `json:"repoId"`
	MaxFiles        *json.Number `json:"maxFiles"`
	MaxBytesPerSide *json.Number `json:"maxBytesPerSide"`
	// Side, Path, StartLine and EndLine ask for one whole stage of one
	// conflicted path (or a line range of it) instead of the regions.
	Side      string       `json:"side"`
	Path      string       `json:"path"`
	StartLine *json.Number `json:"startLine"`
	EndLine   *json.Number `json:"endLine"`
}

// conflictCommit is ours or theirs.
type conflictCommit struct {
	Sha     string `json:"sha"`
	Subject string `json:"subject"`
}

// conflictSide is one stage of a conflicted path: an unreadable blob
// (Error), a binary blob (Binary, Size) or text (Size, Truncated, Content).
type conflictSide struct {
	Sha       string  `json:"sha"`
	Mode      string  `json:"mode"`
	Error     string  `json:"error,omitempty"`
	Binary    bool    `json:"binary,omitempty"`
	Size      *int64  `json:"size,omitempty"`
	Truncated *bool   `json:"truncated,omitempty"`
	Content   *string `json:"content,omitempty"`
}

// markerRegion is one <<<<<<< / ======= / >>>>>>> block (1-based lines).
type markerRegion struct {
	StartLine int64 `json:"startLine"`
	SepLine   int64 `json:"sepLine"`
	EndLine   int64 `json:"endLine"`
}

// conflictFile is one unmerged path.
type conflictFile struct {
	Path       string `json:"path"`
	PathBase64 string `json:"pathBase64,omitempty"`
	Kind       string `json:"kind"`
	Sides      struct {
		Base   *conflictSide `json:"base"`
		Ours   *conflictSide `json:"ours"`
		Theirs *conflictSide `json:"theirs"`
	} `json:"sides"`
	Regions          []markerRegion `json:"regions"`
	RegionsTruncated bool           `json:"regionsTruncated"`
	// RegionsSkipped says why the work-tree file was not scanned.
	RegionsSkipped string `json:"regionsSkipped,omitempty"`
}

// conflictData is the conflict.read payload.
type conflictData struct {
	InConflict          bool            `json:"inConflict"`
	Operation           *string         `json:"operation"`
	Ours                *conflictCommit `json:"ours"`
	Theirs              *conflictCommit `json:"theirs"`
	ConflictedFileCount int64           `json:"conflictedFileCount"`
	Files               []conflictFile  `json:"files"`
	FileListTruncated   bool            `json:"fileListTruncated"`
	MaxBytesPerSide     int64           `json:"maxBytesPerSide"`
	// Truncated is set when the answer's overall content budget cut side
	// contents beyond what maxBytesPerSide alone would have.
	Truncated bool   `json:"truncated"`
	Guidance  string `json:"guidance,omitempty"`
	Hint      string `json:"hint,omitempty"`
}

// noConflictData is the whole conflict.read payload when nothing is in
// conflict: the other fields would only describe an absent conflict.
type noConflictData struct {
	InConflict bool   `json:"inConflict"` // always false
	Hint       string `json:"hint"`
}

type unmerged struct {
	path  []byte
	modes [4]string
	shas  [4]string
}

func (p *Provider) conflictRead(ctx context.Context, call *sdk.Call) (any, error) {
	var a conflictArgs
	if err := decode(call, &a); err != nil {
		return nil, err
	}
	maxFiles, err := intArg("maxFiles", a.MaxFiles, 20, 1, 200)
	if err != nil {
		return nil, err
	}
	perSide, err := intArg("maxBytesPerSide", a.MaxBytesPerSide, 16384, 1, 1<<20)
	if err != nil {
		return nil, err
	}
	sideReq, err := sideArgs(&a)
	if err != nil {
		return nil, err
	}
	r, err := p.open(ctx, call, a.RepoPath)
	if err != nil {
		return nil, err
	}
	ref := !resultshape.Lean() // the reference sidecar's full shape (CONTRACT §3)
	collect := maxFiles
	if sideReq != nil {
		// The side's path may lie beyond maxFiles.
		collect = 1 << 30
	}

	var gitDir string
	var files []unmerged
	var count int64
	err = parallel(
		func() (err error) { gitDir, _, err = p.gitDirs(ctx, r); return err },
		func() error {
			idx := map[string]int{}
			var last []byte
			return p.stream(ctx, r, 0, func(f []byte) error {
				meta, path, ok := bytes.Cut(f, []byte{'\t'})
				parts := strings.Fields(string(meta))
				if !ok || len(parts) != 3 || len(parts[2]) != 1 || parts[2][0] < '1' || parts[2][0] > '3' {
					return errStatusFormat
				}
				// Stages of one path are adjacent: a new path starts when
				// the name changes.
				if !bytes.Equal(path, last) {
					count++
					last = append(last[:0], path...)
				}
				i, seen := idx[string(path)]
				if !seen {
					if int64(len(files)) >= collect {
						return nil
					}
					i = len(files)
					idx[string(path)] = i
					files = append(files, unmerged{path: append([]byte(nil), path...)})
				}
				st := parts[2][0] - '0'
				files[i].modes[st], files[i].shas[st] = parts[0], parts[1]
				return nil
			}, "ls-files", "-u", "-z")
		},
	)
	if err != nil {
		return nil, err
	}
	op := operationIn(gitDir)
	if op == "bisect" {
		op = ""
	}
	if op == "" && count == 0 {
		if sideReq != nil {
			return nil, invalid("arguments.side: nothing is in conflict (no operation in progress and no unmerged path), so there is no side to read; omit side")
		}
		return &noConflictData{Hint: "No merge, rebase, cherry-pick or revert is in progress and the index has no unmerged paths."}, nil
	}
	if sideReq != nil || !ref {
		if op == "" {
			op = "unknown"
		}
		if sideReq != nil {
			return p.conflictSide(ctx, r, op, files, sideReq, perSide)
		}
		return p.conflictLean(ctx, r, op, files, count)
	}
	d := &conflictData{InConflict: true, ConflictedFileCount: count, Files: make([]conflictFile, len(files)),
		FileListTruncated: count > int64(len(files)), MaxBytesPerSide: perSide}
	theirsRef := theirsRefOf(op)
	if op == "" {
		op = "unknown"
	}
	d.Operation = &op

	// The commits and every blob are independent reads: run them together
	// with a bounded number of git processes.
	type blobJob struct {
		file, stage int
	}
	var jobs []blobJob
	// A conflicted copy of a protected file (a committed session secret,
	// say) keeps its path and kind, but no side is read and its work-tree
	// copy is not scanned.
	list := protectedList()
	guarded := make([]string, len(files))
	for i, f := range files {
		if e, ok := protectedRel(list, r, string(f.path)); ok {
			guarded[i] = protectedSkip(e)
		}
	}
	for i, f := range files {
		if guarded[i] != "" {
			for st := 1; st <= 3; st++ {
				if f.shas[st] != "" {
					side := &conflictSide{Sha: f.shas[st], Mode: f.modes[st], Error: guarded[i]}
					switch st {
					case 1:
						d.Files[i].Sides.Base = side
					case 2:
						d.Files[i].Sides.Ours = side
					case 3:
						d.Files[i].Sides.Theirs = side
					}
				}
			}
			continue
		}
		for st := 1; st <= 3; st++ {
			if f.shas[st] != "" {
				jobs = append(jobs, blobJob{i, st})
			}
		}
	}
	sides := make([]*conflictSide, len(jobs))
	err = parallel(
		func() (err error) { d.Ours, err = p.commitSubject(ctx, r, "HEAD"); return err },
		func() (err error) {
			if theirsRef != "" {
				d.Theirs, err = p.commitSubject(ctx, r, theirsRef)
			}
			return err
		},
		func() error {
			return forEach(len(jobs), 8, func(k int) error {
				j := jobs[k]
				sides[k] = p.readSide(ctx, r, files[j.file].modes[j.stage], files[j.file].shas[j.stage], perSide)
				return nil
			})
		},
	)
	if err != nil {
		return nil, err
	}
	// Apply the overall budget in file order so the answer is deterministic.
	budget := int64(maxConflictBytes)
	for k, j := range jobs {
		s := sides[k]
		if s.Content != nil {
			if n := int64(len(*s.Content)); n > budget {
				cut := cutUTF8(*s.Content, budget)
				s.Content = &cut
				t := true
				s.Truncated = &t
				d.Truncated = true
			}
			budget -= int64(len(*s.Content))
		}
		cf := &d.Files[j.file]
		switch j.stage {
		case 1:
			cf.Sides.Base = s
		case 2:
			cf.Sides.Ours = s
		case 3:
			cf.Sides.Theirs = s
		}
	}
	for i, f := range files {
		cf := &d.Files[i]
		cf.Path, cf.PathBase64 = pathText(f.path)
		cf.Kind = conflictKind(f.shas[1] != "", f.shas[2] != "", f.shas[3] != "")
		if guarded[i] != "" {
			cf.Regions, cf.RegionsSkipped = []markerRegion{}, guarded[i]
			continue
		}
		cf.Regions, cf.RegionsTruncated, cf.RegionsSkipped = scanMarkers(r, string(f.path))
	}
	d.Guidance = conflictGuidance(op)
	return d, nil
}

func conflictKind(base, ours, theirs bool) string {
	switch {
	case base && ours && theirs:
		return "both-modified"
	case base && ours:
		return "deleted-by-them"
	case base && theirs:
		return "deleted-by-us"
	case ours && theirs:
		return "both-added"
	case ours:
		return "added-by-us"
	case theirs:
		return "added-by-them"
	case base:
		return "both-deleted"
	}
	return "unknown"
}

func conflictGuidance(op string) string {
	g := "Each file lists the base (common ancestor), ours and theirs versions from the index and the line numbers " +
		"of the conflict markers left in the work-tree file. Resolve by editing the work-tree file; nothing was changed by this read."
	switch op {
	case "rebase":
		g += " During a rebase the sides are swapped compared with a merge: ours is the branch being rebased onto " +
			"(the onto side, already rewritten history) and theirs is your commit being replayed."
	case "merge":
		g += " During a merge ours is the checked-out branch (HEAD) and theirs is the branch being merged (MERGE_HEAD)."
	case "cherry-pick":
		g += " During a cherry-pick ours is HEAD and theirs is the commit being picked (CHERRY_PICK_HEAD)."
	case "revert":
		g += " During a revert ours is HEAD and theirs is the state before the reverted commit (REVERT_HEAD names it)."
	case "unknown":
		g += " The index has unmerged paths but no operation is recorded, so theirs is unknown."
	}
	return g
}

// commitSubject reads a commit's id and subject; name is a constant
// pseudo-ref, never caller input. A missing ref gives nil.
func (p *Provider) commitSubject(ctx context.Context, r *Repo, name string) (*conflictCommit, error) {
	out, err := p.runner.Run(ctx, r.dir, "log", "-1", "--format=%H%x1f%s", "--end-of-options", name, "--")
	if err != nil {
		if isExit(err, 128) {
			return nil, nil
		}
		return nil, err
	}
	sha, subj, _ := strings.Cut(strings.TrimRight(string(out), "\n"), "\x1f")
	if !isOID(sha) {
		return nil, nil
	}
	subj, _ = clip(strings.ToValidUTF8(subj, "\uFFFD"), 200)
	return &conflictCommit{Sha: sha, Subject: subj}, nil
}

// readSide reads one blob with a capture that stops at the budget, so a
// huge conflicted blob costs its budget, not its size. size must be exact:
// when the capture was cut it comes from `cat-file -s`, which reads the
// object header only.
func (p *Provider) readSide(ctx context.Context, r *Repo, mode, sha string, perSide int64) *conflictSide {
	s := &conflictSide{Sha: sha, Mode: mode}
	if !isOID(sha) || mode == "160000" {
		s.Error = "blob unreadable"
		return s
	}
	c, err := p.runner.CapturePrefix(ctx, r.dir, gitexec.Budget{Bytes: int(max(perSide, binaryProbe))}, "cat-file", "blob", sha)
	if err != nil {
		s.Error = "blob unreadable"
		return s
	}
	size := c.TotalBytes
	if c.Cut {
		out, err := p.runner.Run(ctx, r.dir, "cat-file", "-s", sha)
		if err != nil {
			s.Error = "blob unreadable"
			return s
		}
		if size, err = atoi64(string(out)); err != nil {
			s.Error = "blob unreadable"
			return s
		}
	}
	s.Size = &size
	if bytes.IndexByte(c.Output[:min(len(c.Output), binaryProbe)], 0) >= 0 {
		s.Binary = true
		return s
	}
	text := cutUTF8(string(c.Output), perSide)
	trunc := int64(len(text)) < size
	s.Content, s.Truncated = &text, &trunc
	return s
}

// cutUTF8 shortens s to at most n bytes without splitting a character.
func cutUTF8(s string, n int64) string {
	if int64(len(s)) <= n {
		return s
	}
	cut := int(n)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// scanMarkers finds conflict marker regions in the work-tree copy of rel.
// The file must be a regular file (not a symlink, and reached through no
// symlinked directory) inside the work tree, at most 8 MiB, and text.
func scanMarkers(r *Repo, rel string) (regions []markerRegion, truncated bool, skipped string) {
	regions = []markerRegion{}
	if !filepath.IsLocal(filepath.FromSlash(rel)) {
		return regions, false, "path is not local"
	}
	// One open that follows no link and cannot block on a FIFO, then a
	// check of what was opened: nothing can be swapped in between.
	b, err := r.readFile(rel, maxMarkerScan)
	switch {
	case errors.Is(err, errSymlink):
		return regions, false, "reached through a symlink"
	case errors.Is(err, errNotRegular):
		return regions, false, "not a regular file"
	case errors.Is(err, fs.ErrNotExist):
		return regions, false, "missing from the work tree"
	case err != nil:
		return regions, false, "unreadable"
	case len(b) > maxMarkerScan:
		return regions, false, "larger than 8 MiB"
	}
	if bytes.IndexByte(b[:min(len(b), binaryProbe)], 0) >= 0 {
		return regions, false, "binary"
	}
	var line, start, sep int64
	for len(b) > 0 {
		line++
		l := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			l, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		l = bytes.TrimSuffix(l, []byte{'\r'})
		switch {
		case marker(l, '<'):
			start, sep = line, 0
		case start > 0 && sep == 0 && len(l) == 7 && string(l) == "=======":
			sep = line
		case start > 0 && sep > 0 && marker(l, '>'):
			if len(regions) >= maxRegions {
				return regions, true, ""
			}
			regions = append(regions, markerRegion{StartLine: start, SepLine: sep, EndLine: line})
			start, sep = 0, 0
		}
	}
	return regions, false, ""
}

// marker matches "<<<<<<<" or ">>>>>>>" alone or followed by a space.
func marker(l []byte, c byte) bool {
	if len(l) < 7 || (len(l) > 7 && l[7] != ' ') {
		return false
	}
	for i := 0; i < 7; i++ {
		if l[i] != c {
			return false
		}
	}
	return true
}
