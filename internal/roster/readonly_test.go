package roster

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// ActiveForWorkTree finds the check-ins of every workspace naming the
// work tree, and only those, without creating or changing anything.
func TestActiveForWorkTree(t *testing.T) {
	ctx := context.Background()
	base := realTempDir(t)
	root := filepath.Join(base, "webshop")
	if err := os.MkdirAll(filepath.Join(root, "src"), 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(base, "state")

	// No roster yet: nothing found, nothing created.
	got, err := ActiveForWorkTree(ctx, state, root)
	if err != nil || got != nil {
		t.Fatalf("missing roster: %v, %v", got, err)
	}
	if _, err := os.Lstat(state); !os.IsNotExist(err) {
		t.Fatalf("reading a missing roster created %s: %v", state, err)
	}

	s := openStore(t, state, Options{})
	checkIns := []struct {
		ws, gist string
		files    []string
		want     bool
	}{
		{root, "codex: fix the parser", []string{"src/parse.go"}, true},
		{filepath.Join(root, "src"), "a subdirectory", nil, true},
		{filepath.Join(link, "src"), "through a link", nil, true},
		{"webshop", "named after the project", nil, true},
		{filepath.Join(base, "other"), "another repository", nil, false},
		{root + "-fork", "a sibling with the same prefix", nil, false},
		{"shop", "another name", nil, false},
	}
	var want []string
	for _, c := range checkIns {
		res, err := s.CheckIn(ctx, CheckInInput{Workspace: c.ws, Gist: c.gist, Files: c.files, HasFiles: c.files != nil})
		if err != nil {
			t.Fatal(err)
		}
		if c.want {
			want = append(want, res.Session.WorkerID)
		}
	}
	before, err := os.Stat(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	got, err = ActiveForWorkTree(ctx, state, root)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range got {
		ids = append(ids, r.WorkerID)
		if r.Gist == "codex: fix the parser" && (!slices.Equal(r.Files, []string{"src/parse.go"}) || r.Workspace != root) {
			t.Fatalf("row %+v lost its files or workspace", r)
		}
	}
	slices.Sort(ids)
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		t.Fatalf("found %v, want %v", ids, want)
	}
	after, err := os.Stat(s.Path())
	if err != nil || !after.ModTime().Equal(before.ModTime()) || after.Size() != before.Size() {
		t.Fatalf("the read changed the roster: %v", err)
	}
}

// A state directory others may write is not trusted.
func TestActiveForWorkTreeUnsafeDir(t *testing.T) {
	state := realTempDir(t)
	if err := os.Chmod(state, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := ActiveForWorkTree(context.Background(), state, "/r"); err == nil {
		t.Fatal("a world-writable state directory was read")
	}
}

// Reading a roster no process has open creates no file beside it, and
// reading one that is open (its -shm index exists) finds the same rows.
func TestActiveForWorkTreeWritesNothing(t *testing.T) {
	ctx := context.Background()
	state, root := realTempDir(t), realTempDir(t)
	s := openStore(t, state, Options{})
	if _, err := s.CheckIn(ctx, CheckInInput{Workspace: root, Gist: "g", Files: []string{"a.go"}, HasFiles: true}); err != nil {
		t.Fatal(err)
	}
	open, err := ActiveForWorkTree(ctx, state, root)
	if err != nil || len(open) != 1 {
		t.Fatalf("roster open elsewhere: %v, %v", open, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	names := func() []string {
		es, _ := os.ReadDir(state)
		var out []string
		for _, e := range es {
			out = append(out, e.Name())
		}
		return out
	}
	before := names()
	closed, err := ActiveForWorkTree(ctx, state, root)
	if err != nil || len(closed) != 1 || closed[0].WorkerID != open[0].WorkerID {
		t.Fatalf("roster closed: %v, %v", closed, err)
	}
	if after := names(); !slices.Equal(before, after) {
		t.Fatalf("reading created files: %v -> %v", before, after)
	}
}
