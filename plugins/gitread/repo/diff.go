package repo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/fluxgit/fluxgit/internal/gitexec"
	"github.com/fluxgit/fluxgit/internal/pathwithin"
	"github.com/fluxgit/fluxgit/internal/resultshape"
	"github.com/fluxgit/fluxgit/plugins/sdk"
)

type diffArgs struct {
	RepoPath         string       `json:"repoPath"`
	RepoID           string       `json:"repoId"`
	Base             *string      `json:"base"`
	Head             *string      `json:"head"`
	Path             *string      `json:"path"`
	Paths            []string     `json:"paths"`
	Staged           *bool        `json:"staged"`
	Mode             *string      `json:"mode"`
	ContextLines     *json.Number `json:"contextLines"`
	FindRenames      *bool        `json:"findRenames"`
	RenameSimilarity *json.Number `json:"renameSimilarity"`
	ExactTotals      *bool        `json:"exactTotals"`
	MaxBytes         *json.Number `json:"maxBytes"`
	MaxLines         *json.Number `json:"maxLines"`
}

// diffData is the diff.text payload. TotalBytes and TotalLines describe
// the whole diff git produced when it was read to the end (the diff fit,
// or the caller asked for exactTotals); when git was stopped at the budget,
// TotalsExact is false and they count only what was read before the stop.
type diffData struct {
	Format      string   `json:"format"`
	Mode        string   `json:"mode"`
	Base        *string  `json:"base"`
	Head        *string  `json:"head"`
	Staged      bool     `json:"staged"`
	Path        *string  `json:"path"`
	Paths       []string `json:"paths"`
	Diff        string   `json:"diff"`
	Truncated   bool     `json:"truncated"`
	TotalBytes  int64    `json:"totalBytes"`
	TotalLines  int64    `json:"totalLines"`
	TotalsExact bool     `json:"totalsExact"`
	MaxBytes    int64    `json:"maxBytes"`
}

// Bounds of diff.text arguments.
const (
	maxDiffBytes    = 1 << 20
	maxDiffPaths    = 100
	maxContextLines = 1000
)

// Output modes of diff.text. Each maps to the git diff output flags it
// adds; the summaries skip the patch text, so they stay small however
// large the change.
const (
	diffModePatch      = "patch"
	diffModeStat       = "stat"
	diffModeNameStatus = "nameStatus"
)

var diffModeFlags = map[string][]string{
	diffModePatch: nil,
	// One "added<TAB>deleted<TAB>path" line per file ("-" counts for a
	// binary file), then the one-line "N files changed" summary.
	diffModeStat:       {"--numstat", "--shortstat"},
	diffModeNameStatus: {"--name-status"},
}

