package agentdetect

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// claudeStore reads Claude Code's store ($CLAUDE_CONFIG_DIR or
// ~/.claude): the live session registry sessions/<pid>.json, the tails of
// the transcripts projects/<enc>/<session>.jsonl (and their subagents'),
// and the tail of history.jsonl. Only tool names, the file paths tools
// were given, the git branch and timestamps are taken; message text never
// leaves the parser.
type claudeStore struct{}

// Name identifies the source in a report's failed list.
func (claudeStore) Name() string { return "store:claude-code" }

// claudeRegistry is one sessions/<pid>.json.
type claudeRegistry struct {
	PID       int    `json:"pid"`
	SessionID string `json:"sessionId"`
	Cwd       string `json:"cwd"`
	Status    string `json:"status"`
	StartedAt int64  `json:"startedAt"`
	UpdatedAt int64  `json:"updatedAt"`
}

// claudeLine is the envelope of one transcript line; message content is
// decoded only as far as tool_use blocks.
type claudeLine struct {
	Type      string `json:"type"`
	SessionID string `json:"sessionId"`
	Timestamp string `json:"timestamp"`
	Cwd       string `json:"cwd"`
	GitBranch string `json:"gitBranch"`
	Message   struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

// claudeBlock is a content block; only tool_use blocks are used.
type claudeBlock struct {
	Type  string `json:"type"`
	Name  string `json:"name"`
	Input struct {
		FilePath     string `json:"file_path"`
		NotebookPath string `json:"notebook_path"`
	} `json:"input"`
}

// Scan reports Claude Code sessions in the repository.
func (claudeStore) Scan(ctx context.Context, q Query) ([]Finding, error) {
	s := newStoreScan(q)
	root := s.env("CLAUDE_CONFIG_DIR")
	if root == "" {
		root = s.homeJoin(".claude")
	}
	root, ok := s.storeDir(root)
	if !ok {
		return nil, nil
	}
	m := newStoreSessions("claude-code")
	var errs []error
	if dir, ok := s.storeDir(filepath.Join(root, "sessions")); ok {
		s.claudeRegistry(ctx, dir, m)
	}
	if dir, ok := s.storeDir(filepath.Join(root, "projects")); ok {
		// A registry cwd reached through a link names its own project
		// directory; the work trees' names cover every other session.
		var cwds []string
		for _, a := range m.byID {
			cwds = append(cwds, a.cwd)
		}
		s.claudeTranscripts(ctx, dir, cwds, m)
	}
	if err := ctx.Err(); err != nil {
		errs = append(errs, err)
	}
	s.claudeHistory(filepath.Join(root, "history.jsonl"), m)
	out := m.findings(s)
	return out, storeErrs(len(out), errs)
}

// claudeRegistry reads the live registry: a live pid whose cwd is in the
// repository is the strongest tie there is. Entries of dead pids stay on
// disk; they count only by their last update.
func (s *storeScan) claudeRegistry(ctx context.Context, dir string, m *storeSessions) {
	files := s.allFiles(dir, func(n string) bool { return strings.HasSuffix(n, ".json") })
	for _, f := range storeNewest(files, 4*storeMaxFiles) {
		if ctx.Err() != nil {
			return
		}
		b, fi, err := readStoreSmall(f.path, 64<<10)
		if err != nil {
			continue
		}
		var r claudeRegistry
		if json.Unmarshal(b, &r) != nil || r.Cwd == "" {
			continue
		}
		if _, ok := s.inRepo(r.Cwd); !ok {
			continue
		}
		live := storePIDAlive(r.PID, storeUnix(r.StartedAt))
		updated := storeUnix(r.UpdatedAt)
		if updated.IsZero() {
			updated = fi.ModTime()
		}
		if !live && !s.fresh(updated) {
			continue
		}
		id := r.SessionID
		if id == "" {
			id = "pid:" + filepath.Base(f.path)
		}
		a := m.get(id)
		a.cwd = r.Cwd
		a.touch(updated)
		a.started = storeUnix(r.StartedAt)
		if live {
			a.pid, a.live, a.conf = r.PID, true, ConfidenceRegistry
			a.busy = r.Status == "busy"
		}
	}
}

// claudeEncode is Claude Code's project directory name for a cwd: every
// character other than an ASCII letter or digit becomes "-".
func claudeEncode(p string) string {
	b := []byte(p)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '-'
		}
	}
	return string(b)
}

