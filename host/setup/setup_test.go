package setup

import (
	"os"
	"path/filepath"
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
			cfg, err := LoadConfig(p)
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
	if cfg, err := LoadConfig(""); err != nil || len(cfg.Providers) != 0 {
		t.Fatalf("no config path: %+v %v", cfg, err)
	}
	if _, err := LoadConfig(filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Fatal("missing file accepted")
	}
}

// A bare command name is looked up on PATH at start, not resolved
// against the configuration directory.
func TestCommandOnPath(t *testing.T) {
	cfg, err := LoadConfig(writeConfig(t, "providers:\n  - {name: a, command: my-provider, spec: s}\n"))
	if err != nil || cfg.Providers[0].Command != "my-provider" {
		t.Fatalf("%+v %v", cfg, err)
	}
}

func TestBuildServesOnlyToolsWithProviders(t *testing.T) {
	h, err := Build(&Config{}, "/bin/true", hclog.NewNullLogger())
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
