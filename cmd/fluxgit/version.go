package main

import (
	_ "embed"
	"regexp"
	"runtime/debug"
	"strings"
)

// sourceVersion is the one canonical version of this source tree: semver
// without the leading v (git tags add it: v0.1.0). scripts/release.sh,
// server.json, the npm packages, the Desktop bundle, the plugins and the
// Homebrew formula all take theirs from this file (scripts/release.sh --check
// fails when one disagrees).
//
//go:embed VERSION
var sourceVersion string

// version is set at link time for releases (scripts/release.sh and the
// Dockerfile pass -ldflags "-X main.version=…"); a stamped version is
// printed as given.
var version string

// releaseTagRE is a module version `go install …@vX.Y.Z` records as the main
// module's version: a tag, never a pseudo-version (those end in a 14-digit
// timestamp and a 12-digit commit) and never a +dirty work tree.
var (
	releaseTagRE = regexp.MustCompile(`^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`)
	pseudoRE     = regexp.MustCompile(`\d{14}-[0-9a-f]{12}$`)
)

func buildVersion() string {
	info, _ := debug.ReadBuildInfo()
	return resolveVersion(version, sourceVersion, info)
}

// resolveVersion picks what `fluxgit version` prints: the link-time stamp;
// else the tag `go install github.com/fluxgit/fluxgit/cmd/fluxgit@vX.Y.Z`
// built (the go command records it in the build info, and the linker flag is
// not available there); else the source version with -dev, plus the commit
// when the go command stamped one (a build from a checkout).
func resolveVersion(stamped, source string, info *debug.BuildInfo) string {
	if stamped != "" {
		return stamped
	}
	dev := strings.TrimSpace(source) + "-dev"
	if info == nil {
		return dev
	}
	if v := info.Main.Version; releaseTagRE.MatchString(v) && !pseudoRE.MatchString(v) {
		return strings.TrimPrefix(v, "v")
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			return dev + "+" + s.Value[:12]
		}
	}
	return dev
}
