package main

import (
	"runtime/debug"
	"testing"
)

// What `fluxgit version` prints for each way of building it.
func TestResolveVersion(t *testing.T) {
	rev := []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}}
	for _, tc := range []struct {
		name    string
		stamped string
		info    *debug.BuildInfo
		want    string
	}{
		{"release script stamp wins", "1.2.3", &debug.BuildInfo{Main: debug.Module{Version: "v9.9.9"}}, "1.2.3"},
		{"go install of a tag", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.4.0"}}, "0.4.0"},
		{"go install of a pre-release tag", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.4.0-rc.1"}}, "0.4.0-rc.1"},
		{"pseudo-version is not a release", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.4.1-0.20261201231619-f4ee1fd0a1b2"}, Settings: rev}, "0.4.0-dev+0123456789ab"},
		{"dirty work tree is not a release", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.4.0+dirty"}}, "0.4.0-dev"},
		{"go build without VCS stamp", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "0.4.0-dev"},
		{"go build from a checkout", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: rev}, "0.4.0-dev+0123456789ab"},
		{"no build info", "", nil, "0.4.0-dev"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := resolveVersion(tc.stamped, "0.4.0\n", tc.info); got != tc.want {
				t.Fatalf("resolveVersion = %q, want %q", got, tc.want)
			}
		})
	}
}

// The embedded canonical version is one exact semantic version without v.
func TestSourceVersionIsSemver(t *testing.T) {
	if !releaseTagRE.MatchString("v"+sourceVersion[:len(sourceVersion)-1]) || sourceVersion[len(sourceVersion)-1] != '\n' {
		t.Fatalf("cmd/fluxgit/VERSION %q: want one line, semver without v (e.g. 0.1.0)", sourceVersion)
	}
}
