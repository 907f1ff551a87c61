package credpaths

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// SecretDirs lists, best first, the private per-user directories where the
// gateway may keep its session secret:
//
//   - $FLUXGIT_SECRET_DIR alone when it is set (the person chose; tests
//     point it at a private temporary directory);
//   - else $XDG_RUNTIME_DIR/fluxgit (Linux and the BSDs under systemd or
//     elogind: a per-user tmpfs, mode 0700, emptied at logout);
//   - on macOS, $TMPDIR/fluxgit-secret (the per-user private temporary
//     directory, outside $HOME);
//   - then the OS's per-user cache directory's fluxgit/secret
//     (~/.cache, ~/Library/Caches, %LOCALAPPDATA%);
//   - then the OS's per-user config directory's fluxgit/secret
//     (~/.config, ~/Library/Application Support, %APPDATA%).
//
// None of them is the run directory: read tools take a run directory as
// an argument, and the run directory may be inside a project. Which one
// the gateway uses is ChooseSecretDir's decision; every one of them is
// protected (Protected) whichever is chosen.
func SecretDirs() []string { return secretDirs(os.Getenv) }

func secretDirs(getenv func(string) string) []string {
	if d := strings.TrimSpace(getenv(EnvSecretDir)); d != "" {
		if a, err := filepath.Abs(d); err == nil {
			return []string{a}
		}
		return nil
	}
	var out []string
	if d := getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(d) && runtime.GOOS != "windows" {
		out = append(out, filepath.Join(d, "fluxgit"))
	}
	// macOS gives every user a private temporary directory (mode 0700,
	// under /var/folders, outside $HOME): the best place for a secret
	// that lives as long as one gateway. /tmp elsewhere is shared.
	if d := getenv("TMPDIR"); runtime.GOOS == "darwin" && filepath.IsAbs(d) {
		out = append(out, filepath.Join(d, "fluxgit-secret"))
	}
	if d, err := os.UserCacheDir(); err == nil && filepath.IsAbs(d) {
		out = append(out, filepath.Join(d, "fluxgit", "secret"))
	}
	if d, err := os.UserConfigDir(); err == nil && filepath.IsAbs(d) {
		out = append(out, filepath.Join(d, "fluxgit", "secret"))
	}
	return out
}

// SecretDir is the first of SecretDirs, whether or not a read tool could
// reach it; the gateway uses ChooseSecretDir instead.
func SecretDir() (string, error) {
	if ds := SecretDirs(); len(ds) > 0 {
		return ds[0], nil
	}
	return "", errors.New("no private per-user directory is known: " + secretDirFix)
}

// secretDirFix is the sentence every refusal about the secret's location
// ends with.
const secretDirFix = "set " + EnvSecretDir + " (or XDG_RUNTIME_DIR) to a directory only you can read, " +
	"outside every directory in FLUXGIT_MCP_ALLOWED_ROOTS and outside every git work tree (for example: mkdir -m 700 /tmp/fluxgit-$USER)"

// SecretDirError is ChooseSecretDir's refusal: no candidate qualifies.
type SecretDirError struct {
	// Reasons names each candidate and why a read tool reaches it; empty
	// when no per-user directory is known at all.
	Reasons []string
}

// Detail says what is wrong, without the fix.
func (e *SecretDirError) Detail() string {
	if len(e.Reasons) == 0 {
		return "the gateway has nowhere private to keep its session secret: no per-user directory is known"
	}
	return "the gateway has nowhere private to keep its session secret: an agent's read tools could open every candidate (" +
		strings.Join(e.Reasons, "; ") + ")"
}

// Fix says how to repair it.
func (e *SecretDirError) Fix() string { return secretDirFix }

func (e *SecretDirError) Error() string { return e.Detail() + "; " + e.Fix() }

// ChooseSecretDir returns the first of SecretDirs that no read tool can
// reach (Reachable with roots). When none qualifies, the error (a
// *SecretDirError) names each candidate, why it is reachable, and how to
// fix it.
func ChooseSecretDir(roots []string) (string, error) {
	e := &SecretDirError{}
	for _, d := range SecretDirs() {
		w, reach := Reachable(d, roots)
		if !reach {
			return d, nil
		}
		e.Reasons = append(e.Reasons, d+" is "+w)
	}
	return "", e
}

// SessionFileName is the name of the session file of the gateway running
// on runDir, inside the secret directory. Several gateways (one per run
// directory) can run at once; the name is keyed by the canonical run
// directory so that `fluxgit gateway list|approve --run-dir D` finds the
// one serving D, and says nothing about D itself.
func SessionFileName(runDir string) string {
	sum := sha256.Sum256([]byte(Canonical(runDir)))
	return "gateway-" + hex.EncodeToString(sum[:8]) + ".json"
}
