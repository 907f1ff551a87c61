// Package registry holds what the MCP Registry entry checks share: the part
// of server.json they read and the compiled registry schema. The registry
// tests (tests/registry_test.go) and the release check
// (tests/releasecheck, run by scripts/release.sh --check) both use it, so
// the two read the entry and the published schema the same way.
package registry

import (
	"fmt"
	"os"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// Entry is the part of server.json the checks read beyond the schema.
type Entry struct {
	Schema      string `json:"$schema"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Version     string `json:"version"`
	Repository  struct {
		URL    string `json:"url"`
		Source string `json:"source"`
	} `json:"repository"`
	Packages []Package `json:"packages"`
}

// Package is one of the entry's packages (npm, an OCI image).
type Package struct {
	RegistryType    string `json:"registryType"`
	RegistryBaseURL string `json:"registryBaseUrl"`
	Identifier      string `json:"identifier"`
	Version         string `json:"version"`
	Transport       struct {
		Type    string  `json:"type"`
		URL     string  `json:"url"`
		Headers []Input `json:"headers"`
	} `json:"transport"`
	RuntimeHint          string  `json:"runtimeHint"`
	RuntimeArguments     []Input `json:"runtimeArguments"`
	PackageArguments     []Input `json:"packageArguments"`
	EnvironmentVariables []Input `json:"environmentVariables"`
}

// Input is an argument, a header or an environment variable.
type Input struct {
	Type       string           `json:"type"`
	Name       string           `json:"name"`
	Value      string           `json:"value"`
	ValueHint  string           `json:"valueHint"`
	Default    string           `json:"default"`
	IsRequired bool             `json:"isRequired"`
	Variables  map[string]Input `json:"variables"`
}

// CompileSchema compiles the registry's published server.json schema from
// file under id (the URL server.json names in $schema), asserting formats
// as the registry does.
func CompileSchema(file, id string) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft7
	c.AssertFormat = true
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := c.AddResource(id, f); err != nil {
		return nil, fmt.Errorf("schema %s: %w", file, err)
	}
	s, err := c.Compile(id)
	if err != nil {
		return nil, fmt.Errorf("schema %s as %s: %w", file, id, err)
	}
	return s, nil
}
