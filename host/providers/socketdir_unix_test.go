//go:build unix

package providers

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// listenUnix makes a socket file at path; closing the listener without
// unlinking leaves the file behind, as a SIGKILLed provider does.
func staleSocket(t *testing.T, path string) {
	t.Helper()
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
}

func TestPrepareSocketDirRemovesOnlyStaleSockets(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	dir := SocketDir()
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, "plugin1")
	staleSocket(t, stale)
	live := filepath.Join(dir, "plugin2")
	l, err := net.Listen("unix", live)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	regular := filepath.Join(dir, "plugin3")
	if err := os.WriteFile(regular, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// A symlink to a stale socket elsewhere: neither it nor its target
	// may be touched.
	outside := filepath.Join(t.TempDir(), "s")
	staleSocket(t, outside)
	link := filepath.Join(dir, "plugin4")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(time.Minute) // everything above is older
	got, err := prepareSocketDir(start)
	if err != nil || got != dir {
		t.Fatalf("prepareSocketDir = %q, %v", got, err)
	}
	for _, tc := range []struct {
		path string
		kept bool
	}{{stale, false}, {live, true}, {regular, true}, {link, true}, {outside, true}} {
		_, err := os.Lstat(tc.path)
		if kept := err == nil; kept != tc.kept {
			t.Errorf("%s: kept=%v, want %v", filepath.Base(tc.path), kept, tc.kept)
		}
	}
	// A stale socket newer than the start is left for its own host.
	young := filepath.Join(dir, "plugin5")
	staleSocket(t, young)
	if _, err := prepareSocketDir(time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(young); err != nil {
		t.Errorf("socket created after the start removed")
	}
}

func TestPrepareSocketDirRefusesUnsafeDirectory(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  string
	}{
		{"world writable", func(t *testing.T, dir string) {
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, 0o777); err != nil {
				t.Fatal(err)
			}
		}, "writable by group or others"},
		{"group writable", func(t *testing.T, dir string) {
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, 0o770); err != nil {
				t.Fatal(err)
			}
		}, "writable by group or others"},
		{"symlink", func(t *testing.T, dir string) {
			if err := os.Symlink(t.TempDir(), dir); err != nil {
				t.Fatal(err)
			}
		}, "not a directory"},
		{"regular file", func(t *testing.T, dir string) {
			if err := os.WriteFile(dir, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "not a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("TMPDIR", t.TempDir())
			tc.setup(t, SocketDir())
			_, err := prepareSocketDir(time.Now())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
	t.Run("created private", func(t *testing.T) {
		t.Setenv("TMPDIR", t.TempDir())
		dir, err := prepareSocketDir(time.Now())
		if err != nil {
			t.Fatal(err)
		}
		fi, err := os.Lstat(dir)
		if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
			t.Fatalf("%v %v", fi.Mode(), err)
		}
	})
}
