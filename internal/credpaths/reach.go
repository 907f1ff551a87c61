package credpaths

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fluxgit/fluxgit/internal/pathwithin"
	"github.com/fluxgit/fluxgit/internal/rundir"
)

// Reachable reports whether fluxgit's read tools could open path, and why:
// "inside allowed root R" or "inside git work tree W".
//
// The decision (docs/security.md, "Threat model"):
//   - A path inside one of roots (FLUXGIT_MCP_ALLOWED_ROOTS, canonical
//     absolute directories; callers parse the variable, host/repopath.Parse
//     in the host and doctor) is reachable: repository paths may name any
//     directory there, and a work tree can appear there at any time.
//   - A path inside any git work tree is reachable, wherever it is: walking
//     up from the path, a directory holding a `.git` file or directory is
//     a work tree (`file.read {"worktree":true}` reads its files), and so
//     is everything below it, `.git` included. This holds with roots set
//     too, so a check made without the server's roots still catches the
//     common case.
//   - With no roots configured, every absolute path is allowed as a
//     repository path — the whole machine is "inside the roots" — but the
//     read tools still open files only through a git work tree (or a
//     revision, which never holds an untracked state file). So a location
//     outside every work tree is unreachable; what remains, the run
//     directory the runDir-taking tools read, is read only in the formats
//     those tools own (restore records, the registry), never the session
//     file, and the protected list (Protected) is refused by every read
//     tool in any case.
//
// Both path as given (made absolute) and its canonical form are checked,
// so a symbolic link on the way neither hides nor invents a work tree.
func Reachable(path string, roots []string) (why string, reachable bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = filepath.Clean(path)
	}
	cands := []string{abs}
	if c := resolveExisting(abs); c != abs {
		cands = append(cands, c)
	}
	for _, p := range cands {
		for _, r := range roots {
			if r == "" {
				continue
			}
			if pathwithin.Within(r, p) {
				return "inside allowed root " + r, true
			}
		}
	}
	for _, p := range cands {
		if wt := WorkTree(p); wt != "" {
			return "inside git work tree " + wt, true
		}
	}
	return "", false
}

// resolveExisting resolves the symbolic links of the absolute path p as
// far as they go, dangling ones included, and appends the rest: a
// directory the gateway has yet to create, below a link into a work tree,
// is in that work tree.
func resolveExisting(p string) string {
	for hops := 0; hops < 40; hops++ {
		rest := ""
		d := p
		for {
			if r, err := filepath.EvalSymlinks(d); err == nil {
				return filepath.Join(r, rest)
			}
			// A link whose target does not exist yet: follow it by hand.
			if target, err := os.Readlink(d); err == nil {
				if !filepath.IsAbs(target) {
					target = filepath.Join(filepath.Dir(d), target)
				}
				p = filepath.Join(target, rest)
				break
			}
			parent := filepath.Dir(d)
			if parent == d {
				return p
			}
			rest = filepath.Join(filepath.Base(d), rest)
			d = parent
		}
	}
	return p
}

