// Package setup assembles a host from configuration: the spec layers, the
// provider processes and the repository policy.
package setup

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/go-hclog"
	"gopkg.in/yaml.v3"

	"github.com/fluxgit/fluxgit/host/catalog"
	"github.com/fluxgit/fluxgit/host/providers"
	"github.com/fluxgit/fluxgit/spec"
)

// EnvConfig names the configuration file when --config is not given.
const EnvConfig = "FLUXGIT_CONFIG"

// Config is the host configuration file (YAML or JSON).
//
//	spec: ./my-spec            # optional: a spec tree layered over the embedded one
//	providers:
//	  - name: echo             # what the spec files' `provider` field says
//	    command: ./echo-provider
//	    args: []
//	    env: ["ECHO_MODE=loud"]
//	    spec: ./echo-spec      # the provider's own tool files (tools/*.yaml)
//
// Relative paths, command included, are resolved against the file's
// directory (see LoadConfig).
type Config struct {
	Spec      string           `yaml:"spec"`
	Providers []ProviderConfig `yaml:"providers"`
}

// ProviderConfig registers one third-party provider.
type ProviderConfig struct {
	Name    string   `yaml:"name"`
	Command string   `yaml:"command"`
	Args    []string `yaml:"args"`
	Env     []string `yaml:"env"`
	Spec    string   `yaml:"spec"`
}

// LoadConfig reads a configuration file. An empty path returns the empty
// configuration. builtins are the names of the providers compiled into the
// binary: a configured provider may not shadow one.
//
// A relative command is resolved against the file's directory, whatever it
// looks like: "./bin/p", "bin/p" and "p" all name a file next to the
// configuration, never a PATH lookup, so what runs does not depend on the
// caller's PATH or working directory. Write an absolute path to run a
// program from elsewhere.
func LoadConfig(path string, builtins []string) (*Config, error) {
	cfg := &Config{}
	if path == "" {
		return cfg, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	// An empty file is an empty configuration.
	if err := dec.Decode(cfg); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("parse config %s: %w", path, err)
	}
	base, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("config %s: resolve its directory: %w", path, err)
	}
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(base, p)
	}
	cfg.Spec = abs(cfg.Spec)
	seen := map[string]bool{}
	for _, n := range builtins {
		seen[n] = true
	}
	for i := range cfg.Providers {
		p := &cfg.Providers[i]
		switch {
		case p.Name == "":
			return nil, fmt.Errorf("config %s: provider %d has no name", path, i)
		case seen[p.Name]:
			return nil, fmt.Errorf("config %s: provider %q is defined twice or shadows a built-in", path, p.Name)
		case p.Command == "":
			return nil, fmt.Errorf("config %s: provider %q has no command", path, p.Name)
		case p.Spec == "":
			return nil, fmt.Errorf("config %s: provider %q has no spec directory", path, p.Name)
		}
		seen[p.Name] = true
		p.Command = abs(p.Command)
		p.Spec = abs(p.Spec)
	}
	return cfg, nil
}

// Host is an assembled, not yet serving, host.
type Host struct {
	Catalog   *catalog.Catalog
	Providers *providers.Manager
	// Layers are the spec trees, lowest first (for lint).
	Layers []Layer
}

// Layer is one spec tree and who may own its tools.
type Layer struct {
	Name string // "embedded", a directory, or a provider name
	FS   fs.FS
	// Owner, when set, is the only provider this layer's tools may name:
	// a third-party spec cannot take over another provider's tools.
	Owner string
}

// Build assembles the host. builtins are the providers compiled into the
// binary (the caller owns that list, so this package never depends on their
// implementations); self is the fluxgit executable that serves them with
// `provider NAME`.
func Build(cfg *Config, builtins []string, self string, log hclog.Logger) (*Host, error) {
	layers := []Layer{{Name: "embedded", FS: spec.FS}}
	if cfg.Spec != "" {
		layers = append(layers, Layer{Name: cfg.Spec, FS: os.DirFS(cfg.Spec)})
	}
	var specs []providers.Spec
	for _, n := range builtins {
		specs = append(specs, providers.Spec{Name: n, Command: self, Args: []string{"provider", n}, Builtin: true})
	}
	for _, p := range cfg.Providers {
		specs = append(specs, providers.Spec{Name: p.Name, Command: p.Command, Args: p.Args, Env: p.Env})
		layers = append(layers, Layer{Name: p.Name, FS: os.DirFS(p.Spec), Owner: p.Name})
	}
	fss := make([]fs.FS, len(layers))
	for i, l := range layers {
		fss[i] = l.FS
		if l.Owner == "" {
			continue
		}
		own, err := catalog.Load(l.FS)
		if err != nil {
			return nil, fmt.Errorf("spec of provider %s: %w", l.Owner, err)
		}
		for _, t := range own.Tools {
			if t.Provider != l.Owner {
				return nil, fmt.Errorf("spec of provider %s: tool %s names provider %q", l.Owner, t.Name, t.Provider)
			}
		}
		for _, r := range append(append([]*catalog.Resource{}, own.Resources...), own.Templates...) {
			if r.Provider != l.Owner {
				return nil, fmt.Errorf("spec of provider %s: resource %s names provider %q", l.Owner, r.Name, r.Provider)
			}
		}
		for _, p := range own.Prompts {
			if p.Provider != l.Owner {
				return nil, fmt.Errorf("spec of provider %s: prompt %s names provider %q", l.Owner, p.Name, p.Provider)
			}
		}
	}
	cat, err := catalog.Load(fss...)
	if err != nil {
		return nil, fmt.Errorf("load spec: %w", err)
	}
	known := map[string]bool{}
	for _, s := range specs {
		known[s.Name] = true
	}
	// A spec may describe planned providers (lint allows it), but a tool is
	// only served when its provider exists: tools/list never lists a tool
	// that cannot run.
	kept := func(t *catalog.Tool) bool { return known[t.Provider] }
	cat.Restrict(kept)
	for i := range specs {
		specs[i].Expect = Expectation(cat, specs[i].Name)
	}
	mgr := providers.New(specs, log)
	return &Host{Catalog: cat, Providers: mgr, Layers: layers}, nil
}

// Expectation is what the catalog gives provider name: the Describe check
// at launch refuses a provider that lacks any of it.
func Expectation(cat *catalog.Catalog, name string) *providers.Expectation {
	e := &providers.Expectation{}
	for _, t := range cat.Tools {
		if t.Provider == name {
			e.Tools = append(e.Tools, t.Name)
		}
	}
	for _, r := range cat.Resources {
		if r.Provider == name {
			e.Resources = append(e.Resources, r.URI)
		}
	}
	for _, r := range cat.Templates {
		if r.Provider == name {
			e.Resources = append(e.Resources, r.URITemplate)
		}
	}
	e.Needs.Resources = len(e.Resources) > 0
	expectPrompts(cat, name, e)
	return e
}

// expectPrompts adds what the provider's prompts need: every prompt it
// renders itself (the spec gives it no messages), and completion when one
// of its prompt arguments or template variables is marked completable.
func expectPrompts(cat *catalog.Catalog, name string, e *providers.Expectation) {
	for _, p := range cat.Prompts {
		if p.Provider != name {
			continue
		}
		if !p.HostRendered() {
			e.Prompts = append(e.Prompts, p.Name)
			e.Needs.Prompts = true
		}
		for _, a := range p.Arguments {
			if a.Complete {
				e.Needs.Completion = true
			}
		}
	}
	for _, r := range cat.Templates {
		if r.Provider == name && len(r.Complete) > 0 {
			e.Needs.Completion = true
		}
	}
}
