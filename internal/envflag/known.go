package envflag

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Known is every environment variable fluxgit reads, by the prefixes it
// owns: FLUXGIT_*, SHIFT_* (the roster) and its own MCP_* settings (the
// shift seed's HTTP, authentication and log variables; other MCP_* names
// belong to MCP hosts). Test-only and CI names count: someone running the
// tests sets them on purpose. TestKnownCoversSource fails when the code
// reads a name this list lacks.
var Known = []string{
	// Paths and state (CONTRACT §9, F§9).
	"FLUXGIT_CONFIG",
	"FLUXGIT_RUN_DIR",
	"FLUXGIT_SECRET_DIR",
	"FLUXGIT_MCP_ALLOWED_ROOTS",
	"FLUXGIT_MCP_GIT_PATH",
	"FLUXGIT_MCP_RESULT_SHAPE",
	// The gateway and FluxGit.
	"FLUXGIT_MCP_HANDSHAKE_ADDR",
	"FLUXGIT_GATEWAY_ADDR",
	"FLUXGIT_GATEWAY_URL",
	"FLUXGIT_MCP_AGENT_POLICY",
	// Audit ledger.
	"FLUXGIT_MCP_AUDIT_LOG",
	"FLUXGIT_MCP_AUDIT_DISABLED",
	"FLUXGIT_MCP_AUDIT_SIGN_KEY",
	"FLUXGIT_MCP_AUDIT_MIN_AGE",
	"FLUXGIT_MCP_AUDIT_MAX_BYTES",
	"FLUXGIT_MCP_AUDIT_RETAIN_BYTES",
	"FLUXGIT_MCP_AUDIT_RETAIN_AGE",
	"FLUXGIT_MCP_AUDIT_SEGMENT_BYTES",
	// Presence and agent detection.
	"FLUXGIT_MCP_PRESENCE_DISABLED",
	"FLUXGIT_MCP_AGENT_DETECTION_DISABLED",
	// Tool selection.
	"FLUXGIT_TOOLSETS",
	"FLUXGIT_TOOLS",
	"FLUXGIT_READ_ONLY",
	"FLUXGIT_COMPACT_SCHEMAS",
	// Logs and HTTP.
	"FLUXGIT_LOG_MAX_BYTES",
	"FLUXGIT_LOG_KEEP",
	"FLUXGIT_HTTP_STATS",
	// The provider handshake cookie (go-plugin), set by the host for its
	// providers.
	"FLUXGIT_PROVIDER",
	// The person's protected files (internal/credpaths), set by the host
	// for its providers.
	"FLUXGIT_PROTECTED_PATHS",
	// Tests, benchmarks and CI only.
	"FLUXGIT_NODE_CACHE",
	"FLUXGIT_CI_CACHE",
	"FLUXGIT_CHROMIUM",
	"FLUXGIT_CHROMEDRIVER",
	"FLUXGIT_BROWSER_ARTIFACTS",
	"FLUXGIT_BENCH_REPO",
	"FLUXGIT_AUDIT_BENCH_DIR",
	"FLUXGIT_JOURNAL_TEST_CHILD",
	// The roster.
	"SHIFT_WORKSPACE",
	"SHIFT_STATE_DIR",
	"SHIFT_DATABASE_URL",
	// The committing agent's own worker for `fluxgit guard check`.
	"SHIFT_WORKER_ID",
	// The person's override of `fluxgit guard check`.
	"FLUXGIT_GUARD_OVERRIDE",
	// fluxgit's own MCP_* settings.
	"MCP_TRANSPORT_TYPE",
	"MCP_HTTP_HOST",
	"MCP_HTTP_PORT",
	"MCP_HTTP_PATH",
	"MCP_SESSION_MODE",
	"MCP_HTTP_ALLOWED_HOSTS",
	"MCP_HTTP_ALLOWED_ORIGINS",
	"MCP_HTTP_MAX_CONNECTIONS",
	"MCP_AUTH_MODE",
	"MCP_AUTH_REQUIRED_SCOPES",
	"MCP_JWT_SECRET",
	"MCP_JWT_PUBLIC_KEY",
	"MCP_JWT_JWKS_URL",
	"MCP_JWT_ISSUER",
	"MCP_JWT_AUDIENCE",
	"MCP_OAUTH_RESOURCE",
	"MCP_OAUTH_AUTHORIZATION_SERVERS",
	"MCP_OAUTH_JWKS_URL",
	"MCP_LOG_LEVEL",
}

// Unrecognised is a variable of a fluxgit prefix that fluxgit does not
// read, with the known name it most likely meant ("" when none is close).
type Unrecognised struct {
	Name    string
	Nearest string
}

// String is the warning fluxgit prints for u.
func (u Unrecognised) String() string {
	s := u.Name + " is set but fluxgit reads no such variable, so it has no effect"
	if u.Nearest != "" {
		s += "; did you mean " + u.Nearest + "?"
	}
	return s
}

// Fix is one sentence telling the user how to repair u.
func (u Unrecognised) Fix() string {
	if u.Nearest != "" {
		return fmt.Sprintf("rename %s to %s, or unset it", u.Name, u.Nearest)
	}
	return "unset " + u.Name + " or correct its name (docs/configuration.md lists every variable)"
}

// Unknown returns, sorted by name, the variables in environ (os.Environ's
// "NAME=value" form) that look like fluxgit's but are not in Known: every
// unknown FLUXGIT_* and SHIFT_* name, and MCP_* names only when they are a
// near miss of one of fluxgit's own (MCP_AUTH_MOD), since other MCP_*
// variables belong to MCP hosts.
func Unknown(environ []string) []Unrecognised {
	var out []Unrecognised
	seen := map[string]bool{}
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if name == "" || seen[name] || slices.Contains(Known, name) {
			continue
		}
		seen[name] = true
		switch {
		case strings.HasPrefix(name, "FLUXGIT_"), strings.HasPrefix(name, "SHIFT_"):
			out = append(out, Unrecognised{Name: name, Nearest: nearest(name, false)})
		case strings.HasPrefix(name, "MCP_"):
			if n := nearest(name, true); n != "" {
				out = append(out, Unrecognised{Name: name, Nearest: n})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// nearest is the known name closest to name: the smallest edit distance,
// within a third of the name's length, or one that holds every word of
// name in order (FLUXGIT_ALLOWED_ROOTS in FLUXGIT_MCP_ALLOWED_ROOTS).
// strict (MCP_* names) accepts only a distance of two: anything further is
// taken for another program's variable.
func nearest(name string, strict bool) string {
	best, bestD := "", 1<<30
	for _, k := range Known {
		if strict && !strings.HasPrefix(k, "MCP_") {
			continue
		}
		d := distance(name, k)
		ok := d <= 2
		if !strict {
			ok = d <= max(2, len(name)/3) || wordsIn(name, k)
		}
		if ok && d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// wordsIn reports whether the underscore-separated words of a appear in
// b in the same order (b may have more).
func wordsIn(a, b string) bool {
	bw := strings.Split(b, "_")
	i := 0
	for _, w := range strings.Split(a, "_") {
		for i < len(bw) && bw[i] != w {
			i++
		}
		if i == len(bw) {
			return false
		}
		i++
	}
	return true
}

// distance is the Levenshtein distance of a and b (ASCII names).
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
