package rundir

import (
	"path/filepath"
	"runtime"
	"testing"
)

// TestDir pins the one resolver. plugins/gitread used to keep its own,
// which ignored a relative FLUXGIT_RUN_DIR (reading the default run
// directory while the host wrote to the relative one) and did not trim it;
// every reader and writer now resolves it here, made absolute against the
// working directory.
func TestDir(t *testing.T) {
	home := t.TempDir()
	cwd := t.TempDir()
	t.Chdir(cwd)
	tests := []struct {
		name, runDir, xdg, want string
	}{
		{"explicit", "/srv/fluxgit/run", "", "/srv/fluxgit/run"},
		{"explicit with spaces around", "  /srv/run  ", "", "/srv/run"},
		{"relative is made absolute (gitread ignored it)", "state/run", "", filepath.Join(cwd, "state", "run")},
		{"relative with dots is cleaned", "./a/../run", "", filepath.Join(cwd, "run")},
		{"blank falls back to the default", "   ", "", filepath.Join(home, ".local", "share", "FluxGit", "run")},
		{"relative XDG_DATA_HOME is ignored", "", "data", filepath.Join(home, ".local", "share", "FluxGit", "run")},
		{"XDG_DATA_HOME", "", "/data", "/data/FluxGit/run"},
		{"home default", "", "", filepath.Join(home, ".local", "share", "FluxGit", "run")},
	}
	if runtime.GOOS != "linux" {
		t.Skip("the defaults below are the Linux ones")
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(EnvRunDir, tt.runDir)
			t.Setenv("XDG_DATA_HOME", tt.xdg)
			t.Setenv("HOME", home)
			got, err := Dir()
			if err != nil || got != tt.want {
				t.Fatalf("Dir() = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
