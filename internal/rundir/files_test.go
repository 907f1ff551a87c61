package rundir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func ptr(s string) *string { return &s }

// realTemp is a fresh directory reached without symbolic links.
func realTemp(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRecordRoundTrip: what the gateway writes is what the flux.* tools and
// the gateway's undo read back, key for key, with a 0600 file.
func TestRecordRoundTrip(t *testing.T) {
	created := NewCreatedAt(time.Date(2026, 12, 1, 10, 4, 5, 678_000_000, time.FixedZone("x", 3600)))
	tests := []struct {
		name string
		rec  Record
		keys string // the JSON as written
	}{
		{"all fields", Record{Operation: "rebase", BeforeCommit: ptr("a"), AfterCommit: ptr("b"), BranchRef: ptr("refs/heads/main"),
			Undone: true, CreatedAt: created, BeforeRef: ptr("refs/heads/main"), AfterRef: ptr("refs/heads/x"), UpstreamRef: ptr("refs/remotes/o/main"),
			ResetMode: ptr("hard"), Plan: json.RawMessage(`{"steps":["merge"]}`)},
			`{"operation":"rebase","before_commit":"a","after_commit":"b","branch_ref":"refs/heads/main","undone":true,"created_at":"2026-12-01T09:04:05.678Z","before_ref":"refs/heads/main","after_ref":"refs/heads/x","upstream_ref":"refs/remotes/o/main","reset_mode":"hard","plan":{"steps":["merge"]}}`},
		{"running operation: nulls and a null plan", Record{Operation: "merge", CreatedAt: created},
			`{"operation":"merge","before_commit":null,"after_commit":null,"branch_ref":null,"undone":false,"created_at":"2026-12-01T09:04:05.678Z","before_ref":null,"after_ref":null,"upstream_ref":null,"reset_mode":null,"plan":null}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := realTemp(t)
			if err := WriteRecord(run, "web-1a2b3c4d", tt.rec); err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile(RecordPath(run, "web-1a2b3c4d"))
			if err != nil || string(raw) != tt.keys {
				t.Fatalf("written %s (%v), want %s", raw, err, tt.keys)
			}
			if fi, _ := os.Stat(RecordPath(run, "web-1a2b3c4d")); fi.Mode().Perm() != 0o600 {
				t.Fatalf("record mode %v, want 0600", fi.Mode().Perm())
			}
			got, err := ReadRecord(run, "web-1a2b3c4d", nil)
			if err != nil {
				t.Fatal(err)
			}
			again, _ := json.Marshal(got)
			if string(again) != tt.keys {
				t.Fatalf("read back %s, want %s", again, tt.keys)
			}
			if id := got.ID("web-1a2b3c4d"); id != "restore:web-1a2b3c4d:2026-12-01T09:04:05.678Z" {
				t.Fatalf("id %q", id)
			}
			left, _ := os.ReadDir(filepath.Join(run, RebaseDir))
			if len(left) != 1 {
				t.Fatalf("temporary files left behind: %v", left)
			}
		})
	}
}

// TestCreatedAt: created_at as other writers leave it. The gateway used to
// decode it into a string and so skipped (undo list) or refused (undo) a
// record with a numeric created_at that the flux.* tools read; both ends
// now read it the flux.* way.
func TestCreatedAt(t *testing.T) {
	tests := []struct {
		name, json string
		text       string
		unix       int64
	}{
		{"gateway layout", `"2026-12-01T09:04:05.678Z"`, "2026-12-01T09:04:05.678Z", 1796115845},
		{"RFC 3339 with offset", `"2026-12-01T10:04:05+01:00"`, "2026-12-01T10:04:05+01:00", 1796115845},
		{"Unix seconds", `1700000100`, "1700000100", 1700000100},
		{"Unix milliseconds", `1700000100123`, "1700000100123", 1700000100},
		{"decimal string", `"1700000100"`, "1700000100", 1700000100},
		{"null", `null`, "", 0},
		{"an object", `{"t":1}`, "unknown", 0},
		{"nonsense string", `"yesterday"`, "yesterday", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, err := ParseRecord([]byte(`{"operation":"merge","created_at":` + tt.json + `}`))
			if err != nil {
				t.Fatal(err)
			}
			if rec.CreatedAt.Text() != tt.text || rec.CreatedAt.Unix() != tt.unix {
				t.Fatalf("Text %q Unix %d, want %q %d", rec.CreatedAt.Text(), rec.CreatedAt.Unix(), tt.text, tt.unix)
			}
			if string(rec.CreatedAt.Raw()) != tt.json {
				t.Fatalf("Raw %s, want %s as written", rec.CreatedAt.Raw(), tt.json)
			}
			if rec.ID("r") != "restore:r:"+tt.text {
				t.Fatalf("id %q", rec.ID("r"))
			}
		})
	}
	// Missing entirely: null, as the flux.* tools always reported it.
	rec, _ := ParseRecord([]byte(`{}`))
	if string(rec.CreatedAt.Raw()) != "null" || rec.ID("r") != "restore:r:" || rec.Operation != "" {
		t.Fatalf("missing created_at: %s %q", rec.CreatedAt.Raw(), rec.ID("r"))
	}
	if _, err := ParseRecord([]byte(`{"operation":1}`)); err == nil {
		t.Fatal("a numeric operation decoded")
	}
}

// TestReadRecordFileBounds: the reader refuses what is not a plain small
// record of a safe id, without naming a path.
func TestReadRecordFileBounds(t *testing.T) {
	refuse := errors.New("refused by the check")
	tests := []struct {
		name  string
		build func(t *testing.T, run string)
		id    string
		check Check
		want  error // nil: read succeeds
	}{
		{"control: plain record", func(t *testing.T, run string) { writeFile(t, RecordPath(run, "web"), `{}`) }, "web", nil, nil},
		{"exactly the limit", func(t *testing.T, run string) {
			writeFile(t, RecordPath(run, "web"), strings.Repeat(" ", MaxRecordBytes-2)+"{}")
		}, "web", nil, nil},
		{"one byte over the limit", func(t *testing.T, run string) {
			writeFile(t, RecordPath(run, "web"), strings.Repeat(" ", MaxRecordBytes-1)+"{}")
		}, "web", nil, ErrTooLarge},
		{"missing record", func(t *testing.T, run string) { _ = os.MkdirAll(filepath.Join(run, RebaseDir), 0o700) }, "web", nil, os.ErrNotExist},
		{"missing rebase directory", func(t *testing.T, run string) {}, "web", nil, os.ErrNotExist},
		{"rebase is a file", func(t *testing.T, run string) { writeFile(t, filepath.Join(run, RebaseDir), "x") }, "web", nil, ErrLinkedDir},
		{"record is a directory", func(t *testing.T, run string) { _ = os.MkdirAll(RecordPath(run, "web"), 0o700) }, "web", nil, ErrNotRegular},
		{"the check refuses", func(t *testing.T, run string) { writeFile(t, RecordPath(run, "web"), `{}`) }, "web",
			func(fs.FileInfo) error { return refuse }, refuse},
		{"id with a slash", func(t *testing.T, run string) {}, "../web", nil, ErrBadID},
		{"id with a backslash", func(t *testing.T, run string) {}, `a\b`, nil, ErrBadID},
		{"id dot-dot", func(t *testing.T, run string) {}, "..", nil, ErrBadID},
		{"empty id", func(t *testing.T, run string) {}, "", nil, ErrBadID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := realTemp(t)
			tt.build(t, run)
			b, err := ReadRecordFile(run, tt.id, tt.check)
			if tt.want == nil {
				if err != nil || len(b) == 0 {
					t.Fatalf("read failed: %v", err)
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("err %v, want %v", err, tt.want)
			}
			if err != nil && strings.Contains(err.Error(), run) {
				t.Fatalf("error names the path: %v", err)
			}
		})
	}
	if _, err := ReadRecordFile(filepath.Join(realTemp(t), "absent"), "web", nil); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing run directory: %v, want os.ErrNotExist", err)
	}
}

// TestNewID pins the registry id format the gateway registers under.
func TestNewID(t *testing.T) {
	tests := []struct{ repo, prefix string }{
		{"/src/web", "web-"},
		{"/src/my repo (copy)", "my-repo--copy--"},
		{"/src/.hidden.", "hidden-"},
		{"/src/...", "repo-"},
		{"/src/café", "caf--"},
	}
	for _, tt := range tests {
		t.Run(tt.repo, func(t *testing.T) {
			id := NewID(tt.repo)
			if !strings.HasPrefix(id, tt.prefix) || len(id) != len(tt.prefix)+8 || !ValidID(id) {
				t.Fatalf("NewID(%q) = %q, want %q + 8 hex digits", tt.repo, id, tt.prefix)
			}
			if NewID(tt.repo) != id {
				t.Fatal("NewID is not stable")
			}
		})
	}
}

// TestReadRegistry: which registry files count. The gateway's copy used to
// accept a relative path (resolved against its working directory), an
// unbounded file and any number of entries; both ends now apply the
// fleet.digest rules (F§6.18).
func TestReadRegistry(t *testing.T) {
	repo := realTemp(t)
	other := realTemp(t)
	tests := []struct {
		name  string
		files map[string]string // below repos/
		want  []Entry
	}{
		{"plain entry, trailing newline", map[string]string{"web.path": repo + "\n"}, []Entry{{"web", repo}}},
		{"spaces around are trimmed", map[string]string{"web.path": "  " + repo + " \n"}, []Entry{{"web", repo}}},
		{"file-name order, duplicates kept", map[string]string{"b.path": repo, "a.path": other, "c.path": repo},
			[]Entry{{"a", other}, {"b", repo}, {"c", repo}}},
		{"relative path skipped (the gateway accepted it)", map[string]string{"web.path": "src/web"}, nil},
		{"unresolvable path skipped", map[string]string{"web.path": filepath.Join(repo, "gone")}, nil},
		{"NUL inside skipped", map[string]string{"web.path": repo + "\x00x"}, nil},
		{"two lines skipped", map[string]string{"web.path": repo + "\n" + other}, nil},
		{"empty skipped", map[string]string{"web.path": "\n"}, nil},
		{"over 32 KiB skipped (the gateway read it)", map[string]string{"web.path": repo + strings.Repeat(" ", MaxRegistryFile)}, nil},
		{"other suffix ignored", map[string]string{"web.txt": repo, ".path": repo}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := realTemp(t)
			for name, content := range tt.files {
				writeFile(t, filepath.Join(run, ReposDir, name), content)
			}
			got, err := ReadRegistry(run, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("entries %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("entries %v, want %v", got, tt.want)
				}
			}
		})
	}
	if got, err := ReadRegistry(filepath.Join(realTemp(t), "absent"), nil); err != nil || got != nil {
		t.Fatalf("missing run directory: %v %v", got, err)
	}
}

// TestRegistryEntryCap: no more than MaxRegistryEntries files are looked at.
func TestRegistryEntryCap(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 4,097 files")
	}
	run, repo := realTemp(t), realTemp(t)
	dir := filepath.Join(run, ReposDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for i := 0; i <= MaxRegistryEntries; i++ {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("r%05d.path", i)), []byte(repo), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := ReadRegistry(run, nil)
	if len(got) != MaxRegistryEntries || got[len(got)-1].ID != "r04095" {
		t.Fatalf("%d entries (last %v), want the first %d", len(got), got[len(got)-1], MaxRegistryEntries)
	}
}

// TestRegister: the first call writes repos/<NewID>.path, the next finds it.
func TestRegister(t *testing.T) {
	run, repo := realTemp(t), realTemp(t)
	id, err := Register(run, repo)
	if err != nil || id != NewID(repo) {
		t.Fatalf("Register = %q, %v; want %q", id, err, NewID(repo))
	}
	b, err := os.ReadFile(filepath.Join(run, ReposDir, id+".path"))
	if err != nil || string(b) != repo+"\n" {
		t.Fatalf("registry file %q, %v", b, err)
	}
	// A hand-made entry naming the same repository wins when it sorts first.
	writeFile(t, filepath.Join(run, ReposDir, "0-first.path"), repo)
	if again, err := Register(run, repo); err != nil || again != "0-first" {
		t.Fatalf("second Register = %q, %v; want the existing entry", again, err)
	}
	if got, _ := LookupID(run, repo, nil); got != "0-first" {
		t.Fatalf("LookupID = %q", got)
	}
	if got, _ := LookupID(run, filepath.Join(repo, "x"), nil); got != "" {
		t.Fatalf("LookupID of an unregistered path = %q", got)
	}
	for _, bad := range []string{"rel/path", repo + "\nx"} {
		if _, err := Register(run, bad); err == nil {
			t.Fatalf("Register(%q) succeeded", bad)
		}
	}
	if _, err := Register("relative/run", repo); err == nil {
		t.Fatal("Register into a relative run directory succeeded")
	}
}

// TestPresence: the document round trip and what readers skip.
func TestPresence(t *testing.T) {
	run := realTemp(t)
	doc := Presence{SchemaVersion: PresenceSchemaVersion, PID: 4242, Client: PresenceClient{Name: ptr("codex-mcp-client")},
		Repos: []PresenceRepo{{RepoPath: "/r/a", LastCallMs: 1_700_000_000_000, LastTool: "repo.status"}}}
	if err := WritePresence(run, doc); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(PresenceDir(run), "4242.json"))
	want := `{"schemaVersion":1,"pid":4242,"client":{"name":"codex-mcp-client","version":null},"repos":[{"repoPath":"/r/a","lastCallMs":1700000000000,"lastTool":"repo.status"}]}`
	if err != nil || string(b) != want {
		t.Fatalf("document %s (%v), want %s", b, err, want)
	}
	got, err := ParsePresence(b)
	if err != nil || got.PID != 4242 || *got.Client.Name != "codex-mcp-client" || got.Client.Version != nil || len(got.Repos) != 1 {
		t.Fatalf("ParsePresence = %+v, %v", got, err)
	}
	if err := RemovePresence(run, 4242); err != nil {
		t.Fatal(err)
	}
	if err := RemovePresence(run, 4242); err != nil {
		t.Fatalf("removing a missing document: %v", err)
	}
	if left, _ := os.ReadDir(PresenceDir(run)); len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
	for name, doc := range map[string]string{
		"schemaVersion 2": `{"schemaVersion":2,"pid":1}`,
		"no version":      `{"pid":1}`,
		"pid 0":           `{"schemaVersion":1,"pid":0}`,
		"negative pid":    `{"schemaVersion":1,"pid":-3}`,
		"not JSON":        `{"schemaVersion":1,`,
		"repos not array": `{"schemaVersion":1,"pid":1,"repos":{}}`,
	} {
		if _, err := ParsePresence([]byte(doc)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if p, err := ParsePresence([]byte(`{"schemaVersion":1,"pid":7,"client":null}`)); err != nil || p.Client.Name != nil {
		t.Fatalf("a null client: %+v %v", p, err)
	}
}

// TestCleanClientField: the writer's cleaning, which the reader now applies
// too. internal/agentdetect used its own copy that trimmed before removing
// control characters and did not trim after the cut, so " name" survived a
// leading control character and a cut could end in a space.
func TestCleanClientField(t *testing.T) {
	long := strings.Repeat("a", MaxClientChars-1) + " b"
	tests := []struct{ in, want string }{
		{"codex-mcp-client", "codex-mcp-client"},
		{"  spaced  ", "spaced"},
		{"a\tb\nc", "abc"},
		{"\x01 name", "name"},                         // the reader's copy gave " name"
		{long, strings.Repeat("a", MaxClientChars-1)}, // the reader's copy kept the trailing space
		{"bad\xffutf8", "bad\uFFFDutf8"},
		{strings.Repeat("é", MaxClientChars+5), strings.Repeat("é", MaxClientChars)},
		{"\x00\x01", ""},
	}
	for _, tt := range tests {
		if got := CleanClientField(tt.in); got != tt.want {
			t.Errorf("CleanClientField(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestWriteRecordFileRestoresAndRemoves: abandon's two paths.
func TestWriteRecordFileRestoresAndRemoves(t *testing.T) {
	run := realTemp(t)
	if err := WriteRecordFile(run, "web", []byte(`{"operation":"old","x":1}`)); err != nil {
		t.Fatal(err)
	}
	if b, _ := ReadRecordFile(run, "web", nil); string(b) != `{"operation":"old","x":1}` {
		t.Fatalf("raw bytes not kept: %s", b)
	}
	if err := RemoveRecord(run, "web"); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadRecordFile(run, "web", nil); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("after remove: %v", err)
	}
	for _, f := range []func() error{
		func() error { return WriteRecordFile(run, "../x", nil) },
		func() error { return RemoveRecord(run, "") },
		func() error { return WritePatch(run, "a/b", nil) },
	} {
		if err := f(); !errors.Is(err, ErrBadID) {
			t.Fatalf("unsafe id: %v", err)
		}
	}
	if err := WritePatch(run, "web", []byte("diff")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(PatchPath(run, "web")); string(b) != "diff" {
		t.Fatalf("patch %q", b)
	}
}
