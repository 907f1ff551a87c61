//go:build unix

package rundir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestNoSymlinkFollowed: neither the readers nor the writers go through a
// symbolic link below the run directory. The gateway's copies used to
// follow one on both sides (os.ReadFile of the record and the registry,
// MkdirAll then a write through a linked rebase/ or repos/); both ends now
// refuse, as the flux.* tools did.
func TestNoSymlinkFollowed(t *testing.T) {
	const marker = "OUTSIDE-MARKER"
	outside := realTemp(t)
	writeFile(t, filepath.Join(outside, "web.json"), `{"operation":"`+marker+`"}`)
	writeFile(t, filepath.Join(outside, RebaseDir, "web.json"), `{"operation":"`+marker+`"}`)
	writeFile(t, filepath.Join(outside, ReposDir, "web.path"), outside)
	writeFile(t, filepath.Join(outside, "web.path"), outside)

	reads := []struct {
		name  string
		build func(t *testing.T, run string)
		want  error
	}{
		{"record is a link out", func(t *testing.T, run string) {
			link(t, filepath.Join(outside, "web.json"), RecordPath(run, "web"))
		}, ErrNotRegular},
		{"record is a link inside the run dir", func(t *testing.T, run string) {
			writeFile(t, filepath.Join(run, "elsewhere.json"), `{}`)
			link(t, filepath.Join(run, "elsewhere.json"), RecordPath(run, "web"))
		}, ErrNotRegular},
		{"rebase/ is a link out", func(t *testing.T, run string) {
			link(t, filepath.Join(outside, RebaseDir), filepath.Join(run, RebaseDir))
		}, ErrLinkedDir},
		{"record is a FIFO", func(t *testing.T, run string) {
			_ = os.MkdirAll(filepath.Join(run, RebaseDir), 0o700)
			if err := syscall.Mkfifo(RecordPath(run, "web"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, ErrNotRegular},
	}
	for _, tt := range reads {
		t.Run("read: "+tt.name, func(t *testing.T) {
			run := realTemp(t)
			tt.build(t, run)
			b, err := ReadRecordFile(run, "web", nil)
			if !errors.Is(err, tt.want) || strings.Contains(string(b), marker) {
				t.Fatalf("err %v (read %q), want %v", err, b, tt.want)
			}
		})
	}

	t.Run("registry: repos/ is a link out", func(t *testing.T) {
		run := realTemp(t)
		link(t, filepath.Join(outside, ReposDir), filepath.Join(run, ReposDir))
		if got, err := ReadRegistry(run, nil); !errors.Is(err, ErrLinkedDir) || len(got) != 0 {
			t.Fatalf("entries %v err %v, want ErrLinkedDir", got, err)
		}
		if _, err := Register(run, outside); err == nil {
			t.Fatal("Register wrote through a linked repos/")
		}
	})
	t.Run("registry: an entry is a link", func(t *testing.T) {
		run := realTemp(t)
		_ = os.MkdirAll(filepath.Join(run, ReposDir), 0o700)
		link(t, filepath.Join(outside, "web.path"), filepath.Join(run, ReposDir, "web.path"))
		if got, err := ReadRegistry(run, nil); err != nil || len(got) != 0 {
			t.Fatalf("entries %v err %v, want none", got, err)
		}
	})

	writes := []struct {
		name  string
		dir   string
		write func(run string) error
	}{
		{"record", RebaseDir, func(run string) error { return WriteRecord(run, "web", Record{Operation: "x"}) }},
		{"patch", RebaseDir, func(run string) error { return WritePatch(run, "web", []byte("x")) }},
		{"registry", ReposDir, func(run string) error { _, err := Register(run, outside); return err }},
		{"presence", "presence", func(run string) error {
			return WritePresence(run, Presence{SchemaVersion: 1, PID: 9})
		}},
	}
	for _, tt := range writes {
		t.Run("write: "+tt.name+" through a linked "+tt.dir+"/", func(t *testing.T) {
			run, target := realTemp(t), realTemp(t)
			link(t, target, filepath.Join(run, tt.dir))
			if err := tt.write(run); err == nil {
				t.Fatal("written through the link")
			}
			if des, _ := os.ReadDir(target); len(des) != 0 {
				t.Fatalf("the link's target got %v", des)
			}
		})
		t.Run("write: "+tt.name+" control", func(t *testing.T) {
			if err := tt.write(realTemp(t)); err != nil {
				t.Fatal(err)
			}
		})
	}

	t.Run("write replaces a link at the name, not its target", func(t *testing.T) {
		run := realTemp(t)
		_ = os.MkdirAll(filepath.Join(run, RebaseDir), 0o700)
		link(t, filepath.Join(outside, "web.json"), RecordPath(run, "web"))
		if err := WriteRecord(run, "web", Record{Operation: "new"}); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(filepath.Join(outside, "web.json")); !strings.Contains(string(b), marker) {
			t.Fatalf("the link's target was overwritten: %s", b)
		}
		if fi, _ := os.Lstat(RecordPath(run, "web")); !fi.Mode().IsRegular() {
			t.Fatal("the record is still a link")
		}
	})
}

func link(t *testing.T, target, name string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, name); err != nil {
		t.Fatal(err)
	}
}
