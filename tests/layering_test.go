package tests

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// The house's floors, as docs/architecture.md draws them: internal/ is the
// ground and imports nothing above it; plugins/ holds providers (plus the
// SDK and the built-in table), and no provider reaches into another
// provider, the host, the gateway or the CLI. What two providers share lives
// in a named internal/ package (internal/roster, internal/rundir, …).
// gateway/layering_test.go and host/setup keep their own rules.

const modulePath = "github.com/fluxgit/fluxgit"

type listedPackage struct {
	ImportPath string
	Deps       []string
}

// listPackages lists every non-test package of the module outside tests/
// with its transitive dependencies (`go list -json`).
func listPackages(t *testing.T) []listedPackage {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not on PATH")
	}
	cmd := exec.Command(gobin, "list", "-json=ImportPath,Deps", modulePath+"/...")
	cmd.Dir = repoRoot(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decode go list: %v", err)
		}
		if strings.HasPrefix(p.ImportPath, modulePath+"/tests") {
			continue // test helpers (fixture providers, fakes) are not floors of the house
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		t.Fatal("go list printed no packages")
	}
	return pkgs
}

func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(wd) // this file lives in <root>/tests
}

// rel is an import path relative to the module ("internal/rundir"), or ""
// for a package outside the module.
func rel(importPath string) string {
	if r, ok := strings.CutPrefix(importPath, modulePath+"/"); ok {
		return r
	}
	return ""
}

// dataRoot reports the embedded-data packages at the top (schemas/ and
// spec/: JSON Schemas and YAML with an embed.FS and nothing else), which sit
// under every floor; TestDataRootsImportNothing keeps them so.
func dataRoot(r string) bool { return r == "schemas" || r == "spec" }

// provider names the provider a package under plugins/ belongs to
// ("plugins/gitread/fleet" → "gitread"), or "" for anything else.
func provider(r string) string {
	rest, ok := strings.CutPrefix(r, "plugins/")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "/")
	if name == "sdk" || name == "builtin" {
		return ""
	}
	return name
}

func TestLayering(t *testing.T) {
	pkgs := listPackages(t)
	for _, p := range pkgs {
		r := rel(p.ImportPath)
		for _, d := range p.Deps {
			dr := rel(d)
			if dr == "" {
				continue
			}
			switch {
			case strings.HasPrefix(r, "internal/") && !strings.HasPrefix(dr, "internal/") && !dataRoot(dr):
				t.Errorf("%s (ground floor) imports %s: internal/ may import only internal/ and the embedded data of schemas/ and spec/; move what it needs down or pass it in", r, dr)
			case provider(r) != "":
				if pr := provider(dr); pr != "" && pr != provider(r) {
					t.Errorf("provider %s imports provider %s (%s): share it through a named internal/ package or the host", provider(r), pr, dr)
				}
				for _, above := range []string{"host/", "gateway/", "cmd/", "plugins/builtin"} {
					if strings.HasPrefix(dr, above) {
						t.Errorf("provider package %s imports %s: providers import plugins/sdk and internal/ only", r, dr)
					}
				}
			case r == "plugins/sdk" || strings.HasPrefix(r, "plugins/sdk/"):
				if !strings.HasPrefix(dr, "internal/") && !strings.HasPrefix(dr, "plugins/sdk") {
					t.Errorf("the SDK imports %s: it may import only internal/", dr)
				}
			}
		}
	}
}

// The embedded-data roots may be imported from the ground floor only while
// they import nothing of the module themselves.
func TestDataRootsImportNothing(t *testing.T) {
	for _, p := range listPackages(t) {
		if !dataRoot(rel(p.ImportPath)) {
			continue
		}
		for _, d := range p.Deps {
			if rel(d) != "" {
				t.Errorf("%s imports %s: the data roots must stay leaves", rel(p.ImportPath), rel(d))
			}
		}
	}
}

// Everything under plugins/ is a provider the built-in table registers, the
// SDK, or the table itself: a library there is one other trees start to
// import, and it belongs in internal/.
func TestPluginsHoldsProvidersOnly(t *testing.T) {
	pkgs := listPackages(t)
	var builtinDeps []string
	dirs := map[string]bool{}
	for _, p := range pkgs {
		r := rel(p.ImportPath)
		if r == "plugins/builtin" {
			builtinDeps = p.Deps
		}
		if pr := provider(r); pr != "" {
			dirs[pr] = true
		}
	}
	registered := map[string]bool{}
	for _, d := range builtinDeps {
		if pr := provider(rel(d)); pr != "" {
			registered[pr] = true
		}
	}
	var stray []string
	for d := range dirs {
		if !registered[d] {
			stray = append(stray, "plugins/"+d)
		}
	}
	sort.Strings(stray)
	if len(stray) > 0 {
		t.Errorf("not providers of the built-in table: %v; a library belongs in internal/", stray)
	}
	if len(registered) < 4 {
		t.Errorf("built-in table registers %d providers, want at least git-read, handshake, agents-presence, shift-roster", len(registered))
	}
}

// No tracked file over 1 MB outside testdata/: generated bundles and
// fixtures that large make every clone and review pay for them.
func TestNoLargeTrackedFiles(t *testing.T) {
	root := repoRoot(t)
	out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if f == "" || slices.Contains(strings.Split(filepath.ToSlash(f), "/"), "testdata") {
			continue
		}
		fi, err := os.Lstat(filepath.Join(root, f))
		if err != nil {
			continue // deleted in the work tree
		}
		if fi.Size() > 1<<20 {
			t.Errorf("%s is %d bytes (over 1 MB outside testdata/)", f, fi.Size())
		}
	}
}
