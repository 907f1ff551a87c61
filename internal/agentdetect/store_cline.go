package agentdetect

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"time"
)

// clineStore reads the stores of Cline and Roo. The VS Code extensions
// (in VS Code, Cursor, Windsurf and VSCodium) keep
// globalStorage/<extension>/tasks/<id>/task_metadata.json, whose
// files_in_context is the richest record of files an agent touched, and
// state/taskHistory.json, which ties a task to cwdOnTaskInitialization
// (Roo may keep its history in the editor's state.vscdb ItemTable
// instead). The Cline CLI keeps $CLINE_DIR (or ~/.cline)
// /data/sessions/<id>/<id>.json with cwd and workspace_root. Task text
// is never used.
type clineStore struct{}

// Name identifies the source in a report's failed list.
func (clineStore) Name() string { return "store:cline" }

// clineExtensions maps extension storage directories to detector ids.
var clineExtensions = []struct{ dir, agent, itemKey string }{
	{"saoudrizwan.claude-dev", "cline", ""},
	{"rooveterinaryinc.roo-cline", "roo", "RooVeterinaryInc.roo-cline"},
}

// clineEditors are the VS Code forks whose globalStorage is searched.
var clineEditors = []string{"Code", "Code - Insiders", "Cursor", "Windsurf", "VSCodium"}

const (
	// clineMaxHistory bounds taskHistory reads (it holds every task).
	clineMaxHistory = 16 << 20
	// clineMaxMetadata bounds one task_metadata.json read.
	clineMaxMetadata = 4 << 20
)

// Scan reports Cline and Roo tasks in the repository.
func (clineStore) Scan(ctx context.Context, q Query) ([]Finding, error) {
	s := newStoreScan(q)
	var globals []string
	for _, cfg := range s.configDirs() {
		for _, ed := range clineEditors {
			if cfg != "" {
				globals = append(globals, filepath.Join(cfg, ed, "User", "globalStorage"))
			}
		}
	}
	globals = append(globals, s.homeJoin(".vscode-server", "data", "User", "globalStorage"))
	var out []Finding
	var errs []error
	for _, ext := range clineExtensions {
		m := newStoreSessions(ext.agent)
		for _, g := range globals {
			if ctx.Err() != nil {
				break
			}
			gdir, ok := s.storeDir(g)
			if !ok {
				continue
			}
			if err := s.clineExtension(ctx, gdir, ext.dir, ext.itemKey, m); err != nil {
				errs = append(errs, err)
			}
		}
		out = append(out, m.findings(s)...)
	}
	cm := newStoreSessions("cline")
	root := s.env("CLINE_DIR")
	if root == "" {
		root = s.homeJoin(".cline")
	}
	if root, ok := s.storeDir(root); ok {
		if sessions, ok := s.storeDir(filepath.Join(root, "data", "sessions")); ok {
			s.clineCLI(sessions, cm)
		}
	}
	out = append(out, cm.findings(s)...)
	if ctx.Err() != nil {
		errs = append(errs, ctx.Err())
	}
	return out, storeErrs(len(out), errs)
}

// clineTask is one taskHistory entry (its "task" text is not decoded).
type clineTask struct {
	ID        string `json:"id"`
	TS        int64  `json:"ts"`
	Cwd       string `json:"cwdOnTaskInitialization"`
	Workspace string `json:"workspace"`
}

