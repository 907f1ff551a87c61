package tests

import (
	"os"
	"testing"
)

// symlink replaces link with a symbolic link to target. It is shared by
// Unix-only and portable tests, so it lives in a file without build tags.
func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.RemoveAll(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
