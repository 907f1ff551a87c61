package agentdetect

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// RosterAgent is the detector id of a shift roster check-in whose gist
// does not name a known agent.
const RosterAgent = "shift-worker"

// RosterEntry is one active shift roster check-in, as the roster's store
// holds it.
type RosterEntry struct {
	WorkerID    string
	Gist        string
	Files       []string
	CheckedInAt time.Time
	UpdatedAt   time.Time
	Leases      []RosterLease
}

// RosterLease is one file lease of a check-in: Mode "shared" or
// "exclusive", until ExpiresAt; Expired when it ran out (the roster keeps
// it, marked, until the worker renews or releases it).
type RosterLease struct {
	File      string
	Mode      string
	ExpiresAt time.Time
	Expired   bool
}

// LeaseLine renders leases for a finding in one short line, so the model
// pays a few tokens per agent: "src/cart.ts exclusive 14m; README shared
// expired" (minutes left, rounded up), at most MaxFilesPerAgent leases
// and "+N more". Paths are as the finding's files show them; a lease of
// a file outside the repository is left out.
func LeaseLine(leases []RosterLease, path func(string) (string, bool), now time.Time) string {
	var parts []string
	more := 0
	for _, l := range leases {
		p, ok := path(l.File)
		if !ok {
			continue
		}
		if len(parts) == MaxFilesPerAgent {
			more++
			continue
		}
		left := "expired"
		if d := l.ExpiresAt.Sub(now); !l.Expired && d > 0 {
			left = fmt.Sprintf("%dm", int((d+time.Minute-1)/time.Minute))
		}
		parts = append(parts, p+" "+l.Mode+" "+left)
	}
	if more > 0 {
		parts = append(parts, fmt.Sprintf("+%d more", more))
	}
	return strings.Join(parts, "; ")
}

// RosterFunc lists the active check-ins of the workspace of repo (a
// canonical work tree top level). The agents-presence provider injects
// one that reads the roster store read-only; detection never writes it.
type RosterFunc func(ctx context.Context, repo string) ([]RosterEntry, error)

// RosterSource turns a roster into findings: declared intent rather than
// a guess, so each check-in is its own finding (confidence "declared")
// with its declared files, merged with another source's finding only when
// its gist is labelled with that agent ("codex: fix the parser", "[claude]
// docs").
func RosterSource(fn RosterFunc) Source { return rosterSource{fn: fn} }

type rosterSource struct{ fn RosterFunc }

func (rosterSource) Name() string { return SourceRoster }

// Scan asks the roster for the repository and each worktree, since a
// worktree is its own roster workspace.
func (s rosterSource) Scan(ctx context.Context, q Query) ([]Finding, error) {
	if s.fn == nil {
		return nil, nil
	}
	seen := map[string]bool{}
	var out []Finding
	for _, root := range q.roots() {
		entries, err := s.fn(ctx, root)
		if err != nil {
			return out, fmt.Errorf("shift roster for %s: %w", root, err)
		}
		for _, e := range entries {
			id := strings.ToUpper(e.WorkerID)
			if id == "" || seen[id] {
				continue
			}
			seen[id] = true
			out = append(out, rosterFinding(e, id, root, q))
		}
	}
	return out, nil
}

func rosterFinding(e RosterEntry, id, root string, q Query) Finding {
	last := e.UpdatedAt
	if e.CheckedInAt.After(last) {
		last = e.CheckedInAt
	}
	f := Finding{
		Agent:          RosterAgent,
		State:          StateOpen,
		Sources:        []string{SourceRoster},
		Confidence:     ConfidenceDeclared,
		RosterWorkerID: id,
		Files:          []string{},
	}
	if a := gistAgent(e.Gist); a != "" {
		f.Agent = a
	}
	if !last.IsZero() {
		ms := last.UnixMilli()
		f.LastActivityMs = &ms
		if q.Now.Sub(last) <= WorkingWindow {
			f.State = StateWorking
		}
	}
	path := func(p string) (string, bool) { return rosterPath(p, root, q) }
	for _, p := range e.Files {
		if rel, ok := path(p); ok {
			f.Files = append(f.Files, rel)
		}
	}
	f.Leases = LeaseLine(e.Leases, path, q.Now)
	return f
}

// rosterPath maps a declared file to its repository-relative form; false
// when it lies outside the repository.
func rosterPath(p, root string, q Query) (string, bool) {
	if filepath.IsAbs(p) {
		if rel, ok := RepoRelative(p, q); ok {
			return rel, true
		}
		if canonical(p) == canonical(root) {
			return ".", true // the whole repository declared
		}
		return "", false
	}
	if n, ok := normalizeProposalPath(root, p); ok && n != ".." && !strings.HasPrefix(n, "../") {
		return n, true
	}
	return "", false
}

// gistLabels are the labels a check-in's gist may start with to say which
// agent checked in; only exact labels count, so "cursor movement fix" is
// not Cursor.
var gistLabels = map[string]string{
	"claude": "claude-code", "claude-code": "claude-code", "claude code": "claude-code",
	"codex": "codex", "gemini": "gemini-cli", "gemini-cli": "gemini-cli", "gemini cli": "gemini-cli",
	"opencode": "opencode", "cursor": "cursor", "cursor-agent": "cursor",
	"copilot": "copilot-cli", "copilot-cli": "copilot-cli", "copilot cli": "copilot-cli",
	"cline": "cline", "roo": "roo", "aider": "aider", "windsurf": "windsurf",
	"kilo": "kilo", "kilocode": "kilo",
}

// gistAgent reads the agent label of a gist ("codex: …", "[codex] …"),
// or "".
func gistAgent(gist string) string {
	g := strings.TrimSpace(gist)
	var label string
	if rest, ok := strings.CutPrefix(g, "["); ok {
		if i := strings.IndexByte(rest, ']'); i > 0 {
			label = rest[:i]
		}
	} else if i := strings.IndexByte(g, ':'); i > 0 && i <= 16 {
		label = g[:i]
	}
	return gistLabels[strings.ToLower(strings.TrimSpace(label))]
}
