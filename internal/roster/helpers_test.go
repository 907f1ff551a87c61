package roster

import (
	"context"
	"path/filepath"
	"testing"
)

// realTempDir is t.TempDir with symlinks resolved.
func realTempDir(t testing.TB) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func openStore(t testing.TB, dir string, opts Options) *SQLite {
	t.Helper()
	s, err := Open(context.Background(), dir, opts)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}
