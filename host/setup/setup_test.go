package setup

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
)

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fluxgit.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadConfig(t *testing.T) {
	for _, tc := range []struct {
		name, body, wantErr string
	}{
		{"empty file", "", ""},
		{"provider", "providers:\n  - name: echo\n    command: ./bin/echo\n    spec: ./echo-spec\n", ""},
		{"unknown key", "provders: []\n", "provders"},
		{"no name", "providers:\n  - command: x\n    spec: y\n", "has no name"},
		{"no command", "providers:\n  - name: a\n    spec: y\n", "has no command"},
		{"no spec", "providers:\n  - name: a\n    command: x\n", "has no spec"},
		{"duplicate", "providers:\n  - {name: a, command: x, spec: y}\n  - {name: a, command: x, spec: y}\n", "defined twice"},
		{"shadows built-in", "providers:\n  - {name: git-read, command: x, spec: y}\n", "shadows a built-in"},
		{"not yaml", "providers: [\n", "parse config"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := writeConfig(t, tc.body)
			cfg, err := LoadConfig(p, testBuiltins)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				for _, pc := range cfg.Providers {
					if !filepath.IsAbs(pc.Spec) || !filepath.IsAbs(pc.Command) {
						t.Fatalf("relative paths not resolved against the file: %+v", pc)
					}
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want it to mention %q", err, tc.wantErr)
			}
		})
	}
	if cfg, err := LoadConfig("", testBuiltins); err != nil || len(cfg.Providers) != 0 {
		t.Fatalf("no config path: %+v %v", cfg, err)
	}
	if _, err := LoadConfig(filepath.Join(t.TempDir(), "missing.yaml"), testBuiltins); err == nil {
		t.Fatal("missing file accepted")
	}
}

// testBuiltins stands for what cmd/fluxgit injects.
var testBuiltins = []string{"git-read", "shift-roster"}

// Every relative command names a file relative to the configuration file,
// never a PATH lookup and never relative to the working directory: before,
// a config given as a relative path turned "./nope" into "nope", which
// exec resolves on PATH.
func TestCommandResolvedAgainstConfigDir(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "fluxgit.yaml")
	for _, tc := range []struct {
		name, command, want string
		relativeConfig      bool
	}{
		{"dot slash", "./nope", filepath.Join(dir, "nope"), false},
		{"dot slash, config given relative", "./nope", filepath.Join(dir, "nope"), true},
		{"bare name is not a PATH lookup", "my-provider", filepath.Join(dir, "my-provider"), false},
		{"bare name, config given relative", "my-provider", filepath.Join(dir, "my-provider"), true},
		{"subdirectory", "bin/p", filepath.Join(dir, "bin", "p"), false},
		{"parent directory", "../p", filepath.Join(filepath.Dir(dir), "p"), true},
		{"absolute kept", "/opt/provider", "/opt/provider", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := "providers:\n  - {name: a, command: \"" + tc.command + "\", spec: s}\n"
			if err := os.WriteFile(cfgPath, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			path := cfgPath
			if tc.relativeConfig {
				t.Chdir(dir)
				path = "fluxgit.yaml"
			}
			cfg, err := LoadConfig(path, testBuiltins)
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.Providers[0].Command; got != tc.want {
				t.Fatalf("command %q resolved to %q, want %q", tc.command, got, tc.want)
			}
			if got := cfg.Providers[0].Spec; got != filepath.Join(dir, "s") {
				t.Fatalf("spec resolved to %q", got)
			}
		})
	}
}

// host/ must not depend on any provider package, the SDK included: cmd/ injects
// the built-in names.
func TestHostDoesNotImportProviderImplementations(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not on PATH")
	}
	out, err := exec.Command(gobin, "list", "-deps", "-f", "{{.ImportPath}}", "github.com/fluxgit/fluxgit/host/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		// The host speaks to providers through internal/wire only: not even
		// the public SDK, whose types are the provider author's.
		if strings.HasPrefix(dep, "github.com/fluxgit/fluxgit/plugins/") {
			t.Errorf("host/ depends on %s", dep)
		}
	}
}

func TestBuildServesOnlyToolsWithProviders(t *testing.T) {
	h, err := Build(&Config{}, testBuiltins, "/bin/true", hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, n := range h.Providers.Names() {
		known[n] = true
	}
	if len(h.Catalog.Tools) == 0 {
		t.Fatal("no tools served")
	}
	for _, tool := range h.Catalog.Tools {
		if !known[tool.Provider] {
			t.Errorf("tool %s served without its provider %s", tool.Name, tool.Provider)
		}
		if got, ok := h.Catalog.Tool(tool.Name); !ok || got != tool {
			t.Errorf("lookup of %s broken", tool.Name)
		}
	}
}

func TestBuildExpectsWhatTheSpecGivesEachProvider(t *testing.T) {
	h, err := Build(&Config{}, testBuiltins, "/bin/true", hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		provider      string
		tools         []string // a subset the expectation must hold
		resources     []string // exactly
		needResources bool
	}{
		{"shift-roster", []string{"shift_check_in", "shift_check_out"}, []string{"shift://status", "shift://status{?workspace}"}, true},
		{"git-read", []string{"repo.status", "diff.text"}, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.provider, func(t *testing.T) {
			s, ok := h.Providers.Spec(tc.provider)
			if !ok || s.Expect == nil {
				t.Fatalf("no expectation for %s", tc.provider)
			}
			for _, tool := range tc.tools {
				if !slices.Contains(s.Expect.Tools, tool) {
					t.Errorf("tools %v lack %s", s.Expect.Tools, tool)
				}
			}
			for _, tool := range s.Expect.Tools {
				if got, ok := h.Catalog.Tool(tool); !ok || got.Provider != tc.provider {
					t.Errorf("expects %s, which the catalog does not give %s", tool, tc.provider)
				}
			}
			if !slices.Equal(s.Expect.Resources, tc.resources) || s.Expect.Needs.Resources != tc.needResources {
				t.Errorf("resources %v (needs %v), want %v (%v)", s.Expect.Resources, s.Expect.Needs.Resources, tc.resources, tc.needResources)
			}
		})
	}
}
