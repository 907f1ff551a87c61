package agentdetect

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
)

// copilotStore reads GitHub Copilot CLI's store ($COPILOT_HOME or
// ~/.copilot): session-state/<id>/events.jsonl (older:
// session-state/<id>.jsonl). session.start and session.context_changed
// give the cwd and branch; tool.execution_start gives tool names and the
// path argument of file tools; session.shutdown ends a session.
type copilotStore struct{}

// Name identifies the source in a report's failed list.
func (copilotStore) Name() string { return "store:copilot-cli" }

// Scan reports Copilot CLI sessions in the repository.
func (copilotStore) Scan(ctx context.Context, q Query) ([]Finding, error) {
	s := newStoreScan(q)
	root := s.env("COPILOT_HOME")
	if root == "" {
		root = s.homeJoin(".copilot")
	}
	root, ok := s.storeDir(root)
	if !ok {
		return nil, nil
	}
	state, ok := s.storeDir(filepath.Join(root, "session-state"))
	if !ok {
		return nil, nil
	}
	cands := s.freshFiles(state, func(n string) bool { return strings.HasSuffix(n, ".jsonl") })
	for _, id := range storeSubdirs(state) {
		cands = append(cands, s.freshFiles(filepath.Join(state, id), func(n string) bool { return n == "events.jsonl" })...)
	}
	m := newStoreSessions("copilot-cli")
	for _, f := range storeNewest(cands, storeMaxFiles) {
		if ctx.Err() != nil {
			break
		}
		s.copilotEvents(f, m)
	}
	out := m.findings(s)
	if len(out) == 0 && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return out, nil
}

// copilotContext is the repository context of session.start (under
// "context") and of session.context_changed (at the top of data).
type copilotContext struct {
	Cwd    string `json:"cwd"`
	Branch string `json:"branch"`
}

type copilotLine struct {
	Timestamp string `json:"timestamp"`
	Type      string `json:"type"`
	Data      struct {
		SessionID string `json:"sessionId"`
		copilotContext
		Context   *copilotContext `json:"context"`
		ToolName  string          `json:"toolName"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"data"`
}

func (s *storeScan) copilotEvents(f storeFile, m *storeSessions) {
	id := strings.TrimSuffix(filepath.Base(f.path), ".jsonl")
	if id == "events" {
		id = filepath.Base(filepath.Dir(f.path))
	}
	lines, _, err := readTailLines(f.path, tailReadMax)
	if err != nil {
		return
	}
	var l copilotLine
	if head, err := readHeadLine(f.path, headReadMax); err == nil && json.Unmarshal(head, &l) == nil && l.Type == "session.start" {
		lines = append([][]byte{head}, lines...)
	}
	a := m.get(id)
	a.touch(f.mod)
	for _, line := range lines {
		var l copilotLine
		if json.Unmarshal(line, &l) != nil {
			continue
		}
		at := storeParseTime(l.Timestamp)
		a.touch(at)
		switch l.Type {
		case "session.start", "session.context_changed", "session.resume":
			c := l.Data.copilotContext
			if l.Data.Context != nil {
				c = *l.Data.Context
			}
			if c.Cwd != "" {
				a.cwd = c.Cwd
			}
			if b := storeBranch(c.Branch); b != "" {
				a.branch = b
			}
			a.ended = false
		case "tool.execution_start":
			a.tool(l.Data.ToolName, at)
			var args struct {
				Path     string `json:"path"`
				FilePath string `json:"file_path"`
			}
			if json.Unmarshal(l.Data.Arguments, &args) == nil {
				p := args.Path
				if p == "" {
					p = args.FilePath
				}
				if rel, ok := s.repoFile(p, a.cwd); ok {
					a.file(rel, at)
				}
			}
		case "session.shutdown":
			a.ended = true
		}
	}
}
