package gittest

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// AssertNoPwned fails if a file named "pwned" exists under any of dirs, the
// tell-tale of a ref or revision parsed as --output=pwned.
func AssertNoPwned(t testing.TB, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		_ = filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err == nil && strings.Contains(filepath.Base(p), "pwned") && !strings.Contains(p, "/refs/") && !strings.Contains(p, "/logs/") {
				t.Errorf("file written by option injection: %s", p)
			}
			return nil
		})
	}
}
