package agentdetect

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"strings"
)

// geminiStore reads Gemini CLI's store ($GEMINI_CLI_HOME/.gemini or
// ~/.gemini): projects.json and tmp/<slug>/.project_root map a project
// directory to the repository, and the tails of its
// chats/session-*.jsonl give tool call names and the files their
// arguments name. Gemini records no branch and no pid.
type geminiStore struct{}

// Name identifies the source in a report's failed list.
func (geminiStore) Name() string { return "store:gemini-cli" }

// geminiMaxProjects bounds the project directories whose .project_root
// is read in one scan.
const geminiMaxProjects = 512

// Scan reports Gemini CLI sessions in the repository.
func (geminiStore) Scan(ctx context.Context, q Query) ([]Finding, error) {
	s := newStoreScan(q)
	root := s.homeJoin(".gemini")
	if v := s.env("GEMINI_CLI_HOME"); v != "" {
		root = filepath.Join(v, ".gemini")
	}
	root, ok := s.storeDir(root)
	if !ok {
		return nil, nil
	}
	tmp, ok := s.storeDir(filepath.Join(root, "tmp"))
	if !ok {
		return nil, nil
	}
	// slug → project root, from the registry, then .project_root files,
	// then legacy directories named by the root's sha256.
	projects := map[string]string{}
	if b, _, err := readStoreSmall(filepath.Join(root, "projects.json"), storeSmallFile); err == nil {
		var reg struct {
			Projects map[string]string `json:"projects"`
		}
		if json.Unmarshal(b, &reg) == nil {
			for path, slug := range reg.Projects {
				projects[slug] = path
			}
		}
	}
	legacy := map[string]string{}
	for _, r := range s.roots {
		for _, p := range []string{r.raw, r.real} {
			sum := sha256.Sum256([]byte(p))
			legacy[hex.EncodeToString(sum[:])] = p
		}
	}
	m := newStoreSessions("gemini-cli")
	read := 0
	var cands []storeFile
	cwdOf := map[string]string{}
	for _, slug := range storeSubdirs(tmp) {
		if ctx.Err() != nil {
			break
		}
		proj, ok := projects[slug]
		if !ok {
			proj, ok = legacy[slug]
		}
		if !ok && read < geminiMaxProjects {
			read++
			if b, _, err := readStoreSmall(filepath.Join(tmp, slug, ".project_root"), 4096); err == nil {
				proj, ok = strings.TrimSpace(string(b)), true
			}
		}
		if !ok {
			continue
		}
		if _, in := s.inRepo(proj); !in {
			continue
		}
		chats := filepath.Join(tmp, slug, "chats")
		found := s.freshFiles(chats, func(n string) bool {
			return strings.HasPrefix(n, "session-") && (strings.HasSuffix(n, ".jsonl") || strings.HasSuffix(n, ".json"))
		})
		for _, parent := range storeSubdirs(chats) {
			found = append(found, s.freshFiles(filepath.Join(chats, parent), func(n string) bool { return strings.HasSuffix(n, ".jsonl") })...)
		}
		for _, f := range found {
			cwdOf[f.path] = proj
		}
		cands = append(cands, found...)
	}
	for _, f := range storeNewest(cands, storeMaxFiles) {
		if ctx.Err() != nil {
			break
		}
		s.geminiChat(f, cwdOf[f.path], m)
	}
	out := m.findings(s)
	if len(out) == 0 && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return out, nil
}

// geminiLine covers the header line, message lines and $set lines.
type geminiLine struct {
	SessionID   string `json:"sessionId"`
	LastUpdated string `json:"lastUpdated"`
	Timestamp   string `json:"timestamp"`
	ToolCalls   []struct {
		Name      string `json:"name"`
		Timestamp string `json:"timestamp"`
		Args      struct {
			FilePath     string `json:"file_path"`
			AbsolutePath string `json:"absolute_path"`
		} `json:"args"`
	} `json:"toolCalls"`
	Set *struct {
		LastUpdated string `json:"lastUpdated"`
	} `json:"$set"`
}

func (s *storeScan) geminiChat(f storeFile, proj string, m *storeSessions) {
	id := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(f.path), ".jsonl"), ".json")
	if parent := filepath.Base(filepath.Dir(f.path)); parent != "chats" {
		// A subagent's chat belongs to its parent session.
		id = parent
	}
	if strings.HasSuffix(f.path, ".json") {
		// A legacy chat is one JSON document; only its mtime is used.
		a := m.get(id)
		a.cwd = proj
		a.touch(f.mod)
		return
	}
	lines, _, err := readTailLines(f.path, tailReadMax)
	if err != nil {
		return
	}
	if head, err := readHeadLine(f.path, 16<<10); err == nil {
		var h geminiLine
		if json.Unmarshal(head, &h) == nil && h.SessionID != "" && filepath.Base(filepath.Dir(f.path)) == "chats" {
			id = h.SessionID
		}
	}
	a := m.get(id)
	a.cwd = proj
	a.touch(f.mod)
	for _, line := range lines {
		var l geminiLine
		if json.Unmarshal(line, &l) != nil {
			continue
		}
		at := storeParseTime(l.Timestamp)
		for _, t := range []string{l.LastUpdated, func() string {
			if l.Set != nil {
				return l.Set.LastUpdated
			}
			return ""
		}()} {
			if tt := storeParseTime(t); tt.After(at) {
				at = tt
			}
		}
		a.touch(at)
		for _, c := range l.ToolCalls {
			ct := storeParseTime(c.Timestamp)
			if ct.IsZero() {
				ct = at
			}
			a.tool(c.Name, ct)
			p := c.Args.FilePath
			if p == "" {
				p = c.Args.AbsolutePath
			}
			if rel, ok := s.repoFile(p, proj); ok {
				a.file(rel, ct)
			}
		}
	}
}
