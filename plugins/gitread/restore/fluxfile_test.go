//go:build unix

package restore

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/fluxgit/fluxgit/internal/rundir"
)

// TestRunDirFilesNotFollowedOut: a restore point record or registry entry
// that is (or sits below) a symbolic link leading out of the run directory,
// a FIFO or an oversized file is refused; the outside content never appears
// and no message names the outside path. The control case proves the same
// record is read when it is a plain file.
func TestRunDirFilesNotFollowedOut(t *testing.T) {
	repo := newRepo(t)
	fxNoGateway(t)
	t.Setenv("FLUXGIT_GATEWAY_ADDR", "127.0.0.1:4000")
	const marker = "OUTSIDE-MARKER-7f3a"
	record, _ := json.Marshal(map[string]any{"operation": marker, "created_at": 1700000100})
	outside := tempDir(t) // stands for a directory nobody may read through the run dir
	write(t, outside, "rebase/web.json", string(record))
	write(t, outside, "web.json", string(record))
	write(t, outside, "repos/web.path", repo+"\n")

	tests := []struct {
		name    string
		build   func(t *testing.T, run string)
		wantErr string // "" = read succeeds and shows the marker (the control)
	}{
		{"control: plain record", func(t *testing.T, run string) {
			write(t, run, "rebase/web.json", string(record))
		}, ""},
		{"record is a symlink out", func(t *testing.T, run string) {
			mustMkdir(t, filepath.Join(run, "rebase"))
			mustSymlink(t, filepath.Join(outside, "web.json"), filepath.Join(run, "rebase", "web.json"))
		}, "not a regular file"},
		{"rebase dir is a symlink out", func(t *testing.T, run string) {
			mustSymlink(t, filepath.Join(outside, "rebase"), filepath.Join(run, "rebase"))
		}, "symbolic link or not a directory"},
		{"record is a FIFO", func(t *testing.T, run string) {
			mustMkdir(t, filepath.Join(run, "rebase"))
			if err := syscall.Mkfifo(filepath.Join(run, "rebase", "web.json"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file"},
		{"record too large", func(t *testing.T, run string) {
			write(t, run, "rebase/web.json", `{"operation":"`+strings.Repeat("x", rundir.MaxRecordBytes)+`"}`)
		}, "file too large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := tempDir(t)
			tt.build(t, run)
			res, err := call(t, "flux.latestRestorePoint", map[string]any{"repoPath": repo, "repoId": "web", "runDir": run})
			if err != nil {
				t.Fatal(err)
			}
			text := string(res.Data)
			if res.Error != nil {
				text += res.Error.Message + string(res.Error.Data)
			}
			if tt.wantErr == "" {
				if res.Error != nil || !strings.Contains(text, marker) {
					t.Fatalf("control: record not read: %s", text)
				}
				return
			}
			if res.Error == nil || !strings.Contains(text, tt.wantErr) {
				t.Fatalf("want a refusal saying %q, got %s", tt.wantErr, text)
			}
			if strings.Contains(text, marker) || strings.Contains(text, outside) {
				t.Fatalf("outside content or path leaked: %s", text)
			}
		})
	}

	// Registry: repos/ as a symlink out of the run directory is not read,
	// so the repository is not found by path and no record is looked up.
	run := tempDir(t)
	mustSymlink(t, filepath.Join(outside, "repos"), filepath.Join(run, "repos"))
	write(t, run, "rebase/web.json", string(record))
	if id := registryID(run, repo); id != "" {
		t.Fatalf("registry followed a symlinked repos/ out of the run dir: id %q", id)
	}
	// Control: the same entry as a plain file is found.
	run2 := tempDir(t)
	write(t, run2, "repos/web.path", repo+"\n")
	if id := registryID(run2, repo); id != "web" {
		t.Fatalf("control: registry entry not found: %q", id)
	}
}

func mustMkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// TestRunDirResolvedLikeTheHost pins where the flux.* and fleet.* tools look
// for the run directory: the resolver the host and the gateway use
// (internal/rundir). The provider's own copy used to ignore a relative
// FLUXGIT_RUN_DIR and read the default run directory instead, so it never
// saw the registry and records written to the relative one.
func TestRunDirResolvedLikeTheHost(t *testing.T) {
	repo := newRepo(t)
	cwd := tempDir(t)
	t.Chdir(cwd)
	home := tempDir(t)
	t.Setenv("HOME", home)
	t.Setenv("XDG_DATA_HOME", "")
	write(t, cwd, "state/run/repos/web.path", repo+"\n")
	write(t, home, ".local/share/FluxGit/run/repos/default.path", repo+"\n")
	tests := []struct {
		name, env, wantDir, wantID string
	}{
		{"relative (was: ignored, the default read)", "state/run", filepath.Join(cwd, "state", "run"), "web"},
		{"absolute with spaces around (was: not trimmed)", "  " + filepath.Join(cwd, "state", "run") + " ", filepath.Join(cwd, "state", "run"), "web"},
		{"unset: the default", "", filepath.Join(home, ".local", "share", "FluxGit", "run"), "default"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("FLUXGIT_RUN_DIR", tt.env)
			dir, err := runDirFor("")
			if err != nil || dir != tt.wantDir {
				t.Fatalf("repo.RunDirFor = %q, %v; want %q", dir, err, tt.wantDir)
			}
			if id := registryID(dir, repo); id != tt.wantID {
				t.Fatalf("registry id %q, want %q", id, tt.wantID)
			}
		})
	}
}

// TestRestorePointOperationEmpty: the record's operation is one string in
// internal/rundir; a record without one (null, missing, or "") reports
// operation null. The provider's copy used to report "" for an explicit
// empty string and null for the others.
func TestRestorePointOperationEmpty(t *testing.T) {
	repo := newRepo(t)
	fxNoGateway(t)
	t.Setenv("FLUXGIT_GATEWAY_ADDR", "127.0.0.1:4000")
	tests := []struct{ name, record, want string }{
		{"string", `{"operation":"merge","created_at":1}`, `"operation":"merge"`},
		{"empty string (was \"\")", `{"operation":"","created_at":1}`, `"operation":null`},
		{"null", `{"operation":null,"created_at":1}`, `"operation":null`},
		{"missing", `{"created_at":1}`, `"operation":null`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := tempDir(t)
			write(t, run, "rebase/web.json", tt.record)
			res, err := call(t, "flux.latestRestorePoint", map[string]any{"repoPath": repo, "repoId": "web", "runDir": run})
			if err != nil || res.Error != nil {
				t.Fatalf("%v %+v", err, res.Error)
			}
			if !strings.Contains(string(res.Data), tt.want) || !strings.Contains(string(res.Data), `"id":"restore:web:1"`) {
				t.Fatalf("want %s and the id in %s", tt.want, res.Data)
			}
		})
	}
}
