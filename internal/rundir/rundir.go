// Package rundir locates the FluxGit run directory, shared by the host
// (audit ledger, presence record) and the providers that read what it
// holds (agent detection reads other processes' presence records).
package rundir

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// EnvRunDir overrides the run directory.
const EnvRunDir = "FLUXGIT_RUN_DIR"

// Dir is the FluxGit run directory: $FLUXGIT_RUN_DIR (made absolute), else
// the platform default — %LOCALAPPDATA%\FluxGit\run on Windows,
// ~/Library/Application Support/FluxGit/run on macOS,
// $XDG_DATA_HOME/FluxGit/run (default ~/.local/share/FluxGit/run)
// elsewhere.
func Dir() (string, error) {
	if d := strings.TrimSpace(os.Getenv(EnvRunDir)); d != "" {
		return filepath.Abs(d)
	}
	switch runtime.GOOS {
	case "windows":
		if d := os.Getenv("LOCALAPPDATA"); filepath.IsAbs(d) {
			return filepath.Join(d, "FluxGit", "run"), nil
		}
		return "", errors.New("LOCALAPPDATA is not set")
	case "darwin", "ios":
		home, err := home()
		if err != nil {
			return "", err
		}
		return filepath.Join(home, "Library", "Application Support", "FluxGit", "run"), nil
	default:
		if d := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(d) {
			return filepath.Join(d, "FluxGit", "run"), nil
		}
		home, err := home()
		if err != nil {
			return "", err
		}
		return filepath.Join(home, ".local", "share", "FluxGit", "run"), nil
	}
}

func home() (string, error) {
	h, err := os.UserHomeDir()
	if err != nil || !filepath.IsAbs(h) {
		return "", errors.New("the home directory is unknown")
	}
	return h, nil
}