// WorkTree returns the nearest directory at or above p that holds a
// `.git` entry (a directory, or the file a linked worktree or submodule
// has), or "" when there is none. It only looks; a `.git` it cannot stat
// counts as absent.
func WorkTree(p string) string {
	d := filepath.Clean(p)
	for {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		// p inside a .git directory: its parent is the work tree.
		if filepath.Base(d) == ".git" {
			return filepath.Dir(d)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

// State is one location the gateway (or fluxgit) keeps or reads that no
// read tool may reach, with the sentence telling the person how to move
// it.
type State struct {
	Path
	// Fix says which setting moves it, e.g. "set FLUXGIT_RUN_DIR (or
	// --run-dir) to ...".
	Fix string
}

// Exposure is a State a read tool could reach.
type Exposure struct {
	State
	// Why is Reachable's reason: "inside allowed root R" or "inside git
	// work tree W".
	Why string
}

// Error names the location, why it is reachable, and the fix.
func (e Exposure) Error() string {
	return fmt.Sprintf("the %s %s lies where an agent's read tools can open it (%s); %s", e.Label, e.Path.Path, e.Why, e.Fix)
}

// privateFix is how every fix ends.
const privateFix = "a private directory (mode 0700) outside every directory in FLUXGIT_MCP_ALLOWED_ROOTS and outside every git work tree"

// GatewayState lists what the gateway running on runDir keeps or reads:
// its secret directory, its state in runDir (journal, lock), and the
// audit signing key and agent policy named by the environment. secretDir
// may be "" when none was chosen (ChooseSecretDir reports that itself).
func GatewayState(runDir, secretDir string) []State {
	return gatewayState(os.Getenv, runDir, secretDir)
}

func gatewayState(getenv func(string) string, runDir, secretDir string) []State {
	var out []State
	if secretDir != "" {
		out = append(out, State{Path{Label: "gateway session secret directory", Path: Canonical(secretDir), Dir: true},
			"set " + EnvSecretDir + " (or XDG_RUNTIME_DIR) to " + privateFix})
	}
	if runDir != "" {
		out = append(out, State{Path{Label: "gateway state directory (journal, lock)", Path: Canonical(rundir.GatewayDir(runDir)), Dir: true},
			"set " + EnvRunDir + " (or pass --run-dir) to " + privateFix + ", and give the MCP server the same " + EnvRunDir})
	}
	out = append(out, envState(getenv)...)
	return out
}

// LabelAgentPolicy is the State label of the agent policy file, so the
// gateway can add to its refusal when the policy approves in advance.
const LabelAgentPolicy = "agent policy"

// envState is the credential and policy files the gateway reads.
func envState(getenv func(string) string) []State {
	var out []State
	add := func(label, env, what string) {
		if v := strings.TrimSpace(getenv(env)); v != "" {
			out = append(out, State{Path{Label: label, Path: Canonical(v)},
				"move the " + what + " into " + privateFix + ", and point " + env + " at it"})
		}
	}
	add("audit signing key", EnvSignKey, "key")
	// An agent policy inside a work tree is a rule an approved patch could
	// rewrite (CONTRACT §10): the same check refuses it.
	add(LabelAgentPolicy, EnvAgentPolicy, "policy file")
	return out
}

// HostState lists the files `fluxgit serve` reads that decide what an
// agent may do or hold a key: the host configuration (configPath, the
// --config flag; "" means $FLUXGIT_CONFIG) and the JWT key file. Doctor
// checks them with the gateway's.
func HostState(configPath string) []State {
	var out []State
	add := func(label, v, env, what string) {
		// MCP_JWT_PUBLIC_KEY may hold the PEM text itself: nothing to place.
		if v = strings.TrimSpace(v); v != "" && !strings.HasPrefix(v, "-----BEGIN") {
			out = append(out, State{Path{Label: label, Path: Canonical(v)},
				"move the " + what + " into " + privateFix + ", and point " + env + " at it"})
		}
	}
	if configPath == "" {
		configPath = os.Getenv(EnvConfig)
	}
	add("host configuration", configPath, EnvConfig+" (or --config)", "configuration file")
	add("JWT key", os.Getenv(EnvJWTKey), EnvJWTKey, "key file")
	return out
}

// Exposed returns the entries of list a read tool could reach, given the
// allowed roots.
func Exposed(list []State, roots []string) []Exposure {
	var out []Exposure
	for _, s := range list {
		if why, reach := Reachable(s.Path.Path, roots); reach {
			out = append(out, Exposure{State: s, Why: why})
		}
	}
	return out
}

// gatewayProtected is the gateway's part of Protected: every candidate
// secret directory (whichever the gateway chose) and the run directory's
// gateway state (journal, lock, and the session.json older versions left
// there).
func gatewayProtected(getenv func(string) string) []Path {
	var out []Path
	for _, d := range secretDirs(getenv) {
		out = append(out, Path{Label: "gateway session secret", Path: Canonical(d), Dir: true})
	}
	rd := strings.TrimSpace(getenv(EnvRunDir))
	if rd == "" {
		rd, _ = rundir.Dir()
	}
	if rd != "" {
		out = append(out, Path{Label: "gateway session and journal", Path: Canonical(rundir.GatewayDir(rd)), Dir: true})
	}
	return out
}
