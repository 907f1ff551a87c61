package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/fluxgit/fluxgit/gateway/execute"
	"github.com/fluxgit/fluxgit/gateway/journal"
)

// FileDiffView is one file's diff of a card's section, fetched on demand
// by the page (GET /ui/api/proposals/{id}/diff?section=N&path=P).
type FileDiffView struct {
	Path      string `json:"path"`
	Diff      string `json:"diff"`
	Truncated bool   `json:"truncated"`
	// Max is the byte cap of Diff (execute.FileDiffMax).
	Max int `json:"max"`
}

// FileDiff computes the diff of path in section of proposal id's review
// again from the stored objects the review names (a patch's file comes
// from the body). The person's page calls it through its authenticated
// API; an error wrapping *DecisionError says what was asked wrongly.
func (s *Server) FileDiff(ctx context.Context, id string, section int, path string) (FileDiffView, error) {
	p, err := s.journal.Get(id)
	if err != nil {
		return FileDiffView{}, err
	}
	rv, ok := reviewOf(p)
	if !ok {
		return FileDiffView{}, &DecisionError{Msg: "proposal " + id + " has no review to expand"}
	}
	if section < 0 || section >= len(rv.Sections) {
		return FileDiffView{}, &DecisionError{Msg: fmt.Sprintf("section %d does not exist; the review has %d", section, len(rv.Sections))}
	}
	sec := rv.Sections[section]
	v := FileDiffView{Path: path, Max: execute.FileDiffMax}
	if sec.Kind == "applied" {
		for _, patch := range patchContents(p.Body) {
			if d, t, ok := execute.PatchFileDiff(patch, path); ok {
				v.Diff, v.Truncated = d, t
				return v, nil
			}
		}
		return FileDiffView{}, &DecisionError{Msg: "the patch has no file " + path}
	}
	repo := sec.Repo
	if repo == "" {
		var b execute.Binding
		if json.Unmarshal(p.Binding, &b) != nil {
			return FileDiffView{}, &DecisionError{Msg: "proposal " + id + " has no binding"}
		}
		repo = b.RepoPath
	}
	v.Diff, v.Truncated, err = s.exec.FileDiff(ctx, repo, sec.From, sec.To, path)
	var be *execute.BindError
	if errors.As(err, &be) {
		return FileDiffView{}, &DecisionError{Msg: be.Msg}
	}
	return v, err
}

// patchContents are the patch texts of a body: its own and its plan
// steps'.
func patchContents(body json.RawMessage) []string {
	var b struct {
		PatchContent string `json:"patchContent"`
		Steps        []struct {
			PatchContent string `json:"patchContent"`
		} `json:"steps"`
	}
	if json.Unmarshal(body, &b) != nil {
		return nil
	}
	out := []string{}
	if b.PatchContent != "" {
		out = append(out, b.PatchContent)
	}
	for _, st := range b.Steps {
		if st.PatchContent != "" {
			out = append(out, st.PatchContent)
		}
	}
	return out
}

// ReviewText renders a review as the plain text `fluxgit gateway show`
// prints above the JSON record: the summary, warnings, facts, and each
// section's commits and files with their inline diffs. Everything in it
// may come from the agent or the repository (subjects, paths, diff
// lines), so characters a terminal does not simply print (see clean) are
// shown as U+FFFD and cannot repaint the terminal.
func ReviewText(rv execute.Review) string {
	var sb strings.Builder
	line := func(format string, a ...any) { sb.WriteString(clean(fmt.Sprintf(format, a...)) + "\n") }
	line("%s", rv.Summary)
	for _, w := range rv.Warnings {
		line("  ! %s", w)
	}
	for _, f := range rv.Facts {
		line("%s: %s", f.Label, f.Value)
	}
	for _, s := range rv.Sections {
		sb.WriteString("\n")
		head := s.Title
		switch {
		case s.Files != nil:
			head += fmt.Sprintf(" — %d file(s), +%d −%d", s.FilesTotal, s.Insertions, s.Deletions)
		case s.Commits != nil:
			head += fmt.Sprintf(" — %d commit(s)", s.CommitsTotal)
		}
		line("== %s", head)
		if s.Note != "" {
			line("   (%s)", s.Note)
		}
		for _, c := range s.Commits {
			line("  %s %s  — %s, %s", short(c.Oid), c.Subject, c.Author, c.Date)
		}
		mc, mf := s.More()
		if mc > 0 {
			line("  … %d more commit(s)", mc)
		}
		for _, f := range s.Files {
			bin := ""
			if f.Binary {
				bin = " (binary)"
			}
			line("  %s %s +%d −%d%s", f.Status, f.Path, f.Insertions, f.Deletions, bin)
		}
		if mf > 0 {
			line("  … %d more file(s)", mf)
		}
		for _, f := range s.Files {
			if f.Diff == "" {
				continue
			}
			sb.WriteString(clean(strings.TrimRight(f.Diff, "\n")) + "\n")
			if f.DiffTruncated {
				line("  … the diff of %s is cut here (the approval page shows all of it)", f.Path)
			}
		}
	}
	return sb.String()
}

func short(oid string) string {
	if len(oid) > 12 {
		return oid[:12]
	}
	return oid
}

// clean replaces every character a terminal does not simply print —
// control characters (escape sequences) and format characters such as
// bidirectional overrides, which could make a diff line read otherwise —
// but newline and tab.
func clean(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' || r == ' ' || unicode.IsPrint(r) {
			return r
		}
		return '\uFFFD'
	}, s)
}

// reviewOf decodes p's review; ok is false when there is none.
func reviewOf(p journal.Proposal) (execute.Review, bool) {
	var rv execute.Review
	if len(p.Review) == 0 || json.Unmarshal(p.Review, &rv) != nil {
		return rv, false
	}
	return rv, true
}
