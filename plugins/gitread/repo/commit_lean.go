package repo

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/fluxgit/fluxgit/internal/gitexec"
)

// leanCommitFiles caps commit.details' files in the lean shape; the rest
// are counted in FilesOmitted.
const leanCommitFiles = 1000

// leanShowFormat: the full id (the point of commit.details), the parents'
// unique abbreviations, their full ids (for the merge diff only), author
// name and e-mail, the strict ISO 8601 author date and the raw message.
const leanShowFormat = "--pretty=format:%H%x1f%p%x1f%P%x1f%an%x1f%ae%x1f%aI%x1f%B"

// leanCommitData is commit.details' lean payload: one flat object with
// the commit's full id, short parents, author "Name <email>", the author
// date (time), the message and the changed files as name-status lines
// ("M path", "R087 old -> new"). Empty fields are left out.
type leanCommitData struct {
	Commit       string   `json:"commit"`
	Parents      []string `json:"parents,omitempty"`
	Author       string   `json:"author"`
	Time         string   `json:"time"`
	Message      string   `json:"message,omitempty"`
	Files        []string `json:"files,omitempty"`
	FilesOmitted int      `json:"filesOmitted,omitempty"`
}

func (p *Provider) leanCommitDetails(ctx context.Context, r *Repo, oid string) (any, error) {
	d := &leanCommitData{}
	files := fileList{max: leanCommitFiles, lean: true}
	var fullParents []string
	showArgs := []string{"show", "-s", "-z", leanShowFormat, oid}
	// -M reports renames as git show does (diff-tree alone does not).
	treeArgs := []string{"diff-tree", "--no-commit-id", "--name-status", "-r", "-z", "-M", "--root", oid}
	err := parallel(
		func() error {
			out, err := p.runner.Run(ctx, r.dir, showArgs...)
			if err != nil {
				return err
			}
			f := strings.SplitN(strings.TrimSuffix(string(out), "\x00"), "\x1f", 7)
			if len(f) != 7 {
				return &failure{gitexec.Command(r.dir, showArgs...), "unexpected git show output"}
			}
			d.Commit, d.Parents, fullParents = f[0], strings.Fields(f[1]), strings.Fields(f[2])
			// A UTC date says so with Z (RFC 3339), two tokens cheaper than
			// git's +00:00; any other offset is the author's and stays.
			d.Author, d.Time = f[3]+" <"+f[4]+">", utcZ(f[5])
			d.Message = strings.TrimRight(f[6], " \t\r\n\x00")
			return nil
		},
		func() error { return p.diffTree(ctx, r, &files, treeArgs) },
	)
	if err != nil {
		return nil, err
	}
	if len(fullParents) > 1 {
		// A merge: its changes against the first parent, as the reference.
		files = fileList{max: leanCommitFiles, lean: true}
		args := []string{"diff-tree", "--no-commit-id", "--name-status", "-r", "-z", "-M", fullParents[0], oid}
		if err := p.diffTree(ctx, r, &files, args); err != nil {
			return nil, err
		}
	}
	d.Files = files.lines
	d.FilesOmitted = files.count - len(files.lines)
	return d, nil
}

// quotePath renders a path for a name-status line. A plain path stays as
// it is (UTF-8 included, like core.quotePath=false); one that is not valid
// UTF-8, holds a control character, a quote or backslash, or the " -> "
// of a rename line is C-quoted the way git quotes paths ("caf\351.txt"),
// so every line reads back to the exact bytes.
func quotePath(b []byte) string {
	s := string(b)
	if utf8.ValidString(s) && !strings.Contains(s, " -> ") && !strings.ContainsAny(s, "\"\\\x7f") && !hasControl(s) {
		return s
	}
	var sb strings.Builder
	sb.WriteByte('"')
	for i := 0; i < len(b); {
		c := b[i]
		if esc, ok := cEscapes[c]; ok {
			sb.WriteString(esc)
			i++
			continue
		}
		if c < 0x20 || c == 0x7f {
			writeOctal(&sb, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			writeOctal(&sb, c)
			i++
			continue
		}
		sb.Write(b[i : i+size])
		i += size
	}
	sb.WriteByte('"')
	return sb.String()
}

var cEscapes = map[byte]string{'\a': `\a`, '\b': `\b`, '\t': `\t`, '\n': `\n`, '\v': `\v`, '\f': `\f`, '\r': `\r`, '"': `\"`, '\\': `\\`}

func writeOctal(sb *strings.Builder, c byte) {
	sb.WriteByte('\\')
	sb.WriteByte('0' + c>>6)
	sb.WriteByte('0' + c>>3&7)
	sb.WriteByte('0' + c&7)
}

func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 {
			return true
		}
	}
	return false
}

// utcZ writes an ISO 8601 date at offset +00:00 with Z instead.
func utcZ(t string) string {
	if strings.HasSuffix(t, "+00:00") {
		return strings.TrimSuffix(t, "+00:00") + "Z"
	}
	return t
}
