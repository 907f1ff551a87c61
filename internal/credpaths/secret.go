package credpaths

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// SecretDir is the private per-user directory where the gateway keeps its
// session secret: $FLUXGIT_SECRET_DIR, else $XDG_RUNTIME_DIR/fluxgit, else
// the OS's per-user config directory's fluxgit/secret. It is never inside
// the run directory, which read tools (flux.*, presence) take as an
// argument. Callers must still check it with Reachable before writing.
func SecretDir() (string, error) {
	if d := strings.TrimSpace(os.Getenv(EnvSecretDir)); d != "" {
		return filepath.Abs(d)
	}
	if d := os.Getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(d) {
		return filepath.Join(d, "fluxgit"), nil
	}
	if d, err := os.UserConfigDir(); err == nil && filepath.IsAbs(d) {
		return filepath.Join(d, "fluxgit", "secret"), nil
	}
	return "", errors.New("no private per-user directory is known: set XDG_RUNTIME_DIR or " + EnvSecretDir + " to a directory only you can read, outside every git work tree")
}
