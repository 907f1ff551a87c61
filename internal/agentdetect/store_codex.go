package agentdetect

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fluxgit/fluxgit/internal/pathwithin"
)

// codexStore reads OpenAI Codex CLI's store ($CODEX_HOME or ~/.codex): the
// threads table of the newest state_<N>.sqlite (in $CODEX_SQLITE_HOME
// when set) and the tails of the rollouts sessions/YYYY/MM/DD/rollout-*.jsonl
// (cwd from session_meta and turn_context, git.branch, function and custom
// tool call names, and the files named by apply_patch headers).
type codexStore struct{}

// Name identifies the source in a report's failed list.
func (codexStore) Name() string { return "store:codex" }

// codexDayDirs bounds how many day directories of rollouts are listed: a
// rollout lives in the directory of the day its session started.
const codexDayDirs = 14

// Scan reports Codex sessions in the repository.
func (codexStore) Scan(ctx context.Context, q Query) ([]Finding, error) {
	s := newStoreScan(q)
	root := s.env("CODEX_HOME")
	if root == "" {
		root = s.homeJoin(".codex")
	}
	root, rootOK := s.storeDir(root)
	dbHome := s.env("CODEX_SQLITE_HOME")
	if dbHome == "" {
		dbHome = root
	}
	m := newStoreSessions("codex")
	var errs []error
	rollouts := map[string]storeFile{}
	if dir, ok := s.storeDir(dbHome); ok && dbHome != "" {
		if err := s.codexThreads(ctx, dir, root, m, rollouts); err != nil {
			errs = append(errs, err)
		}
	}
	if rootOK {
		if sessions, ok := s.storeDir(filepath.Join(root, "sessions")); ok {
			for _, f := range s.codexRecentRollouts(sessions) {
				rollouts[f.path] = f
			}
		}
	}
	var cands []storeFile
	for _, f := range rollouts {
		cands = append(cands, f)
	}
	for _, f := range storeNewest(cands, storeMaxFiles) {
		if ctx.Err() != nil {
			errs = append(errs, ctx.Err())
			break
		}
		s.codexRollout(f, m)
	}
	out := m.findings(s)
	return out, storeErrs(len(out), errs)
}

// codexStateDB is the state database with the highest version number.
func codexStateDB(dir string) string {
	matches, _ := filepath.Glob(filepath.Join(dir, "state_*.sqlite"))
	best, bestN := "", -1
	for _, p := range matches {
		n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "state_"), ".sqlite"))
		if err == nil && n > bestN {
			best, bestN = p, n
		}
	}
	return best
}

