package presence

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fluxgit/fluxgit/internal/rundir"
)

// runDir is a fresh run directory reached without symbolic links (the
// presence directory refuses links on the way).
func runDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) add(m string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, m)
}

func (w *warnings) list() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.msgs...)
}

func readDoc(t *testing.T, path string) rundir.Presence {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d rundir.Presence
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("record %s is not JSON: %v\n%s", path, err, b)
	}
	return d
}

func TestRecordDocument(t *testing.T) {
	clock := time.UnixMilli(1_700_000_000_000)
	tests := []struct {
		name    string
		calls   [][4]string // client name, version, repo, tool
		want    []string    // repoPath order
		client  [2]any      // name, version (nil = null)
		lastMs0 int64
	}{
		{"one call", [][4]string{{"codex-mcp-client", "0.9.1", "/r/a", "repo.status"}}, []string{"/r/a"}, [2]any{"codex-mcp-client", "0.9.1"}, 1_700_000_000_001},
		{"a repeated repo moves to the front", [][4]string{
			{"c", "1", "/r/a", "repo.status"}, {"c", "1", "/r/b", "repo.refs"}, {"c", "1", "/r/a", "diff.text"},
		}, []string{"/r/a", "/r/b"}, [2]any{"c", "1"}, 1_700_000_000_003},
		{"no usable name is null, blank version is null", [][4]string{{"  \t", " ", "/r/a", "repo.status"}}, []string{"/r/a"}, [2]any{nil, nil}, 1_700_000_000_001},
		{"a name of only punctuation is the fallback agent", [][4]string{{"@@@", "1", "/r/a", "repo.status"}}, []string{"/r/a"}, [2]any{nil, "1"}, 1_700_000_000_001},
		{"control characters removed and trimmed", [][4]string{{" Claude\x00 Code\u0085\n", "1.0\x1b", "/r/a", "repo.status"}}, []string{"/r/a"}, [2]any{"Claude Code", "1.0"}, 1_700_000_000_001},
		{"the latest client wins", [][4]string{{"a", "1", "/r/a", "repo.status"}, {"b", "2", "/r/a", "repo.status"}}, []string{"/r/a"}, [2]any{"b", "2"}, 1_700_000_000_002},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := int64(0)
			w := New(Options{RunDir: runDir(t), PID: 4242, Now: func() time.Time { n++; return clock.Add(time.Duration(n) * time.Millisecond) }})
			for _, c := range tt.calls {
				w.Record(c[0], c[1], c[2], c[3])
			}
			d := readDoc(t, w.Path())
			if d.SchemaVersion != 1 || d.PID != 4242 || filepath.Base(w.Path()) != "4242.json" {
				t.Fatalf("document %+v at %s", d, w.Path())
			}
			var got []string
			for _, r := range d.Repos {
				got = append(got, r.RepoPath)
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") || d.Repos[0].LastCallMs != tt.lastMs0 || d.Repos[0].LastTool != tt.calls[len(tt.calls)-1][3] {
				t.Fatalf("repos = %+v, want order %v, first lastCallMs %d", d.Repos, tt.want, tt.lastMs0)
			}
			for i, p := range []*string{d.Client.Name, d.Client.Version} {
				want := tt.client[i]
				if (p == nil) != (want == nil) || (p != nil && *p != want) {
					t.Fatalf("client field %d = %v, want %v", i, deref(p), want)
				}
			}
		})
	}
}

func deref(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}

// The record keeps the 16 newest repositories, and nothing but the
// documented fields.
func TestRecordCapAndFields(t *testing.T) {
	w := New(Options{RunDir: runDir(t)})
	for i := range 20 {
		w.Record("c", "1", fmt.Sprintf("/r/%02d", i), "repo.status")
	}
	d := readDoc(t, w.Path())
	if len(d.Repos) != rundir.MaxPresenceRepos || d.Repos[0].RepoPath != "/r/19" || d.Repos[15].RepoPath != "/r/04" {
		t.Fatalf("repos = %+v", d.Repos)
	}
	var raw map[string]json.RawMessage
	b, _ := os.ReadFile(w.Path())
	_ = json.Unmarshal(b, &raw)
	if len(raw) != 4 {
		t.Fatalf("top-level fields %v, want schemaVersion, pid, client, repos", raw)
	}
	// Characters, not bytes, are counted.
	long := "a" + strings.Repeat("é", 300)
	w.Record(long, long, "/r/x", "repo.status")
	d = readDoc(t, w.Path())
	if d.Client.Name == nil || len([]rune(*d.Client.Name)) != rundir.MaxClientChars || len([]rune(*d.Client.Version)) != rundir.MaxClientChars {
		t.Fatalf("client %v/%v, want both cut to %d characters", deref(d.Client.Name), deref(d.Client.Version), rundir.MaxClientChars)
	}
}

func TestPermissions(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("mode bits do not describe access on Windows")
	}
	w := New(Options{RunDir: runDir(t)})
	w.Record("c", "1", "/r/a", "repo.status")
	for path, want := range map[string]os.FileMode{filepath.Dir(w.Path()): 0o700, w.Path(): 0o600} {
		fi, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s mode %04o, want %04o", path, fi.Mode().Perm(), want)
		}
	}
	entries, _ := os.ReadDir(filepath.Dir(w.Path()))
	if len(entries) != 1 {
		t.Fatalf("directory holds %v, want only the record (no temporary file left)", entries)
	}
}