func (s *storeScan) clineExtension(ctx context.Context, global, extDir, itemKey string, m *storeSessions) error {
	ext, ok := s.storeDir(filepath.Join(global, extDir))
	if !ok {
		return nil
	}
	tasks, ok := s.storeDir(filepath.Join(ext, "tasks"))
	if !ok {
		return nil
	}
	// Fresh tasks first, by the mtimes of their files: the history is read
	// only when some task is recent.
	fresh := map[string]time.Time{}
	for _, id := range storeSubdirs(tasks) {
		for _, f := range s.freshFiles(filepath.Join(tasks, id), func(n string) bool { return filepath.Ext(n) == ".json" }) {
			fresh[id] = storeLater(fresh[id], f.mod)
		}
	}
	if len(fresh) == 0 {
		return nil
	}
	var history []clineTask
	if b, _, err := readStoreSmall(filepath.Join(ext, "state", "taskHistory.json"), clineMaxHistory); err == nil {
		_ = json.Unmarshal(b, &history)
	}
	var dbErr error
	if len(history) == 0 && itemKey != "" {
		history, dbErr = s.clineItemHistory(ctx, filepath.Join(global, "state.vscdb"), itemKey)
	}
	byID := map[string]clineTask{}
	for _, t := range history {
		byID[t.ID] = t
	}
	for id, mod := range fresh {
		t, ok := byID[id]
		if !ok {
			continue
		}
		cwd := t.Cwd
		if cwd == "" {
			cwd = t.Workspace
		}
		if _, in := s.inRepo(cwd); !in {
			continue
		}
		a := m.get(id)
		a.cwd = cwd
		a.touch(storeLater(mod, storeUnix(t.TS)))
		s.clineMetadata(filepath.Join(tasks, id, "task_metadata.json"), a)
	}
	return dbErr
}

// clineItemHistory reads Roo's task history from the editor's ItemTable.
func (s *storeScan) clineItemHistory(ctx context.Context, db, key string) ([]clineTask, error) {
	if _, _, err := openStoreFile(db); err != nil {
		return nil, nil
	}
	var raw string
	err := readSQLite(ctx, db, func(ctx context.Context, tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `SELECT CAST(value AS TEXT) FROM ItemTable WHERE key = ? AND length(value) <= ?`, key, clineMaxHistory).Scan(&raw)
		if err == sql.ErrNoRows {
			return nil
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	var state struct {
		TaskHistory []clineTask `json:"taskHistory"`
	}
	_ = json.Unmarshal([]byte(raw), &state)
	return state.TaskHistory, nil
}

// clineMetadata takes the files in context, newest edit or read first.
func (s *storeScan) clineMetadata(path string, a *storeSession) {
	b, _, err := readStoreSmall(path, clineMaxMetadata)
	if err != nil {
		return
	}
	var meta struct {
		Files []struct {
			Path        string `json:"path"`
			RecordState string `json:"record_state"`
			ReadDate    int64  `json:"cline_read_date"`
			EditDate    int64  `json:"cline_edit_date"`
			UserDate    int64  `json:"user_edit_date"`
		} `json:"files_in_context"`
	}
	if json.Unmarshal(b, &meta) != nil {
		return
	}
	for _, f := range meta.Files {
		if f.RecordState == "stale" {
			continue
		}
		at := storeLater(storeLater(storeUnix(f.ReadDate), storeUnix(f.EditDate)), storeUnix(f.UserDate))
		if rel, ok := s.repoFile(f.Path, a.cwd); ok {
			a.file(rel, at)
		}
	}
}

// clineCLI reads the CLI's session files.
func (s *storeScan) clineCLI(sessions string, m *storeSessions) {
	var cands []storeFile
	for _, id := range storeSubdirs(sessions) {
		cands = append(cands, s.freshFiles(filepath.Join(sessions, id), func(n string) bool { return n == id+".json" })...)
	}
	for _, f := range storeNewest(cands, storeMaxFiles) {
		b, _, err := readStoreSmall(f.path, storeSmallFile)
		if err != nil {
			continue
		}
		var doc struct {
			Cwd           string `json:"cwd"`
			WorkspaceRoot string `json:"workspace_root"`
		}
		if json.Unmarshal(b, &doc) != nil {
			continue
		}
		cwd := doc.Cwd
		if _, ok := s.inRepo(cwd); !ok {
			cwd = doc.WorkspaceRoot
		}
		a := m.get(filepath.Base(filepath.Dir(f.path)))
		a.cwd = cwd
		a.touch(f.mod)
	}
}
