package agentdetect

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestIDESourceLockFiles(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("lock liveness needs the Linux process table")
	}
	repo := newRepo(t, "repo")
	other := newRepo(t, "other")
	home := t.TempDir()
	editor := startHelper(t, t.TempDir(), "sleep", "/usr/share/code/code")
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	const secret = "s3cr3t-auth-token"
	tests := []struct {
		name    string
		lock    any
		mtime   time.Time
		wantPID int
	}{
		{"live editor with the repo open", map[string]any{"pid": editor.Process.Pid, "workspaceFolders": []string{"/elsewhere", filepath.Join(repo, "sub")}, "ideName": "Visual Studio Code", "authToken": secret}, now, editor.Process.Pid},
		{"dead editor", map[string]any{"pid": dead.Process.Pid, "workspaceFolders": []string{repo}, "authToken": secret}, now, 0},
		{"another repository", map[string]any{"pid": editor.Process.Pid, "workspaceFolders": []string{other}}, now, 0},
		{"lock older than the live pid: reused", map[string]any{"pid": editor.Process.Pid, "workspaceFolders": []string{repo}}, now.Add(-48 * time.Hour), 0},
		{"malformed", `{"pid":`, now, 0},
	}
	dir := filepath.Join(home, ".claude", "ide")
	for i, tt := range tests {
		writeRecord(t, dir, string(rune('a'+i))+".lock", tt.lock, tt.mtime)
	}
	q := Query{Repo: repo, Home: home, Env: func(string) string { return "" }, Now: now}
	fs, err := IDESource{}.Scan(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(fs)
	if strings.Contains(string(b), secret) {
		t.Fatal("an auth token reached the findings")
	}
	if len(fs) != 1 || fs[0].PID == nil || *fs[0].PID != editor.Process.Pid || fs[0].Agent != "vscode" ||
		fs[0].State != StateOpen || fs[0].StartTime.IsZero() || strings.Join(fs[0].Sources, ",") != SourceIDE {
		t.Fatalf("findings %s, want only the live editor %d", b, editor.Process.Pid)
	}

	// $CLAUDE_CONFIG_DIR moves the lock directory.
	cfg := t.TempDir()
	writeRecord(t, filepath.Join(cfg, "ide"), "x.lock", tests[0].lock, now)
	q.Home = t.TempDir()
	q.Env = func(k string) string {
		if k == "CLAUDE_CONFIG_DIR" {
			return cfg
		}
		return ""
	}
	if fs, err := (IDESource{}).Scan(context.Background(), q); err != nil || len(fs) != 1 {
		t.Fatalf("CLAUDE_CONFIG_DIR: %d findings, %v", len(fs), err)
	}
}

func TestIDESourceWorkspaceStorage(t *testing.T) {
	if runtime.GOOS == "darwin" || runtime.GOOS == "windows" {
		t.Skip("the test lays out the XDG profile directories")
	}
	repo := newRepo(t, "repo")
	other := newRepo(t, "other")
	cfg := t.TempDir()
	now := time.Now()
	uri := func(p string) string { return (&url.URL{Scheme: "file", Path: p}).String() }
	tests := []struct {
		name, app, folder string
		age               time.Duration
		want              string // agent, "" for none
		wantState         string
	}{
		{"vscode with the repo", "Code", uri(repo), time.Minute, "vscode", StateWorking},
		{"cursor on a subfolder", "Cursor", uri(filepath.Join(repo, "sub")), 5 * time.Minute, "cursor", StateRecent},
		{"windsurf, stale", "Windsurf", uri(repo), time.Hour, "", ""},
		{"another repo", "Code", uri(other), time.Minute, "", ""},
		{"remote folder", "Code", "vscode-remote://ssh-remote+h" + repo, time.Minute, "", ""},
		{"percent-encoded path with a space", "VSCodium", uri(filepath.Join(repo, "my dir")), time.Minute, "vscode", StateWorking},
	}
	for i, tt := range tests {
		ws := filepath.Join(cfg, tt.app, "User", "workspaceStorage", string(rune('a'+i))+"0f3")
		writeRecord(t, ws, "workspace.json", map[string]string{"folder": tt.folder}, now.Add(-tt.age))
		at := now.Add(-tt.age)
		writeRecord(t, ws, "state.vscdb", "SQLite format 3\x00", at)
		if err := os.Chtimes(ws, at, at); err != nil {
			t.Fatal(err)
		}
	}
	q := Query{Repo: repo, Home: t.TempDir(), Env: func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return cfg
		}
		return ""
	}, Now: now}
	fs, err := IDESource{}.Scan(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	var got, want []string
	for _, f := range fs {
		got = append(got, f.Agent+" "+f.State)
		if f.PID != nil || f.LastActivityMs == nil {
			t.Errorf("%+v: want no pid and an activity time", f)
		}
	}
	for _, tt := range tests {
		if tt.want != "" {
			want = append(want, tt.want+" "+tt.wantState)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("findings %v, want %v", got, want)
	}
}
