package operation

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/fluxgit/fluxgit/schemas"
)

// SchemaFile is the path of op's body schema inside schemas.FS.
func SchemaFile(op string) string { return "operations/" + op + ".schema.json" }

var (
	compileOnce sync.Once
	compiled    map[string]*jsonschema.Schema
	compileErr  error
)

// compileAll compiles every operation's schema once; the schemas are
// self-contained, so nothing is fetched.
func compileAll() (map[string]*jsonschema.Schema, error) {
	compileOnce.Do(func() {
		c := jsonschema.NewCompiler()
		c.Draft = jsonschema.Draft2020
		c.LoadURL = func(u string) (io.ReadCloser, error) {
			return nil, fmt.Errorf("refusing to load %s: the operation schemas are self-contained", u)
		}
		out := map[string]*jsonschema.Schema{}
		for _, o := range All {
			raw, err := fs.ReadFile(schemas.FS, SchemaFile(o.Name))
			if err != nil {
				compileErr = fmt.Errorf("read the %s schema: %w", o.Name, err)
				return
			}
			url := "mem:///schemas/" + SchemaFile(o.Name)
			if err := c.AddResource(url, bytes.NewReader(raw)); err != nil {
				compileErr = fmt.Errorf("load the %s schema: %w", o.Name, err)
				return
			}
			s, err := c.Compile(url)
			if err != nil {
				compileErr = fmt.Errorf("compile the %s schema: %w", o.Name, err)
				return
			}
			out[o.Name] = s
		}
		compiled = out
	})
	return compiled, compileErr
}

// Validate checks a decoded body (map[string]any as encoding/json or
// gateway/proposal.DecodeObject returns it) against op's schema. A
// violation is a *jsonschema.ValidationError; an unknown op or a schema
// that does not compile is another error.
func Validate(op string, body any) error {
	all, err := compileAll()
	if err != nil {
		return err
	}
	s, ok := all[op]
	if !ok {
		return fmt.Errorf("unknown operation type %q", op)
	}
	return s.Validate(body)
}