// codexThreads reads the threads table: cwd, branch and last update of
// each thread (updated_at was seconds and later milliseconds), and the
// rollout each one writes to.
func (s *storeScan) codexThreads(ctx context.Context, dir, root string, m *storeSessions, rollouts map[string]storeFile) error {
	db := codexStateDB(dir)
	if db == "" {
		return nil
	}
	sessions := ""
	if root != "" {
		sessions = storeResolve(filepath.Join(root, "sessions"))
	}
	return readSQLite(ctx, db, func(ctx context.Context, tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT id, COALESCE(rollout_path, ''), COALESCE(cwd, ''), COALESCE(updated_at, 0), COALESCE(git_branch, '')
			FROM threads WHERE COALESCE(archived, 0) = 0 ORDER BY updated_at DESC LIMIT ?`, storeMaxRows)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id, rollout, cwd, branch string
			var updated int64
			if err := rows.Scan(&id, &rollout, &cwd, &updated, &branch); err != nil {
				return err
			}
			// Rows in seconds sort below rows in milliseconds, so a stale
			// row does not end the scan.
			at := storeUnix(updated)
			if !s.fresh(at) {
				continue
			}
			if _, ok := s.inRepo(cwd); !ok {
				continue
			}
			a := m.get(id)
			a.cwd = cwd
			a.branch = storeBranch(branch)
			a.touch(at)
			// Only rollouts inside the store's own sessions directory
			// are read; the path comes from a database, not from us.
			if rollout != "" && sessions != "" && pathwithin.Within(sessions, storeResolve(rollout)) {
				rollouts[rollout] = storeFile{rollout, at}
			}
		}
		return rows.Err()
	})
}

// codexRecentRollouts lists fresh rollouts of the newest day directories.
func (s *storeScan) codexRecentRollouts(sessions string) []storeFile {
	var out []storeFile
	days := 0
	desc := func(names []string) []string {
		slices.Sort(names)
		slices.Reverse(names)
		return names
	}
	isRollout := func(n string) bool { return strings.HasPrefix(n, "rollout-") && strings.HasSuffix(n, ".jsonl") }
	for _, y := range desc(storeSubdirs(sessions)) {
		for _, mo := range desc(storeSubdirs(filepath.Join(sessions, y))) {
			for _, d := range desc(storeSubdirs(filepath.Join(sessions, y, mo))) {
				if days++; days > codexDayDirs {
					return out
				}
				out = append(out, s.freshFiles(filepath.Join(sessions, y, mo, d), isRollout)...)
			}
		}
	}
	return out
}

// codexLine is one rollout line; payload fields of every type it uses.
type codexLine struct {
	Timestamp string `json:"timestamp"`
	Type      string `json:"type"`
	Payload   struct {
		ID   string `json:"id"`
		Cwd  string `json:"cwd"`
		Type string `json:"type"`
		Name string `json:"name"`
		Git  *struct {
			Branch string `json:"branch"`
		} `json:"git"`
		Arguments json.RawMessage `json:"arguments"`
		Input     json.RawMessage `json:"input"`
	} `json:"payload"`
}

func (s *storeScan) codexRollout(f storeFile, m *storeSessions) {
	lines, _, err := readTailLines(f.path, tailReadMax)
	if err != nil {
		return
	}
	base := strings.TrimSuffix(filepath.Base(f.path), ".jsonl")
	id := ""
	if len(base) >= 36 {
		id = base[len(base)-36:]
	}
	var metaCwd, turnCwd, branch string
	var last time.Time
	type call struct {
		name  string
		files []string
		at    time.Time
	}
	var calls []call
	parse := func(line []byte) {
		var l codexLine
		if json.Unmarshal(line, &l) != nil {
			return
		}
		at := storeParseTime(l.Timestamp)
		if at.After(last) {
			last = at
		}
		switch l.Type {
		case "session_meta":
			if l.Payload.ID != "" {
				id = l.Payload.ID
			}
			metaCwd = l.Payload.Cwd
			if l.Payload.Git != nil {
				branch = storeBranch(l.Payload.Git.Branch)
			}
		case "turn_context":
			if l.Payload.Cwd != "" {
				turnCwd = l.Payload.Cwd
			}
		case "response_item":
			switch l.Payload.Type {
			case "function_call", "custom_tool_call", "local_shell_call":
				c := call{name: l.Payload.Name, at: at}
				if c.name == "" {
					c.name = l.Payload.Type
				}
				c.files = append(codexPatchFiles(l.Payload.Input), codexPatchFiles(l.Payload.Arguments)...)
				calls = append(calls, c)
			}
		}
	}
	for _, line := range lines {
		parse(line)
	}
	if metaCwd == "" && turnCwd == "" || branch == "" {
		// session_meta is the first line; on a long session it is far
		// behind the tail, and one bounded read of the head finds it.
		if head, err := readHeadLine(f.path, headReadMax); err == nil && len(head) > 0 {
			keepLast, keepCalls := last, calls
			parse(head)
			last, calls = keepLast, keepCalls
		}
	}
	if id == "" {
		return
	}
	cwd := turnCwd
	if cwd == "" {
		cwd = metaCwd
	}
	if last.IsZero() {
		last = f.mod
	}
	a := m.get(id)
	if cwd != "" {
		a.cwd = cwd
	}
	if branch != "" {
		a.branch = branch
	}
	a.touch(last)
	for _, c := range calls {
		a.tool(c.name, c.at)
		for _, p := range c.files {
			if rel, ok := s.repoFile(p, a.cwd); ok {
				a.file(rel, c.at)
			}
		}
	}
}

// codexPatchFiles finds the files an apply_patch envelope names
// ("*** Add File: p", "*** Update File: p", "*** Delete File: p",
// "*** Move to: p") in a tool input, which is a JSON string or JSON
// arguments holding strings.
func codexPatchFiles(raw json.RawMessage) []string {
	if len(raw) == 0 || !strings.Contains(string(raw), "*** ") {
		return nil
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	var out []string
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		if depth > 4 {
			return
		}
		switch t := v.(type) {
		case string:
			if strings.HasPrefix(strings.TrimSpace(t), "{") {
				var inner any
				if json.Unmarshal([]byte(t), &inner) == nil {
					walk(inner, depth+1)
					return
				}
			}
			for _, line := range strings.Split(t, "\n") {
				line = strings.TrimRight(line, "\r")
				for _, h := range []string{"*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "} {
					if p, ok := strings.CutPrefix(line, h); ok && strings.TrimSpace(p) != "" {
						out = append(out, strings.TrimSpace(p))
					}
				}
			}
		case []any:
			for _, e := range t {
				walk(e, depth+1)
			}
		case map[string]any:
			for _, e := range t {
				walk(e, depth+1)
			}
		}
	}
	walk(v, 0)
	return out
}
