package agentdetect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Editor scan limits: workspaceStorage holds one directory per folder
// ever opened, so a long-lived profile has thousands.
const (
	maxLockFiles         = 256
	maxLockFileBytes     = 64 << 10
	maxWorkspaceDirs     = 4096
	maxWorkspaceJSONSize = 16 << 10
)

// editorProfiles are the VS Code family's user-data folder names and the
// detector id each maps to.
var editorProfiles = []struct{ dir, agent string }{
	{"Code", "vscode"},
	{"Code - Insiders", "vscode"},
	{"VSCodium", "vscode"},
	{"Cursor", "cursor"},
	{"Windsurf", "windsurf"},
}

// IDESource finds editors with the repository open: Claude Code's IDE
// lock files (<claude config>/ide/*.lock: only pid and workspaceFolders
// are read; the file also holds an auth token) and the VS Code family's
// workspaceStorage/*/workspace.json folders with recent activity.
type IDESource struct{}

// Name implements Source.
func (IDESource) Name() string { return SourceIDE }

// Scan implements Source.
func (IDESource) Scan(ctx context.Context, q Query) ([]Finding, error) {
	var out []Finding
	var errs []error
	locks, err := scanIDELocks(ctx, q)
	out = append(out, locks...)
	if err != nil {
		errs = append(errs, err)
	}
	for _, dir := range editorUserDirs(q) {
		fs, err := scanWorkspaceStorage(ctx, q, dir.path, dir.agent)
		out = append(out, fs...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return out, errors.Join(errs...)
}

// claudeConfigDir is $CLAUDE_CONFIG_DIR, else ~/.claude.
func claudeConfigDir(q Query) string {
	if q.Env != nil {
		if d := q.Env("CLAUDE_CONFIG_DIR"); d != "" {
			return d
		}
	}
	if q.Home == "" {
		return ""
	}
	return filepath.Join(q.Home, ".claude")
}

type ideLock struct {
	PID              int      `json:"pid"`
	WorkspaceFolders []string `json:"workspaceFolders"`
}

func scanIDELocks(ctx context.Context, q Query) ([]Finding, error) {
	root := claudeConfigDir(q)
	if root == "" {
		return nil, nil
	}
	dir := filepath.Join(root, "ide")
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("claude ide locks: %w", err)
	}
	var out []Finding
	read := 0
	for _, e := range entries {
		if read >= maxLockFiles {
			break
		}
		if err := ctx.Err(); err != nil {
			return out, fmt.Errorf("claude ide locks: %w", err)
		}
		if !strings.HasSuffix(e.Name(), ".lock") {
			continue
		}
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() || info.Size() > maxLockFileBytes {
			continue
		}
		read++
		b, ok := readRegular(filepath.Join(dir, e.Name()), info, maxLockFileBytes)
		if !ok {
			continue
		}
		var lock ideLock // decodes pid and workspaceFolders only; authToken is never kept
		if json.Unmarshal(b, &lock) != nil || lock.PID <= 0 {
			continue
		}
		open := false
		for _, w := range lock.WorkspaceFolders {
			if InRepo(w, q) {
				open = true
				break
			}
		}
		if !open {
			continue
		}
		f := Finding{Sources: []string{SourceIDE}, Confidence: ConfidenceRegistry}
		alive, known := pidAlive(lock.PID)
		switch {
		case known && alive && AliveSince(lock.PID, info.ModTime()):
			pid := lock.PID
			f.PID = &pid
			f.State = StateOpen
			f.StartTime, _ = ProcessStartTime(pid)
			f.Agent = editorAgent(processName(pid))
		case known:
			continue // the editor is gone (or its pid reused): a stale lock
		default:
			// No process table here: trust a recently written lock.
			if q.Now.Sub(info.ModTime()) > Freshness {
				continue
			}
			ms := info.ModTime().UnixMilli()
			f.LastActivityMs = &ms
			f.State = StateRecent
			f.Agent = "vscode"
		}
		out = append(out, f)
	}
	return out, nil
}

// editorAgent names the editor holding a lock by its executable.
func editorAgent(exe string) string {
	exe = strings.ToLower(exe)
	switch {
	case strings.Contains(exe, "cursor"):
		return "cursor"
	case strings.Contains(exe, "windsurf"):
		return "windsurf"
	default:
		return "vscode"
	}
}

type editorDir struct{ path, agent string }

// editorUserDirs returns each installed VS Code-family editor's "User"
// directory on this system.
func editorUserDirs(q Query) []editorDir {
	var base string
	switch runtime.GOOS {
	case "darwin":
		if q.Home != "" {
			base = filepath.Join(q.Home, "Library", "Application Support")
		}
	case "windows":
		if q.Env != nil {
			base = q.Env("APPDATA")
		}
	default:
		if q.Env != nil {
			base = q.Env("XDG_CONFIG_HOME")
		}
		if base == "" && q.Home != "" {
			base = filepath.Join(q.Home, ".config")
		}
	}
	if base == "" {
		return nil
	}
	var out []editorDir
	for _, p := range editorProfiles {
		out = append(out, editorDir{filepath.Join(base, p.dir, "User"), p.agent})
	}
	return out
}

// scanWorkspaceStorage reports the workspaces of one editor whose folder
// is in the repository and that were active within Freshness. Activity is
// the newest modification of the workspace directory (SQLite creates and
// removes its journal there on every write) or its state.vscdb; stale
// workspaces are skipped before their workspace.json is read.
func scanWorkspaceStorage(ctx context.Context, q Query, userDir, agent string) ([]Finding, error) {
	root := filepath.Join(userDir, "workspaceStorage")
	entries, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s workspaces: %w", agent, err)
	}
	var out []Finding
	for i, e := range entries {
		if i == maxWorkspaceDirs {
			break
		}
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return out, fmt.Errorf("%s workspaces: %w", agent, err)
			}
		}
		if !e.IsDir() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		dir := filepath.Join(root, e.Name())
		last := info.ModTime()
		if st, err := os.Stat(filepath.Join(dir, "state.vscdb")); err == nil && st.ModTime().After(last) {
			last = st.ModTime()
		}
		if q.Now.Sub(last) > Freshness {
			continue
		}
		wpath := filepath.Join(dir, "workspace.json")
		winfo, err := os.Lstat(wpath)
		if err != nil || !winfo.Mode().IsRegular() || winfo.Size() > maxWorkspaceJSONSize {
			continue
		}
		b, ok := readRegular(wpath, winfo, maxWorkspaceJSONSize)
		if !ok {
			continue
		}
		var ws struct {
			Folder string `json:"folder"`
		}
		if json.Unmarshal(b, &ws) != nil {
			continue
		}
		folder, ok := fileURIPath(ws.Folder)
		if !ok || !InRepo(folder, q) {
			continue
		}
		ms := last.UnixMilli()
		state := StateRecent
		if q.Now.Sub(last) <= WorkingWindow {
			state = StateWorking
		}
		out = append(out, Finding{
			Agent:          agent,
			State:          state,
			Sources:        []string{SourceIDE},
			LastActivityMs: &ms,
			Confidence:     ConfidenceRegistry,
		})
	}
	return out, nil
}

// fileURIPath turns a workspace "file://" URI into a local path; remote
// folders (vscode-remote://) are not on this machine.
func fileURIPath(uri string) (string, bool) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" || u.Path == "" {
		return "", false
	}
	p := u.Path
	if runtime.GOOS == "windows" {
		p = strings.TrimPrefix(p, "/")
	}
	return filepath.FromSlash(p), true
}
