package agentdetect

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"strings"
)

// opencodeStore reads opencode's store ($XDG_DATA_HOME/opencode or
// ~/.local/share/opencode): the session table of opencode*.db (directory,
// time_updated in ms) and, for sessions in the repository, the tool names
// and file paths of their newest tool and patch parts, extracted inside
// SQLite so message text is never even loaded; and the JSON session files
// of the storage/ layout used before the database.
type opencodeStore struct{}

// Name identifies the source in a report's failed list.
func (opencodeStore) Name() string { return "store:opencode" }

// opencodeMaxParts bounds the parts read per session.
const opencodeMaxParts = 64

// Scan reports opencode sessions in the repository.
func (opencodeStore) Scan(ctx context.Context, q Query) ([]Finding, error) {
	s := newStoreScan(q)
	base := s.homeJoin(".local", "share")
	if v := s.env("XDG_DATA_HOME"); v != "" {
		base = v
	}
	if base == "" {
		return nil, nil
	}
	root, ok := s.storeDir(filepath.Join(base, "opencode"))
	if !ok {
		return nil, nil
	}
	m := newStoreSessions("opencode")
	var errs []error
	dbs, _ := filepath.Glob(filepath.Join(root, "opencode*.db"))
	for _, db := range dbs {
		if err := s.opencodeDB(ctx, db, m); err != nil {
			errs = append(errs, err)
		}
	}
	if storage, ok := s.storeDir(filepath.Join(root, "storage", "session")); ok {
		s.opencodeLegacy(storage, m)
	}
	out := m.findings(s)
	return out, storeErrs(len(out), errs)
}

func (s *storeScan) opencodeDB(ctx context.Context, db string, m *storeSessions) error {
	since := s.now.Add(-Freshness).UnixMilli()
	return readSQLite(ctx, db, func(ctx context.Context, tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT id, COALESCE(directory, ''), COALESCE(time_updated, 0) FROM session
			WHERE time_updated >= ? AND time_archived IS NULL ORDER BY time_updated DESC LIMIT ?`, since, storeMaxRows)
		if err != nil {
			// Databases from before time_archived existed.
			rows, err = tx.QueryContext(ctx, `SELECT id, COALESCE(directory, ''), COALESCE(time_updated, 0) FROM session
				WHERE time_updated >= ? ORDER BY time_updated DESC LIMIT ?`, since, storeMaxRows)
			if err != nil {
				return err
			}
		}
		var mine []*storeSession
		for rows.Next() {
			var id, dir string
			var updated int64
			if err := rows.Scan(&id, &dir, &updated); err != nil {
				rows.Close()
				return err
			}
			if _, ok := s.inRepo(dir); !ok {
				continue
			}
			a := m.get(id)
			a.cwd = dir
			a.touch(storeUnix(updated))
			mine = append(mine, a)
		}
		if err := rows.Close(); err != nil {
			return err
		}
		for _, a := range mine {
			if err := s.opencodeParts(ctx, tx, a); err != nil {
				return err
			}
		}
		return nil
	})
}

// opencodeParts reads the newest tool and patch parts of one session.
// Only the tool name, the edited file and a patch's file list are
// extracted; the part's text and tool output stay in the database.
func (s *storeScan) opencodeParts(ctx context.Context, tx *sql.Tx, a *storeSession) error {
	// json_extract raises an error on malformed JSON, which would fail
	// the whole statement: rows are filtered by json_valid first (the
	// CASE makes the order of evaluation explicit).
	rows, err := tx.QueryContext(ctx, `SELECT json_extract(data, '$.type'),
			CASE WHEN json_type(data, '$.tool') = 'text' THEN json_extract(data, '$.tool') ELSE '' END,
			CASE WHEN json_type(data, '$.state.input.filePath') = 'text' THEN json_extract(data, '$.state.input.filePath') ELSE '' END,
			CASE WHEN json_type(data, '$.files') = 'array' THEN json_extract(data, '$.files') ELSE '[]' END,
			CASE WHEN json_type(data, '$.state.time.start') IN ('integer', 'real') THEN json_extract(data, '$.state.time.start') ELSE 0 END
		FROM part WHERE session_id = ?
			AND CASE WHEN json_valid(data) THEN json_extract(data, '$.type') IN ('tool', 'patch') ELSE 0 END
		ORDER BY id DESC LIMIT ?`, a.id, opencodeMaxParts)
	if err != nil {
		return err
	}
	defer rows.Close()
	type part struct {
		kind, tool, file, files string
		start                   int64
	}
	var parts []part
	for rows.Next() {
		var p part
		var tool, file, files, start any
		if err := rows.Scan(&p.kind, &tool, &file, &files, &start); err != nil {
			return err
		}
		// A field of an unexpected JSON type is ignored, not an error.
		p.tool, _ = tool.(string)
		p.file, _ = file.(string)
		p.files, _ = files.(string)
		switch v := start.(type) {
		case int64:
			p.start = v
		case float64:
			p.start = int64(v)
		}
		parts = append(parts, p)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	// Newest first from the database; applied oldest first.
	for i := len(parts) - 1; i >= 0; i-- {
		p := parts[i]
		at := storeUnix(p.start)
		if at.IsZero() {
			at = a.last
		}
		if p.kind == "tool" {
			a.tool(p.tool, at)
			if rel, ok := s.repoFile(p.file, a.cwd); ok {
				a.file(rel, at)
			}
			continue
		}
		var files []string
		if json.Unmarshal([]byte(p.files), &files) == nil {
			for _, f := range files {
				if rel, ok := s.repoFile(f, a.cwd); ok {
					a.file(rel, at)
				}
			}
		}
	}
	return nil
}

// opencodeLegacy reads storage/session/<project>/<session>.json files.
func (s *storeScan) opencodeLegacy(dir string, m *storeSessions) {
	var cands []storeFile
	for _, proj := range storeSubdirs(dir) {
		cands = append(cands, s.freshFiles(filepath.Join(dir, proj), func(n string) bool { return strings.HasSuffix(n, ".json") })...)
	}
	for _, f := range storeNewest(cands, storeMaxFiles) {
		b, _, err := readStoreSmall(f.path, storeSmallFile)
		if err != nil {
			continue
		}
		var doc struct {
			ID        string `json:"id"`
			Directory string `json:"directory"`
			Time      struct {
				Updated int64 `json:"updated"`
			} `json:"time"`
		}
		if json.Unmarshal(b, &doc) != nil || doc.ID == "" {
			continue
		}
		if _, ok := s.inRepo(doc.Directory); !ok {
			continue
		}
		a := m.get(doc.ID)
		a.cwd = doc.Directory
		at := storeUnix(doc.Time.Updated)
		if at.IsZero() {
			at = f.mod
		}
		a.touch(at)
	}
}
