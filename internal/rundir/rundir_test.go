package rundir

import (
	"path/filepath"
	"runtime"
	"testing"
)

func TestDir(t *testing.T) {
	home := t.TempDir()
	tests := []struct {
		name, runDir, xdg, want string
	}{
		{"explicit", "/srv/fluxgit/run", "", "/srv/fluxgit/run"},
		{"explicit with spaces around", "  /srv/run  ", "", "/srv/run"},
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