func (p *Provider) diffText(ctx context.Context, call *sdk.Call) (any, error) {
	var a diffArgs
	if err := decode(call, &a); err != nil {
		return nil, err
	}
	maxBytes, err := intArg("maxBytes", a.MaxBytes, 65536, 1, maxDiffBytes)
	if err != nil {
		return nil, err
	}
	maxLines, err := intArg("maxLines", a.MaxLines, 0, 1, 1<<62)
	if err != nil {
		return nil, err
	}
	// Every option below is built from a validated number, a boolean or a
	// fixed table, never from caller text, so no value can become an
	// option of its own.
	flags, mode, err := diffOptionFlags(&a)
	if err != nil {
		return nil, err
	}
	base, head, staged, err := diffRevisions(&a)
	if err != nil {
		return nil, err
	}
	r, err := p.open(ctx, call, a.RepoPath)
	if err != nil {
		return nil, err
	}
	relPath, specs, relPaths, err := diffPathspecs(&a, r)
	if err != nil {
		return nil, err
	}

	var baseOID, headOID string
	err = parallel(
		func() (err error) {
			if base != nil {
				baseOID, err = p.resolveCommit(ctx, r, "base", *base)
			}
			return err
		},
		func() (err error) {
			if head != nil {
				headOID, err = p.resolveCommit(ctx, r, "head", *head)
			}
			return err
		},
	)
	if err != nil {
		return nil, err
	}

	args := []string{"diff", "--no-ext-diff", "--no-textconv", "--no-color"}
	if staged {
		args = append(args, "--cached")
	}
	args = append(args, flags...)
	for _, oid := range []string{baseOID, headOID} {
		if oid != "" {
			args = append(args, oid)
		}
	}
	// "--" always ends the revisions, so a file whose name happens to look
	// like an object id is never ambiguous.
	args = append(args, "--")
	args = append(args, specs...)
	// A tracked copy of a protected file (say, a session secret committed
	// under .fluxgit-run/gateway/) is left out of every diff.
	guarded, err := protectedFilter("arguments.repoPath", r)
	if err != nil {
		return nil, err
	}
	empty := false
	if guarded != nil {
		kept, cut, err := p.diffPathsWithout(ctx, r, args, guarded)
		if err != nil {
			return nil, err
		}
		if cut {
			args = append(args[:len(args)-len(specs)], kept...)
			empty = len(kept) == 0
		}
	}
	// maxBytes+4 leaves room to see whether a multi-byte character straddles
	// the cut.
	var c *gitexec.Captured
	// The budget binds while reading unless the caller asks for exact
	// totals: a 4 KiB answer must not cost a 50 MB diff.
	if empty {
		c = &gitexec.Captured{}
	} else if a.ExactTotals == nil || !*a.ExactTotals {
		c, err = p.runner.CapturePrefix(ctx, r.dir, gitexec.Budget{Bytes: int(maxBytes) + 4, Lines: maxLines}, args...)
	} else {
		c, err = p.runner.Capture(ctx, r.dir, int(maxBytes)+4, args...)
	}
	if err != nil {
		return nil, err
	}
	text := truncateDiff(c.Output, maxLines, maxBytes)
	if resultshape.Lean() {
		return leanDiff(text, c), nil
	}
	d := &diffData{
		Format: "text", Mode: mode, Base: base, Head: head, Staged: staged,
		Diff:       string(text),
		Truncated:  c.Cut || int64(len(text)) < c.TotalBytes,
		TotalBytes: c.TotalBytes, TotalLines: c.TotalLines, TotalsExact: !c.Cut,
		MaxBytes: maxBytes,
	}
	if relPath != "" {
		d.Path = &relPath
	}
	if a.Paths != nil {
		d.Paths = append([]string{}, relPaths...) // [] stays [], not null
	}
	return d, nil
}

// diffOptionFlags checks mode, contextLines and the rename arguments and
// returns the git flags they stand for, plus the effective mode.
func diffOptionFlags(a *diffArgs) (flags []string, mode string, err error) {
	mode = diffModePatch
	if a.Mode != nil {
		mode = *a.Mode
	}
	modeFlags, ok := diffModeFlags[mode]
	if !ok {
		return nil, "", invalid(fmt.Sprintf("arguments.mode %q is not supported; use %q (the unified diff, default), %q (per-file added/deleted line counts and a summary line) or %q (one status letter and path per file)", mode, diffModePatch, diffModeStat, diffModeNameStatus))
	}
	flags = append(flags, modeFlags...)
	if a.ContextLines != nil {
		if mode != diffModePatch {
			return nil, "", invalid("arguments.contextLines applies to mode \"patch\" only; drop it for mode \"" + mode + "\"")
		}
		n, err := intArg("contextLines", a.ContextLines, 3, 0, maxContextLines)
		if err != nil {
			return nil, "", err
		}
		flags = append(flags, "--unified="+strconv.FormatInt(n, 10))
	}
	switch {
	case a.RenameSimilarity != nil:
		if a.FindRenames != nil && !*a.FindRenames {
			return nil, "", invalid("arguments.renameSimilarity needs rename detection; drop findRenames:false or drop renameSimilarity")
		}
		n, err := intArg("renameSimilarity", a.RenameSimilarity, 50, 1, 100)
		if err != nil {
			return nil, "", err
		}
		flags = append(flags, "--find-renames="+strconv.FormatInt(n, 10)+"%")
	case a.FindRenames == nil:
		// git's own default (diff.renames, on unless configured off)
	case *a.FindRenames:
		flags = append(flags, "--find-renames")
	default:
		flags = append(flags, "--no-renames")
	}
	return flags, mode, nil
}

