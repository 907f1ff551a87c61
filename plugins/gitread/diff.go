package gitread

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/fluxgit/fluxgit/plugins/sdk"
)

type diffArgs struct {
	RepoPath string       `json:"repoPath"`
	RepoID   string       `json:"repoId"`
	Base     *string      `json:"base"`
	Head     *string      `json:"head"`
	Path     *string      `json:"path"`
	MaxBytes *json.Number `json:"maxBytes"`
	MaxLines *json.Number `json:"maxLines"`
}

// DiffData is the diff.text payload. TotalBytes and TotalLines describe
// the whole diff git produced, so a caller can tell how much was cut.
type DiffData struct {
	Format     string  `json:"format"`
	Base       *string `json:"base"`
	Head       *string `json:"head"`
	Path       *string `json:"path"`
	Diff       string  `json:"diff"`
	Truncated  bool    `json:"truncated"`
	TotalBytes int64   `json:"totalBytes"`
	TotalLines int64   `json:"totalLines"`
	MaxBytes   int64   `json:"maxBytes"`
}

const maxDiffBytes = 1 << 20

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
	// Empty revisions count as absent; the rest are checked before any git
	// runs so a refused argument never costs a process.
	given := func(s *string) *string {
		if s == nil || *s == "" {
			return nil
		}
		return s
	}
	base, head := given(a.Base), given(a.Head)
	for _, rv := range []struct {
		field string
		v     *string
	}{{"base", base}, {"head", head}} {
		if rv.v != nil {
			if err := checkRev(rv.field, *rv.v); err != nil {
				return nil, err
			}
		}
	}
	r, err := p.open(ctx, call, a.RepoPath)
	if err != nil {
		return nil, err
	}
	var relPath string
	if a.Path != nil {
		if relPath, err = repoRelative(*a.Path, a.RepoPath, r.dir); err != nil {
			return nil, err
		}
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
	for _, oid := range []string{baseOID, headOID} {
		if oid != "" {
			args = append(args, oid)
		}
	}
	// "--" always ends the revisions, so a file whose name happens to look
	// like an object id is never ambiguous.
	args = append(args, "--")
	if relPath != "" {
		args = append(args, relPath)
	}
	// maxBytes+4 leaves room to see whether a multi-byte character straddles
	// the cut.
	c, err := p.runner.Capture(ctx, r.dir, int(maxBytes)+4, args...)
	if err != nil {
		return nil, err
	}
	text := truncateDiff(c.Output, maxLines, maxBytes)
	d := &DiffData{
		Format: "text", Base: base, Head: head,
		Diff:       string(text),
		Truncated:  int64(len(text)) < c.TotalBytes,
		TotalBytes: c.TotalBytes, TotalLines: c.TotalLines, MaxBytes: maxBytes,
	}
	if relPath != "" {
		d.Path = &relPath
	}
	return d, nil
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
		switch {
		case isWithin(cp, top):
			p, _ = filepath.Rel(top, cp)
		case isWithin(cp, repoPath):
			// repoPath as the caller spelled it (for example through a
			// symlink the host resolved); git named its top level top.
			rel, _ := filepath.Rel(filepath.Clean(repoPath), cp)
			if sub, err := filepath.Rel(top, canonicalDir(repoPath)); err == nil && isLocal(sub) {
				rel = filepath.Join(sub, rel)
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

// isWithin reports whether absolute path p is root or below it.
func isWithin(p, root string) bool {
	p, root = filepath.Clean(p), filepath.Clean(root)
	sep := string(filepath.Separator)
	return p == root || strings.HasPrefix(p, strings.TrimSuffix(root, sep)+sep)
}

func isLocal(rel string) bool { return rel == "." || filepath.IsLocal(rel) }

func canonicalDir(p string) string {
	if c, err := filepath.EvalSymlinks(p); err == nil {
		return c
	}
	return filepath.Clean(p)
}
