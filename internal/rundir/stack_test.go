package rundir

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStack writes and reads a restore stack: the newest point is copied
// to the latest record, the stack is capped at MaxStackPoints, a newer
// version and a symbolic link are refused, and an empty stack removes both
// files.
func TestStack(t *testing.T) {
	dir := t.TempDir()
	pts := make([]Record, MaxStackPoints+3)
	for i := range pts {
		pts[i] = Record{Operation: fmt.Sprintf("op%d", i)}
	}
	if err := WriteStack(dir, "r1", Stack{Points: pts}); err != nil {
		t.Fatal(err)
	}
	st, err := ReadStack(dir, "r1", nil)
	if err != nil || st.Version != StackVersion || len(st.Points) != MaxStackPoints || st.Points[0].Operation != "op3" {
		t.Fatalf("%+v %v", st, err)
	}
	if rec, err := ReadRecord(dir, "r1", nil); err != nil || rec.Operation != fmt.Sprintf("op%d", MaxStackPoints+2) {
		t.Fatalf("latest record %+v %v", rec, err)
	}
	st.Points[len(st.Points)-1].Undone = true
	if st.Cursor() != len(st.Points)-2 {
		t.Fatalf("cursor %d", st.Cursor())
	}

	tests := []struct {
		name    string
		content func(path string) error
		errSub  string
	}{
		{"newer version", func(p string) error { return os.WriteFile(p, []byte(`{"version":2,"points":[]}`), 0o600) }, "version 2"},
		{"not JSON", func(p string) error { return os.WriteFile(p, []byte(`{`), 0o600) }, "not valid JSON"},
		{"symbolic link", func(p string) error {
			target := filepath.Join(filepath.Dir(p), "elsewhere.json")
			b, _ := json.Marshal(Stack{Version: 1})
			if err := os.WriteFile(target, b, 0o600); err != nil {
				return err
			}
			return os.Symlink(target, p)
		}, ErrNotRegular.Error()},
		{"too large", func(p string) error { return os.WriteFile(p, []byte(strings.Repeat(" ", MaxStackBytes+1)), 0o600) }, ErrTooLarge.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := t.TempDir()
			if err := os.MkdirAll(filepath.Join(d, RebaseDir), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := tt.content(filepath.Join(d, RebaseDir, StackName("r"))); err != nil {
				t.Skip(err)
			}
			if _, err := ReadStack(d, "r", nil); err == nil || !strings.Contains(err.Error(), tt.errSub) {
				t.Fatalf("want %q, got %v", tt.errSub, err)
			}
		})
	}

	if err := WriteStack(dir, "r1", Stack{}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{StackName("r1"), "r1.json"} {
		if _, err := os.Lstat(filepath.Join(dir, RebaseDir, n)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s not removed: %v", n, err)
		}
	}
	if _, err := ReadStack(dir, "../x", nil); !errors.Is(err, ErrBadID) {
		t.Fatalf("bad id: %v", err)
	}
}
