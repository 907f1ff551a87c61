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
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/fluxgit/fluxgit/internal/pathwithin"
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
	// EnvList carries the host's list to the providers it starts (see
	// Export): a provider inherits the host's environment, but not what the
	// host learnt from its command line (--config).
	EnvList = "FLUXGIT_PROTECTED_PATHS"
)

// Path is one protected location.
type Path struct {
	// Label says what it holds, e.g. "gateway session secret"; it is shown
	// to the model in refusals, the path itself never is.
	Label string `json:"label"`
	// Path is absolute and, where it exists, canonical (symlinks resolved).
	Path string `json:"path"`
	// Dir is true when everything below Path is protected too.
	Dir bool `json:"dir,omitempty"`
}

// Contains reports the protected location that p (an absolute, canonical
// path) equals or lies below.
func Contains(list []Path, p string) (Path, bool) {
	for _, e := range list {
		if p == e.Path || e.Dir && pathwithin.Within(e.Path, p) {
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
	// MCP_JWT_SECRET is a value, not a file; MCP_JWT_PUBLIC_KEY is the one
	// key file host/httpauth reads (JWKS come over HTTP).
	add("JWT key", getenv(EnvJWTKey), false)
	return out
}

// Protected lists every location no read tool may open, from the process
// environment: the gateway's secret directory, the gateway's state in the
// run directory, the credential and policy files the environment names,
// and whatever the host that started this process passed in EnvList.
//
// Every repository tool of git-read asks for the list, so it is computed
// once per environment (each entry costs symlink resolution) and again
// only when one of the variables it is built from changes (tests set them
// between calls). The caller gets its own copy.
func Protected() []Path {
	key := envKey(os.Getenv)
	cache.Lock()
	defer cache.Unlock()
	if cache.list == nil || cache.key != key {
		cache.key, cache.list = key, protected(os.Getenv)
	}
	return append([]Path(nil), cache.list...)
}

var cache struct {
	sync.Mutex
	key  string
	list []Path
}

// inputs are the variables protected reads, directly or through
// rundir.Dir and os.UserCacheDir / os.UserConfigDir.
var inputs = []string{EnvSignKey, EnvAgentPolicy, EnvConfig, EnvJWTKey, EnvSecretDir, EnvRunDir, EnvList,
	"XDG_RUNTIME_DIR", "TMPDIR", "HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "LOCALAPPDATA", "APPDATA"}

func envKey(getenv func(string) string) string {
	var b strings.Builder
	for _, k := range inputs {
		b.WriteString(getenv(k))
		b.WriteByte(0)
	}
	return b.String()
}

func protected(getenv func(string) string) []Path {
	out := fromEnv(getenv)
	// Every directory the gateway may keep its secret in, and
	// <run dir>/gateway, which holds its journal and, before issue 22, held
	// its session secret: a run directory inside a work tree must not make
	// them readable.
	out = append(out, gatewayProtected(getenv)...)
	out = append(out, decodeList(getenv(EnvList))...)
	return dedupe(out)
}

// With returns list plus the file path under label (canonicalised); an
// empty path adds nothing. The host uses it for what it knows beyond the
// environment, such as --config.
func With(list []Path, label, path string) []Path {
	if strings.TrimSpace(path) == "" {
		return list
	}
	return dedupe(append(append([]Path(nil), list...), Path{Label: label, Path: Canonical(path)}))
}

// Export renders list as the value of EnvList, for the environment of the
// providers the host starts, so that they refuse exactly what it refuses.
func Export(list []Path) string {
	b, err := json.Marshal(list)
	if err != nil { // a slice of plain structs always marshals
		return ""
	}
	return string(b)
}

// decodeList parses an EnvList value. Entries that are not absolute are
// dropped; a malformed value adds nothing (the environment's own list
// still applies). The list only ever adds protection.
func decodeList(v string) []Path {
	if strings.TrimSpace(v) == "" {
		return nil
	}
	var in []Path
	if json.Unmarshal([]byte(v), &in) != nil {
		return nil
	}
	out := in[:0]
	for _, e := range in {
		if filepath.IsAbs(e.Path) {
			if e.Label == "" {
				e.Label = "protected file"
			}
			out = append(out, e)
		}
	}
	return out
}

func dedupe(list []Path) []Path {
	seen := map[Path]bool{}
	out := list[:0]
	for _, e := range list {
		if !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	return out
}