// claudeTranscripts tails the transcripts of project directories whose
// encoded name is a work tree's or one below it. The encoding is lossy
// (/a/b-c and /a/b/c collide), so every session's own cwd is checked.
func (s *storeScan) claudeTranscripts(ctx context.Context, dir string, cwds []string, m *storeSessions) {
	var encs []string
	for _, r := range s.roots {
		encs = append(encs, claudeEncode(r.raw), claudeEncode(r.real))
	}
	for _, c := range cwds {
		encs = append(encs, claudeEncode(c))
	}
	var cands []storeFile
	isJSONL := func(n string) bool { return strings.HasSuffix(n, ".jsonl") }
	for _, name := range storeSubdirs(dir) {
		match := false
		for _, e := range encs {
			if name == e || strings.HasPrefix(name, e+"-") {
				match = true
			}
		}
		if !match {
			continue
		}
		pdir := filepath.Join(dir, name)
		cands = append(cands, s.freshFiles(pdir, isJSONL)...)
		for _, sess := range storeSubdirs(pdir) {
			cands = append(cands, s.freshFiles(filepath.Join(pdir, sess, "subagents"), isJSONL)...)
		}
	}
	for _, f := range storeNewest(cands, storeMaxFiles) {
		if ctx.Err() != nil {
			return
		}
		s.claudeTranscript(f, m)
	}
}

func (s *storeScan) claudeTranscript(f storeFile, m *storeSessions) {
	lines, _, err := readTailLines(f.path, tailReadMax)
	if err != nil {
		return
	}
	// A subagent's transcript belongs to its parent session, whose id
	// names the directory above subagents/.
	id := strings.TrimSuffix(filepath.Base(f.path), ".jsonl")
	if filepath.Base(filepath.Dir(f.path)) == "subagents" {
		id = filepath.Base(filepath.Dir(filepath.Dir(f.path)))
	}
	var cwd, branch string
	type use struct {
		name, file string
		at         time.Time
	}
	var uses []use
	var last time.Time
	for _, line := range lines {
		var l claudeLine
		if json.Unmarshal(line, &l) != nil {
			continue
		}
		if l.SessionID != "" && !strings.Contains(f.path, string(filepath.Separator)+"subagents"+string(filepath.Separator)) {
			id = l.SessionID
		}
		at := storeParseTime(l.Timestamp)
		if at.After(last) {
			last = at
		}
		if l.Cwd != "" {
			cwd = l.Cwd
		}
		if b := storeBranch(l.GitBranch); b != "" {
			branch = b
		}
		if l.Type != "assistant" || len(l.Message.Content) == 0 || l.Message.Content[0] != '[' {
			continue
		}
		var blocks []claudeBlock
		if json.Unmarshal(l.Message.Content, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			if b.Type != "tool_use" {
				continue
			}
			p := b.Input.FilePath
			if p == "" {
				p = b.Input.NotebookPath
			}
			uses = append(uses, use{b.Name, p, at})
		}
	}
	if last.IsZero() {
		last = f.mod
	}
	a := m.get(id)
	if a.cwd == "" || cwd != "" && !a.live {
		a.cwd = cwd
	}
	if branch != "" {
		a.branch = branch
	}
	a.touch(last)
	for _, u := range uses {
		a.tool(u.name, u.at)
		if rel, ok := s.repoFile(u.file, a.cwd); ok {
			a.file(rel, u.at)
		}
	}
}

// claudeHistory tails history.jsonl ({display, timestamp, project,
// sessionId}); display is the user's prompt and is never decoded.
func (s *storeScan) claudeHistory(path string, m *storeSessions) {
	lines, _, err := readTailLines(path, 64<<10)
	if err != nil {
		return
	}
	for _, line := range lines {
		var h struct {
			Timestamp int64  `json:"timestamp"`
			Project   string `json:"project"`
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(line, &h) != nil || h.SessionID == "" || h.Project == "" {
			continue
		}
		at := storeUnix(h.Timestamp)
		if !s.fresh(at) {
			continue
		}
		if _, ok := s.inRepo(h.Project); !ok {
			continue
		}
		a := m.get(h.SessionID)
		if a.cwd == "" {
			a.cwd = h.Project
		}
		a.touch(at)
	}
}

// allFiles lists the regular files of dir accepted by keep, whatever
// their age (registries are judged by their content, not their mtime).
func (s *storeScan) allFiles(dir string, keep func(string) bool) []storeFile {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []storeFile
	for _, e := range ents {
		if !e.Type().IsRegular() || !keep(e.Name()) {
			continue
		}
		if fi, err := e.Info(); err == nil {
			out = append(out, storeFile{filepath.Join(dir, e.Name()), fi.ModTime()})
		}
	}
	return out
}
