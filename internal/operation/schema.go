package operation

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"reflect"
	"sort"
	"strings"
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

// Schema returns op's body schema as a generic JSON value (a fresh copy
// the caller may keep), for code that derives its checks from the
// contract (gateway/proposal).
func Schema(op string) (map[string]any, error) {
	if !Known(op) {
		return nil, fmt.Errorf("unknown operation type %q", op)
	}
	raw, err := fs.ReadFile(schemas.FS, SchemaFile(op))
	if err != nil {
		return nil, fmt.Errorf("read the %s schema: %w", op, err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("parse the %s schema: %w", op, err)
	}
	return m, nil
}

// HeaderKeys returns the JSON keys of Header, sorted: the keys every
// preview body carries.
func HeaderKeys() []string {
	t := reflect.TypeOf(Header{})
	keys := make([]string, 0, t.NumField())
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		keys = append(keys, name)
	}
	sort.Strings(keys)
	return keys
}
