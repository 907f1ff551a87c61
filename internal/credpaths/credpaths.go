// Package credpaths names the files that hold a credential of the person's
// or decide what an agent may do, and tells whether a path lies among them
// or where fluxgit's read tools could reach it.
//
// Why a package of its own: the host, the git-read provider, the
// agents-presence provider, the gateway and `fluxgit doctor` must agree on
// one list. If the gateway kept its session secret where `file.read` can
// open it, an agent could read the secret and approve its own proposal
// (issue 22, finding 1; CONTRACT §10 "Credentials are out of the agent's
// reach"). Providers import only the SDK and internal/, so the list lives
// here and is computed from the environment every process inherits.
package credpaths

import (
	"os"
	"path/filepath"
	"strings"
)

// Environment variables whose values name a protected file or directory.
const (
	EnvRunDir      = "FLUXGIT_RUN_DIR"
	EnvSignKey     = "FLUXGIT_MCP_AUDIT_SIGN_KEY"
	EnvAgentPolicy = "FLUXGIT_MCP_AGENT_POLICY"
	EnvConfig      = "FLUXGIT_CONFIG"
	EnvJWTKey      = "MCP_JWT_PUBLIC_KEY"
	// EnvSecretDir overrides where the gateway keeps its session secret
	// (tests point it at a private temporary directory).
	EnvSecretDir = "FLUXGIT_SECRET_DIR"
)

// Path is one protected location.
type Path struct {
	// Label says what it holds, e.g. "gateway session secret"; it is shown
	// to the model in refusals, the path itself never is.
	Label string
	// Path is absolute and, where it exists, canonical (symlinks resolved).
	Path string
	// Dir is true when everything below Path is protected too.
	Dir bool
}

// Contains reports the protected location that p (an absolute, canonical
// path) equals or lies below.
func Contains(list []Path, p string) (Path, bool) {
	for _, e := range list {
		if p == e.Path || e.Dir && within(e.Path, p) {
			return e, true
		}
	}
	return Path{}, false
}

// Canonical makes p absolute and resolves its symlinks; a path that does
// not exist yet keeps its resolved parent and its own name.
func Canonical(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	if r, err := filepath.EvalSymlinks(a); err == nil {
		return r
	}
	if r, err := filepath.EvalSymlinks(filepath.Dir(a)); err == nil {
		return filepath.Join(r, filepath.Base(a))
	}
	return a
}

func within(root, p string) bool {
	if root == string(filepath.Separator) {
		return strings.HasPrefix(p, root)
	}
	return strings.HasPrefix(p, root+string(filepath.Separator))
}

// fromEnv lists the protected files named by variables that are set.
func fromEnv(getenv func(string) string) []Path {
	var out []Path
	add := func(label, v string, dir bool) {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, Path{Label: label, Path: Canonical(v), Dir: dir})
		}
	}
	add("audit signing key", getenv(EnvSignKey), false)
	add("agent policy", getenv(EnvAgentPolicy), false)
	add("host configuration", getenv(EnvConfig), false)
	add("JWT key", getenv(EnvJWTKey), false)
	return out
}

// Protected lists every location no read tool may open, from the process
// environment: the gateway's secret directory, the gateway's state in the
// run directory, and the credential and policy files the environment names.
func Protected() []Path { return protected(os.Getenv) }

func protected(getenv func(string) string) []Path {
	out := fromEnv(getenv)
	if d, err := SecretDir(); err == nil {
		out = append(out, Path{Label: "gateway session secret", Path: Canonical(d), Dir: true})
	}
	out = append(out, gatewayProtected(getenv)...)
	return out
}
