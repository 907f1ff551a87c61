package agentdetect

import (
	"context"
	"crypto/md5"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"strings"
	"time"
)

// cursorStore reads Cursor's two stores. The CLI (cursor-agent) keeps
// ~/.cursor/chats/<md5(workspace path)>/<chat>/ with meta.json (times)
// and store.db, whose meta key "0" is hex-encoded JSON naming the
// workspacePath. The editor keeps composerHeaders in
// <User>/globalStorage/state.vscdb, each naming its workspace folder and
// tracked git repositories. Chat titles and bubbles are never read.
type cursorStore struct{}

// Name identifies the source in a report's failed list.
func (cursorStore) Name() string { return "store:cursor" }

// Scan reports Cursor chats in the repository.
func (cursorStore) Scan(ctx context.Context, q Query) ([]Finding, error) {
	s := newStoreScan(q)
	m := newStoreSessions("cursor")
	var errs []error
	if chats, ok := s.storeDir(s.homeJoin(".cursor", "chats")); ok {
		errs = append(errs, s.cursorCLI(ctx, chats, m)...)
	}
	for _, cfg := range s.configDirs() {
		if cfg == "" {
			continue
		}
		user, ok := s.storeDir(filepath.Join(cfg, "Cursor", "User"))
		if !ok {
			continue
		}
		db := filepath.Join(user, "globalStorage", "state.vscdb")
		if _, ok := s.storeDir(filepath.Dir(db)); !ok {
			continue
		}
		if err := s.cursorComposers(ctx, db, m); err != nil {
			errs = append(errs, err)
		}
	}
	out := m.findings(s)
	return out, storeErrs(len(out), errs)
}

// cursorCLI reads chat directories: those in a work tree's own md5
// bucket are tied by their bucket; fresh chats in other buckets (a
// session started in a subdirectory) by the workspacePath of store.db.
func (s *storeScan) cursorCLI(ctx context.Context, chats string, m *storeSessions) []error {
	direct := map[string]string{}
	for _, r := range s.roots {
		for _, p := range []string{r.raw, r.real} {
			sum := md5.Sum([]byte(p))
			direct[hex.EncodeToString(sum[:])] = p
		}
	}
	var errs []error
	opened := 0
	for _, bucket := range storeSubdirs(chats) {
		for _, chat := range storeSubdirs(filepath.Join(chats, bucket)) {
			if ctx.Err() != nil {
				return append(errs, ctx.Err())
			}
			dir := filepath.Join(chats, bucket, chat)
			at := s.cursorChatTime(dir)
			if !s.fresh(at) {
				continue
			}
			cwd, ok := direct[bucket]
			if !ok {
				if opened >= storeMaxFiles {
					continue
				}
				opened++
				p, err := s.cursorWorkspace(ctx, filepath.Join(dir, "store.db"))
				if err != nil {
					errs = append(errs, err)
					continue
				}
				cwd = p
			}
			if _, in := s.inRepo(cwd); !in {
				continue
			}
			a := m.get(chat)
			a.cwd = cwd
			a.touch(at)
		}
	}
	return errs
}

// cursorChatTime is a chat's last update: the later of meta.json's
// updatedAtMs and the mtime of its database files (meta.json's own mtime
// says nothing more than updatedAtMs).
func (s *storeScan) cursorChatTime(dir string) (at time.Time) {
	files := s.allFiles(dir, func(n string) bool {
		return strings.HasPrefix(n, "store.db")
	})
	for _, f := range files {
		at = storeLater(at, f.mod)
	}
	if b, _, err := readStoreSmall(filepath.Join(dir, "meta.json"), 64<<10); err == nil {
		var meta struct {
			UpdatedAtMs int64 `json:"updatedAtMs"`
		}
		if json.Unmarshal(b, &meta) == nil {
			at = storeLater(at, storeUnix(meta.UpdatedAtMs))
		}
	}
	return at
}

// cursorWorkspace reads the workspacePath of a CLI chat's store.db.
func (s *storeScan) cursorWorkspace(ctx context.Context, db string) (string, error) {
	var raw []byte
	err := readSQLite(ctx, db, func(ctx context.Context, tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `SELECT CAST(value AS TEXT) FROM meta WHERE key = '0'`).Scan(&raw)
	})
	if err != nil {
		return "", err
	}
	js, err := hex.DecodeString(strings.TrimSpace(string(raw)))
	if err != nil {
		js = raw // some versions may store it plain
	}
	var meta struct {
		WorkspacePath string `json:"workspacePath"`
	}
	if err := json.Unmarshal(js, &meta); err != nil {
		return "", nil
	}
	return meta.WorkspacePath, nil
}

// cursorComposers reads the editor's composer headers.
func (s *storeScan) cursorComposers(ctx context.Context, db string, m *storeSessions) error {
	return readSQLite(ctx, db, func(ctx context.Context, tx *sql.Tx) error {
		// A malformed value would make json_extract fail the statement.
		rows, err := tx.QueryContext(ctx, `SELECT composerId, COALESCE(lastUpdatedAt, 0),
				CASE WHEN json_valid(value) THEN COALESCE(json_extract(value, '$.workspaceIdentifier.uri.fsPath'), '') ELSE '' END,
				CASE WHEN json_valid(value) THEN COALESCE(json_extract(value, '$.trackedGitRepos'), '[]') ELSE '[]' END
			FROM composerHeaders WHERE COALESCE(isArchived, 0) = 0
			ORDER BY lastUpdatedAt DESC LIMIT ?`, storeMaxRows)
		if err != nil {
			if strings.Contains(err.Error(), "no such table") {
				// An editor version without composer headers.
				return nil
			}
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			var updated int64
			var fsPathV, reposV any
			if err := rows.Scan(&id, &updated, &fsPathV, &reposV); err != nil {
				return err
			}
			fsPath, _ := fsPathV.(string)
			repos, _ := reposV.(string)
			at := storeUnix(updated)
			if !s.fresh(at) {
				break
			}
			cands := []string{fsPath}
			var tracked []struct {
				RepoPath string `json:"repoPath"`
			}
			if json.Unmarshal([]byte(repos), &tracked) == nil {
				for _, t := range tracked {
					cands = append(cands, t.RepoPath)
				}
			}
			for _, c := range cands {
				if _, ok := s.inRepo(c); ok {
					a := m.get(id)
					a.cwd = c
					a.touch(at)
					break
				}
			}
		}
		return rows.Err()
	})
}
