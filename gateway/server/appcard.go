package server

import (
	"encoding/json"
	"net/http"
	"sort"
	"unicode/utf8"

	"github.com/fluxgit/fluxgit/gateway/execute"
	"github.com/fluxgit/fluxgit/gateway/journal"
	"github.com/fluxgit/fluxgit/gateway/proposal"
)

// Bounds of the card view (GET operation.CardViewPath<id>). The view is what a
// host renders inline for the person (MCP Apps), so it carries the review
// the approval page shows, minus the diffs: lists keep the review's own
// bounds (execute.ReviewMaxCommits, execute.ReviewMaxFiles) and every text
// is cut, so one card stays a few tens of KiB at most.
const (
	cardMaxText     = 2000
	cardMaxLine     = 300
	cardMaxWarnings = 20
	cardMaxFacts    = 50
	cardMaxRefs     = 50
	cardMaxVerdicts = 400 // the contract's 20 repositories × 20 branches
)

// cardView is the read-only card of one proposal. It names nothing that
// decides: no decision endpoint, no token, no secret; a person decides on
// the approval page (or the CLI), never through this view.
type cardView struct {
	PreviewID       string           `json:"previewId"`
	OperationType   string           `json:"operationType"`
	Status          journal.Status   `json:"status"`
	Risk            string           `json:"risk"`
	AgentID         string           `json:"agentId"`
	RepoPath        string           `json:"repoPath"`
	Reason          string           `json:"reason"`
	ExpiresAt       string           `json:"expiresAt"`
	RejectionReason string           `json:"rejectionReason,omitempty"`
	Summary         string           `json:"summary"`
	Warnings        []string         `json:"warnings,omitempty"`
	Refs            []uiRef          `json:"refs"`
	Facts           []execute.Fact   `json:"facts,omitempty"`
	Sections        []cardSection    `json:"sections,omitempty"`
	Verdicts        []cardVerdict    `json:"verdicts,omitempty"`
	Requires        execute.Requires `json:"requires"`
	WorktreePath    string           `json:"worktreePath,omitempty"`
}

// cardSection is a review section without its diffs.
type cardSection struct {
	Title        string       `json:"title"`
	Kind         string       `json:"kind"`
	Note         string       `json:"note,omitempty"`
	CommitsTotal int          `json:"commitsTotal"`
	Commits      []cardCommit `json:"commits,omitempty"`
	FilesTotal   int          `json:"filesTotal"`
	Files        []cardFile   `json:"files,omitempty"`
	Insertions   int          `json:"insertions"`
	Deletions    int          `json:"deletions"`
}

type cardCommit struct {
	Oid     string `json:"oid"`
	Subject string `json:"subject"`
}

type cardFile struct {
	Path       string `json:"path"`
	Status     string `json:"status"`
	Insertions int    `json:"insertions"`
	Deletions  int    `json:"deletions"`
	Binary     bool   `json:"binary,omitempty"`
}

type cardVerdict struct {
	RepoPath string `json:"repoPath"`
	Branch   string `json:"branch"`
	Delete   bool   `json:"delete"`
	Reason   string `json:"reason"`
}

// clip cuts s to at most n characters, marking the cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

// cardOf renders p's card view from what the journal stored when the
// proposal arrived (the review and the binding never change) and its
// current status.
func cardOf(p journal.Proposal) cardView {
	v := cardView{
		PreviewID:       p.ID,
		OperationType:   p.OperationType,
		Status:          p.Status,
		Risk:            proposal.Risk(p.OperationType),
		AgentID:         p.AgentID,
		RepoPath:        p.RepoPath,
		Reason:          clip(p.Reason, cardMaxText),
		ExpiresAt:       stamp(p.ExpiresAt),
		RejectionReason: clip(p.RejectionReason, cardMaxText),
		Refs:            []uiRef{},
	}
	var b execute.Binding
	if len(p.Binding) > 0 && json.Unmarshal(p.Binding, &b) == nil {
		for ref, commit := range b.Refs {
			v.Refs = append(v.Refs, uiRef{Ref: clip(ref, cardMaxLine), Commit: commit})
		}
		sort.Slice(v.Refs, func(i, j int) bool { return v.Refs[i].Ref < v.Refs[j].Ref })
		v.Refs = v.Refs[:min(len(v.Refs), cardMaxRefs)]
	}
	var rv execute.Review
	if len(p.Review) == 0 || json.Unmarshal(p.Review, &rv) != nil {
		return v
	}
	v.Summary = clip(rv.Summary, cardMaxText)
	for i, w := range rv.Warnings {
		if i == cardMaxWarnings {
			break
		}
		v.Warnings = append(v.Warnings, clip(w, cardMaxText))
	}
	for i, f := range rv.Facts {
		if i == cardMaxFacts {
			break
		}
		v.Facts = append(v.Facts, execute.Fact{Label: clip(f.Label, cardMaxLine), Value: clip(f.Value, cardMaxText)})
	}
	for _, s := range rv.Sections {
		cs := cardSection{Title: clip(s.Title, cardMaxLine), Kind: s.Kind, Note: clip(s.Note, cardMaxText),
			CommitsTotal: s.CommitsTotal, FilesTotal: s.FilesTotal, Insertions: s.Insertions, Deletions: s.Deletions}
		for i, c := range s.Commits {
			if i == execute.ReviewMaxCommits {
				break
			}
			oid := c.Oid
			if len(oid) > 12 {
				oid = oid[:12]
			}
			cs.Commits = append(cs.Commits, cardCommit{Oid: oid, Subject: clip(c.Subject, cardMaxLine)})
		}
		for i, f := range s.Files {
			if i == execute.ReviewMaxFiles {
				break
			}
			cs.Files = append(cs.Files, cardFile{Path: clip(f.Path, cardMaxLine), Status: f.Status,
				Insertions: f.Insertions, Deletions: f.Deletions, Binary: f.Binary})
		}
		v.Sections = append(v.Sections, cs)
	}
	for i, vd := range rv.Verdicts {
		if i == cardMaxVerdicts {
			break
		}
		v.Verdicts = append(v.Verdicts, cardVerdict{RepoPath: clip(vd.RepoPath, cardMaxLine), Branch: clip(vd.Branch, cardMaxLine),
			Delete: vd.Delete, Reason: clip(vd.Reason, cardMaxText)})
	}
	v.Requires = rv.Requires
	if rv.Requires.TypeBranch != "" {
		v.Requires.TypeBranch = clip(rv.Requires.TypeBranch, cardMaxLine)
	}
	v.WorktreePath = clip(rv.WorktreePath, cardMaxLine)
	return v
}

// card answers GET operation.CardViewPath<id>: the proposal's read-only card
// view. Like status it is the agent API's (the MCP server reads it for a
// host that renders the inline card); it changes nothing.
func (s *Server) card(w http.ResponseWriter, id string) {
	if p, ok := s.agentProposal(w, id); ok {
		writeJSON(w, http.StatusOK, cardOf(p))
	}
}
