//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package privdir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestCheck(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mk := func(t *testing.T, mode os.FileMode) string {
		d, err := os.MkdirTemp(base, "d")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, mode); err != nil {
			t.Fatal(err)
		}
		return d
	}
	private := Options{Label: "audit directory", Forbidden: 0o077}
	shared := Options{Label: "roster state directory", Forbidden: 0o022}
	tests := []struct {
		name    string
		dir     func(t *testing.T) string
		opts    Options
		problem Problem // "" means the check passes
		fix     string
	}{
		{"private 0700", func(t *testing.T) string { return mk(t, 0o700) }, private, "", ""},
		{"readable 0755 where reading is allowed", func(t *testing.T) string { return mk(t, 0o755) }, shared, "", ""},
		{"readable 0755 where only the owner may enter", func(t *testing.T) string { return mk(t, 0o755) }, private, Permissive, "chmod 700"},
		{"world-writable", func(t *testing.T) string { return mk(t, 0o777) }, shared, Permissive, "chmod go-w"},
		{"group-writable", func(t *testing.T) string { return mk(t, 0o770) }, shared, Permissive, "chmod go-w"},
		{"the directory is a symlink", func(t *testing.T) string {
			link := filepath.Join(mk(t, 0o700), "link")
			if err := os.Symlink(mk(t, 0o700), link); err != nil {
				t.Fatal(err)
			}
			return link
		}, shared, Symlink, "real path"},
		{"a symlink on the way", func(t *testing.T) string {
			link := filepath.Join(mk(t, 0o700), "link")
			target := mk(t, 0o700)
			if err := os.Mkdir(filepath.Join(target, "state"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, link); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(link, "state")
		}, shared, Symlink, "real path"},
		{"a file", func(t *testing.T) string {
			f := filepath.Join(mk(t, 0o700), "f")
			if err := os.WriteFile(f, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			return f
		}, shared, NotDirectory, "Move"},
		{"relative", func(*testing.T) string { return "rel/dir" }, shared, NotAbsolute, "absolute"},
		{"missing, not created", func(t *testing.T) string { return filepath.Join(mk(t, 0o700), "a", "b") }, shared, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tt.dir(t)
			err := Check(dir, tt.opts)
			var pe *Error
			if tt.problem == "" {
				if err != nil {
					t.Fatalf("Check(%s) = %v, want nil", dir, err)
				}
				return
			}
			if !errors.As(err, &pe) || pe.Problem != tt.problem || !strings.Contains(pe.Fix(), tt.fix) || !strings.Contains(err.Error(), pe.Path) {
				t.Fatalf("Check(%s) = %v (fix %q), want %s with a fix mentioning %q", dir, err, fixOf(pe), tt.problem, tt.fix)
			}
		})
	}
}

func fixOf(e *Error) string {
	if e == nil {
		return ""
	}
	return e.Fix()
}

// Created components are 0700 whatever the umask, and a second Check of
// the created tree passes.
func TestCheckCreates(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	old := syscall.Umask(0o002)
	defer syscall.Umask(old)
	dir := filepath.Join(base, "x", "y")
	if err := Check(dir, Options{Label: "test", Create: true}); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Join(base, "x"), dir} {
		st, err := os.Stat(d)
		if err != nil || st.Mode().Perm() != 0o700 {
			t.Fatalf("%s: mode %v, err %v; want 0700", d, st.Mode().Perm(), err)
		}
	}
	if err := Check(dir, Options{Label: "test"}); err != nil {
		t.Fatal(err)
	}
}

// A directory of another user is refused even when its mode is private.
func TestCheckForeignOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a directory away")
	}
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(base, "theirs")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	var pe *Error
	if err := Check(dir, Options{Label: "test"}); !errors.As(err, &pe) || pe.Problem != ForeignOwner || pe.UID != 65534 {
		t.Fatalf("Check = %v, want ForeignOwner uid 65534", err)
	}
}