// A presence directory that is a link or a file is refused: nothing is
// written through it, one warning is given, and later calls stay quiet.
func TestRefusedDirectory(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, run, elsewhere string)
	}{
		{"symlink", func(t *testing.T, run, elsewhere string) {
			if err := os.MkdirAll(filepath.Join(run, "presence"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(elsewhere, rundir.PresenceDir(run)); err != nil {
				t.Skip("no symlinks:", err)
			}
		}},
		{"a file", func(t *testing.T, run, _ string) {
			if err := os.MkdirAll(filepath.Join(run, "presence"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(rundir.PresenceDir(run), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"a symlinked parent", func(t *testing.T, run, elsewhere string) {
			if err := os.Symlink(elsewhere, filepath.Join(run, "presence")); err != nil {
				t.Skip("no symlinks:", err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run, elsewhere := runDir(t), runDir(t)
			tt.setup(t, run, elsewhere)
			var warns warnings
			w := New(Options{RunDir: run, Warn: warns.add})
			w.Record("c", "1", "/r/a", "repo.status")
			w.Record("c", "1", "/r/b", "repo.status")
			if msgs := warns.list(); len(msgs) != 1 || !strings.Contains(msgs[0], "presence") {
				t.Fatalf("warnings %q, want exactly one", msgs)
			}
			var found []string
			_ = filepath.WalkDir(elsewhere, func(p string, d os.DirEntry, _ error) error {
				if !d.IsDir() {
					found = append(found, p)
				}
				return nil
			})
			if len(found) != 0 {
				t.Fatalf("written through the link: %v", found)
			}
		})
	}
}

func TestSweep(t *testing.T) {
	run := runDir(t)
	dir := rundir.PresenceDir(run)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-StaleAge - time.Hour)
	fresh := time.Now().Add(-StaleAge + time.Hour)
	files := []struct {
		name string
		mod  time.Time
		dir  bool
		gone bool
	}{
		{"111.json", old, false, true},
		{".111.abc.tmp", old, false, true},
		{"222.json", fresh, false, false},
		{".222.abc.tmp", fresh, false, false},
		{"notes.txt", old, false, false},
		{"old.json", old, true, false}, // a directory is never removed
	}
	for _, f := range files {
		p := filepath.Join(dir, f.name)
		var err error
		if f.dir {
			err = os.Mkdir(p, 0o700)
		} else {
			err = os.WriteFile(p, []byte("{}"), 0o600)
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, f.mod, f.mod); err != nil {
			t.Fatal(err)
		}
	}
	w := New(Options{RunDir: run, PID: 333})
	w.Record("c", "1", "/r/a", "repo.status")
	for _, f := range files {
		_, err := os.Lstat(filepath.Join(dir, f.name))
		if gone := os.IsNotExist(err); gone != f.gone {
			t.Errorf("%s: removed=%v, want %v", f.name, gone, f.gone)
		}
	}
	// Only the first write sweeps.
	p := filepath.Join(dir, "444.json")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_ = os.Chtimes(p, old, old)
	w.Record("c", "1", "/r/b", "repo.status")
	if _, err := os.Lstat(p); err != nil {
		t.Fatalf("second write swept again: %v", err)
	}
}

func TestCloseDeletes(t *testing.T) {
	w := New(Options{RunDir: runDir(t)})
	w.Close() // nothing written yet: nothing to delete, no warning
	w = New(Options{RunDir: filepath.Dir(filepath.Dir(filepath.Dir(w.Path())))})
	w.Record("c", "1", "/r/a", "repo.status")
	if _, err := os.Stat(w.Path()); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if _, err := os.Stat(w.Path()); !os.IsNotExist(err) {
		t.Fatalf("record still there after Close: %v", err)
	}
	w.Record("c", "1", "/r/a", "repo.status")
	if _, err := os.Stat(w.Path()); !os.IsNotExist(err) {
		t.Fatalf("a call after Close wrote the record again: %v", err)
	}
	var nilW *Writer
	nilW.Record("c", "1", "/r/a", "t")
	nilW.Close()
}

// Concurrent calls keep the file a complete document at every moment.
func TestConcurrentWriters(t *testing.T) {
	w := New(Options{RunDir: runDir(t)})
	w.Record("c", "1", "/r/start", "repo.status")
	stop := make(chan struct{})
	var readErr error
	var rd sync.WaitGroup
	rd.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			b, err := os.ReadFile(w.Path())
			if err != nil {
				readErr = err
				return
			}
			var d rundir.Presence
			if err := json.Unmarshal(b, &d); err != nil || d.SchemaVersion != 1 {
				readErr = fmt.Errorf("partial record %q: %v", b, err)
				return
			}
		}
	})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 50 {
				w.Record("c", "1", fmt.Sprintf("/r/%d-%d", g, i), "repo.status")
			}
		})
	}
	wg.Wait()
	close(stop)
	rd.Wait()
	if readErr != nil {
		t.Fatal(readErr)
	}
	if d := readDoc(t, w.Path()); len(d.Repos) != rundir.MaxPresenceRepos {
		t.Fatalf("%d repos, want %d", len(d.Repos), rundir.MaxPresenceRepos)
	}
}

func TestFromEnv(t *testing.T) {
	run := runDir(t)
	t.Setenv("FLUXGIT_RUN_DIR", run)
	t.Setenv(EnvDisabled, "1")
	if w := FromEnv(nil); w != nil {
		t.Fatal("FromEnv with the variable set returned a writer")
	}
	t.Setenv(EnvDisabled, "0")
	w := FromEnv(nil)
	if w == nil || w.Path() != filepath.Join(run, "presence", "mcp", fmt.Sprint(os.Getpid())+".json") {
		t.Fatalf("FromEnv path %q", w.Path())
	}
}