// truncateDiff applies the line cap, then the byte cap. The byte cut lands
// after the last newline that fits so no line is shown half; a single line
// longer than the cap is cut on a UTF-8 boundary instead.
func truncateDiff(b []byte, maxLines, maxBytes int64) []byte {
	if maxLines > 0 {
		idx, seen := 0, int64(0)
		for seen < maxLines {
			i := bytes.IndexByte(b[idx:], '\n')
			if i < 0 {
				idx = len(b)
				break
			}
			idx += i + 1
			seen++
		}
		b = b[:idx]
	}
	if int64(len(b)) <= maxBytes {
		return b
	}
	head := b[:maxBytes]
	if i := bytes.LastIndexByte(head, '\n'); i >= 0 {
		return head[:i+1]
	}
	// Back off to the start of a rune that fits entirely.
	cut := len(head)
	for k := 0; k < utf8.UTFMax && cut > 0; k++ {
		start := cut - 1 - k
		if start < 0 {
			break
		}
		if utf8.RuneStart(b[start]) {
			if _, size := utf8.DecodeRune(b[start:]); start+size > cut {
				cut = start
			}
			break
		}
	}
	return b[:cut]
}

// repoRelative turns the caller's path into a repository-relative pathspec
// ("" for the whole repository). Absolute paths inside the repository are
// accepted; anything that could climb out is refused before git sees it.
func repoRelative(p, repoPath, top string) (string, error) {
	bad := invalid("arguments.path must be repository-relative without '..'")
	if strings.IndexByte(p, 0) >= 0 {
		return "", bad
	}
	for _, seg := range strings.Split(filepath.ToSlash(p), "/") {
		if seg == ".." {
			return "", bad
		}
	}
	if filepath.IsAbs(p) {
		cp := filepath.Clean(p)
		inTop, okTop := pathwithin.Rel(top, cp)
		inRepo, okRepo := pathwithin.Rel(repoPath, cp)
		switch {
		case okTop:
			p = filepath.FromSlash(inTop)
		case okRepo:
			// repoPath as the caller spelled it (for example through a
			// symlink the host resolved); git named its top level top.
			rel := filepath.FromSlash(inRepo)
			if sub, ok := pathwithin.Rel(top, canonicalDir(repoPath)); ok {
				rel = filepath.Join(filepath.FromSlash(sub), rel)
			}
			p = rel
		default:
			return "", bad
		}
	}
	p = filepath.Clean(p)
	if p == "." {
		return "", nil
	}
	return p, nil
}

func canonicalDir(p string) string {
	if c, err := filepath.EvalSymlinks(p); err == nil {
		return c
	}
	return filepath.Clean(p)
}

// maxKeptPaths bounds the pathspecs diffPathsWithout passes instead of the
// caller's: the command line must stay short on every OS.
const maxKeptPaths = 1000

