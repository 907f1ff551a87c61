package gitexec

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// swapRepo pins the repository at dir, then moves it aside and puts a
// different repository (commit subject "impostor") at the same path.
func swapRepo(t *testing.T) (dir string, pin *Pin, ctx context.Context) {
	t.Helper()
	dir = newRepo(t)
	pin, err := OpenPin(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, set := WithPins(context.Background())
	set.Add(pin)
	t.Cleanup(set.Close)
	if err := pin.Watch("the git directory", filepath.Join(dir, ".git")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dir, dir+".away"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	gitT(t, dir, "init", "-q", "-b", "main")
	gitT(t, dir, "commit", "-q", "--allow-empty", "-m", "impostor")
	return dir, pin, ctx
}

// TestPinnedCallNeverReadsTheImpostor: after the swap, a call under the pin
// either reads the pinned repository (Linux: git runs on the open
// directory) or fails with ErrMoved; without the pin the same call reads
// the impostor, which is what the pin exists to stop.
func TestPinnedCallNeverReadsTheImpostor(t *testing.T) {
	dir, _, ctx := swapRepo(t)
	args := []string{"log", "-1", "--format=%s"}
	if out, err := Default.Run(context.Background(), dir, args...); err != nil || strings.TrimSpace(string(out)) != "impostor" {
		t.Fatalf("control: unpinned call read %q, %v", out, err)
	}
	out, err := Default.Run(ctx, dir, args...)
	switch {
	case errors.Is(err, ErrMoved):
		if out != nil {
			t.Fatalf("output not discarded: %q", out)
		}
	case PinsDirectory && err == nil && strings.TrimSpace(string(out)) == "first":
	default:
		t.Fatalf("pinned call: %q, %v; want the pinned repository or ErrMoved", out, err)
	}
}

// TestPinWatchDetectsReplacedGitDir: the git directory inside the pinned
// work tree replaced by another one fails the call on every OS.
func TestPinWatchDetectsReplacedGitDir(t *testing.T) {
	dir := newRepo(t)
	other := newRepo(t)
	gitT(t, other, "commit", "-q", "--allow-empty", "-m", "impostor")
	pin, err := OpenPin(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, set := WithPins(context.Background())
	set.Add(pin)
	defer set.Close()
	if err := pin.Watch("the git directory", filepath.Join(dir, ".git")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, ".git"), filepath.Join(dir, ".git.away")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(other, ".git"), filepath.Join(dir, ".git")); err != nil {
		t.Fatal(err)
	}
	out, err := Default.Run(ctx, dir, "log", "-1", "--format=%s")
	if !errors.Is(err, ErrMoved) || out != nil {
		t.Fatalf("got %q, %v; want ErrMoved and no output", out, err)
	}
	if !strings.Contains(err.Error(), "the git directory was moved or replaced") {
		t.Fatalf("message: %v", err)
	}
}

// TestPinRunsOnTheOpenDirectory: on Linux git runs on the pinned
// directory, so with nothing watched the call answers from it even though
// the path now names another repository.
func TestPinRunsOnTheOpenDirectory(t *testing.T) {
	if !PinsDirectory {
		t.Skip("git runs on the path on this OS")
	}
	dir := newRepo(t)
	pin, err := OpenPin(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, set := WithPins(context.Background())
	set.Add(pin)
	defer set.Close()
	if err := os.Rename(dir, dir+".away"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	gitT(t, dir, "init", "-q", "-b", "main")
	gitT(t, dir, "commit", "-q", "--allow-empty", "-m", "impostor")
	out, err := Default.Run(ctx, dir, "log", "-1", "--format=%s")
	if err != nil || strings.TrimSpace(string(out)) != "first" {
		t.Fatalf("pinned call read %q, %v; want the pinned repository's commit", out, err)
	}
	// rev-parse reports where the pinned directory is now.
	out, err = Default.Run(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil || strings.TrimSpace(string(out)) != dir+".away" {
		t.Fatalf("toplevel %q, %v", out, err)
	}
}

// TestPinGuardDetectsRenameAndBack: a rename in a guarded directory
// between the stamps taken before git starts and the check after it exits
// fails the call, even when the rename was undone.
func TestPinGuardDetectsRenameAndBack(t *testing.T) {
	dir := newRepo(t)
	pin, err := OpenPin(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer pin.Close()
	if err := pin.Guard(filepath.Dir(dir)); err != nil {
		t.Fatal(err)
	}
	run := pin.stampGuards(context.Background())
	if run.err != "" {
		t.Fatal(run.err)
	}
	var quiet error
	pinCheck(run, []string{"git"}, &quiet)
	if quiet != nil {
		t.Fatalf("nothing changed, yet: %v", quiet)
	}
	run = pin.stampGuards(context.Background())
	if err := os.Rename(dir, dir+".away"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dir+".away", dir); err != nil {
		t.Fatal(err)
	}
	var moved error
	pinCheck(run, []string{"git"}, &moved)
	if !errors.Is(moved, ErrMoved) {
		t.Fatalf("rename and back not detected: %v", moved)
	}
}

// TestCallsWithoutPinsAreUnchanged: a path with no pin in the context runs
// exactly as before.
func TestCallsWithoutPinsAreUnchanged(t *testing.T) {
	dir := newRepo(t)
	ctx, set := WithPins(context.Background())
	defer set.Close()
	out, err := Default.Run(ctx, dir, "log", "-1", "--format=%s")
	if err != nil || strings.TrimSpace(string(out)) != "first" {
		t.Fatalf("%q, %v", out, err)
	}
}
