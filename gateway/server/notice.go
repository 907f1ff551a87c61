package server

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/fluxgit/fluxgit/gateway/execute"
	"github.com/fluxgit/fluxgit/gateway/journal"
)

// Notice bounds (issue 25, "the person hears about it"): a line on the
// gateway's terminal is read at a glance, so every field an agent chose is
// cut, and the whole line too, whatever the agent sent.
const (
	noticeFieldRunes = 160
	noticeAgentRunes = 64
	noticeTextRunes  = 160
	noticeLineRunes  = 480
)

// noticeUserinfo matches the user:password part of a URL, which a git
// error quoted in a failure message can carry; it never reaches a terminal.
var noticeUserinfo = regexp.MustCompile(`://[^/@\s]+@`)

// NoticeLine is the one line the gateway's terminal and `fluxgit gateway
// watch` print for v in its current status: "proposal …" when it arrives,
// then approved, rejected, expired, cancelled, executed or failed. Every
// field that came from an agent is flattened to one line, bounded, and
// has its control and formatting characters replaced (U+FFFD), so an
// escape sequence in an agent id or path cannot repaint the terminal. It
// returns "" for a status nobody needs a line about (executing).
func NoticeLine(v View) string {
	id := noticeText(v.PreviewID, 128)
	what := id + " " + noticeText(v.OperationType, 32) + " " + noticeText(v.RepoPath, noticeFieldRunes)
	var line string
	switch {
	case v.Status == journal.Pending:
		line = "proposal " + what + " from " + noticeText(v.AgentID, noticeAgentRunes) +
			" — approve: fluxgit gateway approve " + id + approveFlags(v.Review)
	case v.Status == journal.Approved:
		line = "approved " + what + " " + decidedBy(v.DecidedBy)
	case v.Status == journal.Rejected:
		line = "rejected " + what + " " + decidedBy(v.DecidedBy)
		if r := noticeText(v.RejectionReason, noticeTextRunes); r != "" {
			line += ": " + r
		}
	case v.Status == journal.Expired:
		line = "expired " + what + ": nobody decided before " + v.ExpiresAt
	case v.Status == journal.Cancelled:
		line = "cancelled " + what + " by the agent that proposed it"
	case v.Status == journal.Completed:
		line = "executed " + what
		if c := resultCommit(v.Result); c != "" {
			line += " → " + c
		}
	case v.Status == journal.Failed:
		line = "failed " + what
		if m := resultMessage(v.Result); m != "" {
			line += ": " + m
		}
	case v.Status == journal.Executing && v.ReconciliationRequired:
		line = "interrupted " + what + ": check the repository, then fluxgit gateway reconcile " + id + " --as completed|failed"
	default:
		return ""
	}
	if r := []rune(line); len(r) > noticeLineRunes {
		line = string(r[:noticeLineRunes-1]) + "…"
	}
	return line
}

// noticeText is s on one line, at most n runes, every rune a terminal
// would not print as itself replaced by U+FFFD.
func noticeText(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	s = strings.Map(func(r rune) rune {
		if r != ' ' && !unicode.IsPrint(r) {
			return '\uFFFD'
		}
		return r
	}, s)
	if r := []rune(s); len(r) > n {
		s = string(r[:n-1]) + "…"
	}
	return s
}

// decidedBy names the surface a decision came from.
func decidedBy(by string) string {
	switch by {
	case "page":
		return "by a person on the approval page"
	case "cli":
		return "by a person in the terminal"
	case "":
		return ""
	}
	return "by " + noticeText(by, noticeAgentRunes)
}

// approveFlags is what `fluxgit gateway approve` needs besides the id for
// the confirmations the review requires, so the line can be run as it is.
func approveFlags(review json.RawMessage) string {
	var rv execute.Review
	if len(review) == 0 || json.Unmarshal(review, &rv) != nil {
		return ""
	}
	var s string
	if b := rv.Requires.TypeBranch; b != "" {
		s += " --confirm-branch " + noticeText(b, noticeFieldRunes)
	}
	if rv.Requires.ForcePush {
		s += " --force-push"
	}
	if len(rv.Requires.DestructiveSteps) > 0 {
		steps := slices.Clone(rv.Requires.DestructiveSteps)
		slices.Sort(steps)
		parts := make([]string, len(steps))
		for i, st := range steps {
			parts[i] = strconv.Itoa(st)
		}
		s += " --steps " + strings.Join(parts, ",")
	}
	return s
}

// resultCommit is the commit an executed operation left, shortened, when
// its result names one.
func resultCommit(raw json.RawMessage) string {
	var r map[string]any
	if json.Unmarshal(raw, &r) != nil {
		return ""
	}
	for _, k := range []string{"mergeCommit", "commitSha", "newHeadSha"} {
		if s, ok := r[k].(string); ok && s != "" {
			if len(s) > 12 {
				s = s[:12]
			}
			return noticeText(s, 12)
		}
	}
	return ""
}

// resultMessage is a failed operation's message, bounded, with any URL
// credentials removed.
func resultMessage(raw json.RawMessage) string {
	var r struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &r) != nil {
		return ""
	}
	return noticeText(noticeUserinfo.ReplaceAllString(r.Message, "://***@"), noticeTextRunes)
}

// announce writes p's notice line on the gateway's terminal
// (Config.Notices).
func (s *Server) announce(p journal.Proposal) {
	line := NoticeLine(ViewOf(p))
	if line == "" || s.cfg.Notices == nil {
		return
	}
	s.noticeMu.Lock()
	defer s.noticeMu.Unlock()
	if _, err := io.WriteString(s.cfg.Notices, line+"\n"); err != nil {
		s.log.Debug("write notice line", "err", fmt.Sprint(err))
	}
}