// diffPathsWithout lists the files the diff args (ending in "--" and the
// caller's pathspecs) would show and, when some lie in a protected
// location, returns the others as exact pathspecs to diff instead (cut).
// The runner takes pathspecs literally, so an :(exclude) is not possible;
// a diff touching a protected file and more than maxKeptPaths others is
// refused with how to narrow it.
func (p *Provider) diffPathsWithout(ctx context.Context, r *Repo, args []string, guarded func(string) bool) (kept []string, cut bool, err error) {
	list := []string{"diff", "--name-only", "-z", "--no-renames"}
	for _, a := range args[1:] {
		// The revisions, --cached and "--" with the pathspecs; the output
		// options do not change which files differ.
		if !strings.HasPrefix(a, "-") || a == "--cached" || a == "--" {
			list = append(list, a)
		}
	}
	if i := indexOf(args, "--"); i >= 0 {
		list = append(list[:indexOf(list, "--")], args[i:]...)
	}
	var hit bool
	err = p.stream(ctx, r, 0, func(f []byte) error {
		if len(f) == 0 {
			return nil
		}
		if guarded(string(f)) {
			hit = true
			return nil
		}
		kept = append(kept, string(f))
		return nil
	}, list...)
	if err != nil || !hit {
		return nil, false, err
	}
	if len(kept) > maxKeptPaths {
		return nil, false, invalid(fmt.Sprintf("this diff includes a protected file of the person's, which fluxgit never shows, and %d other files; pass arguments.paths naming the files or directories you need (at most %d files once narrowed)", len(kept), maxKeptPaths))
	}
	return kept, true, nil
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

// leanDiffData is diff.text's lean payload: the diff and, only when it
// was cut, the totals of what git produced. The arguments are not echoed.
// TotalsExact is present, as false, exactly when the totals are lower
// bounds (git was stopped at the budget; CONTRACT §10).
type leanDiffData struct {
	Diff        string `json:"diff"`
	Truncated   bool   `json:"truncated,omitempty"`
	TotalBytes  int64  `json:"totalBytes,omitempty"`
	TotalLines  int64  `json:"totalLines,omitempty"`
	TotalsExact *bool  `json:"totalsExact,omitempty"`
}

func leanDiff(text []byte, c *gitexec.Captured) *leanDiffData {
	// The cut is judged on git's text; the headers that repeat a diff line
	// are left out after it, so totals still count git's whole patch.
	d := &leanDiffData{Diff: string(leanPatchHeaders(text))}
	if c.Cut || int64(len(text)) < c.TotalBytes {
		// Uncut, the totals are the diff's own size: nothing to add.
		d.Truncated, d.TotalBytes, d.TotalLines = true, c.TotalBytes, c.TotalLines
		if c.Cut {
			exact := false
			d.TotalsExact = &exact
		}
	}
	return d
}

// diffRevisions checks diff.text's revisions and path list before any git
// runs, so a refused argument never costs a process. Empty revisions count
// as absent.
func diffRevisions(a *diffArgs) (base, head *string, staged bool, err error) {
	given := func(s *string) *string {
		if s == nil || *s == "" {
			return nil
		}
		return s
	}
	base, head = given(a.Base), given(a.Head)
	staged = a.Staged != nil && *a.Staged
	if staged && head != nil {
		return nil, nil, false, invalid("arguments.staged compares the index with base (HEAD when base is omitted) and cannot be combined with head; drop head, or drop staged to compare two revisions")
	}
	for _, rv := range []struct {
		field string
		v     *string
	}{{"base", base}, {"head", head}} {
		if rv.v != nil {
			if err := checkRev(rv.field, *rv.v); err != nil {
				return nil, nil, false, err
			}
		}
	}
	if len(a.Paths) > maxDiffPaths {
		return nil, nil, false, invalid(fmt.Sprintf("arguments.paths has %d items; at most %d are allowed (name a common directory instead)", len(a.Paths), maxDiffPaths))
	}
	for i, v := range a.Paths {
		if v == "" {
			return nil, nil, false, invalid(fmt.Sprintf("arguments.paths[%d] is empty; give a repository-relative file or directory", i))
		}
	}
	return base, head, staged, nil
}

// diffPathspecs turns path and paths into git pathspecs relative to the
// top level (nil: the whole repository), plus the normalized path and
// paths the answer echoes. The filters are the union of path and paths;
// an item naming the whole repository (".", repoPath) makes that union
// the whole repository, as path alone always did.
func diffPathspecs(a *diffArgs, r *Repo) (relPath string, specs, relPaths []string, err error) {
	if a.Path != nil {
		if relPath, err = repoRelative(*a.Path, a.RepoPath, r.dir); err != nil {
			return "", nil, nil, err
		}
	}
	whole := a.Path != nil && relPath == ""
	if relPath != "" {
		specs = append(specs, relPath)
	}
	for i, v := range a.Paths {
		rel, err := repoRelative(v, a.RepoPath, r.dir)
		if err != nil {
			return "", nil, nil, invalid(fmt.Sprintf("arguments.paths[%d] must be repository-relative without '..' (got %q)", i, v))
		}
		if rel == "" {
			whole = true
			rel = "."
		} else {
			specs = append(specs, rel)
		}
		relPaths = append(relPaths, filepath.ToSlash(rel))
	}
	if whole {
		specs = nil
	}
	return relPath, specs, relPaths, nil
}
